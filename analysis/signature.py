"""A cause's signature in a run, and whether a later run still shows it: "did the fix work".

The signature of a diagnosed cause is one located fact a later run can be held against: the same
metric at the same step (the loss at the worst step after the onset, the gradient norm where it
blew up, the loss where a stalled run ended), or, for a crash, the error signature it matched.
A later run of the same training is read at that step: the signature is gone when the value there
is finite and at most `GONE_RATIO` of what it was (or the crash no longer appears), and the later
run's own diagnosis does not still name the cause as critical or high.
"""
from __future__ import annotations

import math

import numpy as np

from analysis.metrics import Series
from analysis.model import Finding
from analysis.run import Run
from analysis.window import value_at

GONE_RATIO = 0.5
CRASH_CODES = ("out_of_memory", "distributed_failure", "dataloader_failure", "zero_variance")
# causes whose mark is where the run ended up (a stall), not a peak after an onset
STALL_CODES = ("lr_too_low", "data_pipeline_bug", "no_parameter_updates", "vanishing_gradients", "dead_relu",
               "mode_collapse", "architecture_imbalance")
LOSSES = ("train_loss", "train_loss_epoch", "val_loss", "g_loss", "d_loss")


def _metric_for(code: str, run: Run) -> Series | None:
    preferred = {"exploding_gradients": ("grad_norm",), "overfitting": ("val_loss",)}.get(code, ())
    for name in preferred + LOSSES:
        s = run.metrics.get(name)
        if s is not None and len(s):
            return s
    return None


def _number(x: float) -> float | None:
    """JSON (and PostgreSQL's JSON) holds no NaN or Inf: a non-finite value is None."""
    return float(x) if math.isfinite(x) else None


def signature_of(cause: Finding, run: Run) -> dict | None:
    """The located fact a later run is held against, as JSON; None when the cause has none."""
    if cause.code == "healthy":
        return None
    if cause.code in CRASH_CODES:
        event = next((e for e in run.events if e.code == cause.code), None)
        if event is None:
            return None
        return {"kind": "event", "code": cause.code, "signature": event.signature, "artifact": event.artifact,
                "at": event.locator, "text": event.text[:200]}
    s = _metric_for(cause.code, run)
    if s is None:
        return None
    if cause.code in STALL_CODES:
        i = len(s) - 1
    else:
        start = cause.onset_step if cause.onset_step is not None else float(s.steps[0])
        idx = np.flatnonzero(s.steps >= start)
        if not len(idx):
            return None
        vals = s.values[idx]
        bad = np.flatnonzero(~np.isfinite(vals))
        i = int(idx[bad[0]]) if len(bad) else int(idx[np.argmax(vals)])
    value = float(s.values[i])
    return {"kind": "metric", "code": cause.code, "metric": s.name, "step": float(s.steps[i]),
            "value": _number(value), "non_finite": not math.isfinite(value), "at": f"{s.artifact} {s.locator(i)}"}


def check(signature: dict, run: Run, causes: list[dict]) -> dict:
    """The earlier signature held against a later run (and its diagnosis' ranked causes):
    `verdict` is "gone", "still there" or "unknown", with `before`/`after` and where each was read."""
    code = signature["code"]
    named = next((c for c in causes if c.get("code") == code and c.get("severity") in ("critical", "high")), None)
    out = {"code": code, "kind": signature["kind"], "before_at": signature.get("at"), "named_again": named is not None}
    if signature["kind"] == "event":
        again = next((e for e in run.events if e.signature == signature["signature"]), None)
        out.update(signature=signature["signature"], before=signature.get("text"),
                   after=again.text[:200] if again else None,
                   after_at=f"{again.artifact} {again.locator}" if again else None,
                   verdict="still there" if again or named else "gone")
        return out
    # before/after are None where the value was not finite (NaN/Inf): JSON holds neither
    out.update(metric=signature["metric"], step=signature["step"], before=signature["value"])
    s = run.metrics.get(signature["metric"])
    if s is None or not len(s):
        out.update(after=None, verdict="still there" if named else "unknown",
                   reason=f"the new run logs no {signature['metric']}")
        return out
    p = value_at(s, signature["step"])
    if p is None:
        last = float(s.steps[-1])
        reason = (f"the new run stopped at step {last:g}, before step {signature['step']:g}"
                  if last < signature["step"] else f"the new run logs no {signature['metric']} near that step")
        out.update(after=None, verdict="still there" if named else "unknown", reason=reason)
        return out
    before = signature["value"]
    lower = math.isfinite(p.value) and (before is None or p.value <= GONE_RATIO * before)
    out.update(after=_number(p.value), after_step=p.step, after_at=f"{s.artifact} {p.at}",
               verdict="gone" if lower and not named else "still there")
    return out
