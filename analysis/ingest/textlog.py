"""Plain-text training logs, streamed in bounded memory.

A log is read in 8 MB chunks cut at line ends. Each chunk goes through one pass of a small C
scanner (`_logscan.c`) that returns every `key <sep> number` pair with its line: Python's `re`
reads such logs at ~13 MB/s, a regex pass per metric family at ~60 MB/s, the single pass at
grep-like speed (bench/ingest.py). Keys are named through `data/metric_names.toml`, as in every
other format. Lines that hold a failure literal go to Python for the traceback and its numbers.
Two chunks are in flight at once: the scanner releases the GIL. Where the C scanner was not built
(no compiler at install), `logscan_fallback.py` gives the same result in pure Python, slower.
A pasted excerpt (a small file) is read once more for rows of bare numbers (`bare_rows.py`).
"""
from __future__ import annotations

import re
import sys
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import cast

import numpy as np

from analysis.ingest.bare_rows import PRINTED_VALUE, with_bare_tables, with_printed_values
from analysis.ingest.events import VALUES_FOLLOW, VALUES_LINES, build_event, fold, prefilter_literals
from analysis.ingest.logscan_fallback import SECTION_TEST, SECTION_TRAIN, SECTION_VAL
from analysis.metrics import Series, SeriesBuilder
from analysis.model import Event
from analysis.names import TEXT_STEP_KEYS, canonical, known_names, normalise, sections, table_columns

try:
    from analysis.ingest._logscan import scan as _scan
except ImportError:          # installed without a C compiler: the same scanner in Python, ~100x slower
    from analysis.ingest.logscan_fallback import scan as _scan
    _FAST = False
else:
    _FAST = True
_told_slow = False

CHUNK_BYTES = 8 << 20
TRACEBACK_LINES = 400
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class TextLogResult:
    series: list[Series]
    events: list[Event]
    lines: int
    metric_lines: int
    skipped_lines: int
    has_carriage_returns: bool = False
    notes: list[str] = field(default_factory=list)


class _Families:
    """Family ids handed to the scanner: `step` is 0, then each canonical metric name as met."""

    def __init__(self) -> None:
        self.names = ["step"]
        self._ids = {"step": 0}
        self._lock = threading.Lock()     # two scanner threads may meet a new name at once
        self.per_kind: dict[str, int] = {}
        self.dropped: dict[str, int] = {}  # names past the cap, per kind (`nonfinite/`, `train_loss/`)

    def resolve(self, key: str) -> int:
        """The family of a key as written in the log (`loss`, `'eval_loss'`, `grad norm`, or a
        word and the key when two words may form one name; `val|loss` inside a validation section),
        -1 for a word that is no metric, or the section a lone word opens (`valid`, `Test`)."""
        section, _, key = key.rpartition("|")
        if section == "nonfinite" and self.per_kind.get(NONFINITE_PREFIX, 0) >= MAX_FAMILIES_OF_A_KIND:
            return self._drop(NONFINITE_PREFIX)     # full: no lookup per name of a hostile paste's million
        name = _name_in(section, key)
        if name is None:
            return _SECTION_CODES.get(sections()[0].get(key.lower(), ""), -1)
        with self._lock:
            if name not in self._ids and (kind := _capped_kind(name)) is not None:
                if self.per_kind.get(kind, 0) >= MAX_FAMILIES_OF_A_KIND:
                    return self._drop(kind)     # a hostile paste's million names: so many, the rest counted
                self.per_kind[kind] = self.per_kind.get(kind, 0) + 1
        return self.named(name)

    def named(self, name: str) -> int:
        """The family of a canonical name (`train_loss`), added if new."""
        with self._lock:
            if name not in self._ids:
                self._ids[name] = len(self.names)
                self.names.append(name)
            return self._ids[name]

    def _drop(self, kind: str) -> int:
        self.dropped[kind] = self.dropped.get(kind, 0) + 1    # asked once per name and chunk
        return -1


PART_PREFIX = "train_loss/"
NONFINITE_PREFIX = "nonfinite/"   # `lb=nan` under a name no alias knows: kept from its first NaN/Inf on
# A loss printed as a `cost` (TF1 tutorials' `Training Cost: 0.69`) is the loss only where its line prints no
# loss under another name: gluoncv's `[Epoch 0] Training cost: 312.2, CrossEntropy=1.69` is the epoch's seconds
COST_PREFIX = "cost/"
_COST = re.compile(r"(?i)(?:^|[ _])cost$")
_COST_NAMES = ("train_loss", "val_loss", "test_loss")
# a cost followed by a unit of time is a duration (jieba's `Loading model cost 0.644 seconds.`, `cost 3.2s`)
_COST_DURATION = re.compile(rb"(?i)cost\W{0,3}[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)? ?"
                            rb"(?:s|secs?|seconds?|ms|mins?|minutes?|h|hours?)\b")
MAX_FAMILIES_OF_A_KIND = 256     # nameless NaNs, loss parts: one series each, so a bounded number of them
# (and one in a training split's folder, ParallelWaveGAN's `train/embed_loss`: an evaluation's `val/map_small: nan`
# is a class with nothing to score)
_IDENTIFIER = re.compile(r"(?:[Tt]rain(?:ing)?/)?[A-Za-z_][\w.\-]{0,63}")
# whole parts of a name: a rate over a zero duration is no overflow (`bits_per_dim`, `beta` are no timing)
_TIMING = re.compile(r"(?i)(?:^|[_.\-/])(?:time|times|timing|runtime|sec|secs|second|seconds|ms|speed"
                     r"|elapsed|eta|throughput|duration|fps)(?:$|[_.\-/])")
# the last word of a message before its value (`Magnitude of gradient is bad: inf`, `KL divergence is: inf`):
# prose, no name; the value is kept as one printed without a name (lower case only: `IS: nan` is a score)
_PROSE = re.compile(r"bad|invalid|got|found|received|detected|encountered|is|was|became|becomes")
# a best-so-far, a limit or a tolerance starts at +-inf by design: no state of the model's (LightGBM's split
# `best gain: -inf` where no split has a positive gain, too)
_BOOKKEEPING = re.compile(r"(?i)(?:^|[_.\-/])(?:best|min|max|threshold|thresh|clip|patience|delta|tol|gain)"
                          r"(?:$|[_.\-/])")
# ...but an RL episode statistic's min or max is a statistic (`episode_reward_min: .nan`: no episode ended)
_EPISODE_STAT = re.compile(r"(?i)^(?!.*best).*episode")
_SECTION_CODES = {"val": SECTION_VAL, "test": SECTION_TEST, "train": SECTION_TRAIN}


@lru_cache(maxsize=4096)
def _name_in(section: str, key: str) -> str | None:
    if section == "nonfinite":
        if _PROSE.fullmatch(key):
            return NONFINITE_PREFIX + PRINTED_VALUE
        named = (_IDENTIFIER.fullmatch(key) and _metric_name(key) is None and not _TIMING.search(key)
                 and not (_BOOKKEEPING.search(key) and not _EPISODE_STAT.search(key)))
        return NONFINITE_PREFIX + key.lower() if named else None
    if section == "col":                  # a table's header cell: some names are metrics only there
        return table_columns().get(normalise(key)) or _name_in("", key)
    if " " in key:                        # an abbreviation's dot: bentrevett's `Val. Loss: 0.6 | Val. Acc: 75%`
        key = " ".join(w.rstrip(".") for w in key.split(" "))
    name = _metric_name(key)
    if " " in key and (name is None or name.startswith(PART_PREFIX)):
        # prose: `final loss`, `with loss`, `Epoch end Validation Loss` name what their last words name;
        # a part needs the whole label (`Loss RPN classifier`): `final loss` is no part
        words = key.split(" ")
        opener = sections()[0].get(words[0].lower()) if not section else None
        if opener and (inner := _name_in(opener, " ".join(words[1:]))):
            return inner                  # `Testing Accuracy`, `Evaluation Loss`, `Dev Acc`: that section's name
        tails = [_metric_name(" ".join(words[k:])) for k in range(1, len(words))]
        name = next((t for t in tails if t and not t.startswith(PART_PREFIX)), None) or name \
            or next((t for t in tails if t), None)
    if section and name not in (None, "step", "epoch") and not name.startswith(("val_", "test_")):
        name = sections()[1].get(section, {}).get(name)
    return COST_PREFIX + name if name in _COST_NAMES and _COST.search(key) else name


def _capped_kind(name: str) -> str | None:
    for prefix in (NONFINITE_PREFIX, PART_PREFIX):
        if name.startswith(prefix):
            return prefix
    return None


@lru_cache(maxsize=4096)
def _metric_name(key: str) -> str | None:
    key = key.strip("./-")
    if key.lower() in TEXT_STEP_KEYS:
        return "step"
    name = canonical(key)
    return name if name in known_names() or name.startswith(("grad_norm/", "weight_norm/", PART_PREFIX)) else None


# Hugging Face Trainer's end-of-training dict (`{'train_runtime': 187.7, ..., 'train_loss': 0.183, 'epoch': 160.0}`)
# and wandb's end-of-run block (`wandb:   train_loss 0.1832`): the whole run's mean or last value, no report of the
# loss (a run's tail at 6e-4 read as blown up to 0.18). Their finite values are dropped where the loss was reported
# on other lines (a NaN mean still says a loss went NaN; a summary pasted alone is all there is). The scanner flags
# their lines as it flags a failure's literal, so finding them costs no pass of its own.
RUN_SUMMARY = (b"train_runtime", b"wandb:")


@lru_cache(maxsize=1)
def _literals() -> tuple[bytes, ...]:
    return tuple(lit.encode() for lit in prefilter_literals()) + RUN_SUMMARY


@lru_cache(maxsize=1)
def _section_initials() -> bytes:
    """The first bytes of the words that open a section, both cases: the scanner asks about no other word."""
    return bytes(sorted({ord(c) for w in sections()[0] for c in (w[0].lower(), w[0].upper())}))


def _clean(raw: bytes) -> str:
    """A line as the user saw it: the last state of a `\r` rewrite, without ANSI colour."""
    line = raw.decode("utf-8", "replace")
    if "\r" in line:
        line = line.rstrip("\r").rsplit("\r", 1)[-1]
    if "#015" in line:                 # CloudWatch's `\r` (SageMaker)
        while line.endswith("#015"):
            line = line[:-4]
        line = line.rsplit("#015", 1)[-1]
    return _ANSI.sub("", line) if "\x1b" in line else line


def _read_chunks(path: Path):
    """Chunks of about CHUNK_BYTES cut after a line end (the newline itself dropped), as views:
    the tail after the last line end is read again with the next chunk rather than copied."""
    with open(path, "rb") as f:
        size = CHUNK_BYTES
        while True:
            data = f.read(size)
            if not data:
                return
            cut = data.rfind(b"\n") + 1
            if cut == 0 and len(data) == size and size < 64 * CHUNK_BYTES:
                f.seek(-len(data), 1)     # one enormous line: read more at once until it ends
                size *= 2
                continue
            if cut == 0 or len(data) < size:
                cut = len(data)
            else:
                f.seek(cut - len(data), 1)
            size = CHUNK_BYTES
            view = memoryview(data)[:cut]
            yield view[:-1] if cut and data[cut - 1] == 10 else view


WRAP_MAX_BYTES = 1 << 20  # a paste this small may have been hard-wrapped by a terminal or a mail client...
WRAP_WIDTHS = (60, 240)   # ...at one width in this range, the longest of its lines, twice or more (or at 80 once)
WRAP_LINES = 8            # the lines of one wrapped message joined back at most


def _wrap_width(buf: bytes, limit: int) -> int:
    """The width a small paste was hard-wrapped at (its longest line length, held by 2 lines or more), or 0."""
    if limit > WRAP_MAX_BYTES:
        return 0
    lengths = [len(ln) for ln in buf[:limit].split(b"\n")]
    width = max(lengths, default=0)
    # one line at a terminal's 80 columns is a wrap too (a paste of one long error)
    return width if WRAP_WIDTHS[0] <= width <= WRAP_WIDTHS[1] and (lengths.count(width) >= 2 or width == 80) else 0


def _rejoined(buf: bytes, offset: int, limit: int, width: int) -> tuple[bytes, int]:
    """The line at `offset` with the lines a hard wrap at `width` (0: none) cut from it joined back (a line `width`
    long, followed by one that is not blank or indented: `DefaultCPUAllocator: can't` / ` allocate memory`), and how
    many were joined."""
    end = buf.find(b"\n", offset, limit)
    end = limit if end < 0 else end
    line, joined = buf[offset:end], 0
    while width and joined < WRAP_LINES and end < limit and end - offset == width:
        nxt = buf.find(b"\n", end + 1, limit)
        nxt = limit if nxt < 0 else nxt
        piece = buf[end + 1:nxt]
        if not piece.strip() or piece[:2].isspace() or piece[:1] == b"\t":
            break                # a blank or an indented line (a traceback's frame) starts anew
        line += piece
        offset, end, joined = end + 1, nxt, joined + 1
    return line, joined


def _events(chunk: memoryview, hits: np.ndarray, base: int, artifact: str) -> list[Event]:
    """Events of the lines the scanner flagged; a traceback reads on from its first line; a message a hard wrap
    cut is read joined back, at its first line."""
    buf, limit = cast(bytes, chunk.obj), len(chunk)    # the chunk is a view on the start of these bytes
    width = _wrap_width(buf, limit) if base == 0 else 0
    events: list[Event] = []
    skip_until = 0
    for idx, offset in hits.reshape(-1, 2).tolist():
        n = base + idx + 1
        if n < skip_until:
            continue
        line, joined = _rejoined(buf, offset, limit, width)
        first = _clean(line)
        window = [first]
        # a traceback reads on, and so does a message whose values are printed after it, libstdc++'s
        # uncaught exception (its message is the `what():` line after it) and a target-size warning wrapped
        # after `that is` (the input's size is on the next line)
        ahead = TRACEBACK_LINES if "Traceback" in first else VALUES_LINES + 1 if first.rstrip().endswith(
            VALUES_FOLLOW) else 2 if "terminate called after throwing" in first or first.rstrip().endswith(
            "that is") else 0
        if ahead:
            stop = offset
            for _ in range(ahead):
                stop = buf.find(b"\n", stop + 1, limit)
                if stop < 0:
                    stop = limit
                    break
            window = [_clean(raw) for raw in buf[offset:stop].split(b"\n")]
        event, span = build_event(artifact, n, window)
        if event is not None and event.code == "out_of_memory" and not event.context and _batch_probe(buf, offset):
            event = Event("benign", None, artifact, n, event.text, fields={"benign": "batch_size_probe",
                                                                            "why": BATCH_PROBE_WHY})
        if event is not None:
            events.append(event)
        skip_until = n + span + joined
    return events


# YOLOv5/ultralytics profile batch sizes by doubling them until one fails (AutoBatch, `profile()`): the OOM is
# printed as a row of its table, caught, and the largest batch that fitted is used
_PROBE_HEADERS = (b"AutoBatch:", b"GPU_mem (GB)")
PROBE_LOOKBACK = 2048
BATCH_PROBE_WHY = ("YOLOv5's batch-size probe (AutoBatch, profile) raises the batch until memory runs out and "
                   "prints that failure as a row of its table; training then uses the largest batch that fitted. "
                   "A maintainer calls it standard practice: no fault unless training itself stops with this error.")


def _batch_probe(buf: bytes, offset: int) -> bool:
    """Whether an out-of-memory line at `offset` is a row of a batch-size probe's table (a line, not a
    traceback: training that then runs out of memory raises one)."""
    before = buf[max(0, offset - PROBE_LOOKBACK):offset]
    return any(h in before for h in _PROBE_HEADERS)


def _summed_parts(columns: list, families: _Families) -> list:
    """The loss of the lines that print only its parts (YOLO's box/obj/cls, a detectron2 loss dict):
    their sum, which is what the trainer minimises, as a train_loss column; a NaN part makes it NaN."""
    parts = [c for c in columns if families.names[c[0]].startswith(PART_PREFIX)]
    if len(parts) < 2:
        return []
    fam = families.resolve("loss")
    rows = np.concatenate([np.frombuffer(c[1], np.int32) for c in parts])
    lines = np.concatenate([np.frombuffer(c[2], np.int32) for c in parts])
    steps = np.concatenate([np.frombuffer(c[3], np.float64) for c in parts])
    values = np.concatenate([np.frombuffer(c[4], np.float64) for c in parts])
    uniq, first, inverse, counts = np.unique(rows, return_index=True, return_inverse=True, return_counts=True)
    total = np.bincount(inverse, weights=values, minlength=len(uniq))
    have = [np.frombuffer(c[1], np.int32) for c in columns if c[0] == fam]
    keep = (counts >= 2) & ~np.isin(uniq, have[0] if have else [])
    if not keep.any():
        return []
    return [(fam, uniq[keep].tobytes(), lines[first][keep].tobytes(), steps[first][keep].tobytes(),
             total[keep].tobytes())]


def _duration_lines(buf: memoryview) -> np.ndarray:
    """The lines (0-based in the chunk) where a cost is followed by a unit of time: one regex pass over the chunk,
    not one per row (a TF1-style log prints a cost on every line)."""
    at = [m.start() for m in _COST_DURATION.finditer(buf)]
    if not at:
        return np.zeros(0, np.int64)
    return np.searchsorted(np.flatnonzero(np.frombuffer(buf, np.uint8) == 10), at)


def _costs_as_losses(columns: list, families: _Families, buf: memoryview) -> list:
    """The rows of a `cost` (`COST_PREFIX`) under its loss's family where that row printed no loss under
    another name and no unit of time after it, or where the cost is NaN or Inf (no duration is: a NaN cost
    beside a finite loss is the run's NaN, as the scanner keeps a NaN read twice on a line); the rest are
    dropped (a duration that a log called a cost)."""
    out: list = []
    costs: list = []
    for c in columns:
        (costs if families.names[c[0]].startswith(COST_PREFIX) else out).append(c)
    durations = _duration_lines(buf) if costs else np.zeros(0, np.int64)
    for fam, rows, lines, steps, values in costs:
        loss = families.named(families.names[fam][len(COST_PREFIX):])
        rows_a = np.frombuffer(rows, np.int32)
        have = [np.frombuffer(c[1], np.int32) for c in out if c[0] == loss]
        keep = ~np.isin(rows_a, np.concatenate(have)) if have else np.ones(len(rows_a), bool)
        keep &= ~np.isin(np.frombuffer(lines, np.int32), durations)
        keep |= ~np.isfinite(np.frombuffer(values, np.float64))
        if keep.any():
            out.append((loss, rows_a[keep].tobytes(), np.frombuffer(lines, np.int32)[keep].tobytes(),
                        np.frombuffer(steps, np.float64)[keep].tobytes(),
                        np.frombuffer(values, np.float64)[keep].tobytes()))
    return out


def _without_run_summary(columns: list, families: _Families, buf: memoryview, hits: np.ndarray) -> list:
    """The columns without the finite training loss of a run's summary lines (RUN_SUMMARY)."""
    chunk, limit = cast(bytes, buf.obj), len(buf)
    summary = []
    for idx, offset in hits.reshape(-1, 2).tolist():
        end = chunk.find(b"\n", offset, limit)
        if any(chunk.find(lit, offset, end if end >= 0 else limit) >= 0 for lit in RUN_SUMMARY):
            summary.append(idx)
    if not summary:
        return columns
    loss = families.named("train_loss")
    out = []
    for fam, rows, lines, steps, values in columns:
        if fam == loss:
            at = np.isin(np.frombuffer(lines, np.int32), summary)
            # (where the loss was reported on other lines; a paste of the summary alone keeps its one value)
            keep = ~at | ~np.isfinite(np.frombuffer(values, np.float64)) if not at.all() else np.ones(len(at), bool)
            rows, lines, steps, values = (np.frombuffer(b, t)[keep].tobytes() for b, t in (
                (rows, np.int32), (lines, np.int32), (steps, np.float64), (values, np.float64)))
        out.append((fam, rows, lines, steps, values))
    return out


def _scan_chunk(buf: memoryview, families: _Families):
    """Runs in a worker thread; the scanner holds the GIL only to name a new key."""
    return buf, _scan(buf, families.resolve, _literals(), _section_initials())


def _by_epoch(series: list[Series]) -> list[Series]:
    """A log with no step but an epoch counter (Keras' `Epoch 8/40`, a print loop's `epoch 8 ...`, the HF Trainer's
    `'epoch': 0.04`): each point at the epoch last printed on or before its line, so that a reply says `epoch 8`,
    not `index 7` (a checkpoint is kept by epoch). Only where the counter never goes back (two runs pasted one
    after the other keep their reports' order) and no point comes before its first line."""
    ep = next((s for s in series if s.name == "epoch"), None)
    if ep is None or ep.lines is None or len(ep) < 2 or not np.isfinite(ep.values).all() \
            or np.any(np.diff(ep.values) < 0) or not np.all(np.diff(ep.lines) > 0):
        return series
    out = []
    for s in series:
        if s.lines is None or (len(s) and s.lines[0] < ep.lines[0]):
            return series
        at = np.searchsorted(ep.lines, s.lines, side="right") - 1
        out.append(replace(s, steps=ep.values[at].astype(np.float64), step_kind="epoch"))
    return out


SPREAD_RUN = 3      # points of one series on one step from which they are spread out


def _spread_repeats(steps: np.ndarray) -> np.ndarray:
    """Points logged with no step of their own take the last step seen, so a step printed once on a line of
    prose (`Loading checkpoint from step 5000`, DeepSpeed's `Grad overflow on iteration 0`) or an epoch's
    header would put every later point on it. Each run of SPREAD_RUN or more points of a series on one step
    is spread evenly up to the series' next step (past its last step: one step a point, or the usual gap
    between its steps), in the order logged. Two on one step are one step's two reports (Caffe's `Iteration
    100, loss = x` and its `Train net output #0: loss = x`, nanoGPT's evaluation and its iteration line) and
    stay. `steps` itself where nothing is spread."""
    n = len(steps)
    if n < SPREAD_RUN:
        return steps
    starts_run = np.ones(n, bool)
    np.not_equal(steps[1:], steps[:-1], out=starts_run[1:])
    starts = np.flatnonzero(starts_run)
    counts = np.diff(np.append(starts, n))
    if counts.max() < SPREAD_RUN:
        return steps
    run = np.cumsum(starts_run) - 1
    distinct = steps[starts]
    gaps = np.diff(distinct)
    last = float(np.median(gaps)) if len(gaps) else float(counts[-1])
    width = np.append(gaps, last if last > 0 else float(counts[-1])) / counts
    width[counts < SPREAD_RUN] = 0.0
    return distinct[run] + (np.arange(n) - starts[run]) * width[run]


def parse_text_log(path: Path, artifact: str) -> TextLogResult:
    global _told_slow
    if not _FAST and not _told_slow:
        _told_slow = True
        print("mltd: the fast log scanner (analysis/ingest/_logscan.c) is not built, so text logs are read "
              "by its pure-Python twin, about 100x slower; install a C compiler and reinstall to build it",
              file=sys.stderr)
    families = _Families()
    builders: dict[int, SeriesBuilder] = {}
    events: list[Event] = []
    total = metric_lines = bad = 0
    has_cr = False
    last_step: float | None = None
    last_raw: float | None = None         # the last step as logged: a chunk that starts below it restarts the counter
    ordinal = 0
    saw_step = False

    def consume(result) -> None:
        nonlocal total, metric_lines, bad, has_cr, last_step, last_raw, ordinal, saw_step
        buf, (n_lines, n_rows, columns, hits, n_bad, chunk_last_step, first_raw, chunk_last_raw, cr) = result
        base = 0.0                        # what the counter's restarts before this chunk add to its steps
        if last_step is not None and last_raw is not None:
            base = last_step if first_raw < last_raw else last_step - last_raw
        events.extend(_events(buf, np.frombuffer(hits, np.int64), total, artifact))
        bad += n_bad
        has_cr |= bool(cr)
        saw_step |= bool(np.isfinite(chunk_last_step))
        columns += _summed_parts(columns, families)
        columns = _costs_as_losses(columns, families, buf)
        columns = _without_run_summary(columns, families, buf, np.frombuffer(hits, np.int64))
        for fam, rows, lines, steps, values in columns:
            steps = np.frombuffer(steps, np.float64)
            if saw_step:                  # before the chunk's first step: the last one before it
                steps = np.where(np.isnan(steps), last_step if last_step is not None else 0.0, steps + base)
            else:
                steps = ordinal + np.frombuffer(rows, np.int32).astype(np.float64)
            if fam not in builders:
                builders[fam] = SeriesBuilder(families.names[fam], artifact)
            builders[fam].extend(steps, np.frombuffer(values, np.float64), np.frombuffer(lines, np.int32) + (total + 1))
        if np.isfinite(chunk_last_step):
            last_step, last_raw = base + chunk_last_step, chunk_last_raw
        total += n_lines
        metric_lines += n_rows
        ordinal += n_rows

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="mltd-log") as pool:
        pending: deque = deque()
        for buf in _read_chunks(path):
            pending.append(pool.submit(_scan_chunk, buf, families))
            if len(pending) >= 2:
                consume(pending.popleft().result())
        while pending:
            consume(pending.popleft().result())

    kind = "step" if saw_step else "index"
    series = [s for s in (b.build(kind) for b in builders.values()) if s is not None]
    if not saw_step:
        series = _by_epoch(series)
    if saw_step or any(s.step_kind == "epoch" for s in series):
        series = [s if (spread := _spread_repeats(s.steps)) is s.steps else replace(s, steps=spread) for s in series]
    series = with_printed_values(path, with_bare_tables(path, series, artifact), artifact, NONFINITE_PREFIX)
    notes = [f"{artifact}: {n:,} more names under {kind} past the first {MAX_FAMILIES_OF_A_KIND} are not read"
             for kind, n in families.dropped.items()]
    return TextLogResult(series=series, events=fold(events), lines=total, metric_lines=metric_lines,
                         skipped_lines=bad, has_carriage_returns=has_cr, notes=notes)
