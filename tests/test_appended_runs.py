"""A log that several runs wrote one after another (Python's logging appends to the file by default;
a killed run restarted by hand): the new run's first losses are no divergence of the one before,
and a fault in the last run is still read."""
import shutil

import pytest

from analysis import diagnose

GRAVE = ("critical", "high")


def appended(scenario, tmp_path, first: str, last: str, kept: float = 2 / 3):
    """`first`'s log cut at `kept` of its lines (a run killed and restarted), then `last`'s whole log."""
    root = tmp_path / "run"
    shutil.copytree(scenario(last), root, ignore=shutil.ignore_patterns(".complete"))
    head = (scenario(first) / "train.log").read_text().splitlines(keepends=True)
    tail = (root / "train.log").read_text()
    (root / "train.log").write_text("".join(head[: int(len(head) * kept)]) + tail)
    return root


@pytest.mark.parametrize("kept", [2 / 3, 5 / 12])
def test_a_restarted_run_is_no_divergence(scenario, tmp_path, kept):
    """Killed in its second epoch (the epoch counter falls back to 0), or in its first (no counter
    moves back, but the same seed prints the same first losses again)."""
    alone, _ = diagnose(scenario("healthy_noisy_mlp"))
    twice, _ = diagnose(appended(scenario, tmp_path, "healthy_noisy_mlp", "healthy_noisy_mlp", kept))
    assert alone.root_causes[0].code == "healthy"
    assert not [c for c in twice.root_causes if c.code != "healthy" and c.severity in GRAVE]
    assert twice.root_causes[0].code == "healthy"


def test_the_last_runs_own_divergence_is_still_read(scenario, tmp_path):
    alone, _ = diagnose(scenario("lr_jump_mlp"))
    after, _ = diagnose(appended(scenario, tmp_path, "healthy_noisy_mlp", "lr_jump_mlp"))
    assert alone.root_causes[0].code == "lr_too_high"
    assert after.root_causes[0].code == "lr_too_high" and after.root_causes[0].severity in GRAVE
