"""Rows of bare numbers in a pasted log: a CSV or whitespace table printed without its header
(timm's summary rows `209,nan,4.16,7.72,24.0`), or the list a Keras `train_on_batch` returns printed
as `17.269388197455335 0.5`. The C scanner reads `key <sep> number` pairs and finds none in them.
Two readings name their columns, and nothing beyond them is guessed:
- a first column that counts up by whole numbers at every row is the row's step; the other columns
  are metrics whose names were not printed (`column_2`...), enough to see one turn NaN;
- a row whose values are, to the printed precision, those of one named line of the same log
  (`loss: 17.2694 - acc.: 0.5000`) takes that line's names, and every row of its width with it.
A table needs TABLE_ROWS rows, and a counted one a column with a fraction in it: a block of whole
numbers is a confusion matrix or a shape, not a table of metrics. Only files up to BARE_MAX_BYTES
are read again for them: pasted excerpts and summaries; a trainer's long log names what it prints.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.metrics import Series

BARE_MAX_BYTES = 1 << 20
TABLE_ROWS = 3
UNNAMED = "column_"            # the prefix of a metric whose name the table did not print
AGREE_REL = 5e-4               # printed to 3 decimals or more (`2.303`, Keras' `17.2694`): within half a 3rd place
_CELL = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|nan|NaN|NAN|inf|Inf|INF)"
_ROW = re.compile(rf"^\s*{_CELL}(?:(?:\s*,\s*|\s+){_CELL})+\s*,?\s*$")
_SPLIT = re.compile(r"\s*,\s*|\s+")


@dataclass
class BareTable:
    names: list[str]          # one per column; "" for the counter
    lines: np.ndarray         # 1-based line of each row
    cells: np.ndarray         # rows x columns, float64
    counted: bool             # the first column is the step


def bare_rows(path: Path, whole: bool = False) -> dict[int, list[tuple[int, list[float]]]]:
    """The rows of bare numbers of a small file (any file when `whole`: a CSV known to have no
    header), by width: {width: [(line, values)]}."""
    if not whole and path.stat().st_size > BARE_MAX_BYTES:
        return {}
    rows: dict[int, list[tuple[int, list[float]]]] = {}
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            text = raw.decode("utf-8", "replace").rsplit("\r", 1)[-1]
            if not _ROW.match(text):
                continue
            values = [float(c) for c in _SPLIT.split(text.strip().rstrip(",").strip()) if c]
            rows.setdefault(len(values), []).append((n, values))
    return rows


def _counter(cells: np.ndarray) -> bool:
    first = cells[:, 0]
    return bool(np.isfinite(first).all() and np.all(first == np.round(first)) and np.all(np.diff(first) >= 1))


def _named_by(values: list[float], named: dict[int, dict[str, float]]) -> list[str] | None:
    """The names of the one named line whose values these are, each cell matching one name only."""
    found = None
    for fields in named.values():
        if len(fields) != len(values):
            continue
        names = []
        for v in values:
            hits = [k for k, w in fields.items() if np.isfinite(w) and abs(v - w) <= AGREE_REL * max(1.0, abs(w))]
            if len(hits) != 1 or hits[0] in names:
                break
            names.append(hits[0])
        else:
            if found is not None and found != names:
                return None            # two named lines read the row two ways: no reading
            found = names
    return found


def bare_tables(path: Path, series: list[Series], whole: bool = False) -> list[BareTable]:
    """The tables of bare rows a small log holds, named by a counter or by a named line."""
    rows = bare_rows(path, whole)
    if not rows:
        return []
    named: dict[int, dict[str, float]] = {}
    for s in series:          # the values of each named line
        if s.lines is not None and s.name not in ("step", "epoch"):
            for line, v in zip(s.lines.tolist(), s.values.tolist()):
                named.setdefault(line, {})[s.name] = v
    tables = []
    for width, found in rows.items():
        if len(found) < TABLE_ROWS:
            continue
        found = [(n, v) for n, v in found if n not in named]
        if len(found) < TABLE_ROWS:
            continue
        cells = np.array([v for _, v in found], dtype=np.float64)
        lines = np.array([n for n, _ in found], dtype=np.int64)
        names = next((m for _, v in found if (m := _named_by(v, named)) is not None), None)
        if names is not None:
            tables.append(BareTable(names, lines, cells, False))
        elif _counter(cells) and bool(np.any(np.isfinite(cells) & (cells != np.round(cells)))):
            tables.append(BareTable([""] + [f"{UNNAMED}{j + 1}" for j in range(1, width)], lines, cells, True))
    return tables


def with_bare_tables(path: Path, series: list[Series], artifact: str, whole: bool = False) -> list[Series]:
    """The series of a log with its bare rows read in: a named row joins its names' series in line
    order (by place among the metric lines where the log has no step, at the last step before it
    where it has), a counted table adds its unnamed columns at their counter's steps."""
    tables = bare_tables(path, series, whole)
    if not tables:
        return series
    by_name = {s.name: s for s in series}
    index = all(s.step_kind == "index" for s in series)
    for t in (t for t in tables if not t.counted):
        for j, name in enumerate(t.names):
            have = by_name[name]
            steps = (np.zeros(len(t.lines)) if index else
                     np.asarray([_step_before(have, n) for n in t.lines.tolist()], dtype=np.float64))
            own = have.lines if have.lines is not None else np.zeros(len(have), np.int64)
            lines = np.concatenate([own, t.lines])
            order = (np.argsort(lines, kind="stable") if index
                     else np.lexsort((lines, np.concatenate([have.steps, steps]))))
            by_name[name] = Series(name, have.artifact, np.concatenate([have.steps, steps])[order],
                                   np.concatenate([have.values, t.cells[:, j]])[order], lines[order],
                                   have.step_kind, have.stride)
    out = list(by_name.values())
    if index and any(not t.counted for t in tables):   # its place among the lines that print a metric
        places = np.unique(np.concatenate([s.lines for s in out if s.lines is not None]))
        out = [Series(s.name, s.artifact, np.searchsorted(places, s.lines).astype(np.float64), s.values, s.lines,
                      "index", s.stride) if s.lines is not None else s for s in out]
    for t in (t for t in tables if t.counted):
        out += [Series(name, artifact, t.cells[:, 0].copy(), t.cells[:, j].copy(), t.lines, "step")
                for j, name in enumerate(t.names) if name]
    return out


def _step_before(s: Series, line: int) -> float:
    if s.lines is None or not len(s):
        return 0.0
    earlier = np.flatnonzero(s.lines < line)
    return float(s.steps[earlier[-1]] if len(earlier) else s.steps[0])
