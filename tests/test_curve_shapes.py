"""Curve shapes of our own making that an engineer reads at a glance: a warm-up's bump, spikes that end in a NaN,
the percentage said beside its ends. Deterministic (a fixed seed), each shape shown whatever the noise draws."""
from __future__ import annotations

import math
import random

import numpy as np

from analysis.diagnose import diagnose
from analysis.signals import spikes


def _run(tmp_path, lines: list[str]):
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    return diagnose(tmp_path)[0]


def _warmup_with_a_bump(start_lr: float) -> list[str]:
    # linear warm-up to 1e-3 over 300 steps from `start_lr`, the loss bumping 2.3 -> 2.7 during it, then down to ~0.3
    r = random.Random(8)
    out = []
    for s in range(0, 3000, 10):
        lr = max(start_lr, 1e-3 * min(1.0, s / 300))
        loss = (2.3 + 0.4 * math.sin(math.pi * s / 600) if s < 300
                else 2.7 - 2.4 * (1 - math.exp(-(s - 300) / 600))) + r.gauss(0, 0.03)
        out.append(f"step {s} | loss {loss:.4f} | lr {lr:.2e} | grad_norm {abs(1 + r.gauss(0, 0.2)):.3f}")
    return out


def test_a_warmup_from_zero_with_a_bump_the_run_recovers_from_is_no_fault(tmp_path):
    for start in (0.0, 1e-8):
        d = _run(tmp_path, _warmup_with_a_bump(start))
        grave = [c for c in d.root_causes if c.severity in ("critical", "high")]
        assert not grave and d.root_causes[0].code == "healthy", (start, d.root_causes[:2])


def test_spikes_that_end_in_a_nan_are_no_recovered_spikes():
    # a NaN is filled with the median before the search: a spike right before it must not read as one that came back
    r = random.Random(3)
    v = np.array([2.0 - i / 100 + r.gauss(0, 0.01) for i in range(60)] + [6.0] + [np.nan] * 5)
    assert 60 not in spikes(v)
    w = v.copy()
    w[61:] = [1.4, 1.39, 1.38, 1.37, 1.36]
    assert 60 in spikes(w)


def test_the_percentage_a_healthy_reading_says_follows_from_the_ends_it_prints(tmp_path):
    r = random.Random(5)
    d = _run(tmp_path, [f"step {s} | loss {1.3 * math.exp(-s / 2000) + 0.5 + r.gauss(0, 0.15):.4f}"
                        for s in range(0, 4000, 20)])
    top = d.root_causes[0]
    assert top.code == "healthy"
    said = next(e.text for e in top.evidence if e.text.startswith("loss fell"))
    pct = float(said.split("loss fell ")[1].split("%")[0])
    a, b = (float(x) for x in said.split(" from ")[1].split(" (")[0].split(" to "))
    assert abs((a - b) / a * 100 - pct) < 1.0, said


def test_a_loss_that_climbs_slowly_from_its_first_report_is_read(tmp_path):
    # +45% over 200 reports, climbing at almost every smoothed report: an LR too high (or a maximised loss)
    r = random.Random(0)
    d = _run(tmp_path, [f"step {10 * i} | loss {1.5 + 0.8 * i / 200 + r.gauss(0, 0.04):.4f} | lr 5.00e-02"
                        for i in range(200)])
    assert d.root_causes and d.root_causes[0].code == "lr_too_high", d.root_causes[:1]


def test_a_noisy_flat_loss_is_no_slow_climb(tmp_path):
    r = random.Random(1)
    d = _run(tmp_path, [f"step {10 * i} | loss {1.5 + r.gauss(0, 0.15):.4f} | lr 3.00e-04" for i in range(200)])
    assert "lr_too_high" not in [c.code for c in d.root_causes if c.severity in ("critical", "high")]


def test_a_language_models_loss_held_at_ln_vocabulary_moves_no_weight(tmp_path):
    # GPT-2's vocabulary: a model that ignores its input still learns the token frequencies, far below ln(V)
    r = random.Random(2)
    d = _run(tmp_path, [f"step {10 * i} | loss {math.log(50257) + r.gauss(0, 0.015):.4f} | lr 1.00e-03 | "
                        f"grad_norm {0.33 + r.gauss(0, 0.02):.3f}" for i in range(300)])
    codes = [c.code for c in d.root_causes]
    assert codes[0] == "no_parameter_updates" and "lr_too_low" not in codes, d.root_causes[:2]


def test_a_loss_that_swings_by_most_of_its_level_is_no_healthy_run(tmp_path):
    # 0.3 <-> 2.0 every ~25 reports at a constant LR: it never settles, whatever its first and last tenths say
    r = random.Random(4)
    d = _run(tmp_path, [f"step {10 * i} | loss {1.2 + 0.85 * math.sin(i / 4) + r.gauss(0, 0.05):.4f} | lr 3.00e-01"
                        for i in range(200)])
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and top.severity == "medium", d.root_causes[:2]
    # batch noise of the same size around a falling loss is a sound run's
    d = _run(tmp_path, [f"step {10 * i} | loss {(0.5 + 1.5 * math.exp(-i / 60)) * (1 + r.gauss(0, 0.3)):.4f} | "
                        "lr 3.00e-04" for i in range(200)])
    assert d.root_causes[0].code == "healthy" and "lr_too_high" not in [c.code for c in d.root_causes]
