"""Exploding and vanishing gradients by mechanisms the other tuning families lack, so that what
tells them from an LR too high (or a data bug) is fit on the mechanism, not on the shapes those
families happen to have:

- exploding under an LR inside its optimizer's range: gradient accumulation that backpropagates
  the micro-batches' losses without dividing by their number; a loss reduced with
  `reduction="sum"` over a large batch; regression targets on their raw scale (~1e4) under MSE;
  inputs on their raw scale (pixel values 0-255);
- vanishing: deep plain nets initialised at a tenth of He's or Xavier's scale (the input's signal
  drowns under the biases, and each layer scales the backward signal down by the gain).

Tried and left out, for their fault did not show: a deep plain CNN at 1.3-1.8x He's gain and a
transformer LM without LayerNorm (6-8 blocks) both trained under SGD (the cross-entropy's bounded
gradient let them recover); a tanh net at N(0, 1) init had larger gradients at its first layer
than at its head; undivided accumulation under cross-entropy oscillated without blowing up.

Each checks at generation time that its fault shows, whatever the seed."""
from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from tests.scenarios import training
from tests.scenarios.grid import (
    nonfinite_at,
    BASE_LR,
    Family,
    Knobs,
    Variant,
    build_model,
    dataset,
    losses,
    mean,
    optimizer,
    require,
    train,
    write,
)

V = Variant


def _blew_up(rows, what: str, first_at_least: float = 0.0) -> None:
    """Inf/NaN after a few finite steps, or a gradient norm that rose 100x over its first value; the
    first norm at least `first_at_least` (computed before any update: the model and the loss made it)."""
    bad = nonfinite_at(rows)
    gn = [r["grad_norm"] for r in rows[:bad]]
    require(len(gn) >= 3, f"{what}: the gradients overflowed at once (step {bad})")
    require(bad is not None or max(gn) > 100 * gn[0], f"{what}: no blow-up ({gn[0]:.3g} -> {max(gn):.3g})")
    require(gn[0] >= first_at_least, f"{what}: first gradient norm only {gn[0]:.3g}")


def _first_layer_vanished(rows, share: float) -> None:
    keys = [key for key in rows[0] if key.startswith("grad_norm/")]
    first = mean(r[keys[0]] for r in rows[:40])
    last = mean(r[keys[-1]] for r in rows[:40])
    require(first < share * last, f"first layer's gradient not small: {first:.3g} vs {last:.3g}")


def _stalled(rows, within: float) -> None:
    ls = losses(rows)
    n = max(3, len(ls) // 10)
    start, end = mean(ls[:n]), mean(ls[-n:])
    require(end > (1 - within) * start, f"the loss moved: {start:.3f} -> {end:.3f}")


# --- exploding under an LR inside its range -------------------------------------------------------------

ACCUMULATE = 32


def accumulated_not_divided(dest: Path, v: Variant) -> None:
    """Gradient accumulation over 32 micro-batches whose losses are backpropagated as they are,
    not divided by 32: each optimizer step applies 32x the mean gradient, and at the optimizer's
    usual rate the run blows up."""
    training.seed_all(v.seed)
    x, y, loss_fn, classes = dataset(v, 1024)
    model = build_model(v, classes)
    lr = BASE_LR[v.opt]
    opt = optimizer(v.opt, model.parameters(), lr)
    rows = _accumulate(v, model, opt, x, y, loss_fn, lr)
    _blew_up(rows, "undivided accumulation")
    k = Knobs(lr=lr, extra_config={"gradient_accumulation_steps": ACCUMULATE, "micro_batch_size": v.batch})
    write(dest, v, k, rows, None, code=(_accumulate,))


def _accumulate(v: Variant, model: nn.Module, opt, x, y, loss_fn, lr: float) -> list[dict]:
    g = torch.Generator().manual_seed(v.seed + 7)
    rows = []
    for step in range(1, v.steps + 1):
        opt.zero_grad()
        total = 0.0
        for _ in range(ACCUMULATE):
            idx = torch.randint(0, len(x), (v.batch,), generator=g)
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            total += loss.item()
        gn = float(nn.utils.clip_grad_norm_(model.parameters(), float("inf")))
        opt.step()
        rows.append({"step": step, "loss": total / ACCUMULATE, "lr": lr, "grad_norm": gn})
    return rows


def task_loss_summed(out, target):
    """The task's loss over the batch."""
    if out.dim() == 3:
        return nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1), reduction="sum")
    if out.shape[-1] == 1:
        return nn.functional.mse_loss(out, target, reduction="sum")
    return nn.functional.cross_entropy(out, target, reduction="sum")


def summed_over_a_large_batch(dest: Path, v: Variant) -> None:
    """The loss is reduced with reduction="sum" over a batch of 256 (or 64 x 16 tokens): the
    gradient is the batch size times the mean's, hundreds of times its usual size at step 1, and at
    the optimizer's usual rate the run blows up."""
    k = Knobs(loss=task_loss_summed)
    model, rows, _ = train(v, k, dest)
    _blew_up(rows, "summed loss", first_at_least=100)
    write(dest, v, k, rows, None, code=(task_loss_summed, Knobs, train))


TARGET_SCALE, TARGET_OFFSET = 1e4, 3e4     # prices in dollars, not in standard units
RAW_TARGET_LR = {"sgd": 1e-3, "momentum": 1e-3}


def raw_regression_targets(dest: Path, v: Variant) -> None:
    """Regression targets on their raw scale (prices around 30,000, spread 10,000) under MSE: the
    errors are ~1e4 at step 1, the gradients ~1e4 times their usual size, and SGD at a small rate
    blows up within a few steps."""
    k = Knobs(lr=RAW_TARGET_LR[v.opt], rows=lambda s, xb, yb: (xb, yb * TARGET_SCALE + TARGET_OFFSET),
              extra_config={"data": {"target": "price", "target_transform": None}, "loss": {"name": "mse"}})
    model, rows, _ = train(v, k, dest)
    _blew_up(rows, "raw targets", first_at_least=100)
    write(dest, v, k, rows, None)


# --- vanishing --------------------------------------------------------------------------------------------

TINY_GAIN = 0.1


def scaled_init(init, zero_bias: bool = False):
    """Each layer's weights drawn by `init`, times the gain."""
    def prepare(model: nn.Module) -> None:
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, (nn.Linear, nn.Conv2d)):
                    init(m.weight)
                    m.weight.mul_(TINY_GAIN)
                    if zero_bias:
                        nn.init.zeros_(m.bias)
    return prepare


def tiny_init_gain(dest: Path, v: Variant) -> None:
    """A deep plain net (no normalisation, no residuals) whose weights were initialised at a tenth
    of He's scale: the input's signal shrinks ~10x per layer and drowns under the biases, the
    backward signal shrinks the same way toward the input, and under SGD the loss stays at its
    start."""
    k = Knobs(prepare=scaled_init(lambda w: nn.init.kaiming_normal_(w, nonlinearity="relu")),
              per_layer=v.fmt not in ("hf", "lightning"),
              extra_config={"init": {"weight": "kaiming_normal", "gain": TINY_GAIN}})
    model, rows, _ = train(v, k, dest)
    if k.per_layer:
        _first_layer_vanished(rows, 1e-3)
    _stalled(rows, 0.1)
    write(dest, v, k, rows, model, code=(scaled_init, Knobs, train))


def tiny_init_no_bias(dest: Path, v: Variant) -> None:
    """A deep tanh net with the same tiny init and its biases started at zero: the forward signal
    itself shrinks ~10x per layer, so every layer's weight gradient starts ~10^-depth of its usual
    size; the biases nearest the output learn first, and the gradient stays vanished toward the
    input while the loss stays at its start."""
    k = Knobs(act=nn.Tanh, prepare=scaled_init(nn.init.xavier_normal_, zero_bias=True), per_layer=True,
              extra_config={"activation": "tanh", "init": {"weight": "xavier_normal", "gain": TINY_GAIN, "bias": 0}})
    model, rows, _ = train(v, k, dest)
    _first_layer_vanished(rows, 1e-3)
    _stalled(rows, 0.1)
    write(dest, v, k, rows, model, code=(scaled_init, Knobs, train))


# --- exploding from the inputs' scale -----------------------------------------------------------------

INPUT_SCALE = 255.0      # features fed in raw units (pixel values 0-255), not standardised
RAW_INPUT_LR = {"mlp": 0.05, "cnn": 0.01}


def raw_input_scale(dest: Path, v: Variant) -> None:
    """The inputs reach the model on their raw scale (x 255, as pixel values), with no
    normalisation: the first layer's gradient is the input times the backward signal, hundreds of
    times its usual size, and the updates it drives blow the run up under a rate inside SGD's range."""
    k = Knobs(lr=RAW_INPUT_LR[v.arch], rows=lambda s, xb, yb: (xb * INPUT_SCALE, yb),
              extra_config={"data": {"normalize": None, "scale": "0-255"}})
    model, rows, _ = train(v, k, dest)
    _blew_up(rows, "raw inputs", first_at_least=100)
    write(dest, v, k, rows, None)


FAMILIES = [
    Family("accumulate_undivided", accumulated_not_divided, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="hf", seed=9321, batch=8),
        V("regression", "sgd", fmt="csv", seed=9322, batch=8),
        V("regression", "sgd", fmt="pipe", seed=9323, batch=4, width=48))),
    Family("reduction_sum", summed_over_a_large_batch, "exploding_gradients", "tuning", (
        V("mlp", "sgd", fmt="tb", seed=9331, batch=256), V("regression", "momentum", fmt="mlflow", seed=9332, batch=256),
        V("lm", "sgd", fmt="colon", seed=9333, batch=64))),
    Family("raw_targets", raw_regression_targets, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="jsonl", seed=9341), V("regression", "sgd", fmt="hf", seed=9342, width=48),
        V("regression", "sgd", "cosine", fmt="nanogpt", seed=9343, width=64))),
    Family("tiny_init_gain", tiny_init_gain, "vanishing_gradients", "tuning", (
        V("mlp", "sgd", fmt="csv", seed=9351, depth=8), V("mlp", "momentum", fmt="hf", seed=9352, depth=10),
        V("cnn", "sgd", fmt="jsonl", seed=9353, depth=6), V("regression", "sgd", fmt="kv", seed=9354, depth=8))),
    Family("tiny_init_no_bias", tiny_init_no_bias, "vanishing_gradients", "tuning", (
        V("mlp", "sgd", fmt="tb", seed=9361, depth=8), V("mlp", "momentum", fmt="lightning", seed=9362, depth=10),
        V("regression", "sgd", fmt="mlflow", seed=9363, depth=8))),
    Family("raw_inputs", raw_input_scale, "exploding_gradients", "tuning", (
        V("mlp", "sgd", fmt="csv", seed=9371), V("mlp", "sgd", fmt="tb", seed=9372, width=64, depth=2),
        V("cnn", "sgd", fmt="hf", seed=9373))),
]
