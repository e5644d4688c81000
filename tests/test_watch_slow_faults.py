"""The live watch on the suite's slow faults (tests/scenarios/grid_slow.py, tuning families only),
and on blow-ups from the first step (grid_explode3/5.py, a loss or gradient norm already huge at its
first report): replayed step by step from their metrics alone, the early warning comes while the
post-mortem of the run so far is not yet certain of the cause, and the post-mortem of the whole run is."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from analysis.diagnose import CONFIDENT, diagnose_run
from analysis.ingest import load_run
from analysis.metrics import MetricTable, Series
from analysis.run import Run
from handlers.watch import Watcher
from tests.scenarios import ALL, SLOW, SPLIT
from tests.watching import Collect


def _prefix(run: Run, last: float) -> Run:
    table = MetricTable()
    for s in run.metrics.series.values():
        m = s.steps <= last
        table.add(Series(s.name, s.artifact, s.steps[m], s.values[m], None if s.lines is None else s.lines[m],
                         s.step_kind, s.stride))
    return replace(run, metrics=table, events=[])


def _certain(run: Run, code: str) -> bool:
    return any(c.code == code and c.confidence >= CONFIDENT for c in diagnose_run(run).root_causes)


@pytest.mark.parametrize("name", ["lr_creeping_0", "lr_creeping_1", "fp16_scale_decay_0", "fp16_scale_decay_1",
                                  "raw_targets_0", "reduction_sum_1", "residual_unlogged_0"])
def test_a_building_fault_is_flagged_from_the_metrics_before_the_post_mortem_is_sure(name, scenario):
    assert (name in SLOW or ALL[name][1] == "exploding_gradients") and SPLIT[name] == "tuning"
    code = ALL[name][1]
    run = load_run(scenario(name))
    sink = Collect()
    w = Watcher(name, notifier=sink, budget=None)          # no config, no code: the metrics alone
    series = list(run.metrics.series.values())
    for k in np.unique(np.concatenate([s.steps for s in series])):
        w.append(float(k), {s.name: float(s.values[j]) for s in series
                            if (j := int(np.searchsorted(s.steps, k))) < len(s) and s.steps[j] == k})
    first = next(d for d in sink.docs if code in d["watch"]["alarms"])
    cause = next(c for c in first["root_causes"] if c["code"] == code)
    assert cause["early"] and cause["evidence"][0]["artifact"] == "live metrics"
    assert not _certain(_prefix(run, first["watch"]["step"]), code)
    assert _certain(run, code)
