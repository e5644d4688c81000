"""The per-artifact time budget counts the CPU time the reading takes, not the wall clock: a loaded
machine must read the same artifacts as an idle one (the diagnosis must not change with the load)."""
import time

import pytest

from analysis.budget import OverBudget, time_limit


def test_a_block_that_computes_past_its_budget_is_ended():
    with pytest.raises(OverBudget, match="CPU time"):
        with time_limit(0.2, "spin"):
            while True:
                sum(range(1000))


def test_waiting_is_not_cost():
    start = time.monotonic()
    with time_limit(0.2, "wait"):
        time.sleep(0.5)          # a loaded machine: the wall clock runs, this process's CPU does not
    assert time.monotonic() - start >= 0.5


def test_the_alarm_is_gone_after_the_block():
    with time_limit(0.2, "quick"):
        pass
    t = time.process_time()
    while time.process_time() - t < 0.4:     # past the old budget: no late alarm
        sum(range(1000))


def test_an_outer_limit_gets_its_time_back_and_still_fires():
    with pytest.raises(OverBudget, match="0.6 s"):
        with time_limit(0.6, "outer"):
            with time_limit(0.2, "inner"):
                pass
            while True:                      # the outer budget still ends the block
                sum(range(1000))


def test_a_big_artifact_gets_time_for_its_bytes_and_a_small_one_the_fixed_budget():
    from analysis.budget import Budget
    b = Budget(artifact_seconds=10.0)
    assert b.seconds_for(10_000) == pytest.approx(10.0, abs=0.001)      # a hostile snippet: still ~10 s
    assert b.seconds_for(1_000_000_000) == pytest.approx(30.0)          # a 1 GB log: 20 s more
    assert Budget(artifact_seconds=0).seconds_for(1_000_000_000) == 0    # off stays off
