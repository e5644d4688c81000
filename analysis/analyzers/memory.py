"""Memory: logged allocation (max_memory_allocated, nvidia-smi or RSS lines) that grows step over
step is a leak, reported with its slope and the code that keeps tensors alive.
Threshold: growth of 25% or more from the first tenth of the run to the last, on a straight line
(correlation with the step of 0.9 or more)."""
from __future__ import annotations

import re

import numpy as np

from analysis.metrics import fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "memory"
LEAK_GROWTH = 1.25        # the last tenth's memory at least 25% over the first tenth's
LEAK_STRAIGHT = 0.9       # ...on a straight line: correlation with the step at least this
# a short paste (5 to 9 reports): the same step up at every report, no plateau, to twice the first. A sound
# run's memory settles after its first step or two (the optimizer's state, the allocator's cache); one that adds
# a like amount at every iteration keeps something of each
SHORT_LEAK_REPORTS, SHORT_LEAK_GROWTH, SHORT_LEAK_EVEN = 5, 2.0, 0.25
SHORT_LEAK_CONF = 0.6     # a few steps say less than a run's length of them
# code that keeps each step's graph alive: retain_graph, or appending outputs that still hold it
_KEEPS = re.compile(r"retain_graph\s*=\s*True"
                    r"|\.append\(\s*\(?\s*(out|outs|output|outputs|logits|loss|pred|preds)\b")


def analyze(run: Run) -> list[Finding]:
    s = run.metrics.get("memory_allocated")
    if s is None or len(s) < SHORT_LEAK_REPORTS:
        return []
    ok = np.isfinite(s.values)
    x, y = s.steps[ok], s.values[ok]
    if len(y) < SHORT_LEAK_REPORTS or np.ptp(x) == 0:
        return []
    short = len(y) < 10
    r = float(np.corrcoef(x, y)[0, 1]) if np.std(y) > 0 else 0.0
    if short:
        if not _even_climb(y):
            return []
        start, end = float(y[0]), float(y[-1])
    else:
        k = max(2, len(y) // 10)
        start, end = float(np.median(y[:k])), float(np.median(y[-k:]))
        if start <= 0 or end < LEAK_GROWTH * start or r < LEAK_STRAIGHT:
            return []
    slope = float(np.polyfit(x, y, 1)[0])
    per, rate = ("step", slope) if short else ("100 steps", slope * 100)
    died = any(e.code == "out_of_memory" for e in run.events)
    ev = [Evidence(f"{s.name} grew from {fmt(start)} to {fmt(end)} ({rate:+.3g} per {per}, "
                   f"correlation {r:.2f} with the step)", s.artifact, s.span_locator(0, len(s) - 1))]
    for code in run.code:
        for n, line in enumerate(code.text.splitlines(), start=1):
            if _KEEPS.search(line):
                ev.append(Evidence(f"{line.strip()}: keeps every step's tensors (and their graphs) alive",
                                   code.artifact, f"line {n}"))
    span = f"{fmt(rate)} per {per}, from {fmt(start)} to {fmt(end)} by {s.step_kind} {fmt_step(float(x[-1]))}"
    return [Finding(code="out_of_memory", issue=f"Memory grows step over step ({span})"
                    + (": a leak, and the run died of it" if died else ": a leak"),
                    severity="critical" if died else "high",
                    confidence=0.98 if died else SHORT_LEAK_CONF if short else 0.8,
                    evidence=ev,
                    fix="Stop keeping each step's tensors: log loss.item() instead of loss, do not append "
                        "outputs or losses with their graphs to lists (detach().cpu() what you keep), drop "
                        "retain_graph=True, and wrap evaluation in torch.no_grad()",
                    expected_impact="memory stays flat after the first steps", analyzer=NAME,
                    onset_step=float(x[0]), quick_fix="Store loss.item(), not the loss tensor")]


def _even_climb(y: np.ndarray) -> bool:
    """A few reports that each add about the same amount, ending at SHORT_LEAK_GROWTH times the first."""
    d = np.diff(y)
    return bool(y[0] > 0 and y[-1] >= SHORT_LEAK_GROWTH * y[0] and (d > 0).all()
                and np.ptp(d) <= SHORT_LEAK_EVEN * float(np.mean(d)))
