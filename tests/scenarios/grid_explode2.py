"""More families for "it blew up", by mechanisms grid_explode, grid_differential, grid_optim and
grid_slow do not cover, so that what tells exploding gradients, a too-high LR and numerical
instability apart is fit on more than the shapes those families happen to have:

- gradients that explode from the architecture or the loss while the LR is small and constant: a
  linear recurrent weight with spectral radius above 1 on long sequences; a cubic activation that
  feeds its own growth back; an L2 penalty whose weight was typed 1e3 for 1e-3 (each SGD step
  overshoots the penalty's minimum by more than it corrects, so the weights oscillate and grow);
- an LR too high in new forms: a warm-up that ends far above the optimizer's range; a one-cycle
  schedule whose peak is far too high; a rate scaled linearly from a tiny reference batch to a
  large one;
- a NaN from the arithmetic with calm gradients before it: rows standardised by hand with no eps
  when an all-zero (missing) record arrives.

Some variants log no gradient norm, as many real runs do. Each checks at generation time that its
fault shows, whatever the seed."""
from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from tests.scenarios.grid import BASE_LR, Family, Knobs, Variant, losses, mean, nonfinite_at, require, train, write

V = Variant
NO_GRAD_NORM = {9103, 8123, 8142, 8172}     # variants whose loop logs no gradient norm


def _shown(rows: list[dict], v: Variant) -> list[dict]:
    if v.seed in NO_GRAD_NORM:
        return [{key: val for key, val in r.items() if key != "grad_norm"} for r in rows]
    return rows


def _grew_under_constant_lr(rows, factor: float = 100.0, sched: str = "constant") -> None:
    """The gradient norm rose `factor`x over its first value, over several steps, to a high or to
    Inf/NaN, while the LR never changed (or only followed a warm-up or a decay that stays in range)."""
    bad = nonfinite_at(rows)
    gn = [r["grad_norm"] for r in rows[:bad]]
    require(len(gn) >= 5, f"the gradients overflowed at once (step {bad})")
    top = max(range(len(gn)), key=gn.__getitem__)
    require(top >= 3 and gn[top] > factor * gn[0], f"gradient norm did not grow: {gn[0]:.3g} -> {gn[top]:.3g}")
    require(sched != "constant" or len({r["lr"] for r in rows}) == 1, "the LR changed")


# --- exploding gradients under a small, constant LR ---------------------------------------------------

RADIUS = {"rnn": 1.4}
RECURRENT_LR = {"momentum": 1e-3}


def recurrent_radius_above_one(dest: Path, v: Variant) -> None:
    """A linear Elman RNN (no squashing) whose recurrent weight starts orthogonal times 1.4: the
    state grows 1.4x per token over 20 tokens, so the gradients through time are hundreds of times
    their usual size at step 1, and the updates they drive blow up to Inf/NaN within a few steps
    under a small constant rate."""
    radius = RADIUS[v.arch]

    def prepare(model: nn.Module) -> None:
        with torch.no_grad():
            for cell in model.cells:
                nn.init.orthogonal_(cell["rec"].weight)
                cell["rec"].weight.mul_(radius)

    k = Knobs(lr=RECURRENT_LR[v.opt], act=nn.Identity, prepare=prepare,
              extra_config={"model": {"arch": "rnn", "hidden": v.width, "nonlinearity": None,
                                      "recurrent_init": f"orthogonal x {radius}"}})
    model, rows, _ = train(v, k, dest)
    bad = nonfinite_at(rows)
    require(bad is not None and bad >= 3, f"no blow-up to Inf/NaN after a few finite steps (at {bad})")
    require(rows[0]["grad_norm"] > 100, f"first gradient norm only {rows[0]['grad_norm']:.3g}")
    write(dest, v, k, _shown(rows, v), None, code=(prepare, Knobs, train))


# x ** 3 as the activation: its slope grows with its input, so large activations make larger
# gradients, which make larger weights, which make larger activations (kept out of the class's
# docstring: the class is saved with the run as its training code, which must not explain the fault)
class Cube(nn.Module):
    """The activation."""

    def forward(self, x):
        return x ** 3


CUBE_LR = {"sgd": 0.06, "momentum": 7e-3}     # sgd at 1.2x its usual 0.05: under it, some seeds stayed calm
CUBE_INPUT_SCALE = 0.6     # the first layer's init, shrunk: the growth starts calm, and is not one step to Inf


def cubic_activation(dest: Path, v: Variant) -> None:
    """A two-layer regression MLP with a cubic activation and no normalisation: the gradients feed their own growth
    and blow up to Inf/NaN while the LR is small and constant."""
    def prepare(model: nn.Module) -> None:
        with torch.no_grad():
            model[0].weight.mul_(CUBE_INPUT_SCALE)

    k = Knobs(lr=CUBE_LR[v.opt], act=Cube, prepare=prepare, extra_config={"model": {"arch": v.arch, "hidden": v.width,
                                                                    "layers": v.depth, "activation": "cube",
                                                                    "first_layer_init": f"default x {CUBE_INPUT_SCALE}"}})
    model, rows, _ = train(v, k, dest)
    _grew_under_constant_lr(rows)
    require(nonfinite_at(rows) is not None, "the growth never reached Inf/NaN")
    write(dest, v, k, _shown(rows, v), None, code=(prepare, Cube, Knobs, train))


PENALTY = {"sgd": (1e-3, 1.1e3), "momentum": (1e-3, 2.2e3)}    # lr, the L2 weight (1e3 meant 1e-3)


def l2_weight_typo(dest: Path, v: Variant) -> None:
    """loss = task + l2 * sum(w ** 2) with l2 written 1e3 where 1e-3 was meant: each SGD step moves
    every weight by lr * 2 * l2 * w, past zero by more than it started, so the weights flip sign
    and grow geometrically, and the gradients with them, under a small constant LR."""
    lr, l2 = PENALTY[v.opt]
    holder: dict[str, nn.Module] = {}

    def prepare(model: nn.Module) -> None:
        holder["model"] = model

    def task_and_l2(out, target):
        base = (nn.functional.mse_loss(out, target) if v.arch == "regression"
                else nn.functional.cross_entropy(out, target))
        return base + l2 * sum((p ** 2).sum() for n, p in holder["model"].named_parameters() if n.endswith("weight"))

    k = Knobs(lr=lr, prepare=prepare, loss=task_and_l2, extra_config={"regularization": {"l2": l2}})
    model, rows, _ = train(v, k, dest)
    _grew_under_constant_lr(rows, sched=v.sched)
    write(dest, v, k, _shown(rows, v), None, code=(task_and_l2, Knobs, train))


# --- LR too high ----------------------------------------------------------------------------------------

def _learned_then_rose(rows, what: str, lasting: bool = False) -> None:
    """It learned, then the loss rose again: to a peak in the last 30 steps, or (`lasting`) on their
    mean, so that one noisy batch is not the rise."""
    ls = losses(rows)
    start = mean(ls[:10])
    finite = [x for x in ls if math.isfinite(x)]
    best = min(mean(finite[i: i + 10]) for i in range(0, len(finite) - 9))
    require(best < 0.9 * start, f"{what}: it never learned ({start:.3g} -> {best:.3g})")
    tail = [x if math.isfinite(x) else 1e30 for x in ls[-30:]]
    end = mean(tail) if lasting else max(tail)
    require(end > best + (0.3 if lasting else 0.5) * (start - best),
            f"{what}: the loss did not rise again ({best:.3g} -> {end:.3g})")


WARMUP_PEAK = {"mlp": 0.3, "cnn": 0.1}


def warmup_to_a_peak_too_high(dest: Path, v: Variant) -> None:
    """A linear warm-up (the variant's `warmup` schedule, 10% of the run) whose peak is 50-150x the
    adaptive optimizer's usual rate: the model learns while the rate is small, and gives way as the
    warm-up carries it far above the optimizer's range."""
    require(v.sched == "warmup", "a warm-up variant")
    k = Knobs(lr=WARMUP_PEAK[v.arch], label_noise=0.1)
    model, rows, _ = train(v, k, dest)
    _learned_then_rose(rows, "warm-up peak", lasting=v.arch == "mlp")   # the CNN rises in bursts
    write(dest, v, k, _shown(rows, v), model)


ONE_CYCLE_MAX = {"mlp": 2.0, "regression": 0.6, "cnn": 5.0}


def one_cycle(step: int, total: int) -> float:
    """The one-cycle factor: up from 4% to 100% over the first 30%, then down to ~0."""
    up = int(total * 0.3)
    if step <= up:
        return 0.04 + 0.96 * step / up
    return 0.5 * (1 + math.cos(math.pi * (step - up) / (total - up)))


def one_cycle_peak_too_high(dest: Path, v: Variant) -> None:
    """A one-cycle schedule (max_lr set by a range test read off the wrong curve) whose peak is ~40x
    SGD's usual rate: the loss falls at the start of the ramp and gives way as the rate nears its
    peak."""
    top = ONE_CYCLE_MAX[v.arch]
    k = Knobs(lr=top, lr_factor=lambda s: one_cycle(s, v.steps), label_noise=0.1,
              extra_config={"scheduler": {"name": "one_cycle", "max_lr": top, "pct_start": 0.3}})
    model, rows, _ = train(v, k, dest)
    _learned_then_rose(rows, "one-cycle peak")
    write(dest, v, k, _shown(rows, v), model, code=(one_cycle, Knobs, train))


REFERENCE_BATCH, BIG_BATCH = 4, 256


def lr_scaled_with_batch(dest: Path, v: Variant) -> None:
    """The rate scaled linearly with the batch (lr = base x batch / 4) from a tiny reference batch to
    a large one: 64x the optimizer's usual rate from the first step, and the loss oscillates high
    or diverges."""
    lr = BASE_LR[v.opt] * BIG_BATCH / REFERENCE_BATCH
    vv = v.with_(batch=BIG_BATCH)
    k = Knobs(lr=lr, label_noise=0.1, extra_config={"lr_scaling": {
        "rule": "linear", "base_lr": BASE_LR[v.opt], "reference_batch": REFERENCE_BATCH}})
    model, rows, _ = train(vv, k, dest)
    ls = losses(rows)
    finite = [x for x in ls if math.isfinite(x)]
    sane = Knobs(lr=BASE_LR[v.opt], label_noise=0.1)
    _, good, _ = train(vv, sane)
    healthy_end = mean(losses(good)[-20:])
    end = mean(finite[-20:]) if len(finite) >= 20 else math.inf
    require(len(finite) < len(ls) or end > 1.5 * healthy_end + 0.05,
            f"the scaled rate did no harm: {end:.3f} against {healthy_end:.3f} at the usual rate")
    write(dest, vv, k, _shown(rows, v), model)


# --- numerical instability: a NaN from the arithmetic, the gradients calm before it -------------------

def _nan_after_calm(rows, what: str) -> None:
    bad = next((i for i, r in enumerate(rows) if not math.isfinite(r["loss"])), None)
    require(bad is not None and bad > 10, f"{what}: no NaN, or NaN from the start ({bad})")
    gn = [r["grad_norm"] for r in rows[:bad]]
    require(max(gn[-10:]) < 10 * sorted(gn)[len(gn) // 2], f"{what}: the gradients grew before the NaN")


# each row to zero mean and unit variance, with no eps: an all-zero row is 0 / 0 (said here, not in
# the docstring, which is saved with the run)
def standardise_rows(x):
    """Each row to zero mean and unit variance."""
    return (x - x.mean(-1, keepdim=True)) / x.var(-1, keepdim=True).sqrt()


MISSING_AT = 0.55     # the share of the run after which a batch holds one all-zero (missing) record


def standardised_without_eps(dest: Path, v: Variant) -> None:
    """Inputs standardised row by row inside the model, sqrt(var) with no eps; training is calm
    until a batch carries a record whose features are all missing (zeros): 0 / 0 is NaN, and the
    NaN reaches every weight."""
    at = int(v.steps * MISSING_AT)

    def prepare(model: nn.Module) -> None:
        model.register_forward_pre_hook(lambda m, args: (standardise_rows(args[0]),))

    def rows(step, xb, yb):
        if step == at:
            xb = xb.clone()
            xb[0] = 0.0
        return xb, yb

    k = Knobs(prepare=prepare, rows=rows, extra_config={"preprocess": {"standardise": "per_row", "eps": 0}})
    model, rows_, _ = train(v, k, dest)
    _nan_after_calm(rows_, "standardised rows")
    write(dest, v, k, _shown(rows_, v), None, code=(standardise_rows, prepare, Knobs, train))


FAMILIES = [
    Family("recurrent_radius", recurrent_radius_above_one, "exploding_gradients", "tuning", (
        V("rnn", "momentum", fmt="csv", seed=8101), V("rnn", "momentum", fmt="hf", seed=8102, width=48),
        # no warm-up variant: under a warm-up the blow-up came for 4 seeds of 10 (a coin toss on another machine)
        V("rnn", "momentum", fmt="kv", seed=9103, width=24), V("rnn", "momentum", "cosine", fmt="mlflow", seed=8105))),
    Family("cubic_activation", cubic_activation, "exploding_gradients", "tuning", (
        V("regression", "sgd", fmt="jsonl", seed=8111, depth=2),
        V("regression", "momentum", fmt="lightning", seed=8113, depth=2),
        V("regression", "sgd", fmt="nanogpt", seed=9111, depth=2))),
    Family("l2_weight_typo", l2_weight_typo, "exploding_gradients", "tuning", (
        V("mlp", "sgd", fmt="tb", seed=8121), V("regression", "momentum", fmt="mlflow", seed=8122),
        V("cnn", "sgd", fmt="pipe", seed=8123), V("mlp", "sgd", "warmup", fmt="hf", seed=8124),
        V("regression", "sgd", "cosine", fmt="lightning", seed=8125),
        # a cross probe (shift 8) read lr_too_high with exploding_gradients unlisted: the norm grows 180x
        # and comes back down as the weights the penalty blew up shrink back
        V("mlp", "sgd", "cosine", fmt="jsonl", seed=8923))),
    Family("warmup_peak_high", warmup_to_a_peak_too_high, "lr_too_high", "tuning", (
        V("mlp", "adamw", "warmup", fmt="hf", seed=8131), V("mlp", "adam", "warmup", fmt="lightning", seed=8132, width=48),
        V("cnn", "adam", "warmup", fmt="tb", seed=8133), V("mlp", "adamw", "warmup", fmt="kv", seed=8231),
        V("mlp", "adam", "warmup", fmt="nanogpt", seed=8233, width=48),
        # a probe (shift 6) read healthy: the CNN's loss stops improving at a noisy level under 0.1
        V("cnn", "adam", "warmup", fmt="tb", seed=8735))),
    Family("one_cycle_high", one_cycle_peak_too_high, "lr_too_high", "tuning", (
        V("mlp", "sgd", fmt="csv", seed=8141), V("regression", "momentum", fmt="jsonl", seed=8142),
        V("cnn", "sgd", fmt="mlflow", seed=8143))),
    Family("lr_batch_scaled", lr_scaled_with_batch, "lr_too_high", "tuning", (
        V("mlp", "sgd", fmt="kv", seed=8151), V("regression", "sgd", fmt="pipe", seed=8152),
        V("mlp", "momentum", fmt="hf", seed=8153))),
    Family("standardise_no_eps", standardised_without_eps, "numerical_instability", "tuning", (
        V("mlp", "sgd", fmt="pipe", seed=8171), V("regression", "adam", fmt="lightning", seed=8172),
        V("mlp", "adamw", fmt="hf", seed=8173))),
]
