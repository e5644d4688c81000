"""Families for the causes that look alike ("it doesn't learn", "it blew up"), each over several
architectures, optimizers and schedules, so that the fingerprints that tell them apart (the LR
against its optimizer's range, the gradient level at step 1 and its layer profile, whether the loss
moved at all) are fit on more than one shape:

- gradients that explode because of the initialisation while the LR is small and constant, from
  the first step or after a good start;
- an LR orders of magnitude below its optimizer's range, with and without warm-up or decay;
- gradients that vanish layer after layer in deep saturating nets and stacked RNNs;
- an LR far above its optimizer's range: pinned at chance, oscillating, or diverging;
- healthy runs with scheduled LR changes (steps, warm restarts) and noisy minibatch losses.

Each checks at generation time that its fault (or its health) shows, whatever the seed."""
from __future__ import annotations

import math
from pathlib import Path

from torch import nn

from tests.scenarios.grid import (
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

V = Variant


def _ends(rows) -> tuple[float, float]:
    ls = [x for x in losses(rows) if math.isfinite(x)]
    n = max(3, len(ls) // 10)
    return mean(ls[:n]), mean(ls[-n:])


# --- exploding gradients under a small, constant LR ------------------------------------------------

INIT = {"mlp": (6, 0.5), "regression": (6, 0.4), "rnn": (1, 0.35)}   # depth, weight std
SMALL_LR = {"sgd": 1e-3, "momentum": 2e-3}      # inside SGD's usual range, constant


def wide_init_from_the_start(dest: Path, v: Variant) -> None:
    """Weights drawn with a std far too wide for the depth (no normalisation): the gradients are
    hundreds of times their usual size at step 1 and blow up to Inf/NaN within tens of steps,
    while the LR stays small and constant."""
    depth, std = INIT[v.arch]
    vv = v.with_(depth=depth)

    def attempt(std: float):
        k = Knobs(lr=SMALL_LR[v.opt], init_std=std, extra_config={"init": {"weight_std": std}})
        model, rows, _ = train(vv, k, dest)
        bad = nonfinite_at(rows)
        require(bad is not None and bad >= 3, f"no blow-up to Inf/NaN after a few finite steps (at {bad})")
        require(rows[0]["grad_norm"] > 100, f"first gradient norm only {rows[0]['grad_norm']:.3g}")
        return k, rows

    k, rows = first_that_shows(_around(std, 0.025, wider_only=True, n=12), attempt)
    write(dest, vv, k, rows, None)


# a little too wide: this seed learns first, then blows up. When is chaotic (a std 0.005 away blows up
# at step 15, at 150 or never, and the CPU's kernels move it), so the ladder tries stds 0.001 apart
LATE_STD = {501: 0.45, 513: 0.47}


def explodes_after_learning(dest: Path, v: Variant) -> None:
    """A deep plain ReLU net with an initialisation a little too wide: it learns first, then its
    gradients grow by orders of magnitude to Inf/NaN, under a constant LR."""
    vv = v.with_(depth=6)

    def attempt(std: float):
        k = Knobs(lr=0.005, init_std=std, extra_config={"init": {"weight_std": std}})
        model, rows, _ = train(vv, k, dest)
        bad = nonfinite_at(rows)
        # after an eighth of the run: a late onset on a short chaotic edge is a coin toss per CPU, and
        # what the family shows (it learned, then the gradients grew to Inf) is checked below
        require(bad is not None and bad > len(rows) // 8, f"no blow-up after a first stretch of learning (at {bad})")
        ls = losses(rows)[:bad]
        require(min(ls) < 0.3 * mean(ls[:5]), "it did not learn before the blow-up")
        gn = [r["grad_norm"] for r in rows[:bad]]
        require(max(gn[-10:]) > 100 * sorted(gn)[len(gn) // 2], "the gradients did not grow before the blow-up")
        return k, rows

    k, rows = first_that_shows(_around(LATE_STD[v.seed], 0.001, n=40), attempt)
    write(dest, vv, k, rows, None)


def _around(std: float, step: float, wider_only: bool = False, n: int = 6) -> list[float]:
    """`std` first, then `n` rungs outward by `step` (alternately narrower and wider, or only wider)."""
    rungs = [std + i * step for i in range(1, n + 1)] if wider_only else \
        [std + s * i * step for i in range(1, n // 2 + 1) for s in (-1, 1)]
    return [round(x, 4) for x in [std, *rungs]]


# --- LR far below its optimizer's range -----------------------------------------------------------

def lr_below_its_range(dest: Path, v: Variant) -> None:
    """The rate is set orders below what its optimizer needs (1e-7 for Adam, 1e-5 for SGD): the
    loss barely leaves its start, warm-up or not."""
    k = Knobs(lr=TINY_LR[v.opt], checkpoints=(v.steps // 2, v.steps))
    model, rows, _ = train(v, k, dest)
    start, end = _ends(rows)
    require(abs(start - end) < 0.04 * start, f"loss moved: {start:.3f} -> {end:.3f}")
    write(dest, v, k, rows, model)


TINY_LR = {"sgd": 1e-5, "momentum": 1e-6, "adam": 1e-7, "adamw": 1e-6, "rmsprop": 1e-7}


# --- vanishing gradients --------------------------------------------------------------------------

def saturating_deep_stack(dest: Path, v: Variant) -> None:
    """Deep tanh or sigmoid stacks (MLP, CNN, stacked RNN) with no normalisation or residuals: the
    per-layer gradient norms shrink layer after layer toward the input."""
    act = nn.Tanh if v.arch == "mlp" else nn.Sigmoid
    k = Knobs(act=act, per_layer=True, extra_config={"activation": act.__name__.lower()})
    model, rows, _ = train(v, k, dest)
    keys = [key for key in rows[0] if key.startswith("grad_norm/")]
    first = mean(r[keys[0 if v.arch != "rnn" else 1]] for r in rows[:40])
    last = mean(r[keys[-1]] for r in rows[:40])
    require(first < 3e-3 * last, f"first layer's gradient not small: {first:.3g} vs {last:.3g}")
    write(dest, v, k, rows, model)


# --- LR far above its optimizer's range ------------------------------------------------------------

def lr_above_its_range(dest: Path, v: Variant) -> None:
    """The rate is set far above its optimizer's range from the start: the loss never gets under
    its start (pinned near chance, oscillating) or diverges to Inf/NaN."""
    k = Knobs(lr=HUGE_LR[v.opt], label_noise=0.1)
    model, rows, _ = train(v, k, dest)
    start, end = _ends(rows)
    chance = math.log(CLASSES[v.arch]) if v.arch in CLASSES else math.inf
    require(nonfinite_at(rows) is not None or end > 0.85 * start or end > 0.9 * chance,
            f"it learned: {start:.3f} -> {end:.3f}")
    write(dest, v, k, rows, model)


HUGE_LR = {"sgd": 10.0, "momentum": 3.0, "adam": 1.0, "adamw": 0.3, "rmsprop": 0.5}
CLASSES = {"mlp": 4, "cnn": 4, "lstm": 3, "rnn": 3, "lm": 24}


# --- healthy runs that look alarming at a glance ------------------------------------------------------

def restarts_and_noise(dest: Path, v: Variant) -> None:
    """Healthy: cosine annealing with a warm restart at mid-run (the LR jumps back up ~20x), or a
    step decay, on small noisy minibatches with some wrong labels; it learns and stays learned."""
    half = v.steps // 2

    def restart(step: int) -> float:
        s = step if step <= half else step - half
        return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * s / half))

    k = Knobs(lr_factor=restart if v.sched == "constant" else None, label_noise=0.15, val_every=40,
              extra_config={"scheduler_restarts": v.sched == "constant"})
    model, rows, _ = train(v, k, dest)
    ls = losses(rows)
    require(all(math.isfinite(x) for x in ls), "a loss is not finite")
    n = max(5, len(ls) // 20)
    require(mean(ls[-n:]) < 0.7 * mean(ls[:n]), f"did not learn: {mean(ls[:n]):.3f} -> {mean(ls[-n:]):.3f}")
    write(dest, v, k, rows, model)


FAMILIES = [
    Family("wide_init_start", wide_init_from_the_start, "exploding_gradients", "tuning", (
        V("mlp", "momentum", fmt="kv", seed=502), V("mlp", "momentum", fmt="lightning", seed=503),
        V("regression", "sgd", fmt="jsonl", seed=504), V("rnn", "momentum", fmt="hf", seed=504))),
    Family("explodes_late", explodes_after_learning, "exploding_gradients", "tuning", (
        V("mlp", "momentum", fmt="pipe", seed=501), V("mlp", "momentum", fmt="mlflow", seed=513))),
    Family("lr_below_range", lr_below_its_range, "lr_too_low", "tuning", (
        V("mlp", "adam", "warmup", fmt="jsonl", seed=521), V("lstm", "adam", "cosine", fmt="kv", seed=522),
        V("cnn", "sgd", fmt="tb", seed=523), V("rnn", "momentum", "warmup", fmt="csv", seed=524),
        V("lm", "rmsprop", fmt="hf", seed=525), V("regression", "adamw", "step", fmt="mlflow", seed=526))),
    Family("saturating_stack", saturating_deep_stack, "vanishing_gradients", "tuning", (
        V("mlp", "sgd", fmt="csv", seed=531, depth=20), V("cnn", "momentum", fmt="jsonl", seed=532, depth=10),
        V("rnn", "sgd", fmt="pipe", seed=533, depth=6, steps=120),
        V("regression", "momentum", fmt="tb", seed=535, depth=10))),
    Family("lr_above_range", lr_above_its_range, "lr_too_high", "tuning", (
        V("mlp", "sgd", fmt="kv", seed=541), V("cnn", "momentum", fmt="csv", seed=542),
        V("mlp", "adam", fmt="jsonl", seed=543), V("lstm", "rmsprop", fmt="tb", seed=544),
        V("regression", "sgd", "cosine", fmt="hf", seed=545), V("lm", "adamw", "warmup", fmt="lightning", seed=546))),
    Family("restarts_noise", restarts_and_noise, "healthy", "tuning", (
        V("mlp", "sgd", fmt="kv", seed=551, batch=8), V("cnn", "adam", fmt="jsonl", seed=552),
        V("lm", "adam", fmt="tb", seed=553, steps=400), V("mlp", "momentum", "step", fmt="csv", seed=554, batch=4),
        V("regression", "rmsprop", "step", fmt="hf", seed=555, batch=8))),
]
