"""The watcher: a live run's points in, at most one warning per cause out: an early one when a
precursor rule fires (analysis/precursors.py: "early", at a confidence below the post-mortem's),
or the post-mortem's own finding when an analyzer crosses into critical/high; then an update only
when a new cause alarms or the post-mortem confirms an early one.

Cost is bounded twice: the analyzers run every `every` logged steps (and at once on the first
non-finite value), and never while the time spent checking exceeds `budget` of the wall time
since the watch began, so a fast loop is checked less often rather than slowed down.
"""
from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from analysis.diagnose import CONFIDENT
from analysis.ingest import load_run
from analysis.live import LiveRun, alarms
from analysis.live_warning import LiveWarning
from analysis.metrics import MetricTable
from analysis.model import Finding
from analysis.run import Run
from handlers.watch.notify import Notifier, WatchNotifyError, from_env

CHECK_EVERY = 5             # logged steps between two checks
OVERHEAD_BUDGET = 0.003     # the share of wall time the checks may take
FIRST_CHECK_ESTIMATE_S = 0.02    # what a check is assumed to cost until one has been timed
LOSS = "train_loss"


def read_context(path: str | Path | None) -> Run | None:
    """A run folder's config, code and checkpoints, read once, without its metrics or events: what
    a finding cites for its fix and patch."""
    if path is None:
        return None
    run = load_run(path)
    return replace(run, metrics=MetricTable(), events=[], notes=[])


def to_float(value) -> float:
    """A number from a float, an int, a numpy scalar or a one-element tensor."""
    item = getattr(value, "item", None)
    return float(item() if item is not None else value)


class Watcher:
    def __init__(self, run_id: str = "live", *, notifier: Notifier | None = None,
                 context: str | Path | Run | None = None, every: int = CHECK_EVERY,
                 budget: float | None = OVERHEAD_BUDGET,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        ctx = context if isinstance(context, Run) or context is None else read_context(context)
        self.live = LiveRun(run_id, context=ctx)
        self.notifier = notifier or from_env()
        self.every, self.budget, self.clock = every, budget, clock
        self.warned: set[str] = set()
        self.warned_early: set[str] = set()  # causes whose first warning was early (a precursor)
        self.confirmed: set[str] = set()     # of those, the ones the post-mortem's analyzers have since confirmed
        self.posts: list[LiveWarning] = []   # what was posted, in order
        self.checks = 0
        self.spent_s = 0.0
        self.skipped_lines = 0               # `mltd watch`: lines of the followed file that could not be read
        self._since = 0
        self._started = clock()
        self._nonfinite_seen = False
        self._last_cost = FIRST_CHECK_ESTIMATE_S

    def log(self, step: float | None = None, **metrics) -> list[Finding]:
        """Appends one step's metrics (floats, numpy scalars or tensors; None is skipped); returns
        the alarming findings when this step was checked."""
        return self.append(step, {k: to_float(v) for k, v in metrics.items() if v is not None})

    def append(self, step: float | None, values: Mapping[str, float], *, action: str | None = None,
               checkpoint: str | None = None) -> list[Finding]:
        """One step's canonical-or-raw metrics; `action`: what the guard did at this step (checked and said at once)."""
        early = self.live.append(step, values)
        self._since += 1
        first_bad = not self._nonfinite_seen and not all(math.isfinite(v) for v in values.values())
        if first_bad:
            self._nonfinite_seen = True
        if first_bad or action or early or (self._since >= self.every and self._affordable()):
            return self.check(action=action, checkpoint=checkpoint)
        return []

    def _affordable(self) -> bool:
        """A check fits if, with the last one's cost added, the checks stay within `budget` of the wall time."""
        return self.budget is None or self.spent_s + self._last_cost <= self.budget * (self.clock() - self._started)

    def check(self, *, action: str | None = None, checkpoint: str | None = None) -> list[Finding]:
        t0 = self.clock()
        diagnosis = self.live.diagnosis()
        loss = self.live.metrics.get(LOSS)
        found = alarms(diagnosis, loss.n * loss.stride if loss else 0)
        named = {f.code for f in found}
        certain = {f.code for f in found if f.confidence >= CONFIDENT}
        precursors = [f for code, f in self.live.precursors.fired.items() if code not in named]
        alarming = [f.code for f in found] + [f.code for f in precursors]
        early = set(alarming) - certain          # warned, and not (yet) what the post-mortem is sure of
        new = set(alarming) - self.warned
        confirmed = certain & self.warned_early - self.confirmed
        if new or confirmed or action:
            self.warned |= new
            self.warned_early |= new & early
            self.confirmed |= confirmed
            # the precursors lead; a "healthy" verdict no longer stands beside them
            causes = precursors + [c for c in diagnosis.root_causes if not (precursors and c.code == "healthy")]
            warning = LiveWarning(replace(diagnosis, root_causes=causes), step=self.live.last_step,
                                  update=len(self.posts), alarms=tuple(alarming), early=tuple(sorted(early)),
                                  confirmed=tuple(sorted(confirmed)), action=action, checkpoint=checkpoint)
            self.posts.append(warning)
            try:
                self.notifier.post(warning)
            except WatchNotifyError as exc:      # a lost warning must not cost the training run
                print(f"mltd watch: {exc}", file=sys.stderr)
        self.checks += 1
        self._since = 0
        self._last_cost = self.clock() - t0
        self.spent_s += self._last_cost
        return found        # the post-mortem's alarms only: the guard never acts on an early warning
