"""Metric series with their provenance, and the per-run table built from them.

Every value keeps the artifact it came from and, where the format has lines, its line number, so
that evidence can cite "train.log line 18211". A series is capped in memory: past `MAX_POINTS` it
is halved by keeping, of each adjacent pair, the larger value (a NaN counts as largest), so a
1 GB log stays bounded while spikes, divergence and the first NaN survive.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

MAX_POINTS = 1 << 17


@dataclass
class Series:
    name: str
    artifact: str
    steps: np.ndarray
    values: np.ndarray
    lines: np.ndarray | None = None     # 1-based line numbers, when the format has lines
    step_kind: str = "step"              # "step", or "index" when the file had no step column
    stride: int = 1                      # >1 when the series was decimated

    def __len__(self) -> int:
        return len(self.values)

    @property
    def step_kinds(self) -> str:
        """The plural of `step_kind`: `steps`, `indices`."""
        return "indices" if self.step_kind == "index" else f"{self.step_kind}s"

    def take(self, idx) -> Series:
        """The series at these reports only (an index array, a mask or a slice)."""
        return replace(self, steps=self.steps[idx], values=self.values[idx],
                       lines=None if self.lines is None else self.lines[idx])

    def locator(self, i: int) -> str:
        if self.lines is not None and self.lines[i] > 0:
            return f"line {int(self.lines[i])}"
        return f"{self.step_kind} {fmt_step(self.steps[i])}"

    def span_locator(self, i: int, j: int) -> str:
        if self.lines is not None and self.lines[i] > 0 and self.lines[j] > 0:
            a, b = int(self.lines[i]), int(self.lines[j])
            return f"line {a}" if a == b else f"lines {a}-{b}"
        first, last = fmt_step(self.steps[i]), fmt_step(self.steps[j])
        return f"{self.step_kind} {first}" if first == last else f"{self.step_kinds} {first}-{last}"


def fmt_step(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def fmt(x: float) -> str:
    """A number as a person writes it in a report."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "NaN"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1e5 or a < 1e-3:
        return f"{x:.2e}"
    if a >= 100:
        return f"{x:.1f}"
    return f"{x:.4g}"


def clip(text: str, n: int) -> str:
    """`text` cut to about `n` characters at a space, marked with an ellipsis: a quoted line is never
    cut inside a word, so a secret in it is either whole (and redacted at the output) or absent,
    never a prefix too short to recognise."""
    if len(text) <= n:
        return text
    cut = text.rfind(" ", 0, n)
    return text[: cut if cut >= n // 2 else n].rstrip() + "…"


def _keep_largest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices that keep one point of every k consecutive ones: the largest, NaN and Inf first, so
    that a spike or a NaN survives any amount of thinning. A short last group keeps its own."""
    n = len(values) - len(values) % k
    key = np.where(np.isnan(values[:n]), np.inf, values[:n]).reshape(-1, k)
    pick = np.argmax(key, axis=1) + np.arange(0, n, k)
    if n < len(values):
        tail = values[n:]
        pick = np.append(pick, n + int(np.argmax(np.where(np.isnan(tail), np.inf, tail))))
    return pick


@dataclass
class SeriesBuilder:
    """Accumulates one series chunk by chunk, halving it whenever it outgrows the cap."""

    name: str
    artifact: str
    with_lines: bool = True
    _steps: list[np.ndarray] = field(default_factory=list)
    _values: list[np.ndarray] = field(default_factory=list)
    _lines: list[np.ndarray] = field(default_factory=list)
    _n: int = 0
    stride: int = 1

    def extend(self, steps, values, lines=None) -> None:
        steps = np.asarray(steps, dtype=np.float64)
        values = np.asarray(values, dtype=np.float64)
        if not len(values):
            return
        lines = np.asarray(lines if lines is not None else np.zeros(len(values)), dtype=np.int64)
        if self.stride > 1:        # new points join at the resolution the old ones were cut to
            keep = _keep_largest(values, self.stride)
            steps, values, lines = steps[keep], values[keep], lines[keep]
        self._steps.append(steps)
        self._values.append(values)
        if self.with_lines:
            self._lines.append(lines)
        self._n += len(values)
        if self._n > 2 * MAX_POINTS:
            self._halve()

    def _halve(self) -> None:
        steps, values, lines = self._concat()
        keep = _keep_largest(values, 2)
        self._steps, self._values = [steps[keep]], [values[keep]]
        self._lines = [lines[keep]] if lines is not None else []
        self._n = len(keep)
        self.stride *= 2

    def _concat(self):
        steps = np.concatenate(self._steps) if self._steps else np.empty(0)
        values = np.concatenate(self._values) if self._values else np.empty(0)
        lines = np.concatenate(self._lines) if self._lines else None
        return steps, values, lines

    def build(self, step_kind: str = "step") -> Series | None:
        if not self._n:
            return None
        steps, values, lines = self._concat()
        order = np.argsort(steps, kind="stable")
        if not np.all(order == np.arange(len(order))):
            steps, values = steps[order], values[order]
            lines = lines[order] if lines is not None else None
        return Series(self.name, self.artifact, steps, values, lines, step_kind, self.stride)


class MetricTable:
    """All series of a run by canonical name. Where two artifacts log the same metric, the one with
    more points is primary and the other is kept as an alternate."""

    def __init__(self) -> None:
        self.series: dict[str, Series] = {}
        self.alternates: dict[str, list[Series]] = {}

    def add(self, s: Series | None) -> None:
        if s is None or not len(s):
            return
        have = self.series.get(s.name)
        if have is None:
            self.series[s.name] = s
        elif len(s) > len(have):
            self.alternates.setdefault(s.name, []).append(have)
            self.series[s.name] = s
        else:
            self.alternates.setdefault(s.name, []).append(s)

    def get(self, name: str) -> Series | None:
        return self.series.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self.series

    def names(self) -> list[str]:
        return sorted(self.series)

    def layer_series(self, prefix: str) -> dict[str, Series]:
        return {n.split("/", 1)[1]: s for n, s in self.series.items() if n.startswith(prefix + "/")}

    def frame(self):
        """One table keyed by step, a column per canonical metric (last value at a repeated step),
        as a pandas DataFrame (pandas is imported here only: a diagnosis never needs it)."""
        import pandas as pd

        cols = {}
        for name, s in self.series.items():
            col = pd.Series(s.values, index=pd.Index(s.steps, name="step"))
            cols[name] = col[~col.index.duplicated(keep="last")]
        if not cols:
            return pd.DataFrame(index=pd.Index([], name="step"))
        return pd.DataFrame(cols).sort_index()
