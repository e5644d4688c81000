"""The measuring families once in grid_healthy.py (see tests/scenarios/__init__.py): never read one by one,
never tuned on; bench/accuracy.py measures them."""
from __future__ import annotations

from pathlib import Path

import torch

from tests.scenarios.grid import Family, Knobs, Variant, losses, mean, require, train, write
from tests.scenarios.grid_healthy import NOISE, V, _learned


def scheduled_change(dest: Path, v: Variant) -> None:
    """A schedule that changes the rate on purpose (a step decay, a warm-up, a cosine to 5%)."""
    note = "decay at 60% of steps" if v.sched == "step" else v.sched
    k = Knobs(val_every=30, label_noise=NOISE, extra_config={"scheduler_note": note})
    vv = v.with_(steps=360)
    model, rows, _ = train(vv, k, dest)
    lrs = [r["lr"] for r in rows]
    require(max(lrs) > 5 * min(lrs), "the rate did not change")
    _learned(rows)
    write(dest, vv, k, rows, model)


def small_noisy_batches(dest: Path, v: Variant) -> None:
    """Batches of 4 with a tenth of the labels wrong: minibatch losses jump around a falling mean."""
    k = Knobs(label_noise=0.1, val_every=50)
    vv = v.with_(batch=4, steps=500)
    model, rows, _ = train(vv, k, dest)
    ls = losses(rows)
    require(max(ls[-100:]) > 3 * mean(ls[-100:]), "the losses are not noisy")
    require(mean(ls[-50:]) < 0.7 * mean(ls[:10]), "did not learn")
    write(dest, vv, k, rows, model)


def plateau_then_learns(dest: Path, v: Variant) -> None:
    """Small initial weights in a three-layer tanh net: the loss sits still for a while, then falls."""
    std, lr = (0.01, 0.05) if v.opt == "momentum" else (0.02, 0.1)
    k = Knobs(init_std=std, act=torch.nn.Tanh, lr=lr, label_noise=NOISE,
              extra_config={"init": {"weight_std": std}, "activation": "tanh"})
    vv = v.with_(depth=3, steps=800)
    model, rows, _ = train(vv, k, dest)
    ls = losses(rows)
    early = ls[: len(ls) // 8]
    require(max(early[-10:]) > 0.95 * mean(early[:10]),
            f"no early plateau: {mean(early[:10]):.3f} -> {max(early[-10:]):.3f}")
    _learned(rows, 0.4)
    write(dest, vv, k, rows, model)


def rotating_eval_shards(dest: Path, v: Variant) -> None:
    """Each evaluation runs on the next of eight shards of 32 rows; one shard comes from a harder
    source, so the validation loss jumps every eighth evaluation and comes back."""
    def shard(step, xv, yv):
        i = (step // 20) % 8
        xe, ye = xv[i * 32:(i + 1) * 32], yv[i * 32:(i + 1) * 32]
        return (xe * 0.1 if i == 5 else xe), ye

    k = Knobs(val_every=20, val_rows=shard, samples=1280)
    vv = v.with_(steps=640)
    model, rows, _ = train(vv, k, dest)
    val = [r["val_loss"] for r in rows if "val_loss" in r]
    require(max(val[len(val) // 2:]) > 2 * sorted(val[len(val) // 2:])[len(val) // 4], "no evaluation jumps")
    ls = losses(rows)
    require(mean(ls[-20:]) < 0.6 * mean(ls[:20]), "did not learn")
    write(dest, vv, k, rows, model)


FAMILIES = [
    Family("scheduled_change", scheduled_change, "healthy", "measuring", (
        V("mlp", "momentum", "step", fmt="kv", seed=405), V("cnn", "adam", "warmup", fmt="hf", seed=406),
        V("lm", "adamw", "cosine", fmt="lightning", seed=407), V("regression", "sgd", "step", fmt="mlflow", seed=408))),
    Family("small_noisy_batches", small_noisy_batches, "healthy", "measuring", (
        V("mlp", "sgd", fmt="tb", seed=409), V("cnn", "adamw", "cosine", fmt="csv", seed=410))),
    Family("plateau_then_learns", plateau_then_learns, "healthy", "measuring", (
        V("mlp", "momentum", fmt="jsonl", seed=411), V("mlp", "sgd", fmt="pipe", seed=412))),
    Family("rotating_eval_shards", rotating_eval_shards, "healthy", "measuring", (
        V("mlp", "adam", fmt="hf", seed=413), V("cnn", "momentum", "step", fmt="nanogpt", seed=414))),
]
