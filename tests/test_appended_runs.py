"""A log that several runs wrote one after another (Python's logging appends to the file by default;
a killed run restarted by hand): the new run's first losses are no divergence of the one before,
and a fault in the last run is still read."""
import math
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


def paste(tmp_path, rows):
    root = tmp_path / "paste"
    root.mkdir()
    (root / "train.log").write_text("".join(" ".join(f"{k}={v}" for k, v in r.items()) + "\n" for r in rows))
    d, _ = diagnose(root)
    return [(c.code, c.severity) for c in d.root_causes]


def test_a_collapse_back_to_the_starting_loss_is_still_a_divergence(tmp_path):
    """A loss that starts at chance (ln 10), learns, then climbs back to chance and stays there prints
    its first two values again: no new run, since it never learns anew."""
    wobble = ("2.3026", "2.3027", "2.3025")
    rows = [{"step": t + 1, "epoch": t // 100, "lr": 0.01,
             "loss": ("2.3026", "2.3027")[t] if t < 2 else f"{2.3026 * math.exp(-t / 30) + 0.2:.4f}" if t < 120
             else f"{0.25 + (t - 120) / 30 * 2.05:.4f}" if t < 150 else wobble[t % 3]} for t in range(300)]
    assert ("lr_too_high", "critical") in paste(tmp_path, rows)


def test_an_inner_epoch_counter_that_cycles_is_no_restart(tmp_path):
    """PPO-style epochs 0..3 over each batch fall back all the time: the loss that climbs back past
    its start under them is still a divergence."""
    rows = [{"step": t, "epoch": (t - 1) % 4, "lr": 0.001,
             "loss": f"{2 * math.exp(-t / 20) + 0.3 if t < 100 else 0.33 + (t - 100) * 0.03:.4f}"}
            for t in range(1, 241)]
    assert ("lr_too_high", "critical") in paste(tmp_path, rows)
