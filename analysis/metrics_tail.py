"""A growing metrics file read as it grows: a CSV/TSV (a header, then a row per logging call) or
JSON Lines (an object per line: `{"step": 10, "loss": 0.5}`, HF Trainer's `log_history` entries,
nested `{"train": {"loss": ...}}`). `feed(bytes)` with whatever was appended returns the new points,
one per complete row; a partial last line waits for its newline.

Columns and keys are read as the post-mortem reads these files (analysis/ingest/tables.py): the step
column by the same names, bookkeeping columns (time, timestamps) skipped, metric names mapped by
analysis/data/metric_names.toml when the points reach `LiveRun`. `nan`/`inf` are points (a NaN is
the warning); an empty cell is a gap, as the ingest reads it (Lightning's CSVLogger leaves the cells
of metrics not logged on a row empty). A row that cannot be read (bad JSON, not an object, more cells
than the header, no number at all: a repeated header) is skipped and counted in `skipped`.
"""
from __future__ import annotations

import csv
import io
import json
import math

from analysis.ingest.tables import _flatten, _role, to_float

Point = tuple[float | None, dict[str, float]]


class _LinesTail:
    """Complete lines out of appended bytes; a metrics file holds no failure events."""

    def __init__(self, artifact: str) -> None:
        self.artifact = artifact
        self.events: list = []
        self.lines = 0
        self.skipped = 0
        self._rest = b""

    def feed(self, data: bytes) -> list[Point]:
        data = self._rest + data
        cut = data.rfind(b"\n") + 1
        self._rest = data[cut:]
        lines = data[:cut].decode("utf-8", "replace").splitlines()
        self.lines += len(lines)
        points = []
        for line in lines:
            if line.strip():
                point = self._row(line)
                if point is None:
                    self.skipped += 1
                elif point[1]:             # a header, or a row with only a step, is no point
                    points.append(point)
        return points

    def _row(self, line: str) -> Point | None:
        raise NotImplementedError


def _point(items) -> Point | None:
    """(step, metrics) of a row's (key, cell) pairs, metrics by their raw names; None when no cell is a
    number (a repeated header, a comment)."""
    step, values, numeric = None, {}, False
    for key, cell in items:
        role = _role(str(key)) if key else ""
        value = to_float(cell)
        if value is None or not role:
            continue
        numeric = True
        if role == "step":
            step = value if math.isfinite(value) else step
        else:
            values[role] = value
    return (step, values) if numeric else None


class CsvTail(_LinesTail):
    """`delimiter` None: the header's own (`,`, tab or `;`, whichever it holds most of)."""

    def __init__(self, artifact: str, delimiter: str | None = None) -> None:
        super().__init__(artifact)
        self.delimiter = delimiter
        self.header: list[str] | None = None

    def _row(self, line: str) -> Point | None:
        delimiter = self.delimiter or max(",\t;", key=line.count)
        self.delimiter = delimiter
        if self.header is None:
            self.header = [h.strip() for h in next(csv.reader([line], delimiter=delimiter))]
            return None, {}
        try:
            cells = next(csv.reader(io.StringIO(line), delimiter=delimiter))
        except csv.Error:
            return None
        if len(cells) > len(self.header):
            return None
        # a repeated name: the first column of it counts, as in the ingest
        seen: set[str] = set()
        items = []
        for h, c in zip(self.header, cells):
            if h not in seen:
                seen.add(h)
                items.append((h, c))
        return _point(items)


class JsonlTail(_LinesTail):
    def _row(self, line: str) -> Point | None:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        if any(isinstance(v, dict) for v in obj.values()):
            obj = _flatten(obj)
        return _point(obj.items())
