"""`mltd watch PATH`: the watch from outside the training process, for jobs that can't be changed.

It follows a growing plain-text training log or metrics file (CSV/TSV, JSON Lines: analysis/
metrics_tail.py) — a file, or the newest of them in a run folder, whose config and code are read
once as the warning's context — and feeds each new metric line to a `Watcher`. In a folder where a
log and a metrics file both grow (written within `BOTH_GROW_S` of each other), the metrics file is
followed: it is written to hold every metric at its step, where a console log often prints only
some of them, at another cadence, or progress bars; what the log alone holds (a traceback) ends the
run anyway. Only the bytes appended since the last look are read; a log that shrinks was replaced,
and is followed again from its start. The source is anything with `name`, `context`, `read(n)`
and `shrank()`: a local file here, an S3 object in handlers/watch_s3.py.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from analysis.live import LogTail
from analysis.metrics_tail import CsvTail, JsonlTail
from analysis.run import Run
from handlers.watch.watcher import Watcher, read_context

LOG_SUFFIXES = (".log", ".txt", ".out")
CSV_SUFFIXES = (".csv", ".tsv")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
FOLLOWED = LOG_SUFFIXES + CSV_SUFFIXES + JSONL_SUFFIXES
READ_BYTES = 1 << 20
BOTH_GROW_S = 60.0


class LogSource(Protocol):
    name: str
    context: Run | None

    def read(self, n: int) -> bytes: ...

    def shrank(self) -> bool: ...


def tail_for(name: str, head: bytes = b"") -> LogTail | CsvTail | JsonlTail:
    """The reader of a followed file, by its name, or by its first bytes where they say otherwise (Keras'
    CSVLogger writes `training.log` as a CSV table), as the post-mortem's discovery classifies it."""
    from analysis.ingest.discover import looks_like_csv_metrics

    lower = name.lower()
    if lower.endswith(CSV_SUFFIXES):
        return CsvTail(name, "\t" if lower.endswith(".tsv") else None)
    if lower.endswith(JSONL_SUFFIXES):
        return JsonlTail(name)
    if looks_like_csv_metrics(head.decode("utf-8", "replace")):
        return CsvTail(name)
    return LogTail(name)


def _followable(p: Path) -> bool:
    from analysis.ingest.discover import is_sample_file

    suffix = p.suffix.lower()
    # a CSV or JSONL of model outputs (`samples.jsonl`) is no metrics file, as in the ingest
    outputs = suffix not in LOG_SUFFIXES and is_sample_file(p.name)
    return p.is_file() and suffix in FOLLOWED and not outputs


def find_log(path: Path) -> Path:
    """The file to follow: `path` itself, or the most recently written log or metrics file in the
    folder, a metrics file first when both grow (see the module's docstring)."""
    if path.is_file():
        if path.suffix.lower() not in FOLLOWED:
            raise FileNotFoundError(f"{path}: not a training log or metrics file ({', '.join(FOLLOWED)}); "
                                    "`mltd diagnose` reads every other format")
        return path
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    found = sorted((p for p in path.rglob("*") if _followable(p)), key=lambda p: p.stat().st_mtime)
    if not found:
        raise FileNotFoundError(f"{path}: no training log or metrics file ({', '.join(FOLLOWED)}) to follow")
    newest = found[-1].stat().st_mtime
    metrics = [p for p in found if p.suffix.lower() not in LOG_SUFFIXES and p.stat().st_mtime >= newest - BOTH_GROW_S]
    return (metrics or found)[-1]


class LocalLog:
    def __init__(self, path: str | Path) -> None:
        root = Path(path)
        self.path = find_log(root)
        self.name = self.path.name
        self.context = read_context(root) if root.is_dir() else None
        if self.context is not None:           # the log itself is what is followed, not context
            rel = self.path.relative_to(root).as_posix()
            self.context.artifacts = [a for a in self.context.artifacts if a.path != rel]
        self._file = self.path.open("rb")

    def read(self, n: int) -> bytes:
        return self._file.read(n)

    def shrank(self) -> bool:
        if self._file.tell() > self.path.stat().st_size:
            self._file.seek(0)
            return True
        return False

    def close(self) -> None:
        self._file.close()


def follow(source: str | Path | LogSource, watcher_for: Callable[..., Watcher], *, poll_s: float = 1.0,
           idle_exit_s: float | None = None, sleep: Callable[[float], None] = time.sleep) -> Watcher:
    """Follows the log until it has not grown for `idle_exit_s` (forever when None); returns the watcher."""
    log = LocalLog(source) if isinstance(source, (str, Path)) else source
    watcher = watcher_for(context=log.context)
    # evidence, the precursors' early evidence too, cites the followed file by name, at its steps
    watcher.live.artifact = watcher.live.precursors.artifact = log.name
    tail: LogTail | CsvTail | JsonlTail | None = None
    idle = 0.0
    skipped = 0                  # lines that could not be read, of the files before a truncation
    try:
        while True:
            data = log.read(READ_BYTES)
            if data:
                idle = 0.0
                if tail is None:
                    tail = tail_for(log.name, data[:4096])
                for step, values in tail.feed(data):
                    watcher.append(step, values)
                watcher.live.context.events = tail.events
                watcher.skipped_lines = skipped + tail.skipped
                continue
            if log.shrank():                 # truncated or replaced: a new run starts, with its own header
                skipped += tail.skipped if tail is not None else 0
                tail = None
                continue
            if idle_exit_s is not None and idle >= idle_exit_s:
                break
            sleep(poll_s)
            idle += poll_s
    finally:
        getattr(log, "close", lambda: None)()
    if watcher.live.points:
        watcher.check()         # the end of the log: one last look at what was not yet checked
    return watcher
