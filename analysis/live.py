"""A live run: points appended one step at a time into bounded summaries, and the post-mortem's own
analyzers run on them, so that an early warning carries the evidence and patch a diagnosis would.
Each point also feeds the precursor rules (analysis/precursors.py), which warn before the
analyzers' evidence is conclusive.

Memory is O(1) in the run's length: each metric keeps at most `CAPACITY` points; past that it is
halved by keeping, of each adjacent pair, the larger value (a NaN counts as largest, as in
metrics.py), and later points join at that coarser resolution. So a check costs the same at step
ten million as at step one thousand, and a spike, a divergence and the first NaN survive thinning.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from analysis.diagnose import CONFIDENT, diagnose_run
from analysis.metrics import MetricTable, Series
from analysis.model import Artifact, Diagnosis, Finding
from analysis.names import canonical
from analysis.precursors import Precursors
from analysis.run import Run

CAPACITY = 1024                      # points kept per metric
ALARM_SEVERITIES = ("critical", "high")
# On a prefix of a run, the post-mortem's findings under CONFIDENT are too often wrong to interrupt
# someone (a noisy loss reads as a divergence, an early plateau as a loss at chance: nine false
# warnings on the suite's healthy runs at 0.5); the precursor rules give the early warning instead.
# A NaN or an OOM is an event, not a reading of a trend: it warns from EVENT_CONFIDENCE on the rules'
# own scale (a NaN loss reads 0.5 on a short curve, 0.7 on a longer one), not on the calibrated
# one, which pools every code's post-mortems and moves with each refit of the map.
ALARM_CONFIDENCE = CONFIDENT
EVENT_CODES = ("numerical_instability", "out_of_memory")
EVENT_CONFIDENCE = 0.5
# Causes a live run shows suddenly (a NaN, a blow-up, a divergence) warn as soon as they are found;
# the others (a stall, a slow LR, a leak) only once the run has this many loss points, because on a
# short prefix every run looks stalled.
ACUTE_CODES = ("numerical_instability", "exploding_gradients", "lr_too_high", "out_of_memory")
SETTLED_POINTS = 100


def _rank_key(v: float) -> float:
    return math.inf if math.isnan(v) else v


class BoundedSeries:
    """One metric's points, at most `capacity` of them, thinned by keeping the larger of each pair."""

    __slots__ = ("name", "steps", "values", "n", "stride", "_group", "_best", "_best_step")

    def __init__(self, name: str, capacity: int = CAPACITY) -> None:
        self.name = name
        self.steps = np.empty(capacity)
        self.values = np.empty(capacity)
        self.n = 0
        self.stride = 1            # raw points per kept point
        self._group = 0            # raw points in the group being collected (stride > 1)
        self._best = 0.0
        self._best_step = 0.0

    def append(self, step: float, value: float) -> None:
        if self.stride > 1:
            if self._group == 0 or _rank_key(value) > _rank_key(self._best):
                self._best, self._best_step = value, step
            self._group += 1
            if self._group < self.stride:
                return
            step, value, self._group = self._best_step, self._best, 0
        if self.n == len(self.values):
            self._halve()
        self.steps[self.n] = step
        self.values[self.n] = value
        self.n += 1

    def _halve(self) -> None:
        half = self.n // 2
        pairs = np.where(np.isnan(self.values[: 2 * half]), np.inf, self.values[: 2 * half]).reshape(half, 2)
        keep = np.argmax(pairs, axis=1) + np.arange(0, 2 * half, 2)
        self.steps[:half], self.values[:half] = self.steps[keep], self.values[keep]
        self.n = half
        self.stride *= 2

    def series(self, artifact: str) -> Series:
        steps, values = self.steps[: self.n].copy(), self.values[: self.n].copy()
        if self._group:              # the group still being collected counts with its largest point
            steps, values = np.append(steps, self._best_step), np.append(values, self._best)
        return Series(self.name, artifact, steps, values, None, "step", self.stride)


class LiveRun:
    """A run being trained: `append` a step's metrics, `diagnosis()` when a check is due.

    `context` is the rest of the run as far as it is known (its config and code, read once), so
    that a finding can cite the config line and suggest the same patch as the post-mortem."""

    def __init__(self, run_id: str = "live", *, source: str = "live", artifact: str = "live metrics",
                 context: Run | None = None, capacity: int = CAPACITY) -> None:
        self.context = context or Run(root=Path("."), source=source, id=run_id)
        self.artifact = artifact
        self.capacity = capacity
        self.metrics: dict[str, BoundedSeries] = {}      # by canonical name
        self._by_raw: dict[str, BoundedSeries] = {}
        self.last_step = -1.0
        self.points = 0            # steps appended
        self.precursors = Precursors(self.context, artifact)

    def append(self, step: float | None, values: Mapping[str, float]) -> list[Finding]:
        """Appends one step's points; returns the early findings (precursors) that fired at it."""
        step = self.last_step + 1 if step is None else float(step)
        named = {}
        for raw, value in values.items():
            s = self._by_raw.get(raw)
            if s is None:
                s = self._by_raw[raw] = self._series(canonical(raw))
            s.append(step, value)
            named[s.name] = value
        self.last_step = step
        self.points += 1
        return self.precursors.append(step, named)

    def _series(self, name: str) -> BoundedSeries:
        s = self.metrics.get(name)
        if s is None:
            s = self.metrics[name] = BoundedSeries(name, self.capacity)
        return s

    def snapshot(self) -> Run:
        table = MetricTable()
        for s in self.metrics.values():
            table.add(s.series(self.artifact))
        artifacts = [*self.context.artifacts, Artifact(self.artifact, "metrics", "live")]
        return replace(self.context, artifacts=artifacts, metrics=table, events=list(self.context.events), notes=[])

    def diagnosis(self, symptoms: tuple[str, ...] = ()) -> Diagnosis:
        return diagnose_run(self.snapshot(), symptoms)


def _raw(c: Finding) -> float:
    return c.confidence if c.raw_confidence is None else c.raw_confidence


def alarms(diagnosis: Diagnosis, loss_points: int) -> list[Finding]:
    """The root causes worth interrupting someone for: at a critical or high severity, sure enough,
    and, unless acute, seen over a settled stretch of the run."""
    return [c for c in diagnosis.root_causes
            if c.code != "healthy" and c.severity in ALARM_SEVERITIES
            and (_raw(c) >= EVENT_CONFIDENCE if c.code in EVENT_CODES else c.confidence >= ALARM_CONFIDENCE)
            and (c.code in ACUTE_CODES or loss_points >= SETTLED_POINTS)]


class LogTail:
    """A growing plain-text log read as it grows: `feed(bytes)` with whatever was appended returns
    the new points, one per metric line, through the same scanner and metric names as the
    post-mortem's reader (ingest/textlog.py). A line is read once complete; failures (a traceback,
    an OOM) become events, the last `MAX_EVENTS` kept."""

    MAX_EVENTS = 64

    def __init__(self, artifact: str) -> None:
        from analysis.ingest.textlog import _Families
        self.artifact = artifact
        self.families = _Families()
        self.events: list = []
        self.lines = 0
        self.skipped = 0           # as a metrics file's tail counts them; a log's other lines are text, not damage
        self.last_step: float | None = None
        self._rest = b""

    def feed(self, data: bytes) -> list[tuple[float | None, dict[str, float]]]:
        from analysis.ingest.textlog import _events, _literals, _scan, _section_initials
        data = self._rest + data
        cut = data.rfind(b"\n") + 1
        self._rest = data[cut:]
        if not cut:
            return []
        chunk = memoryview(data)[: cut - 1]
        n_lines, _, columns, hits, _, chunk_last, *_ = _scan(chunk, self.families.resolve, _literals(),
                                                             _section_initials())
        new_events = _events(chunk, np.frombuffer(hits, np.int64), self.lines, self.artifact)
        self.events = (self.events + new_events)[-self.MAX_EVENTS:]
        rows: dict[int, tuple[float, dict[str, float]]] = {}
        for fam, row_ids, _, steps, values in columns:
            for r, st, v in zip(np.frombuffer(row_ids, np.int32).tolist(), np.frombuffer(steps, np.float64).tolist(),
                                np.frombuffer(values, np.float64).tolist()):
                rows.setdefault(r, (st, {}))[1][self.families.names[fam]] = v
        points = []
        for r in sorted(rows):
            st, values = rows[r]
            if st == st:                    # a row without a step of its own takes the last one seen
                self.last_step = st
            points.append((self.last_step, values))
        if chunk_last == chunk_last:
            self.last_step = chunk_last
        self.lines += n_lines
        return points
