"""Healthy runs on grid.py's trainer that look alarming at a glance: a scheduled LR change, noisy
minibatch losses, an early plateau that resolves, evaluation losses that jump on one shard. Each
checks that it did learn, and that its look-alike feature is there."""
from __future__ import annotations

import math
from pathlib import Path


from tests.scenarios.grid import Family, Knobs, Variant, losses, mean, require, train, write

V = Variant
NOISE = 0.05    # a few wrong labels, as real data has: the loss keeps a floor above zero


def _learned(rows, by: float = 0.6) -> None:
    ls = losses(rows)
    require(all(math.isfinite(x) for x in ls), "a loss is not finite")
    n = max(5, len(ls) // 20)
    require(mean(ls[-n:]) < by * mean(ls[:n]), f"did not learn: {mean(ls[:n]):.3f} -> {mean(ls[-n:]):.3f}")
    val = [r["val_loss"] for r in rows if "val_loss" in r]
    if val:
        require(val[-1] < 1.15 * min(val) + 0.05, "validation loss rose at the end")


def plain(dest: Path, v: Variant) -> None:
    """The variant as it is, with an evaluation every 40 steps."""
    k = Knobs(val_every=40, label_noise=NOISE)
    model, rows, _ = train(v, k, dest)
    _learned(rows)
    write(dest, v, k, rows, model)


FAMILIES = [
    Family("plain", plain, "healthy", "tuning", (
        V("mlp", "adamw", "cosine", fmt="jsonl", seed=401), V("cnn", "momentum", fmt="tb", seed=402),
        V("regression", "adam", fmt="hf", seed=403), V("lm", "adam", "warmup", fmt="csv", steps=400, seed=404))),
]
