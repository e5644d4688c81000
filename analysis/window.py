"""A metric over a step window, and a metric's value at one step: what a follow-up question about
a run ("grad norm around step 600") and the "did the fix work" check read from a run's series.
Pure: numbers and locators out, no wording for a platform."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.metrics import Series

AROUND_SHARE = 0.05        # "around step S": S ± 5% of the run's step span...
AROUND_MIN_POINTS = 5      # ...and at least this many points either side


@dataclass(frozen=True)
class Point:
    step: float
    value: float
    at: str                # the locator: "line 311" or "step 299"


@dataclass(frozen=True)
class Window:
    name: str
    artifact: str
    start: float
    end: float
    points: int
    first: Point | None
    last: Point | None
    low: Point | None          # the smallest finite value
    high: Point | None         # the largest finite value
    first_non_finite: Point | None
    sample: tuple[Point, ...]  # at most `SAMPLE` points, spread over the window


SAMPLE = 12


def _point(s: Series, i: int) -> Point:
    return Point(float(s.steps[i]), float(s.values[i]), s.locator(i))


def around(s: Series, step: float) -> tuple[float, float]:
    """The window "around step S" of this series: S ± 5% of its span, at least 5 points either side."""
    span = float(s.steps[-1] - s.steps[0]) if len(s) > 1 else 0.0
    half = AROUND_SHARE * span
    i = int(np.searchsorted(s.steps, step))
    lo = float(s.steps[max(0, i - AROUND_MIN_POINTS)])
    hi = float(s.steps[min(len(s) - 1, i + AROUND_MIN_POINTS)])
    return min(step - half, lo), max(step + half, hi)


def window(s: Series, start: float | None = None, end: float | None = None) -> Window:
    """The series between two steps (inclusive; None: from the start / to the end)."""
    m = np.ones(len(s), bool)
    if start is not None:
        m &= s.steps >= start
    if end is not None:
        m &= s.steps <= end
    idx = np.flatnonzero(m)
    lo = float(start) if start is not None else float(s.steps[0]) if len(s) else 0.0
    hi = float(end) if end is not None else float(s.steps[-1]) if len(s) else 0.0
    if not len(idx):
        return Window(s.name, s.artifact, lo, hi, 0, None, None, None, None, None, ())
    vals = s.values[idx]
    finite = np.isfinite(vals)
    bad = np.flatnonzero(~finite)
    low = high = None
    if finite.any():
        fin = idx[finite]
        low, high = _point(s, int(fin[np.argmin(s.values[fin])])), _point(s, int(fin[np.argmax(s.values[fin])]))
    spread = idx[np.linspace(0, len(idx) - 1, min(SAMPLE, len(idx))).astype(int)]
    return Window(s.name, s.artifact, lo, hi, len(idx), _point(s, int(idx[0])), _point(s, int(idx[-1])), low, high,
                  _point(s, int(idx[bad[0]])) if len(bad) else None, tuple(_point(s, int(i)) for i in spread))


def value_at(s: Series, step: float, tolerance: float | None = None) -> Point | None:
    """The point logged at `step`, or the nearest one within `tolerance` steps (default: 1% of the
    span, at least one step): None when the run did not log near there."""
    if not len(s):
        return None
    span = float(s.steps[-1] - s.steps[0]) if len(s) > 1 else 0.0
    tol = tolerance if tolerance is not None else max(1.0, 0.01 * span)
    i = int(np.argmin(np.abs(s.steps - step)))
    return _point(s, i) if abs(float(s.steps[i]) - step) <= tol else None
