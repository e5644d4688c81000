"""Exploding gradients seen from the loss alone: mechanisms of grid_explode3 (raw regression targets,
raw 0-255 inputs, a loss summed over a large batch) in runs that log no gradient norm, under constant, warm-up and cosine schedules, so that what tells an explosion from
an LR too high when only the loss and the LR are logged (a loss already huge at the first report,
before any update; an LR that never left its optimizer's range) is fit on more than a constant LR.

Each checks at generation time, on the gradient norms it computes but does not log, that its fault
shows, whatever the seed. (An init too wide for the depth, under cross-entropy and a warm-up or a
cosine, blew up for some seeds only: left out.)"""
from __future__ import annotations

import math
from pathlib import Path

from tests.scenarios.grid import Family, Knobs, Variant, require, train, write
from tests.scenarios.grid_explode3 import INPUT_SCALE, TARGET_OFFSET, TARGET_SCALE, task_loss_summed

V = Variant


def _unlogged_blow_up(rows: list[dict], what: str) -> list[dict]:
    """Inf/NaN after a few finite steps, the gradient norm already over 100 at step 1; the rows
    without their gradient norm, as the run logs them."""
    bad = next((i for i, r in enumerate(rows) if not (math.isfinite(r["loss"]) and math.isfinite(r["grad_norm"]))),
               None)
    require(bad is not None and bad >= 3, f"{what}: no blow-up to Inf/NaN after a few finite steps (at {bad})")
    require(rows[0]["grad_norm"] > 100, f"{what}: first gradient norm only {rows[0]['grad_norm']:.3g}")
    return [{key: val for key, val in r.items() if key != "grad_norm"} for r in rows]


RAW_TARGET_LR = {"sgd": 1e-3}


def raw_targets_unlogged(dest: Path, v: Variant) -> None:
    """Regression targets on their raw scale (around 30,000, spread 10,000) under MSE: the loss is
    ~1e9 at step 1 and the run blows up to Inf/NaN within a few steps under a small SGD rate."""
    k = Knobs(lr=RAW_TARGET_LR[v.opt], rows=lambda s, xb, yb: (xb, yb * TARGET_SCALE + TARGET_OFFSET),
              extra_config={"data": {"target": "price", "target_transform": None}, "loss": {"name": "mse"}})
    model, rows, _ = train(v, k, dest)
    write(dest, v, k, _unlogged_blow_up(rows, "raw targets"), None)


RAW_LR = {"mlp": 0.05, "cnn": 0.01}


def raw_inputs_unlogged(dest: Path, v: Variant) -> None:
    """Inputs fed on their raw 0-255 scale: hundreds of times the gradient a standardised input
    gives, and the run blows up under a rate inside SGD's range, warm-up or not."""
    k = Knobs(lr=RAW_LR[v.arch], rows=lambda s, xb, yb: (xb * INPUT_SCALE, yb),
              extra_config={"data": {"normalize": None, "scale": "0-255"}})
    model, rows, _ = train(v, k, dest)
    write(dest, v, k, _unlogged_blow_up(rows, "raw inputs"), None)


def summed_unlogged(dest: Path, v: Variant) -> None:
    """The loss reduced with reduction="sum" over a large batch: the batch size times the mean's
    gradient, and the run blows up at the optimizer's usual rate."""
    k = Knobs(loss=task_loss_summed)
    model, rows, _ = train(v, k, dest)
    write(dest, v, k, _unlogged_blow_up(rows, "summed loss"), None, code=(task_loss_summed, Knobs, train))


FAMILIES = [
    Family("raw_targets_unlogged", raw_targets_unlogged, "exploding_gradients", "tuning", (
        V("regression", "sgd", "warmup", fmt="kv", seed=9401), V("regression", "sgd", "cosine", fmt="jsonl", seed=9402),
        V("regression", "sgd", fmt="lightning", seed=9403, width=48))),
    Family("raw_inputs_unlogged", raw_inputs_unlogged, "exploding_gradients", "tuning", (
        V("mlp", "sgd", "warmup", fmt="pipe", seed=9411), V("cnn", "sgd", "cosine", fmt="csv", seed=9412),
        V("mlp", "sgd", fmt="hf", seed=9413, width=48))),
    Family("summed_unlogged", summed_unlogged, "exploding_gradients", "tuning", (
        V("regression", "sgd", "warmup", fmt="colon", seed=9421, batch=256),
        V("regression", "momentum", "cosine", fmt="tb", seed=9422, batch=256),
        V("lm", "sgd", fmt="mlflow", seed=9423, batch=64))),
]
