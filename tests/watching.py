"""What the watch tests (and bench/watch.py) share: one torch thread per tiny training, a notifier
that keeps what it is given, and a finished run replayed through the watch point by point."""
from dataclasses import replace

import numpy as np
import pytest
import torch

from analysis.live_warning import LiveWarning
from analysis.metrics import MetricTable
from analysis.run import Run
from handlers.watch import Watcher


@pytest.fixture(autouse=True)
def one_thread():
    """A tiny model's steps must not swell with a busy machine's thread contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class Collect:
    def __init__(self) -> None:
        self.docs: list[dict] = []

    def post(self, warning: LiveWarning) -> None:
        self.docs.append(warning.to_dict())          # the JSON document, as a file or the service gets it


def replay(run: Run, *, with_files: bool = True) -> list[dict]:
    """Every warning the watch posts when the run's metrics arrive one step at a time; without
    `with_files`, the watch sees the metrics alone (no config or code)."""
    sink = Collect()
    # what exists when the run starts: its config and code; not its checkpoints, samples or trainer
    # state, which are written as it goes (the final ones would tell the future)
    context = replace(run, metrics=MetricTable(), events=[], notes=[], checkpoints=[], samples=[], params={},
                      artifacts=[a for a in run.artifacts if a.kind in ("config", "code")])
    if not with_files:
        context = replace(context, artifacts=[], configs=[], code=[])
    w = Watcher(run.id, notifier=sink, context=context, budget=None)
    series = list(run.metrics.series.values())
    steps = np.unique(np.concatenate([s.steps for s in series]))
    for k in steps:
        values = {}
        for s in series:
            j = int(np.searchsorted(s.steps, k))
            if j < len(s) and s.steps[j] == k:
                values[s.name] = float(s.values[j])
        w.append(float(k), values)
    return sink.docs
