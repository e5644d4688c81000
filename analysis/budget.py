"""What one artifact, and one run, may cost: time and memory. `bot/settings.py` fills it from the
environment; the engine's defaults are the same numbers.

Most of the memory bound is structural: each reader checks what a file declares (a header's
length, a tensor's shape, a member's inflated size, a YAML document's expanded size) against
these caps before it reads. The time bound is a backstop for the Python-level loops: a CPU-time alarm in
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
    # ...and this much more per byte read: a 1 GB log needs ~10 s of CPU on a slow 2-core machine (the C
    # scanner's threads count), where a fixed 10 s cut it short on one run in two and lost the diagnosis
    artifact_bytes_per_cpu_second: float = 50e6
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

    def seconds_for(self, size: int) -> float:
        """The CPU time an artifact of `size` bytes may take (none at all when the budget is off)."""
        if self.artifact_seconds <= 0:
            return self.artifact_seconds
        return self.artifact_seconds + size / self.artifact_bytes_per_cpu_second

    @staticmethod
    def mb(n: int) -> str:
        return f"{n / 2**20:,.0f} MB"


DEFAULT = Budget()


@contextmanager
def time_limit(seconds: float, what: str):
    """Raise OverBudget in the main thread when the block has used `seconds` of this process's CPU
    time: user and system, of all its threads together (the C scanner's reader threads count). CPU
    time, not wall time: what an artifact costs is the work its reading takes, and a loaded machine
    must not cut a log short that an idle one reads whole, which would change the diagnosis with the
    load. Blocking (a hung read) is the job time limit's to end (`MLTD_JOB_TIMEOUT_S`,
    bot/worker.py). An outer CPU-time limit that comes first is left to fire, and gets its time back
    after the block. Elsewhere than the main thread it only measures."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    outer_left, _ = signal.getitimer(signal.ITIMER_PROF)
    if outer_left and outer_left <= seconds:
        yield
        return

    def on_alarm(signum, frame):
        raise OverBudget(f"took more than the {seconds:g} s of CPU time budgeted for one artifact")

    previous = signal.signal(signal.SIGPROF, on_alarm)
    start = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if outer_left:
            signal.setitimer(signal.ITIMER_PROF, max(outer_left - (time.process_time() - start), 0.001))
