"""More "it doesn't learn" families, each by a mechanism the other tuning families do not use, so that
the fingerprints separating the stall causes are fit on more than one way of stalling:

- an LR a few hundred times below its optimizer's range (SGD on an LSTM and a CNN under warm-up, momentum,
  Adam and RMSprop just above their nominal floor);
- an adaptive optimizer's LR a hundred times below its usual one, inside the nominal range but summing to
  too little over the steps run;
- a step decay applied per batch instead of per epoch: the rate falls to ~0 within tens of steps;
- gradients that vanish through time and depth in a stacked sigmoid RNN, and in deep sigmoid nets
  trained by adaptive optimizers;
- ReLU units pushed off for every input by an activation penalty a thousand times too strong
  (under SGD and momentum: adaptive optimizers keep them hovering near zero instead);
- labels shuffled once, over the whole set, independently of their inputs;
- an LR far above its optimizer's range that holds the loss at chance (ln K) without diverging.

Each checks at generation time that its fault shows, whatever the seed."""
from __future__ import annotations

import math
from pathlib import Path

import torch

from tests.scenarios.grid import BASE_LR, LM_VOCAB, Family, Knobs, Variant, dataset, losses, mean, require, train, write
from tests.scenarios.grid_optim import dead_share

V = Variant


def _ends(rows, share: int = 10) -> tuple[float, float]:
    ls = [x for x in losses(rows) if math.isfinite(x)]
    n = max(3, len(ls) // share)
    return mean(ls[:n]), mean(ls[-n:])


def _stalls(rows, within: float) -> None:
    start, end = _ends(rows)
    require(end > (1 - within) * start, f"the loss moved: {start:.3f} -> {end:.3f}")


def _chance(v: Variant) -> float:
    """ln K for a classifier or an LM: the loss of a uniform guess."""
    return math.log(LM_VOCAB if v.arch == "lm" else dataset(v, 16)[3])


# --- LR too low ---------------------------------------------------------------------------------------

def lr_hundreds_below_range(dest: Path, v: Variant) -> None:
    """The rate is a few hundred times below what its optimizer needs (a value meant for another
    optimizer, or a typo in the exponent): the loss drifts down slowly and smoothly, far too little."""
    lr = BASE_LR[v.opt] / (3000 if v.opt == "momentum" else 300)     # momentum's step is ten times its rate
    k = Knobs(lr=lr, checkpoints=(v.steps // 2, v.steps) if v.fmt not in ("kv", "tb") else ())
    model, rows, _ = train(v, k, dest)
    _stalls(rows, 0.15)
    write(dest, v, k, rows, model)


def lr_short_for_its_steps(dest: Path, v: Variant) -> None:
    """An adaptive optimizer at a rate a hundred times below its usual one, still inside the family's
    nominal range (1e-6 and up for Adam): each step moves a weight by about the rate, and the rates
    summed over the run never carry a weight off its init."""
    k = Knobs(lr=BASE_LR[v.opt] / 100)
    model, rows, _ = train(v, k, dest)
    _stalls(rows, 0.1)
    write(dest, v, k, rows, model)


DECAY_EVERY, DECAY_BY = 8, 0.3     # a StepLR(step_size=8, gamma=0.3) stepped per batch, meant per epoch


def decay_stepped_per_batch(dest: Path, v: Variant) -> None:
    """The scheduler is stepped every batch instead of every epoch: the rate falls by 0.3 every 8
    steps and is ~1e-6 of its start after 100; the loss moves in the first steps, then freezes."""
    k = Knobs(lr_factor=lambda s: DECAY_BY ** (s // DECAY_EVERY),
              extra_config={"scheduler_step": {"step_size": DECAY_EVERY, "gamma": DECAY_BY, "interval": "step"}})
    model, rows, _ = train(v, k, dest)
    require(rows[-1]["lr"] < 1e-6 * rows[0]["lr"], "the rate did not decay to ~0")
    ls = losses(rows)
    start, end = _ends(rows)
    require(end > 0.75 * start, f"the loss learned before the rate vanished: {start:.3f} -> {end:.3f}")
    late = ls[len(ls) // 2:]
    require(abs(mean(late[:20]) - mean(late[-20:])) < 0.03 * start, "the loss still moves late")
    write(dest, v, k, rows, model)


# --- vanishing gradients ------------------------------------------------------------------------------

def sigmoid_through_time(dest: Path, v: Variant) -> None:
    """A stacked Elman RNN with sigmoid units over long sequences (or a deep sigmoid net under an
    adaptive optimizer): each layer and each time step multiplies the gradient by sigmoid' <= 1/4,
    so the layers nearest the input get gradients orders below the head's, and the loss stays near
    its start."""
    k = Knobs(act=torch.nn.Sigmoid, per_layer=True, extra_config={"activation": "sigmoid"})
    model, rows, _ = train(v, k, dest)
    keys = [key for key in rows[0] if key.startswith("grad_norm/")]
    inner = [key for key in keys if key != "embed.weight"]
    first = mean(r[inner[0]] for r in rows[:40])
    last = mean(r[keys[-1]] for r in rows[:40])
    require(first < 1e-3 * last, f"first layer's gradient not small: {first:.3g} vs {last:.3g}")
    _stalls(rows, 0.1)
    write(dest, v, k, rows, model)


# --- dead ReLUs ---------------------------------------------------------------------------------------

SPARSITY = 200.0    # a sparsity penalty on the activations, meant as 0.2: a thousand times too strong


class _ActivationPenalty:
    """The task's loss plus SPARSITY times the mean ReLU output: the penalty pushes every unit's
    pre-activation below zero for every input, and a unit that gets there gets no gradient back."""

    def __init__(self, task) -> None:
        self.task, self.outs = task, []

    def watch(self, model) -> None:
        for m in model.modules():
            if isinstance(m, torch.nn.ReLU):
                m.register_forward_hook(lambda m, i, o: self.outs.append(o))

    def __call__(self, out, y):
        penalty = sum(o.mean() for o in self.outs)
        self.outs.clear()
        return self.task(out, y) + SPARSITY * penalty


def units_pushed_below_zero(dest: Path, v: Variant) -> None:
    """A sparsity penalty on the hidden activations, weighted a thousand times too strongly: most
    ReLU units end up off for every input and the loss stops falling."""
    pen = _ActivationPenalty(dataset(v, 16)[2])
    k = Knobs(prepare=pen.watch, loss=pen, checkpoints=(v.steps,),
              extra_config={"regularizer": {"activation_l1": SPARSITY}})
    model, rows, (xv, _) = train(v, k, dest)
    pen.outs.clear()
    share = dead_share(model, xv)
    require(share > 0.9, f"only {share:.2f} of the units are inactive")
    write(dest, v, k, rows, model)


# --- labels disconnected from inputs ------------------------------------------------------------------

def labels_shuffled_apart(dest: Path, v: Variant) -> None:
    """The label column is shuffled once, on its own, when the set is built (a sort applied to the
    inputs only): every row's label is some other row's, so the loss stays at the label entropy."""
    k = Knobs(checkpoints=(v.steps // 2, v.steps))
    x, y, _, _ = dataset(v, k.samples + max(256, k.samples // 5))     # as train() draws it
    x, y = x[:k.samples], y[:k.samples]
    where = {row.numpy().tobytes(): i for i, row in enumerate(x)}
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(v.seed + 3))
    k.rows = lambda s, xb, yb: (xb, torch.stack([y[perm[where[row.numpy().tobytes()]]] for row in xb]))
    model, rows, _ = train(v, k, dest)
    end = mean(losses(rows)[-30:])
    require(end > 0.95 * _entropy(v), f"the loss left the label entropy: {end:.3f} vs {_entropy(v):.3f}")
    write(dest, v, k, rows, model)


def _entropy(v: Variant) -> float:
    _, y, _, classes = dataset(v, 1024)
    p = torch.bincount(y.reshape(-1), minlength=classes).float() / y.numel()
    return float(-(p[p > 0] * p[p > 0].log()).sum())


# --- LR too high, pinned at chance --------------------------------------------------------------------

PINNING_LR = {"momentum": 3.0, "adamw": 1.0, "rmsprop": 0.3}


def lr_pins_at_chance(dest: Path, v: Variant) -> None:
    """The rate is orders above its optimizer's range: every step overshoots, the logits saturate
    and the loss sits at or above chance, ln K, for the whole run without turning Inf/NaN."""
    k = Knobs(lr=PINNING_LR[v.opt])
    model, rows, _ = train(v, k, dest)
    require(all(math.isfinite(r["loss"]) for r in rows), "the loss turned non-finite")
    ls = losses(rows)
    for part in (ls, ls[-60:]):
        require(mean(part) > 0.95 * _chance(v), f"the loss left chance: {mean(part):.3f} vs ln K {_chance(v):.3f}")
    write(dest, v, k, rows, model)


FAMILIES = [
    Family("lr_hundredfold_low", lr_hundreds_below_range, "lr_too_low", "tuning", (
        V("lstm", "sgd", fmt="kv", seed=601), V("mlp", "momentum", "cosine", fmt="jsonl", seed=602),
        V("cnn", "sgd", "warmup", fmt="lightning", seed=605), V("mlp", "adam", fmt="colon", seed=5705),
        V("mlp", "rmsprop", "warmup", fmt="pipe", seed=4797), V("regression", "adamw", "warmup", fmt="hf", seed=6690))),
    Family("lr_short_for_steps", lr_short_for_its_steps, "lr_too_low", "tuning", (
        V("cnn", "adamw", "warmup", fmt="mlflow", seed=8671), V("rnn", "adamw", "step", fmt="hf", seed=1558),
        V("regression", "rmsprop", fmt="mlflow", seed=8528), V("regression", "adamw", "step", fmt="pipe", seed=4757))),
    Family("decay_per_batch", decay_stepped_per_batch, "lr_too_low", "tuning", (
        V("mlp", "adam", fmt="csv", seed=611), V("cnn", "momentum", fmt="lightning", seed=612),
        V("lm", "adamw", fmt="pipe", seed=613))),
    Family("sigmoid_through_time", sigmoid_through_time, "vanishing_gradients", "tuning", (
        V("rnn", "sgd", fmt="mlflow", seed=621, depth=3, steps=120),
        V("rnn", "momentum", "cosine", fmt="colon", seed=622, depth=4, steps=120),
        V("mlp", "rmsprop", fmt="jsonl", seed=623, depth=14),
        V("cnn", "sgd", "warmup", fmt="csv", seed=624, depth=8),
        V("mlp", "sgd", "cosine", fmt="hf", seed=625, depth=12),      # no per-layer norms: the checkpoint alone
        # text logs that round the first layers' norms to 0
        V("mlp", "rmsprop", fmt="kv", seed=623, depth=14), V("mlp", "sgd", "cosine", fmt="colon", seed=625, depth=12))),
    Family("activation_penalty", units_pushed_below_zero, "dead_relu", "tuning", (
        V("mlp", "sgd", fmt="pipe", seed=631, depth=2), V("cnn", "sgd", fmt="csv", seed=632, depth=2),
        V("regression", "sgd", "cosine", fmt="lightning", seed=633, depth=2),
        V("regression", "momentum", fmt="mlflow", seed=633))),
    Family("labels_shuffled_apart", labels_shuffled_apart, "data_pipeline_bug", "tuning", (
        V("mlp", "sgd", "cosine", fmt="colon", seed=641), V("cnn", "adam", "warmup", fmt="mlflow", seed=642),
        V("lstm", "momentum", fmt="jsonl", seed=643), V("lm", "rmsprop", "step", fmt="csv", seed=644))),
    Family("lr_pins_chance", lr_pins_at_chance, "lr_too_high", "tuning", (
        V("lstm", "momentum", fmt="tb", seed=652), V("lstm", "adamw", "cosine", fmt="kv", seed=652),
        V("lstm", "rmsprop", "step", fmt="hf", seed=655))),
]
