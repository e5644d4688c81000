"""A follow-up in a thread mltd already answered, without the agent: what the question asks
(`parse_question`), and the answer the analyzers can give from the cached run and the thread's
earlier diagnosis (`answer`): a metric over a step window, a config key or the whole config, the
artifact list, why a cause ranks below another; and plainly what they cannot answer.

Answers are plain text with `code` spans (both Slack and GitHub show those); the ports escape
and redact them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from analysis.metrics import fmt, fmt_step
from analysis.model import CODES, Diagnosis, Finding
from analysis.names import canonical, known_names
from analysis.rank import pair_text, settle_text
from analysis.run import Run
from analysis.window import Point, Window, around, window

LINES_MAX = 40
_FIX = re.compile(r"\bfix(?:ed)?\b|\bdid (?:it|that|this|the change) (?:work|help)|\bre-?ran\b|\bre-?run\b|"
                  r"\bnew run\b|\bworks? now\b|\bis it (?:gone|better)\b", re.I)
_WHY_NOT = re.compile(r"\bwhy not\b|\brather than\b|\binstead of\b|\bnot (?:just )?an? |\bcould it be\b|"
                      r"\bwhat about\b|\bisn'?t it\b", re.I)
_ARTIFACTS = re.compile(r"\bartifacts?\b|\bfiles?\b|\bwhat did you (?:read|look at|use)\b|\bwhich logs\b", re.I)
_CONFIG = re.compile(r"\bconfig(?:uration)?\b|\bhyper-?param(?:eter)?s?\b|\bsettings?\b|\bwhat(?: i|')s the\b|"
                     r"\bwhat (?:was|is) (?:the|my)\b|\bset to\b", re.I)
_WHOLE_CONFIG = re.compile(r"\bconfig(?:uration)?\b|\bhyper-?param(?:eter)?s?\b|\bsettings\b", re.I)
_NUM = r"(\d[\d,_]*(?:\.\d+)?k?)"
_RANGE = re.compile(rf"\bsteps?\s*{_NUM}\s*(?:-|–|to|and|\.\.)\s*(?:steps?\s*)?{_NUM}", re.I)
_BETWEEN = re.compile(rf"\bbetween\s+(?:steps?\s*)?{_NUM}\s+and\s+(?:steps?\s*)?{_NUM}", re.I)
_AT = re.compile(rf"\b(?:(around|near|about|at)\s+)?(?:the\s+)?(?:steps?|iter(?:ation)?s?)\s*#?\s*{_NUM}", re.I)
_AFTER = re.compile(rf"\b(after|before|since|until|from)\s+(?:steps?\s*)?{_NUM}", re.I)
# words people use for a cause, beside its code written as words (`exploding gradients`)
_CAUSE_WORDS = (
    (r"\bo\.?o\.?m\b|out of memory", "out_of_memory"),
    (r"\bnans?\b|\binf\b|overflow|numerical", "numerical_instability"),
    (r"exploding|gradient explosion|grads? blew up", "exploding_gradients"), (r"vanishing", "vanishing_gradients"),
    (r"(?:lr|learning rate) (?:is |was )?too high|high (?:lr|learning rate)|warm-?up", "lr_too_high"),
    (r"(?:lr|learning rate) (?:is |was )?too low|low (?:lr|learning rate)", "lr_too_low"),
    (r"overfit", "overfitting"), (r"dead relu|dying relu|dead units", "dead_relu"),
    (r"mode collapse|collapsed", "mode_collapse"), (r"spikes?", "loss_spikes"),
    (r"nccl|distributed|\branks?\b", "distributed_failure"), (r"data ?loader", "dataloader_failure"),
    (r"labels?|data (?:pipeline|bug)|shuffl", "data_pipeline_bug"),
    (r"frozen|no (?:parameter )?updates?", "no_parameter_updates"),
    (r"variance", "zero_variance"), (r"embedding|imbalance", "architecture_imbalance"),
)


@dataclass(frozen=True)
class Question:
    kind: str                        # fix | why_not | metric | config | artifacts | other
    text: str
    metric: str | None = None
    start: float | None = None
    end: float | None = None
    around: float | None = None
    code: str | None = None


def _number(raw: str) -> float:
    raw = raw.replace(",", "").replace("_", "").lower()
    return float(raw[:-1]) * 1000 if raw.endswith("k") else float(raw)


def cause_named(text: str) -> str | None:
    """The taxonomy code a question names: the code itself, its words, or a common word for it."""
    low = text.lower()
    for code in CODES:
        if code != "healthy" and (code in low or code.replace("_", " ") in low):
            return code
    return next((code for pattern, code in _CAUSE_WORDS if re.search(pattern, low)), None)


def metric_named(text: str, known: list[str]) -> str | None:
    """The metric a question names (`grad norm`, `the loss`, `learning rate`), longest phrase
    first: one of the run's (`known`), or any metric name mltd knows (`val loss` in a run that
    logs none: the answer says so)."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9_/.\-]*", text)
    names = (set(known) | known_names()) - {"epoch", "step_time"}     # "at epoch 7", "what time": no metric asked
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            name = canonical(" ".join(words[i:i + n]))
            if name in names:
                return name
    return None


def _steps(text: str) -> tuple[float | None, float | None, float | None]:
    """(start, end, around) of the step window a question names."""
    m = _RANGE.search(text) or _BETWEEN.search(text)
    if m:
        a, b = sorted((_number(m.group(1)), _number(m.group(2))))
        return a, b, None
    m = _AFTER.search(text)
    if m:
        x = _number(m.group(2))
        return (x, None, None) if m.group(1).lower() in ("after", "since", "from") else (None, x, None)
    m = _AT.search(text)
    if m:
        return None, None, _number(m.group(2))
    return None, None, None


def asks_fix(text: str) -> bool:
    """"Is it fixed?", "did the fix work", "I re-ran it": a question about a newer run."""
    return bool(_FIX.search(text))


def parse_question(text: str, known_metrics: list[str]) -> Question:
    if _FIX.search(text):
        return Question("fix", text)
    metric = metric_named(text, known_metrics)
    code = cause_named(text)
    if _WHY_NOT.search(text) and code and not (metric and re.search(r"\bwhat about\b", text, re.I)):
        return Question("why_not", text, code=code)
    start, end, at = _steps(text)
    if metric and (start is not None or end is not None or at is not None or not _CONFIG.search(text)):
        return Question("metric", text, metric=metric, start=start, end=end, around=at)
    if _CONFIG.search(text):
        return Question("config", text, metric=metric)
    if _ARTIFACTS.search(text):
        return Question("artifacts", text)
    if code:
        return Question("why_not", text, code=code)
    return Question("other", text)


# --- answers ------------------------------------------------------------------------------------

def _at(p: Point) -> str:
    return f"{fmt(p.value)} at step {fmt_step(p.step)} ({p.at})"


def render_window(w: Window) -> str:
    if not w.points or w.first is None or w.last is None:
        return (f"`{w.name}` has no points between steps {fmt_step(round(w.start))}-{fmt_step(round(w.end))} "
                f"({w.artifact}).")
    span = f"steps {fmt_step(w.first.step)}-{fmt_step(w.last.step)}"
    lines = [f"`{w.name}` over {span} ({w.artifact}), {w.points} points:"]
    if w.first and w.last:
        lines.append(f"• first {_at(w.first)}, last {_at(w.last)}")
    if w.low and w.high:
        lines.append(f"• min {_at(w.low)}, max {_at(w.high)}")
    lines.append(f"• first non-finite value: {_at(w.first_non_finite)}" if w.first_non_finite
                 else "• every value is finite")
    lines.append("• values: " + ", ".join(f"{fmt_step(p.step)}: {fmt(p.value)}" for p in w.sample))
    return "\n".join(lines)


def _metric(q: Question, run: Run) -> str:
    s = run.metrics.get(q.metric or "")
    if s is None:
        known = ", ".join(f"`{n}`" for n in run.metrics.names()) or "no metric"
        return f"This run logs no `{q.metric}`; it logs {known}."
    if q.around is not None:
        lo, hi = around(s, q.around)
        return render_window(window(s, lo, hi))
    return render_window(window(s, q.start, q.end))


def _config_keys(text: str, run: Run) -> list[tuple[str, str, object, int | None]]:
    """(artifact, key, value, line) of the config keys a question names, best match first."""
    words = {w.replace("-", "") for w in re.findall(r"[a-z][a-z0-9\-]*", text.lower())}
    joined = re.sub(r"[^a-z0-9]", "", text.lower())
    scored = []
    for cfg in run.configs:
        for key, value in cfg.values.items():
            leaf = key.rsplit(".", 1)[-1].lower()
            parts = [p for p in re.split(r"[_\-.]", leaf) if p]
            hits = sum(1 for p in parts if p in words and (len(p) >= 3 or p in ("lr", "bs")))
            if len(leaf) >= 4 and leaf.replace("_", "").replace("-", "") in joined:
                hits += 2
            if hits:
                scored.append((hits, cfg.artifact, key, value, cfg.lines.get(key)))
    best = max((s[0] for s in scored), default=0)
    return [(a, k, v, n) for h, a, k, v, n in scored if h == best][:10]


def _config(q: Question, run: Run) -> str:
    if not run.configs:
        return "This run has no config file I could read (YAML, JSON, TOML or an argparse dump)."
    keys = _config_keys(q.text, run)
    if keys:
        return "\n".join(f"`{k}` = `{v}` ({a}" + (f" line {n})" if n else ")") for a, k, v, n in keys)
    if not _WHOLE_CONFIG.search(q.text):
        files = ", ".join(c.artifact for c in run.configs)
        return f"No key in this run's config ({files}) matches what you asked. " + CANNOT.format(question=q.text[:200])
    lines = []
    for cfg in run.configs:
        lines.append(f"{cfg.artifact}:")
        for key, value in list(cfg.values.items())[:LINES_MAX]:
            n = cfg.lines.get(key)
            lines.append(f"• `{key}` = `{value}`" + (f" (line {n})" if n else ""))
        if len(cfg.values) > LINES_MAX:
            lines.append(f"• … and {len(cfg.values) - LINES_MAX} more keys")
    return "\n".join(lines)


def _artifacts(run: Run) -> str:
    lines = [f"The {len(run.artifacts)} file(s) I read of this run:"]
    for a in run.artifacts[:LINES_MAX]:
        size = f"{a.size / 1024:,.0f} kB" if a.size >= 1024 else f"{a.size} B"
        lines.append(f"• `{a.path}`: {a.kind}, {a.format}, {size}" + (f"; not read: {a.problem}" if a.problem else ""))
    if len(run.artifacts) > LINES_MAX:
        lines.append(f"• … and {len(run.artifacts) - LINES_MAX} more")
    return "\n".join(lines)


def _evidence(c: Finding, n: int = 2) -> str:
    return "; ".join(f"{e.text} ({e.artifact} {e.locator})" for e in c.evidence[:n])


def _why_not(q: Question, doc: Diagnosis) -> str:
    causes = [c for c in doc.root_causes if c.code != "healthy"]
    code = q.code or ""
    if not causes:
        return (f"My diagnosis found no cause at all (status {doc.status}), so nothing ranks above `{code}`. "
                f"What would show it: {settle_text(code)}.")
    top = causes[0]
    rank = next((i for i, c in enumerate(causes) if c.code == code), None)
    if rank == 0:
        return (f"`{code}` is my top cause (confidence {top.confidence:.2f}): {_evidence(top)}.")
    lead = (f"The top cause is `{top.code}` (confidence {top.confidence:.2f}): {_evidence(top)}.")
    separate = pair_text(top.code, code) or settle_text(code)
    if rank is None:
        return (f"The analyzers found no evidence of `{code}` in this run, so it is not among my causes. {lead}\n"
                f"What would show `{code}`: {separate}.")
    c = causes[rank]
    return (f"`{code}` is cause {rank + 1} of {len(causes)} (confidence {c.confidence:.2f}, {c.severity}): "
            f"{_evidence(c)}. It ranks lower because {lead[0].lower() + lead[1:]}\n"
            f"What would tell them apart: {separate}.")


CANNOT = ("Without the specialist agent I can answer, about this run: a metric over a step window "
          "(`grad norm around step 600`, `loss between step 100 and 200`), a config key (`what is the warm-up`, "
          "`show me the config`), the files I read (`which files`), why one cause ranks below another "
          "(`why not exploding gradients?`), and whether a new run fixed it (`is it fixed?`). "
          "I can't answer “{question}” from the analyzers alone.")


def answer(q: Question, run: Run, doc: Diagnosis) -> str:
    """The analyzers' answer to a follow-up about `run`, whose earlier diagnosis is `doc`."""
    if q.kind == "metric":
        return _metric(q, run)
    if q.kind == "config":
        return _config(q, run)
    if q.kind == "artifacts":
        return _artifacts(run)
    if q.kind == "why_not":
        return _why_not(q, doc)
    return CANNOT.format(question=q.text[:200])
