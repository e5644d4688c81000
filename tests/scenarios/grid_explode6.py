"""Exploding gradients shown the ways the other tuning families do not show them, so that what
tells an explosion from an LR too high or a NaN from the arithmetic is fit on more than a gradient
norm logged at every step under a constant LR:

- a gradient norm logged every few steps (the loss at every step, or with it), the blow-up landing
  before its second logged point: one finite norm, already large, then Inf/NaN;
- an L2 penalty or an SGD weight decay written orders too large, under a cosine or a warm-up, with
  no gradient norm logged: the weights flip sign and grow at every step, and the loss with them;
- a gradient norm logged under another key (`gnorm`, `total_norm`, `gradient_norm`), or only per
  layer, never as a total;
- one hidden layer initialised far too wide, the rest at the default;
- an fp32 run that stops at its first Inf loss, so that the last point is Inf, never NaN;
- a run that logs its loss and gradient norm once per epoch (the epoch's mean).

Not built here: an LSTM/GRU or a transformer LM without clipping on long sequences, a GAN's
discriminator blowing up, a loss with an exp or 1/x term, and an adaptive optimizer under a large L2
(Adam normalises the update, so the penalty cannot overshoot as it does under SGD).

Each checks at generation time, on the gradient norms it computes (logged or not), that its fault
shows, whatever the seed."""
from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from tests.scenarios.grid import (
    Family,
    Knobs,
    Variant,
    config,
    dataset,
    build_model,
    nonfinite_at,
    require,
    train,
    write,
)
from tests.scenarios import training
from tests.scenarios.grid_explode import _fit
from tests.scenarios.grid_explode3 import TARGET_OFFSET, TARGET_SCALE, task_loss_summed

V = Variant


def _blew_up(rows, what: str, first_at_least: float = 0.0) -> int | None:
    """Inf/NaN after a few finite steps, or a gradient norm that rose 100x over its first value; the
    index of the first Inf/NaN row."""
    bad = nonfinite_at(rows)
    gn = [r["grad_norm"] for r in rows[:bad]]
    require(len(gn) >= 3, f"{what}: the gradients overflowed at once (step {bad})")
    require(bad is not None or max(gn) > 100 * gn[0], f"{what}: no blow-up ({gn[0]:.3g} -> {max(gn):.3g})")
    require(max(gn) > 100 * gn[0] or gn[0] >= first_at_least,
            f"{what}: the norm neither grew 100x nor started large ({gn[0]:.3g} -> {max(gn):.3g})")
    return bad


def _without(rows: list[dict], *keys: str) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in keys} for r in rows]


# --- a gradient norm logged every few steps -------------------------------------------------------------

EVERY = (5, 8, 10)    # the logging intervals tried, smallest first


def _interval(rows, bad: int | None, what: str) -> int:
    """The logging interval at which the first logged norm is finite and the second is not."""
    every = next((k for k in EVERY if bad is not None and k <= bad < 2 * k), None)
    require(every is not None, f"{what}: no interval in {EVERY} puts the blow-up (row {bad}) before the second point")
    return every


def _sparse(rows: list[dict], every: int) -> list[dict]:
    """The gradient norm kept at every `every`-th step only (the loss and the LR at every step)."""
    return [r if r["step"] % every == 0 else {k: v for k, v in r.items() if k != "grad_norm"} for r in rows]


SPARSE_LR = {"sgd": 2e-4, "momentum": 2e-4}


def raw_targets_sparse(dest: Path, v: Variant) -> None:
    """Regression targets on their raw scale under MSE and a small SGD rate; the loop prints the
    gradient norm every few steps, and the run overflows before its second print."""
    k = Knobs(lr=SPARSE_LR[v.opt], rows=lambda s, xb, yb: (xb, yb * TARGET_SCALE + TARGET_OFFSET),
              extra_config={"data": {"target": "price", "target_transform": None}, "loss": {"name": "mse"}})
    model, rows, _ = train(v, k, dest)
    every = _interval(rows, _blew_up(rows, "raw targets", first_at_least=100), "raw targets")
    k.extra_config["log_grad_norm_every"] = every
    write(dest, v, k, _sparse(rows, every), None)


SUMMED_LR = {"regression": 5e-3}     # the others at their optimizer's usual rate


def summed_sparse(dest: Path, v: Variant) -> None:
    """The loss summed over a large batch at the optimizer's usual rate; everything is logged every
    few steps, and the run overflows before the second logged point."""
    k = Knobs(lr=SUMMED_LR.get(v.arch), loss=task_loss_summed)
    model, rows, _ = train(v, k, dest)
    every = _interval(rows, _blew_up(rows, "summed loss", first_at_least=100), "summed loss")
    k.extra_config["logging_steps"] = every
    write(dest, v, k, rows, None, log_every=every, code=(task_loss_summed, Knobs, train))


# --- an L2 penalty or a weight decay orders too large, no gradient norm logged --------------------------

L2 = {"sgd": (1e-3, 1.2e3), "momentum": (1e-3, 2.4e3)}     # lr, the L2 weight (1e3 where 1e-3 was meant)


def _task_loss(v: Variant):
    """The task's own loss, picked outside the saved loss function: the code beside a classifier's run
    names no squared error it does not use."""
    return nn.functional.mse_loss if v.arch == "regression" else nn.functional.cross_entropy


def _l2_on_weights(v: Variant, l2: float):
    """The task's loss plus l2 * sum(w ** 2) over the model's weights, and the Knobs hook that hands
    the loss the model."""
    holder: dict[str, nn.Module] = {}

    def prepare(model: nn.Module) -> None:
        holder["model"] = model

    task = _task_loss(v)

    def task_and_l2(out, target):
        return task(out, target) + l2 * sum((p ** 2).sum() for n, p in holder["model"].named_parameters()
                                            if n.endswith("weight"))

    return prepare, task_and_l2


def l2_typo_scheduled(dest: Path, v: Variant) -> None:
    """loss = task + l2 * sum(w ** 2) with l2 three orders too large, under a cosine or a warm-up:
    each step moves every weight past zero by more than it started, and the weights (and the
    gradients) grow geometrically while the LR stays small. The loop logs no gradient norm."""
    lr, l2 = L2[v.opt]
    prepare, task_and_l2 = _l2_on_weights(v, l2)
    k = Knobs(lr=lr, prepare=prepare, loss=task_and_l2, extra_config={"regularization": {"l2": l2}})
    model, rows, _ = train(v, k, dest)
    _blew_up(rows, "L2 typo")
    write(dest, v, k, _without(rows, "grad_norm"), None, code=(task_and_l2, Knobs, train))


DECAY = {"sgd": (0.05, 60.0), "momentum": (0.02, 250.0)}    # lr, weight_decay (60 where 6e-4 was meant)


def weight_decay_typo(dest: Path, v: Variant) -> None:
    """SGD's weight_decay set five orders too large: lr x weight_decay over 2, so each step flips
    every weight's sign and scales it up, under the schedule's usual rate. No gradient norm logged."""
    lr, wd = DECAY[v.opt]
    training.seed_all(v.seed)
    x, y, loss_fn, classes = dataset(v, 1024)
    model = build_model(v, classes)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9 if v.opt == "momentum" else 0.0, weight_decay=wd)
    rows = _fit(v, model, opt, x, y, loss_fn, lr, v.sched)
    _blew_up(rows, "weight decay typo")
    k = Knobs(lr=lr)
    k.extra_config["optimizer"] = {**config(v, k)["optimizer"], "weight_decay": wd}
    write(dest, v, k, _without(rows, "grad_norm"), None, code=(weight_decay_typo, _fit))


# --- one hidden layer initialised far too wide -----------------------------------------------------------

WIDE = {"regression": (3, 1, 10.0)}    # depth, the layer, its weight std
WIDE_LR = {"sgd": 1e-2, "momentum": 1e-2}


def one_layer_wide(dest: Path, v: Variant, key: str = "grad_norm") -> None:
    """A plain ReLU MLP at the default init but for one hidden layer, drawn with a std ~10x He's:
    the gradients at step 1 are tens of times their usual size and grow to Inf/NaN under a small,
    constant SGD rate. The loop logs the gradient norm under `key`."""
    depth, layer, std = WIDE[v.arch]
    vv = v.with_(depth=depth)

    def prepare(model: nn.Module) -> None:
        with torch.no_grad():
            model[2 * layer].weight.normal_(0.0, std)

    k = Knobs(lr=WIDE_LR[v.opt], prepare=prepare, extra_config={"init": {f"layer{layer}_std": std}})
    model, rows, _ = train(vv, k, dest)
    # a blow-up the run recovers from (its loss back to a trained level) is not the fault this shows
    require(_blew_up(rows, "one wide layer") is not None, "one wide layer: the run recovered from its blow-up")
    shown = [{(key if name == "grad_norm" else name): val for name, val in r.items()} for r in rows]
    write(dest, vv, k, shown, None, code=(prepare, Knobs, train))


ODD_KEY = {9611: "gnorm", 9612: "total_norm", 9645: "gradient_norm"}


def odd_key(dest: Path, v: Variant) -> None:
    """One hidden layer initialised far too wide; the gradient norm logged under another name."""
    one_layer_wide(dest, v, ODD_KEY[v.seed])


# --- per-layer norms only ----------------------------------------------------------------------------------

def raw_targets_layers_only(dest: Path, v: Variant) -> None:
    """Regression targets on their raw scale under MSE and a small SGD rate; the loop logs each
    layer's gradient norm, never their total."""
    k = Knobs(lr=1e-3, per_layer=True, rows=lambda s, xb, yb: (xb, yb * TARGET_SCALE + TARGET_OFFSET),
              extra_config={"data": {"target": "price", "target_transform": None}, "loss": {"name": "mse"}})
    model, rows, _ = train(v, k, dest)
    _blew_up(rows, "raw targets", first_at_least=100)
    write(dest, v, k, _without(rows, "grad_norm"), None)


# --- an fp32 run that stops at its first Inf ----------------------------------------------------------------

def stops_at_inf(dest: Path, v: Variant) -> None:
    """The loss summed over a large batch in fp32; the loop stops at its first non-finite loss, which
    is an Inf (the float32 range overflowed), never a NaN."""
    k = Knobs(loss=task_loss_summed)
    model, rows, _ = train(v, k, dest)
    _blew_up(rows, "summed loss", first_at_least=100)
    bad = next((i for i, r in enumerate(rows) if not math.isfinite(r["loss"])), None)
    require(bad is not None and rows[bad]["loss"] == math.inf, "the loss did not end in +Inf")
    kept = rows[: bad + 1]
    tail = f"loss is inf at step {kept[-1]['step']}, stopping\n"
    write(dest, v, k, kept, None, tail=tail, code=(task_loss_summed, Knobs, train))


# --- once per epoch --------------------------------------------------------------------------------------

SLOW_L2 = {"sgd": (1e-3, 1.005e3)}     # lr x 2 x l2 = 2.01: the weights grow ~1% a step, not at once


def l2_typo_per_epoch(dest: Path, v: Variant) -> None:
    """An L2 weight three orders too large, just past where SGD's step overshoots: the weights grow
    a few percent a step, and the loop logs the epoch's mean loss and gradient norm per epoch."""
    lr, l2 = SLOW_L2[v.opt]
    prepare, task_and_l2 = _l2_on_weights(v, l2)
    k = Knobs(lr=lr, prepare=prepare, loss=task_and_l2, extra_config={"regularization": {"l2": l2}})
    model, rows, _ = train(v, k, dest)
    bad = nonfinite_at(rows)
    gn = [r["grad_norm"] for r in rows[:bad]]
    per_epoch = k.samples // v.batch
    require(max(gn) > 1e3 * gn[0], f"slow L2 typo: no blow-up ({gn[0]:.3g} -> {max(gn):.3g})")
    require(bad is None or bad >= 4 * per_epoch, f"slow L2 typo: overflowed in epoch {(bad or 0) // per_epoch}")
    write(dest, v, k, _epochs(rows, per_epoch), None, code=(task_and_l2, Knobs, train))


def _epochs(rows: list[dict], per_epoch: int) -> list[dict]:
    """One row per epoch: the step at its end, the mean loss and gradient norm, the last LR."""
    out = []
    for e in range(0, len(rows) // per_epoch):
        chunk = rows[e * per_epoch:(e + 1) * per_epoch]
        out.append({"step": chunk[-1]["step"], "epoch": e + 1, "loss": sum(r["loss"] for r in chunk) / len(chunk),
                    "lr": chunk[-1]["lr"], "grad_norm": sum(r["grad_norm"] for r in chunk) / len(chunk)})
    return out


FAMILIES = [
    Family("sparse_grad_norm", raw_targets_sparse, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="kv", seed=9601), V("regression", "momentum", "cosine", fmt="jsonl", seed=9602),
        V("regression", "sgd", "warmup", fmt="csv", seed=9603, width=48))),
    Family("sparse_summed", summed_sparse, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="hf", seed=9604, batch=256), V("mlp", "sgd", "cosine", fmt="tb", seed=9605, batch=256))),
    Family("l2_typo_scheduled", l2_typo_scheduled, "exploding_gradients", "tuning", (
        V("mlp", "sgd", "cosine", fmt="pipe", seed=9621), V("regression", "momentum", "cosine", fmt="hf", seed=9622),
        V("mlp", "sgd", "warmup", fmt="mlflow", seed=9623))),
    Family("weight_decay_typo", weight_decay_typo, "exploding_gradients", "tuning", (
        V("mlp", "sgd", "cosine", fmt="colon", seed=9631), V("regression", "momentum", "cosine", fmt="lightning", seed=9632))),
    Family("one_layer_wide", one_layer_wide, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="nanogpt", seed=9641), V("regression", "momentum", fmt="lightning", seed=9644))),
    Family("odd_grad_norm_key", odd_key, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="jsonl", seed=9611), V("regression", "sgd", fmt="kv", seed=9612, width=48),
        V("regression", "momentum", fmt="csv", seed=9645))),
    Family("layer_norms_only", raw_targets_layers_only, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="tb", seed=9651), V("regression", "sgd", "cosine", fmt="pipe", seed=9652))),
    Family("stops_at_inf", stops_at_inf, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="colon", seed=9661, batch=256),
        V("regression", "momentum", fmt="jsonl", seed=9663, batch=256))),
    Family("per_epoch_logging", l2_typo_per_epoch, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="csv", seed=9671), V("regression", "sgd", fmt="kv", seed=9672, width=48))),
]
