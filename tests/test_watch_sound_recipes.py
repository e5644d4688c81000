"""The live watch on sound recipes that look alarming from a prefix (tests/scenarios/grid_healthy2.py,
tuning families): replayed step by step with the config and code a run starts with, none of them
warns. fp16 under a GradScaler started at 2**24 (its first steps overflow and are skipped, by
design); SGD at 0.2-0.4 with BatchNorm and warm-up (2-4x the usual top, batch noise at a low loss);
a one-cycle peak at 2x Adam's top; an SGDR restart back to 0.2 and the loss bump it brings; a curriculum
stage that jumps the loss and the gradient norm at once."""
from __future__ import annotations

import pytest

from analysis.ingest import load_run
from tests.scenarios import ALL, SPLIT
from tests.watching import replay

SOUND = ["amp_scaler_0", "amp_scaler_1", "amp_scaler_2", "large_rate_bn_0", "large_rate_bn_1",
         "large_rate_bn_02_0", "large_rate_bn_02_1", "one_cycle_1", "warm_restarts_2", "warm_restarts_4",
         "curriculum_3"]


@pytest.mark.parametrize("name", SOUND)
def test_a_sound_recipe_gets_no_warning(name, scenario):
    assert ALL[name][1] == "healthy" and SPLIT[name] == "tuning"
    docs = replay(load_run(scenario(name)))
    assert not docs, [(d["watch"]["step"], d["watch"]["alarms"], d["root_causes"][0]["issue"]) for d in docs]


def test_without_the_declared_scaler_the_skipped_steps_warn(scenario):
    """The same fp16 run with its config and code withheld: three non-finite gradient norms in a row
    while the loss is finite is then a streak worth a warning (nothing says a scaler skips them)."""
    docs = replay(load_run(scenario("amp_scaler_0")), with_files=False)
    assert docs and "numerical_instability" in docs[0]["watch"]["alarms"]
