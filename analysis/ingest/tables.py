"""Metric files with structure: CSV (Lightning's CSVLogger included), JSON Lines, Hugging Face
`trainer_state.json`, TensorBoard event files and the MLflow file store.

Each parser returns series under canonical names with their line (or step) provenance, and a count
of the records it had to skip.
"""
from __future__ import annotations

import csv
import json
import math
import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from analysis.ingest.bare_rows import with_bare_tables
from analysis.ingest.inside import OutsideRun, regular_files
from analysis.ingest.tfrecord import Damage
from analysis.ingest.tfrecord import records as tfrecord_records
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

    def __post_init__(self) -> None:
        self.series += summed_parts(self.series)


def summed_parts(series: list[Series]) -> list[Series]:
    """The loss of a table that logs only its parts (YOLO's results.csv: `train/box_loss`, `train/obj_loss`,
    `train/cls_loss`; the same on `val/`): their sum at each row, which is what the trainer minimises, where
    no column holds the loss itself and the parts were logged at the same steps."""
    out = []
    have = {s.name for s in series}
    for total in ("train_loss", "val_loss"):
        parts = [s for s in series if s.name.startswith(total + "/")]
        if total in have or len(parts) < 2 or any(not np.array_equal(p.steps, parts[0].steps) for p in parts):
            continue
        first = parts[0]
        out.append(Series(total, first.artifact, first.steps, np.sum([p.values for p in parts], axis=0),
                          first.lines, first.step_kind, first.stride))
    return out


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


@lru_cache(maxsize=8192)
def _role(key: str) -> str:
    """What a column or key holds: "step", "epoch", "" (bookkeeping to skip) or the key itself, a
    metric. Cached: a million rows share a handful of keys."""
    k = normalise(key)
    if k in STEP_COLUMNS:
        return "step"
    if k == "epoch":             # kept as its own series: it maps steps to epochs
        return "epoch"
    return "" if k in _SKIP_COLUMNS else key


_BLOCK = 1 << 16     # CSV rows converted a column at a time


def _column(cells: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(values, present) of one column's cells: numbers and nan/inf are present, empty cells and text
    are gaps. Converted by numpy in one call; a column with text in it falls back cell by cell."""
    present = np.fromiter((bool(c and not c.isspace()) for c in cells), dtype=bool, count=len(cells))
    try:
        values = np.asarray([c if p else "nan" for c, p in zip(cells, present)], dtype=np.float64)
    except ValueError:
        parsed = [to_float(c) for c in cells]
        present = np.fromiter((v is not None for v in parsed), dtype=bool, count=len(cells))
        values = np.fromiter((math.nan if v is None else v for v in parsed), dtype=np.float64, count=len(cells))
    return values, present


class _CsvColumns:
    """Rows of a CSV, a block at a time, into series: the header is resolved once, and each column of
    a block converted in one call, so a million rows cost what numpy's parsing costs."""

    def __init__(self, header: list[str | None], artifact: str) -> None:
        roles = [_role(h) if h else "" for h in header]
        self.step = roles.index("step") if "step" in roles else None
        self.metrics = [(j, r) for j, r in enumerate(roles) if r and r != "step"]
        self.builders = {r: SeriesBuilder(canonical(r) if r != "epoch" else "epoch", artifact) for _, r in self.metrics}
        self.saw_step = False
        self.records = self.skipped = 0

    def add_block(self, rows: list[list[str]], lines: list[int], indices: list[int]) -> None:
        if not rows:
            return
        n = len(rows)
        width = max(len(r) for r in rows)
        cols = {j: _column([r[j] if j < len(r) else "" for r in rows]) for j, _ in self.metrics if j < width}
        index = np.asarray(indices, dtype=np.float64)      # the row's place, where no step column says better
        steps = index
        numeric = np.zeros(n, dtype=bool)
        if self.step is not None and self.step < width:
            sv, sp = _column([r[self.step] if self.step < len(r) else "" for r in rows])
            ok = sp & np.isfinite(sv)
            self.saw_step |= bool(ok.any())
            steps = np.where(ok, sv, index)
            numeric |= sp
        for values, present in cols.values():
            numeric |= present
        # a row none of whose cells is a number (a repeated header, a comment) is skipped and counted
        keep = numeric | np.fromiter((not any(c.strip() for c in r) for r in rows), dtype=bool, count=n)
        self.skipped += int((~keep).sum())
        self.records += int(numeric.sum())
        lines_arr = np.asarray(lines, dtype=np.int64)
        for j, role in self.metrics:
            if j in cols:
                values, present = cols[j]
                m = present & keep
                self.builders[role].extend(steps[m], values[m], lines_arr[m])

    def series(self) -> list[Series]:
        kind = "step" if self.saw_step else "index"
        merged: dict[str, Series] = {}
        for b in self.builders.values():
            s = b.build(kind)
            if s is not None and (s.name not in merged or len(s) > len(merged[s.name])):
                merged[s.name] = s
        return list(merged.values())


class _RecordColumns:
    """Records (dicts, as JSON Lines and trainer_state.json hold them) into series a block at a
    time: each key's values of a block gathered and converted at once."""

    def __init__(self, artifact: str, drop=lambda key: False) -> None:
        self.artifact = artifact
        self.drop = drop
        self.builders: dict[str, SeriesBuilder] = {}
        self.saw_step = False
        self.records = self.skipped = 0

    def add_block(self, objs: list, lines: list[int], indices: list[int]) -> None:
        keep = [k for k, o in enumerate(objs) if isinstance(o, dict)]
        self.skipped += len(objs) - len(keep)
        if not keep:
            return
        rows = [objs[k] if not any(isinstance(v, dict) for v in objs[k].values()) else _flatten(objs[k]) for k in keep]
        self.records += len(rows)
        lines_arr = np.asarray([lines[k] for k in keep], dtype=np.int64)
        steps = np.asarray([indices[k] for k in keep], dtype=np.float64)
        keys = dict.fromkeys(k for r in rows for k in r)
        roles = {k: _role(str(k)) for k in keys}
        for key, role in roles.items():
            if role == "step":
                sv, sp = _cells([r.get(key) for r in rows])
                ok = sp & np.isfinite(sv)
                if ok.any():
                    self.saw_step = True
                    steps = np.where(ok, sv, steps)
                break
        for key, role in roles.items():
            if not role or role == "step" or self.drop(role):
                continue
            values, present = _cells([r.get(key) for r in rows])
            if present.any():
                name = "epoch" if role == "epoch" else canonical(role)
                builder = self.builders.setdefault(name, SeriesBuilder(name, self.artifact))
                builder.extend(steps[present], values[present], lines_arr[present])

    def series(self) -> list[Series]:
        kind = "step" if self.saw_step else "index"
        return [s for s in (b.build(kind) for b in self.builders.values()) if s is not None]


def _cells(cells: list) -> tuple[np.ndarray, np.ndarray]:
    """(values, present) of JSON values: floats and ints as they are, numeric strings parsed, the rest
    (None, text, lists, a 400-digit integer) gaps."""
    parsed = [v if type(v) is float else to_float(v) for v in cells]
    present = np.fromiter((v is not None for v in parsed), dtype=bool, count=len(cells))
    values = np.fromiter((math.nan if v is None else v for v in parsed), dtype=np.float64, count=len(cells))
    return values, present


def _json_block(raws: list[bytes], cut: bool = False) -> list:
    """The records of a block of JSON lines: one parse of them all as an array, or line by line when
    one of them is bad (a bad line costs that record only: it comes back as None; with `cut`, a paste's
    small file, a line cut short keeps its complete pairs)."""
    try:
        objs = json.loads(b"[" + b",".join(raws) + b"]")
        if len(objs) == len(raws):
            return objs
    except (ValueError, UnicodeDecodeError, RecursionError):
        pass
    out = []
    for raw in raws:
        try:
            out.append(json.loads(raw))
        except (ValueError, UnicodeDecodeError, RecursionError):
            out.append(_cut_record(raw) if cut else None)
    return out


CUT_MAX_BYTES = 1 << 20  # a file this small is a paste, whose lines may be cut short; a big log's bad lines are skipped
CUT_TRIES = 32         # the commas tried back from a cut record's end (a list of 12 COCO figures cut at its 5th)


def _cut_record(raw: bytes) -> dict | None:
    """A record a paste cut short (`{"train_loss": 0.0, "train_loss_ce": 0.0, "train_lo`): the pairs before its
    last comma, where they parse as a flat object; anything else stays a bad line (None)."""
    raw = raw.rstrip().rstrip(b",")         # a record an array's writer ended with `},`
    if not raw.startswith(b"{"):
        return None
    if raw.endswith(b"}"):
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        return obj if isinstance(obj, dict) else None
    cut = len(raw)
    for _ in range(CUT_TRIES):        # cut inside a list (`"coco_eval_bbox": [0.0, 0.0, 0`): a comma further back
        cut = raw.rfind(b",", 0, cut)
        if cut < 0:
            return None
        try:
            obj = json.loads(raw[:cut] + b"}")
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        return obj if isinstance(obj, dict) else None
    return None


_TB_TAG = re.compile(r"-tag-(.+)\.csv$")
_WANDB_CELL = re.compile(r"^.+? - (.+?)(__MIN|__MAX)?$")


def _exported_names(header: list[str], path: Path) -> list[str]:
    """The metric names of a dashboard's CSV export: TensorBoard's `Wall time,Step,Value` takes its tag from the
    file's name (`run-train-tag-loss.csv`; a `/` in the tag is written `_`), and W&B's columns are `<run name> -
    <metric>`, with `__MIN`/`__MAX` bounds of a smoothed or sampled point beside each (dropped: the value is its
    own column). Any other header as it is."""
    if [h.lower() for h in header] == ["wall time", "step", "value"] and (m := _TB_TAG.search(path.name)):
        return [header[0], header[1], m.group(1)]
    if len(header) >= 2 and all((m := _WANDB_CELL.match(h)) for h in header[1:]):
        return [header[0]] + ["" if (m := _WANDB_CELL.match(h)) is None or m.group(2) else m.group(1)
                              for h in header[1:]]
    return header


def parse_csv(path: Path, artifact: str) -> TableResult:
    """Any metrics CSV; Lightning's CSVLogger leaves cells empty where a metric was not logged on
    that row, which is a gap, not an error. A row with more cells than the header is skipped."""
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
        header = _exported_names([h.strip() for h in header], path)
        if all(to_float(h) is not None for h in header):      # no header: rows of numbers from the first
            read: list[str] = []
            counted = with_bare_tables(path, [], artifact, whole=True, notes=read)
            return TableResult(counted, sum(len(t) for t in counted[:1]), 0,
                               read if counted else [f"{artifact}: a CSV of numbers without a header or a step "
                                                     "column; its columns cannot be named"])
        notes = []
        repeated = sorted({h for h in header if h and header.count(h) > 1})
        columns: list[str | None] = list(header)
        if repeated:                 # the first column of a name is kept; a later one must not win silently
            notes.append(f"{artifact}: column(s) {', '.join(repeated)[:200]} repeated in the header; "
                         "the first of each kept")
            columns = [h if h not in header[:j] else None for j, h in enumerate(header)]
        table = _CsvColumns(columns, artifact)
        rows: list[list[str]] = []
        lines: list[int] = []
        indices: list[int] = []
        i, skipped = -1, 0
        while True:
            i += 1
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error:        # one malformed record (a 200 KB cell): skipped, counted
                skipped += 1
                continue
            if not cells or len(cells) > len(header):
                skipped += bool(cells)
                continue
            rows.append(cells)
            lines.append(reader.line_num)
            indices.append(i)
            if len(rows) >= _BLOCK:
                table.add_block(rows, lines, indices)
                rows, lines, indices = [], [], []
        table.add_block(rows, lines, indices)
    return TableResult(table.series(), table.records, skipped + table.skipped, notes)


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
    table = _RecordColumns(artifact)
    raws: list[bytes] = []
    lines: list[int] = []
    cut = path.stat().st_size <= CUT_MAX_BYTES
    with open(path, "rb") as f:
        for n, raw in enumerate(f, start=1):
            raw = raw.strip()
            if raw:
                raws.append(raw)
                lines.append(n)
            if len(raws) >= _BLOCK:
                table.add_block(_json_block(raws, cut), lines,
                                [table.records + table.skipped + k for k in range(len(raws))])
                raws, lines = [], []
    table.add_block(_json_block(raws, cut), lines, [table.records + table.skipped + k for k in range(len(raws))])
    return TableResult(table.series(), table.records, table.skipped)


_HISTORY = re.compile(r'"log_history"\s*:\s*\[')
_ENTRY_OR_END = re.compile(r"\{[^{}]*\}|\]")
_RUN_SUMMARY = ("train_runtime", "train_samples", "train_steps", "eval_samples", "eval_steps")


def parse_trainer_state(path: Path, artifact: str) -> TableResult:
    """Hugging Face Trainer's trainer_state.json: `log_history` holds the training entries (loss,
    grad_norm, learning_rate, epoch, step) and separate eval entries (eval_loss, ...). The entries
    are flat objects, read a block at a time with the line each opens on, so a million of them
    never stand in memory as Python objects at once."""
    text = path.read_text(encoding="utf-8", errors="replace")
    table = _RecordColumns(artifact, drop=lambda key: normalise(key).startswith(_RUN_SUMMARY))
    head = _HISTORY.search(text)
    entries, end = [], None
    if head:
        for m in _ENTRY_OR_END.finditer(text, head.end()):
            if m.group() == "]":
                end = m.end()
                break
            entries.append((m.start(), m.end()))
    try:
        if head is None or end is None:
            raise ValueError("no flat log_history")
        state = json.loads(text[: head.end()] + "]" + text[end:])
        history_len = len(entries)
        line, pos = 1, 0
        for lo in range(0, len(entries), _BLOCK):
            block = entries[lo: lo + _BLOCK]
            objs = json.loads("[" + ",".join(text[a:b] for a, b in block) + "]")
            lines = []
            for a, _ in block:
                line += text.count("\n", pos, a)
                pos = a
                lines.append(line)
            table.add_block(objs, lines, list(range(lo, lo + len(block))))
    except (ValueError, RecursionError):     # nested entries or an odd layout: the whole document at once
        state = json.loads(text)
        history = state.get("log_history") if isinstance(state, dict) else None
        history = history if isinstance(history, list) else []
        history_len = len(history)
        table = _RecordColumns(artifact, drop=table.drop)
        table.add_block(history, [0] * len(history), list(range(len(history))))
    if not isinstance(state, dict):
        raise ValueError("trainer_state.json is not an object")
    params = {k: state[k] for k in ("global_step", "max_steps", "num_train_epochs", "logging_steps",
                                    "train_batch_size", "best_metric", "best_model_checkpoint") if k in state}
    return TableResult(table.series(), history_len, table.skipped, params=params)


def parse_tensorboard(paths: Iterable[Path], artifact_of) -> TableResult:
    """Scalars from TensorBoard event files (`add_scalar`'s simple values and scalar tensors): the
    record framing read here with its checksums, each record decoded by TensorBoard's own protobuf
    classes. Per-layer tags (`grad_norm/fc1.weight`) stay per layer. A damaged file keeps the
    records before the damage and says so."""
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.util import tensor_util

    builders: dict[tuple[str, str], SeriesBuilder] = {}
    records = skipped = 0
    notes = []
    for path in paths:
        artifact = artifact_of(path)
        pending: dict[str, tuple[array, array]] = {}

        def flush(tag: str) -> None:
            steps, values = pending.pop(tag)
            name = canonical(tag)
            builder = builders.setdefault((artifact, name), SeriesBuilder(name, artifact, with_lines=False))
            builder.extend(np.frombuffer(steps), np.frombuffer(values))

        loaded, damage = 0, Damage()
        for data in tfrecord_records(path, damage):
            try:
                event = Event.FromString(data)
            except DecodeError:
                damage.reason = "a record that does not decode"
                break
            loaded += 1
            if not event.HasField("summary"):
                continue
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "simple_value":
                    v = value.simple_value
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
                col = pending.get(value.tag)
                if col is None:
                    col = pending[value.tag] = (array("d"), array("d"))
                col[0].append(event.step)
                col[1].append(v)
                if len(col[0]) >= 1 << 16:
                    flush(value.tag)
        for tag in list(pending):
            flush(tag)
        if damage.reason:
            notes.append(f"{artifact}: event file damaged ({damage.reason}) after record {loaded}; "
                         "the records before the damage are kept")
            skipped += 1
    series = [s for s in (b.build("step") for b in builders.values()) if s is not None]
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
        steps: list[float] = []
        values: list[float | None] = []
        lines: list[int] = []
        with open(f, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, start=1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) < 2 or to_float(parts[1]) is None:
                    skipped += 1
                    continue
                steps.append(float(parts[2]) if len(parts) > 2 and to_float(parts[2]) is not None
                             else float(len(steps)))
                values.append(to_float(parts[1]))
                lines.append(n)
        records += len(values)
        b.extend(steps, values, lines)
        s = b.build("step")
        if s is not None:
            series.append(s)
    params: dict[str, object] = {}
    params_dir = run_dir / "params"
    for f in files("params"):
        with open(f, encoding="utf-8", errors="replace") as fh:
            params[f.relative_to(params_dir).as_posix()] = fh.read(4096).strip()[:200]
    if links:
        notes.append(f"{artifact_of(run_dir)}: {len(links)} symlink(s) inside the run's folders not followed")
    return TableResult(series, records, skipped, notes, params=params)

