""""Did the fix work?" as text: the earlier cause, whether its signature is gone (the same metric
at the same step, before -> after), and what the new run shows; a fixed run in one line. Plain
text with `code` spans, for Slack and GitHub alike (each port escapes it)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from analysis.metrics import fmt, fmt_step

if TYPE_CHECKING:
    from analysis.model import Diagnosis, Finding

SERIOUS = ("critical", "high")


def _value(x: float | None) -> str:
    return "non-finite (NaN/Inf)" if x is None else fmt(x)


def _signature_line(check: dict) -> str:
    if check["kind"] == "event":
        after = f"still in the new run ({check['after_at']})" if check.get("after") else "not in the new run"
        return f"the error `{check['signature']}` ({check['before_at']}): {after}"
    where = f"`{check['metric']}` at step {fmt_step(check['step'])}"
    if check.get("after_at") is None:
        return f"{where}: {_value(check['before'])} before; {check.get('reason', 'not in the new run')}"
    return f"{where}: {_value(check['before'])} → {_value(check['after'])} ({check['after_at']})"


def is_fixed(check: dict, new: Diagnosis) -> bool:
    """The signature is gone and the new run shows no serious cause."""
    serious = [c for c in new.root_causes if c.code != "healthy" and c.severity in SERIOUS]
    return check["verdict"] == "gone" and not serious and new.status != "incomplete"


def render_fix_check(check: dict, earlier: Finding, new: Diagnosis, label: str) -> str:
    """`earlier` is the earlier diagnosis' top cause; `label` names the new run ("run 42", "attempt 2")."""
    code = check["code"]
    if is_fixed(check, new):
        return f"Fixed: {label} no longer shows `{code}`: {_signature_line(check)}."
    verdict = {"gone": f"the signature of `{code}` is gone from {label}, but the new run has a problem of its own",
               "still there": f"no: {label} still shows the signature of `{code}`",
               "unknown": f"I can't tell from {label} whether the signature of `{code}` is gone"}[check["verdict"]]
    lines = [f"Did the fix work? {verdict[0].upper() + verdict[1:]}.",
             f"• Earlier cause: `{code}`: {earlier.issue}",
             f"• Its signature: {_signature_line(check)}"]
    causes = [c for c in new.root_causes if c.code != "healthy"]
    if causes:
        top = causes[0]
        lines.append(f"• The new run shows: `{top.code}` ({top.severity}, confidence {top.confidence:.2f}): "
                     f"{top.issue}")
    else:
        lines.append(f"• The new run shows no failure ({new.status}).")
    return "\n".join(lines)


def render_no_signature(earlier: Finding, new: Diagnosis, label: str) -> str:
    """The check when the earlier cause had no located signature to hold the new run against."""
    code = earlier.code
    again = any(c.code == code for c in new.root_causes)
    top = next((c for c in new.root_causes if c.code != "healthy"), None)
    shows = f"`{top.code}`: {top.issue}" if top else f"no failure ({new.status})"
    return (f"Did the fix work? {label}: the earlier cause `{code}` had no metric or error I could hold it against; "
            f"the new diagnosis {'still names' if again else 'no longer names'} it. The new run shows {shows}.")
