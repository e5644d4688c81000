"""`mltd watch PATH`: the watch from outside the training process, for jobs that can't be changed.

It follows a growing plain-text training log (a file, or the newest log in a run folder, whose
config and code are read once as the warning's context) and feeds each new metric line to a
`Watcher`. Only the bytes appended since the last look are read; a log that shrinks was replaced,
and is followed again from its start. The source is anything with `name`, `context`, `read(n)`
and `shrank()`: a local file here, an S3 object in handlers/watch_s3.py.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from analysis.live import LogTail
from analysis.run import Run
from handlers.watch.watcher import Watcher, read_context

LOG_SUFFIXES = (".log", ".txt", ".out")
READ_BYTES = 1 << 20


class LogSource(Protocol):
    name: str
    context: Run | None

    def read(self, n: int) -> bytes: ...

    def shrank(self) -> bool: ...


def find_log(path: Path) -> Path:
    """The log to follow: `path` itself, or the most recently written log in the folder."""
    if path.is_file():
        if path.suffix not in LOG_SUFFIXES:
            raise FileNotFoundError(f"{path}: not a plain-text training log ({', '.join(LOG_SUFFIXES)}); "
                                    "`mltd diagnose` reads every other format")
        return path
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    logs = sorted((p for p in path.rglob("*") if p.is_file() and p.suffix in LOG_SUFFIXES),
                  key=lambda p: p.stat().st_mtime)
    if not logs:
        raise FileNotFoundError(f"{path}: no training log ({', '.join(LOG_SUFFIXES)}) to follow")
    return logs[-1]


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
    watcher.live.artifact = log.name         # evidence cites the log by name, at its steps
    tail = LogTail(log.name)
    idle = 0.0
    try:
        while True:
            data = log.read(READ_BYTES)
            if data:
                idle = 0.0
                for step, values in tail.feed(data):
                    watcher.append(step, values)
                watcher.live.context.events = tail.events
                continue
            if log.shrank():                 # truncated or replaced: a new run starts
                tail = LogTail(log.name)
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
