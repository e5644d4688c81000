"""The measuring families once in long_runs.py (see tests/scenarios/__init__.py): never read one by one,
never tuned on; bench/accuracy.py measures them."""
from __future__ import annotations

import math
from pathlib import Path

from tests.scenarios.grid import Family, Variant, mean, require
from tests.scenarios.long_runs import BASE, CLASSES, LOG_EVERY, _late_steps, _long, _losses, _save, _spikes_recover, run


def restart_to_a_high_peak(dest: Path, v: Variant) -> None:
    """Cosine decay, then a warm restart at 88% of the run whose peak is 50 times the first one."""
    at = int(v.steps * 0.88)

    def lr(s):
        if s <= at:
            return BASE * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * s / at)))
        return BASE * 50 * min(1.0, (s - at) / 500)

    net, rows = run(v, lr)
    ls = _losses(rows)
    i = at // LOG_EVERY
    before = mean(ls[i - 200: i])
    after = [x for x in ls[i:] if math.isfinite(x)]
    require(len(after) < len(ls[i:]) or mean(after[-200:]) > 1.5 * before, "the restart did not show")
    _save(dest, v, net, rows, BASE, {"restarts": [{"at_step": at, "peak_lr": BASE * 50}]})


def mislabelled_late(dest: Path, v: Variant) -> None:
    """Late in the run, three batches carry labels from another file; clipping at 1.0."""
    at = _late_steps(v)
    net, rows = run(v, lambda s: BASE, lambda s, x, y, rng: (x, (y + 1 + rng.integers(0, CLASSES - 1, len(y))) % CLASSES
                                                              if s in at else y), clip=1.0)
    _spikes_recover(rows, at)
    _save(dest, v, net, rows, BASE, {}, clip=1.0)


def raw_rows_half_late(dest: Path, v: Variant) -> None:
    """Hidden layer in float16; from 93% of the run on, rows arrive in raw units (x 1e5)."""
    at = int(v.steps * 0.93)
    net, rows = run(v, lambda s: BASE, lambda s, x, y, rng: (x * 1e5 if s > at else x, y), half=True)
    bad = next((i for i, r in enumerate(rows) if not math.isfinite(r["loss"])), None)
    require(bad is not None and rows[bad]["step"] > at - LOG_EVERY, "no late NaN")
    gn = [r["grad_norm"] for r in rows[:bad]]
    require(max(gn[-5:]) < 20 * sorted(gn)[len(gn) // 2], "the gradients grew before the NaN")
    _save(dest, v, net, rows, BASE, {"precision": "fp16"})


def step_decay_long(dest: Path, v: Variant) -> None:
    """Step decay: x0.1 at 50% and again at 80% of the run."""
    def lr(s):
        return BASE * (0.1 if s > v.steps * 0.5 else 1) * (0.1 if s > v.steps * 0.8 else 1)

    net, rows = run(v, lr)
    ls = _losses(rows)
    require(mean(ls[-500:]) < 0.8 * mean(ls[:20]), "did not learn")
    _save(dest, v, net, rows, BASE, {"milestones": [v.steps // 2, v.steps * 4 // 5], "gamma": 0.1})


FAMILIES = [
    Family("long_restart", restart_to_a_high_peak, "lr_too_high", "measuring",
           (_long("hf", 100_000, 505, "cosine"), _long("pipe", 120_000, 506, "cosine"))),
    Family("long_mislabelled", mislabelled_late, "loss_spikes", "measuring",
           (_long("mlflow", 100_000, 507), _long("jsonl", 110_000, 508))),
    Family("long_half_raw", raw_rows_half_late, "numerical_instability", "measuring", (_long("kv", 100_000, 509),)),
    Family("long_step_decay", step_decay_long, "healthy", "measuring",
           (_long("csv", 100_000, 510, "step"), _long("lightning", 105_000, 511, "step"))),
]
