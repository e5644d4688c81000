"""Families whose trouble lies in the optimisation (step sizes, gradient flow, updates that never
land, units that stop responding), each run on the configurable trainer of grid.py."""
from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from tests.scenarios.grid import BASE_LR, Family, Knobs, Variant, losses, mean, require, train, write

V = Variant


def _nonfinite(rows) -> bool:
    return any(not math.isfinite(r["loss"]) or not math.isfinite(r["grad_norm"]) for r in rows)


# --- LR too high -------------------------------------------------------------------------------------

NOISE = 0.1    # labels a tenth wrong, so the loss has a floor a too-high rate cannot hide under
RAISE_AT, RAISE_BY = 0.6, {"sgd": 40.0, "momentum": 50.0, "adam": 200.0, "adamw": 200.0, "rmsprop": 300.0}


def lr_raised_midway(dest: Path, v: Variant) -> None:
    """A second stage of the schedule multiplies the rate after a good first stage."""
    at = int(v.steps * RAISE_AT)
    by = RAISE_BY[v.opt]
    base = BASE_LR[v.opt]
    k = Knobs(lr_factor=lambda s: by if s > at else 1.0, label_noise=NOISE,
              extra_config={"stages": [{"from_step": 0, "lr": base}, {"from_step": at, "lr": base * by}]})
    model, rows, _ = train(v, k, dest)
    ls = losses(rows)
    before = mean(ls[int(at * 0.75): at])
    require(before < 0.8 * mean(ls[:5]), f"stage one did not learn: {before:.3f}")
    after = [x for x in ls[at:] if math.isfinite(x)]
    require(len(after) < len(ls[at:]) or max(after[5:]) > 2.0 * before and mean(after[-20:]) > 1.3 * before,
            f"the raise did not show: {before:.3f} -> {mean(after[-20:]):.3f}")
    write(dest, v, k, rows, model)


# --- LR too low -------------------------------------------------------------------------------------

def _barely_moves(rows, within: float) -> None:
    ls = losses(rows)
    start, end = mean(ls[: len(ls) // 10]), mean(ls[-len(ls) // 10:])
    require(abs(start - end) < within * start, f"loss moved: {start:.3f} -> {end:.3f}")


def lr_ten_thousand_times_small(dest: Path, v: Variant) -> None:
    k = Knobs(lr=BASE_LR[v.opt] * 1e-4, checkpoints=(v.steps // 4, v.steps))
    model, rows, _ = train(v, k, dest)
    _barely_moves(rows, 0.06)
    write(dest, v, k, rows, model)


# --- exploding gradients ------------------------------------------------------------------------------

def _grows(rows, factor: float) -> None:
    gn = [r["grad_norm"] for r in rows]
    start = sorted(gn[:10])[5]
    require(_nonfinite(rows) or max(x for x in gn if math.isfinite(x)) > factor * start,
            f"gradient norm did not grow: {start:.3g} -> {max(gn):.3g}")


def grads_accumulate_forever(dest: Path, v: Variant) -> None:
    """`zero_grad` never called: every step adds to the gradients of all the steps before."""
    k = Knobs(clear_grads=False)
    model, rows, _ = train(v, k, dest)
    _grows(rows, 100.0)
    write(dest, v, k, rows, model)


# --- vanishing gradients ------------------------------------------------------------------------------

def _first_last(rows) -> tuple[float, float]:
    keys = [key for key in rows[0] if key.startswith("grad_norm/")]
    first = mean(r[keys[0]] for r in rows[:20])
    last = mean(r[keys[-1]] for r in rows[:20])
    return first, last


def deep_sigmoid_stack(dest: Path, v: Variant) -> None:
    k = Knobs(act=nn.Sigmoid, per_layer=True, extra_config={"activation": "sigmoid"})
    vv = v.with_(depth=10)
    model, rows, _ = train(vv, k, dest)
    first, last = _first_last(rows)
    require(first < 1e-3 * last, f"first layer's gradient not small: {first:.3g} vs {last:.3g}")
    _barely_moves(rows, 0.1)
    write(dest, vv, k, rows, model)


# --- numerical instability ----------------------------------------------------------------------------

class HalfHook:
    """Rounds a layer's output through float16, as a half-precision layer would."""

    def __call__(self, module, inputs, output):
        return output.half().float()


def _nan_without_growth(rows) -> None:
    bad = next((i for i, r in enumerate(rows) if not math.isfinite(r["loss"])), None)
    require(bad is not None and bad > 10, "no NaN, or NaN from the start")
    gn = [r["grad_norm"] for r in rows[:bad]]
    require(max(gn[-5:]) < 20 * sorted(gn)[len(gn) // 2], "the gradients grew before the NaN")


def half_hidden_raw_rows(dest: Path, v: Variant) -> None:
    """First layer in float16; from 70% of the run rows arrive in raw units (x 1e5)."""
    at = int(v.steps * 0.7)

    def half(model):
        first = next(m for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv2d)))
        first.register_forward_hook(HalfHook())

    k = Knobs(prepare=half, rows=lambda s, xb, yb: (xb * 1e5 if s > at else xb, yb), clip=1.0,
              extra_config={"precision": "fp16", "loss_scale": None})
    model, rows, _ = train(v, k, dest)
    _nan_without_growth(rows)
    write(dest, v, k, rows, model)


# --- dead ReLU ----------------------------------------------------------------------------------------

def dead_share(model: nn.Module, x: torch.Tensor) -> float:
    """Share of hidden ReLU units that output zero for every input of `x`."""
    outs = []
    hooks = [m.register_forward_hook(lambda m, i, o: outs.append(o.detach())) for m in model.modules()
             if isinstance(m, nn.ReLU)]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    units = [o.transpose(0, 1).reshape(o.shape[1], -1) if o.dim() > 2 else o.T for o in outs]
    return mean(float((u.max(1).values <= 0).float().mean()) for u in units)


def negative_bias_init(dest: Path, v: Variant) -> None:
    def prepare(model):
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, (nn.Linear, nn.Conv2d)) and m is not list(model.modules())[-1]:
                    m.bias.fill_(-8.0)

    k = Knobs(prepare=prepare, checkpoints=(v.steps,), extra_config={"init": {"bias": -8.0}})
    model, rows, (xv, _) = train(v, k, dest)
    share = dead_share(model, xv)
    require(share > 0.9, f"only {share:.2f} of the units are inactive")
    write(dest, v, k, rows, model)


# --- no parameter updates -----------------------------------------------------------------------------

def _same(dest: Path) -> None:
    from safetensors.torch import load_file

    a, b = (load_file(p) for p in sorted((dest / "checkpoints").glob("*.safetensors")))
    require(all(torch.equal(a[key], b[key]) for key in a), "the checkpoints differ")


def step_never_called(dest: Path, v: Variant) -> None:
    k = Knobs(apply_step=False, checkpoints=(v.steps // 3, v.steps))
    model, rows, _ = train(v, k, dest)
    _same(dest)
    write(dest, v, k, rows, model)


FAMILIES = [
    Family("lr_raised_midway", lr_raised_midway, "lr_too_high", "tuning", (
        V("mlp", "momentum", fmt="kv", seed=101), V("cnn", "momentum", fmt="tb", seed=102),
        V("regression", "sgd", fmt="jsonl", seed=103), V("lm", "adamw", fmt="lightning", seed=104))),
    Family("lr_tiny", lr_ten_thousand_times_small, "lr_too_low", "tuning", (
        V("mlp", "sgd", fmt="csv", seed=111), V("cnn", "adamw", fmt="hf", seed=112),
        V("regression", "rmsprop", fmt="colon", seed=113, batch=128), V("lm", "adam", fmt="tb", seed=114))),
    Family("no_zero_grad", grads_accumulate_forever, "exploding_gradients", "tuning", (
        V("mlp", "momentum", fmt="pipe", seed=121), V("cnn", "momentum", fmt="jsonl", seed=122),
        V("regression", "momentum", fmt="tb", seed=123))),
    Family("sigmoid_stack", deep_sigmoid_stack, "vanishing_gradients", "tuning", (
        V("mlp", "sgd", fmt="jsonl", seed=131), V("cnn", "momentum", fmt="tb", seed=132),
        V("regression", "sgd", fmt="kv", seed=133),
        # logs with no per-layer norms: the convolutions' profile is read from the checkpoint alone
        V("cnn", "momentum", fmt="hf", seed=132), V("cnn", "sgd", fmt="lightning", seed=7001))),
    Family("half_raw_rows", half_hidden_raw_rows, "numerical_instability", "tuning", (
        V("mlp", "adam", fmt="hf", seed=141), V("cnn", "adamw", fmt="kv", seed=142),
        V("regression", "rmsprop", fmt="jsonl", seed=143), V("mlp", "momentum", fmt="tb", seed=144))),
    Family("negative_bias", negative_bias_init, "dead_relu", "tuning", (
        V("mlp", "adam", fmt="jsonl", seed=151), V("cnn", "sgd", fmt="tb", seed=152),
        V("regression", "momentum", fmt="kv", seed=153), V("mlp", "rmsprop", fmt="hf", seed=154))),
    Family("step_missing", step_never_called, "no_parameter_updates", "tuning", (
        V("mlp", "adam", fmt="kv", seed=161), V("cnn", "sgd", fmt="hf", seed=162),
        V("lm", "adamw", fmt="jsonl", seed=163), V("regression", "rmsprop", fmt="tb", seed=164))),
]
