"""The measuring families once in grid_optim.py (see tests/scenarios/__init__.py): never read one by one,
never tuned on; bench/accuracy.py measures them."""
from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from tests.scenarios.grid import (
    BASE_LR,
    Family,
    Knobs,
    Variant,
    first_that_shows,
    losses,
    mean,
    nonfinite_at,
    require,
    train,
    write,
)
from tests.scenarios.grid_optim import NOISE, RAISE_BY, V, _barely_moves, _first_last, _grows, _nan_without_growth, _nonfinite, _same, dead_share


def _finite(rows) -> list[float]:
    return [x for x in losses(rows) if math.isfinite(x)]


def warmup_to_a_high_peak(dest: Path, v: Variant) -> None:
    """Linear warm-up to a peak rate tens of times the optimizer's usual range."""
    k = Knobs(lr=BASE_LR[v.opt] * RAISE_BY[v.opt], label_noise=NOISE)
    model, rows, _ = train(v.with_(sched="warmup"), k, dest)
    ls = _finite(rows)
    require(_nonfinite(rows) or mean(ls[-20:]) > 1.4 * min(ls),
            f"no rise after the warm-up: {min(ls):.3f} -> {ls[-1]:.3f}")
    write(dest, v.with_(sched="warmup"), k, rows, model)


def lr_divided_by_steps(dest: Path, v: Variant) -> None:
    """The rate is divided by the step count once more than intended (a units mix-up in the config)."""
    k = Knobs(lr=BASE_LR[v.opt] / (v.steps * 4), extra_config={"lr_scaling": "per_step"})
    model, rows, _ = train(v, k, dest)
    _barely_moves(rows, 0.05)
    write(dest, v, k, rows, model, log_every=2)


def wide_init_deep_net(dest: Path, v: Variant) -> None:
    """Weights drawn with std 1.0 in a deep stack: activations and gradients large from the first
    step, at a small constant rate (a narrower std, down a ladder, where a seed breaks at once)."""
    vv = v.with_(depth=4, width=64, sched="constant")

    def attempt(std: float):
        k = Knobs(init_std=std, lr=BASE_LR[v.opt] * 0.2, extra_config={"init": {"weight_std": std}})
        model, rows, _ = train(vv, k, dest)
        _grows(rows, 30.0)
        # the gradients must be seen large before they break, whatever the CPU's kernels: at std 1.0 some
        # seeds give a NaN gradient at the first step, a run with nothing to see (the tuning twin's check)
        bad = nonfinite_at(rows)
        require(bad is None or bad >= 3, f"non-finite after {bad} finite steps: no large gradient seen first")
        require(rows[0]["grad_norm"] > 100, f"first gradient norm only {rows[0]['grad_norm']:.3g}")
        return k, rows, model

    k, rows, model = first_that_shows([round(1.0 - 0.05 * i, 2) for i in range(18)], attempt)
    write(dest, vv, k, rows, model)


def deep_tanh_small_init(dest: Path, v: Variant) -> None:
    k = Knobs(act=nn.Tanh, init_std=0.03, per_layer=True,
              extra_config={"activation": "tanh", "init": {"weight_std": 0.03}})
    vv = v.with_(depth=8)
    model, rows, _ = train(vv, k, dest)
    first, last = _first_last(rows)
    require(first < 1e-3 * last, f"first layer's gradient not small: {first:.3g} vs {last:.3g}")
    write(dest, vv, k, rows, model)


def standardise_by_batch_spread(dest: Path, v: Variant) -> None:
    """Each batch is standardised by its own spread; one batch holds a single repeated row."""
    at = int(v.steps * 0.55)

    def rows(s, xb, yb):
        if s == at:
            xb, yb = xb[:1].expand_as(xb).clone(), yb[:1].expand_as(yb).clone()
        return (xb - xb.mean(0)) / xb.std(0), yb

    k = Knobs(rows=rows, extra_config={"normalize": "per_batch"})
    model, rows_, _ = train(v, k, dest)
    _nan_without_growth(rows_)
    write(dest, v, k, rows_, model)


def nonpositive_first_layer(dest: Path, v: Variant) -> None:
    """Inputs are non-negative (intensities); the first layer's weights are drawn from U(-0.5, 0):
    every unit's pre-activation is negative for every input from the first step."""
    def prepare(model):
        first = next(m for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv2d)))
        with torch.no_grad():
            first.weight.uniform_(-0.5, 0.0)
            first.bias.zero_()

    k = Knobs(prepare=prepare, rows=lambda s, xb, yb: (xb.abs(), yb), checkpoints=(v.steps,),
              extra_config={"inputs": "abs", "init": {"first_layer": "uniform(-0.5, 0)"}})
    model, rows, (xv, _) = train(v, k, dest)
    share = dead_share(model, xv.abs())
    require(share > 0.9, f"only {share:.2f} of the units are inactive")
    write(dest, v, k, rows, model)


def optimizer_over_copies(dest: Path, v: Variant) -> None:
    """The optimizer is built over detached copies of the parameters, so it updates tensors the
    model never reads."""
    k = Knobs(trainable=lambda m: [p.detach().clone().requires_grad_() for p in m.parameters()],
              checkpoints=(v.steps // 2, v.steps))
    model, rows, _ = train(v, k, dest)
    _same(dest)
    write(dest, v, k, rows, model)


FAMILIES = [
    Family("warmup_high_peak", warmup_to_a_high_peak, "lr_too_high", "measuring", (
        V("mlp", "adam", fmt="hf", seed=105), V("cnn", "momentum", fmt="csv", seed=106),
        V("mlp", "rmsprop", fmt="pipe", seed=107), V("regression", "sgd", fmt="mlflow", seed=108),
        V("cnn", "sgd", fmt="nanogpt", seed=109))),
    Family("lr_per_step", lr_divided_by_steps, "lr_too_low", "measuring", (
        V("mlp", "adamw", "cosine", fmt="mlflow", seed=115), V("lstm", "momentum", fmt="kv", seed=116),
        V("cnn", "rmsprop", "step", fmt="jsonl", seed=117), V("lm", "adam", fmt="hf", seed=118),
        V("regression", "sgd", fmt="lightning", seed=119))),
    Family("wide_init", wide_init_deep_net, "exploding_gradients", "measuring", (
        V("mlp", "sgd", fmt="csv", seed=124), V("regression", "momentum", fmt="kv", seed=125),
        V("mlp", "momentum", fmt="hf", seed=126), V("regression", "sgd", fmt="lightning", seed=127))),
    Family("tanh_small_init", deep_tanh_small_init, "vanishing_gradients", "measuring", (
        V("mlp", "momentum", fmt="mlflow", seed=134), V("regression", "momentum", fmt="csv", seed=135),
        V("mlp", "sgd", fmt="colon", seed=136), V("regression", "sgd", fmt="hf", seed=137))),
    Family("batch_spread", standardise_by_batch_spread, "numerical_instability", "measuring", (
        V("mlp", "adam", fmt="csv", seed=145), V("regression", "momentum", fmt="lightning", seed=146),
        V("mlp", "rmsprop", "cosine", fmt="mlflow", seed=147), V("regression", "adamw", fmt="nanogpt", seed=148))),
    Family("nonpositive_init", nonpositive_first_layer, "dead_relu", "measuring", (
        V("mlp", "sgd", fmt="csv", seed=155), V("mlp", "momentum", fmt="mlflow", seed=156),
        V("regression", "sgd", fmt="pipe", seed=157), V("cnn", "adam", "cosine", fmt="lightning", width=64, seed=158))),
    Family("optimizer_copies", optimizer_over_copies, "no_parameter_updates", "measuring", (
        V("mlp", "momentum", fmt="csv", seed=165), V("lstm", "adam", fmt="lightning", seed=166),
        V("cnn", "adamw", fmt="mlflow", seed=167), V("lm", "sgd", fmt="colon", seed=168))),
]
