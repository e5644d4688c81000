"""What one artifact, and one run, may cost: time and memory. `bot/settings.py` fills it from the
environment; the engine's defaults are the same numbers.

Most of the memory bound is structural: each reader checks what a file declares (a header's
length, a tensor's shape, a member's inflated size, a YAML document's expanded size) against
these caps before it reads. The time bound is a backstop for the Python-level loops: an alarm in
the main thread ends the artifact that runs past it.
"""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass


class OverBudget(Exception):
    """An artifact would cost more than its budget; the message says which and why."""


@dataclass(frozen=True)
class Budget:
    artifact_seconds: float = 10.0
    artifact_bytes: int = 512 << 20        # memory one artifact may take to read
    run_bytes: int = 1 << 30               # memory the whole run's artifacts may take together
    # Derived caps, each far above what a real file of its kind needs:
    code_bytes: int = 4 << 20              # training code parsed with `ast`
    config_bytes: int = 32 << 20           # a config read whole (a big tokenizer.json is ~10 MB)
    yaml_nodes: int = 200_000              # YAML nodes after alias expansion
    header_bytes: int = 100 << 20          # a safetensors header
    tensors: int = 200_000                 # tensors per checkpoint
    pickle_bytes: int = 64 << 20           # a torch pickle (data.pkl), before any unpickling
    folder_depth: int = 32                 # levels of folders walked in a run

    @classmethod
    def of(cls, artifact_seconds: float, artifact_bytes: int, run_bytes: int) -> Budget:
        """The three numbers of the settings, with the derived caps scaled to `artifact_bytes`
        (at 512 MB they are the defaults above): parsing Python takes ~100x its source in memory,
        a JSON config ~10x, a pickle's objects ~5x its bytes."""
        return cls(artifact_seconds, artifact_bytes, run_bytes,
                   code_bytes=min(cls.code_bytes, artifact_bytes // 128),
                   config_bytes=min(cls.config_bytes, artifact_bytes // 16),
                   header_bytes=min(cls.header_bytes, artifact_bytes // 4),
                   pickle_bytes=min(cls.pickle_bytes, artifact_bytes // 8))

    @staticmethod
    def mb(n: int) -> str:
        return f"{n / 2**20:,.0f} MB"


DEFAULT = Budget()


@contextmanager
def time_limit(seconds: float, what: str):
    """Raise OverBudget in the main thread when the block runs past `seconds`. Elsewhere (a
    worker thread), or when an outer alarm comes first, it only measures."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    if outer_left and outer_left <= seconds:
        yield
        return

    def on_alarm(signum, frame):
        raise OverBudget(f"took longer than the {seconds:g} s budget for one artifact")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:                      # hand the outer alarm (a job's time limit) its time back
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - start), 0.001))
