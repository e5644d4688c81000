"""`mltd watch PATH`: the watch from outside the training process, for jobs that can't be changed.

It follows a growing plain-text training log (a file, or the newest log in a run folder, whose
config and code are read once as the warning's context) and feeds each new metric line to a
`Watcher`. Bytes are read as they are appended; the file is never read again from the start.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from analysis.live import LogTail
from mltd.watcher import Watcher, read_context

LOG_SUFFIXES = (".log", ".txt", ".out")
READ_BYTES = 1 << 20


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


def follow(path: str | Path, watcher_for: Callable[..., Watcher], *, poll_s: float = 1.0,
           idle_exit_s: float | None = None, sleep: Callable[[float], None] = time.sleep) -> Watcher:
    """Follows the log until it has not grown for `idle_exit_s` (forever when None); returns the watcher."""
    root = Path(path)
    log = find_log(root)
    context = read_context(root) if root.is_dir() else None
    if context is not None:
        context.artifacts = [a for a in context.artifacts if a.path != log.relative_to(root).as_posix()]
    watcher = watcher_for(context=context)
    watcher.live.artifact = log.name         # evidence cites the log by name, at its steps
    tail = LogTail(log.name)
    idle = 0.0
    with log.open("rb") as f:
        while True:
            data = f.read(READ_BYTES)
            if data:
                idle = 0.0
                for step, values in tail.feed(data):
                    watcher.append(step, values)
                watcher.live.context.events = tail.events
                continue
            if f.tell() > log.stat().st_size:       # truncated or replaced: a new run starts
                f.seek(0)
                tail = LogTail(log.name)
                continue
            if idle_exit_s is not None and idle >= idle_exit_s:
                break
            sleep(poll_s)
            idle += poll_s
    if watcher.live.points:
        watcher.check()         # the end of the log: one last look at what was not yet checked
    return watcher
