"""Metric files with structure: CSV (Lightning's CSVLogger included), JSON Lines, Hugging Face
`trainer_state.json`, TensorBoard event files and the MLflow file store.

Each parser returns series under canonical names with their line (or step) provenance, and a count
of the records it had to skip.
"""
from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from analysis.ingest.inside import OutsideRun, regular_files
from analysis.ingest.tfrecord import count_frames
from analysis.metrics import Series, SeriesBuilder
from analysis.names import STEP_COLUMNS, canonical, normalise

_SKIP_COLUMNS = {"epoch", "timestamp", "time", "wall_time", "_timestamp", "_runtime", "created_at",
                 "date", "datetime", "total_flos", "train_runtime", "eval_runtime", "num_input_tokens_seen"}


@dataclass
class TableResult:
    series: list[Series]
    records: int = 0
    skipped: int = 0
    notes: list[str] = field(default_factory=list)
    params: dict[str, object] = field(default_factory=dict)


def to_float(value) -> float | None:
    """A cell as a float: numbers, numeric strings, 'nan'/'inf'; None for empty or text."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:        # a 400-digit integer is no metric value
            return None
    if isinstance(value, str):
        s = value.strip()
        if not s:
            return None
        if s.startswith("tensor(") and s.endswith(")"):
            s = s[7:-1].split(",")[0]
        try:
            return float(s)
        except (ValueError, OverflowError):
            return None
    return None


class _Collector:
    """Rows of (step, {name: value}, line) into canonical series."""

    def __init__(self, artifact: str, with_lines: bool) -> None:
        self.artifact = artifact
        self.with_lines = with_lines
        self.builders: dict[str, SeriesBuilder] = {}
        self.buf: dict[str, tuple[list, list, list]] = {}
        self.saw_step = False

    def add(self, step: float | None, row_index: int, values: dict[str, float], line: int) -> None:
        if step is not None:
            self.saw_step = True
        x = step if step is not None else float(row_index)
        for raw, v in values.items():
            name = canonical(raw)
            b = self.buf.setdefault(name, ([], [], []))
            b[0].append(x)
            b[1].append(v)
            b[2].append(line)
            if len(b[0]) >= 65536:
                self._flush(name)

    def _flush(self, name: str) -> None:
        steps, values, lines = self.buf.pop(name)
        builder = self.builders.setdefault(name, SeriesBuilder(name, self.artifact, self.with_lines))
        builder.extend(steps, values, lines if self.with_lines else None)

    def series(self) -> list[Series]:
        for name in list(self.buf):
            self._flush(name)
        kind = "step" if self.saw_step else "index"
        return [s for s in (b.build(kind) for b in self.builders.values()) if s is not None]


def _step_of(row: dict) -> float | None:
    for key in row:
        if normalise(str(key)) in STEP_COLUMNS:
            v = to_float(row[key])
            if v is not None and math.isfinite(v):
                return v
    return None


def _metric_cells(row: dict) -> dict[str, float]:
    out = {}
    for key, value in row.items():
        if key is None:
            continue
        k = normalise(str(key))
        if k in STEP_COLUMNS or k in _SKIP_COLUMNS:
            continue
        v = to_float(value)
        if v is not None:
            out[str(key)] = v
    # epoch is kept as its own series (it maps steps to epochs), not skipped
    for key, value in row.items():
        if key is not None and normalise(str(key)) == "epoch":
            v = to_float(value)
            if v is not None:
                out["epoch"] = v
    return out


def parse_csv(path: Path, artifact: str) -> TableResult:
    """Any metrics CSV; Lightning's CSVLogger leaves cells empty where a metric was not logged on
    that row, which is a gap, not an error. A row with more cells than the header is skipped."""
    col = _Collector(artifact, with_lines=True)
    records = skipped = 0
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        sample = f.read(8192)
        f.seek(0)
        try:
            dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
        except csv.Error:
            dialect = csv.excel
        reader = csv.reader(f, dialect)
        header = next(reader, None)
        if not header:
            return TableResult([], 0, 0, ["empty CSV file"])
        header = [h.strip() for h in header]
        notes = []
        repeated = sorted({h for h in header if h and header.count(h) > 1})
        if repeated:                 # the first column of a name is kept; a later one must not win silently
            notes.append(f"{artifact}: column(s) {', '.join(repeated)[:200]} repeated in the header; the first of each kept")
            header = [h if h not in header[:j] else None for j, h in enumerate(header)]
        i = -1
        while True:
            i += 1
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error:        # one malformed record (a 200 KB cell): skipped, counted
                skipped += 1
                continue
            if not cells or all(not c.strip() for c in cells):
                continue
            if len(cells) > len(header):
                skipped += 1
                continue
            row = {h: c for h, c in zip(header, cells) if h is not None}
            values = _metric_cells(row)
            if not values and any(c.strip() for c in cells):
                if all(to_float(c) is None for c in cells if c.strip()):
                    skipped += 1
                    continue
            records += 1
            col.add(_step_of(row), i, values, reader.line_num)
    return TableResult(col.series(), records, skipped, notes)


def _json_records(path: Path) -> Iterator[tuple[int, object]]:
    with open(path, "rb") as f:
        for n, raw in enumerate(f, start=1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                yield n, json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):   # one bad line, not the file
                yield n, None


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "/"))
        else:
            out[key] = v
    return out


def parse_jsonl(path: Path, artifact: str) -> TableResult:
    col = _Collector(artifact, with_lines=True)
    records = skipped = 0
    for n, obj in _json_records(path):
        if not isinstance(obj, dict):
            skipped += 1
            continue
        row = _flatten(obj)
        records += 1
        col.add(_step_of(row), records - 1, _metric_cells(row), n)
    return TableResult(col.series(), records, skipped)


def _line_index(text: str, marker: str) -> list[int]:
    """1-based line numbers of each occurrence of `marker` in `text`, in order."""
    out, pos, line = [], 0, 1
    while True:
        i = text.find(marker, pos)
        if i < 0:
            return out
        line += text.count("\n", pos, i)
        out.append(line)
        pos = i + len(marker)


def parse_trainer_state(path: Path, artifact: str) -> TableResult:
    """Hugging Face Trainer's trainer_state.json: `log_history` holds the training entries (loss,
    grad_norm, learning_rate, epoch, step) and separate eval entries (eval_loss, ...)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    state = json.loads(text)
    history = state.get("log_history") or []
    # trainer_state.json is written with indent=2: each entry opens with a line of its own.
    starts = _line_index(text[text.find('"log_history"'):], "{") if '"log_history"' in text else []
    offset = text[: text.find('"log_history"')].count("\n") if '"log_history"' in text else 0
    col = _Collector(artifact, with_lines=True)
    skipped = 0
    for i, entry in enumerate(history):
        if not isinstance(entry, dict):
            skipped += 1
            continue
        line = starts[i] + offset if i < len(starts) else 0
        values = {k: v for k, v in _metric_cells(entry).items()
                  if not normalise(k).startswith(("train_runtime", "train_samples", "train_steps", "eval_samples", "eval_steps"))}
        col.add(_step_of(entry), i, values, line)
    params = {k: state[k] for k in ("global_step", "max_steps", "num_train_epochs", "logging_steps",
                                    "train_batch_size", "best_metric", "best_model_checkpoint") if k in state}
    return TableResult(col.series(), len(history), skipped, params=params)


def parse_tensorboard(paths: Iterable[Path], artifact_of) -> TableResult:
    """Scalars from TensorBoard event files (`add_scalar`'s simple values and scalar tensors),
    read with TensorBoard's own loader. Per-layer tags (`grad_norm/fc1.weight`) stay per layer."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util import tensor_util

    collectors: dict[str, _Collector] = {}
    records = skipped = 0
    notes = []
    for path in paths:
        artifact = artifact_of(path)
        col = collectors.setdefault(artifact, _Collector(artifact, with_lines=False))
        loaded = 0
        try:
            for event in EventFileLoader(str(path)).Load():
                loaded += 1
                if not event.HasField("summary"):
                    continue
                for value in event.summary.value:
                    kind = value.WhichOneof("value")
                    if kind == "simple_value":
                        v = float(value.simple_value)
                    elif kind == "tensor":
                        try:
                            arr = tensor_util.make_ndarray(value.tensor)
                        except Exception:
                            skipped += 1
                            continue
                        if arr.size != 1 or arr.dtype.kind not in "fiu":
                            continue
                        v = float(arr.reshape(-1)[0])
                    else:
                        continue
                    records += 1
                    col.saw_step = True
                    col.add(float(event.step), records, {value.tag: v}, 0)
        except Exception as exc:  # a truncated or corrupt record ends that file, not the run
            notes.append(f"{artifact}: event file damaged, unreadable after {loaded} records ({type(exc).__name__}); "
                         "the records before the damage are kept")
            skipped += 1
            continue
        frames, whole = count_frames(path)       # the loader stops quietly at a bad record
        if loaded < frames or not whole:
            notes.append(f"{artifact}: event file damaged (truncated or a bad checksum) after record {loaded}; "
                         "the records before the damage are kept")
            skipped += 1
    series = [s for c in collectors.values() for s in c.series()]
    return TableResult(series, records, skipped, notes)


def parse_mlflow_run(run_dir: Path, artifact_of) -> TableResult:
    """An MLflow file-store run: `metrics/<name>` files of `timestamp value step` lines (names may
    nest in folders), `params/<name>` files holding one value each, and `meta.yaml`."""
    series: list[Series] = []
    records = skipped = 0
    notes: list[str] = []
    links: list[Path] = []

    def files(sub: str) -> list[Path]:
        # names from the store's layout: never followed out of the run through a symlink
        try:
            return sorted(regular_files(run_dir, run_dir / sub, links=links)) if (run_dir / sub).is_dir() else []
        except OutsideRun:
            notes.append(f"{artifact_of(run_dir)}: {sub}/ is a symlink out of the run folder; not read")
            return []

    metrics_dir = run_dir / "metrics"
    for f in files("metrics"):
        name = canonical(f.relative_to(metrics_dir).as_posix())
        b = SeriesBuilder(name, artifact_of(f))
        steps, values, lines = [], [], []
        with open(f, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, start=1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) < 2 or to_float(parts[1]) is None:
                    skipped += 1
                    continue
                steps.append(float(parts[2]) if len(parts) > 2 and to_float(parts[2]) is not None else float(len(steps)))
                values.append(to_float(parts[1]))
                lines.append(n)
        records += len(values)
        b.extend(steps, values, lines)
        s = b.build("step")
        if s is not None:
            series.append(s)
    params = {}
    params_dir = run_dir / "params"
    for f in files("params"):
        with open(f, encoding="utf-8", errors="replace") as fh:
            params[f.relative_to(params_dir).as_posix()] = fh.read(4096).strip()[:200]
    if links:
        notes.append(f"{artifact_of(run_dir)}: {len(links)} symlink(s) inside the run's folders not followed")
    return TableResult(series, records, skipped, notes, params=params)

