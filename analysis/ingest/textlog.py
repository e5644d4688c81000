"""Plain-text training logs, streamed in bounded memory.

A log is read in 8 MB chunks cut at line ends. Each chunk becomes a polars frame of lines (blank
lines kept, so line numbers stay exact) and every metric family of `data/log_keys.toml` is pulled
out by a Rust regex in one pass per family: Python's `re` reads such logs at ~13 MB/s, this path at
over 100 MB/s (bench/ingest.py). Lines that mention a failure signature go to Python for the
traceback and its numbers. Two chunks are in flight at once, so reading overlaps the regex work.
"""
from __future__ import annotations

import tomllib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import polars as pl

from analysis.ingest.events import build_event, fold, prefilter_literals
from analysis.metrics import Series, SeriesBuilder
from analysis.model import Event

CHUNK_BYTES = 8 << 20
_NUM = r"([-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|NAN|inf|Inf|INF))"
_SEP = r"['\"]?(?:[ \t]*[:=|][ \t]*|[ \t]+)(?:tensor\()?"
_ANSI = r"\x1b\[[0-9;?]*[A-Za-z]"
# A key of a metric family followed by `=`/`:` but no number: counted as a malformed line.
_MALFORMED = r"(?-u)(?:loss|lr|grad_norm|learning_rate)['\"]?[ \t]*[:=][ \t]*(?:$|[,;}|])"


@dataclass
class TextLogResult:
    series: list[Series]
    events: list[Event]
    lines: int
    metric_lines: int
    skipped_lines: int
    has_carriage_returns: bool = False


# A key preceded by one of these belongs to a longer name (`val/loss`, `eval.acc`).
_QUALIFIERS = (b"/", b".", b"-")
_STRICT = r"(?:^|[\s,;:{}()\[\]|'\"<>=*#@!])"


@lru_cache(maxsize=1)
def _families() -> tuple[tuple[str, pl.Expr, pl.Expr | None, tuple[bytes, ...]], ...]:
    """(name, fast expression, strict expression or None, qualified-key needles) per family. The
    strict form refuses a key inside a longer name but defeats the regex's literal search, so it
    only runs on chunks where such a name occurs."""
    data = tomllib.loads(resources.files("analysis").joinpath("data/log_keys.toml").read_text())

    def expr(boundary: str, fam: dict) -> pl.Expr:
        pattern = rf"(?-u){boundary}{fam['key']}{_SEP}{_NUM}"
        return pl.col("line").str.extract(pattern, 1).cast(pl.Float64, strict=False).alias(fam["name"])

    out = []
    for fam in data["family"]:
        strict = fam.get("boundary") == "strict"
        needles = tuple(q + n.encode() for q in _QUALIFIERS for n in fam.get("qualified", [])) if strict else ()
        out.append((fam["name"], expr(r"\b", fam), expr(_STRICT, fam) if strict else None, needles))
    return tuple(out)


def _read_chunks(path: Path):
    base = 0
    with open(path, "rb") as f:
        rest = b""
        while True:
            data = f.read(CHUNK_BYTES)
            buf = rest + data
            if not buf:
                return
            if data:
                cut = buf.rfind(b"\n") + 1
                if cut == 0:           # one enormous line: keep reading until it ends
                    rest = buf
                    if len(rest) < 64 * CHUNK_BYTES:
                        continue
                    cut = len(buf)
            else:
                cut = len(buf)
            rest, buf = buf[cut:], buf[:cut]
            if buf.endswith(b"\n"):
                buf = buf[:-1]
            yield buf, base
            base += buf.count(b"\n") + 1


def _lines_frame(buf: bytes) -> pl.DataFrame:
    """One row per line. polars' CSV reader splits lines in parallel and keeps blank lines; a lone
    \r would end a row there, so progress-bar rewrites are carried as \x1e until split below."""
    if b"\r" in buf:
        buf = buf.replace(b"\r", b"\x1e")
    frame = pl.read_csv(buf, has_header=False, separator="\x1f", quote_char=None, new_columns=["line"],
                        encoding="utf8-lossy", infer_schema=False, truncate_ragged_lines=True,
                        schema_overrides={"line": pl.String})
    expected = buf.count(b"\n") + 1
    if frame.height != expected:       # the CSV reader disagreed on line ends: split exactly instead
        frame = pl.DataFrame({"line": buf.decode("utf-8", "replace").split("\n")})
    return frame


def _parse_chunk(buf: bytes, base: int, artifact: str):
    """Runs in a worker thread: everything here is polars (which releases the GIL) except the few
    lines that name a failure."""
    frame = _lines_frame(buf)
    line = pl.col("line")
    if b"\x1b" in buf:
        frame = frame.with_columns(line.str.replace_all(_ANSI, ""))
    has_cr = b"\r" in buf
    if has_cr:   # a progress bar rewrites its line with \r: the last state is what the user saw
        frame = frame.with_columns(line.str.strip_chars_end("\x1e").str.split("\x1e").list.last())
    qualified = {name: bool(frame.select(line.str.contains_any([n.decode() for n in needles]).any()).item())
                 for name, _, strict, needles in _families() if strict is not None}
    exprs = [strict if qualified.get(name) else fast for name, fast, strict, _ in _families()]
    names = [name for name, *_ in _families()]
    metrics = (frame.with_row_index("n", offset=base + 1)
               .with_columns(*exprs,
                             line.str.contains(_MALFORMED).alias("_bad"),
                             line.str.contains_any(list(prefilter_literals())).alias("_hit"))
               .drop("line"))
    any_metric = pl.any_horizontal([pl.col(n).is_not_null() for n in names] or [pl.lit(False)])
    bad = int(metrics["_bad"].sum())
    hits = metrics.filter(pl.col("_hit"))["n"].to_list()
    metrics = metrics.filter(any_metric).drop("_bad", "_hit")
    events: list[Event] = []
    if hits:
        lines = frame["line"]
        skip_until = 0
        for n in hits:
            if n < skip_until:
                continue
            i = n - base - 1
            window = lines.slice(i, 400).to_list() if "Traceback" in (lines[i] or "") else [lines[i]]
            event, span = build_event(artifact, n, [w or "" for w in window])
            if event is not None:
                events.append(event)
            skip_until = n + span
    return metrics, events, frame.height, bad, has_cr


def parse_text_log(path: Path, artifact: str) -> TextLogResult:
    names = [name for name, *_ in _families()]
    builders = {n: SeriesBuilder(n, artifact) for n in names if n not in ("step",)}
    events: list[Event] = []
    total = metric_lines = bad = 0
    has_cr = False
    last_step: float | None = None
    ordinal = 0
    saw_step = False

    def consume(result) -> None:
        nonlocal total, metric_lines, bad, has_cr, last_step, ordinal, saw_step
        frame, evs, n_lines, n_bad, cr = result
        total += n_lines
        bad += n_bad
        has_cr |= cr
        events.extend(evs)
        if not frame.height:
            return
        metric_lines += frame.height
        step = frame["step"].to_numpy()
        if not saw_step and np.isfinite(step).any():
            saw_step = True
        if saw_step:
            step = pl.Series(step).fill_nan(None).forward_fill().to_numpy()
            if last_step is not None:
                step = np.where(np.isnan(step), last_step, step)
            step = np.where(np.isnan(step), 0.0, step)
            last_step = float(step[-1])
        else:
            step = np.arange(ordinal, ordinal + frame.height, dtype=np.float64)
        ordinal += frame.height
        rows = frame["n"].to_numpy()
        for name, b in builders.items():
            col = frame[name].to_numpy()
            mask = frame[name].is_not_null().to_numpy()
            if mask.any():
                b.extend(step[mask], col[mask], rows[mask])

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="mltd-log") as pool:
        pending: deque = deque()
        for buf, base in _read_chunks(path):
            pending.append(pool.submit(_parse_chunk, buf, base, artifact))
            if len(pending) >= 2:
                consume(pending.popleft().result())
        while pending:
            consume(pending.popleft().result())

    kind = "step" if saw_step else "index"
    series = [s for s in (b.build(kind) for b in builders.values()) if s is not None]
    return TextLogResult(series=series, events=fold(events), lines=total, metric_lines=metric_lines,
                         skipped_lines=bad, has_carriage_returns=has_cr)
