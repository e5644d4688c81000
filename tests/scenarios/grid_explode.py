"""Families for "it blew up": the causes that end in huge or non-finite numbers, each over several
architectures, optimizers, schedules and formats, so that what tells them apart (when the gradient
norm starts growing against when the LR changes and when the loss turns; whether the gradients were
calm before a NaN) is fit on more than one shape:

- gradients that explode under a small, constant LR: a residual stack with no normalisation, a
  loss multiplied by a large factor (a sum where a mean was meant);
- an LR too high: a warm-up whose factor is never capped (it keeps rising after the peak), and an
  adaptive optimizer given a rate from SGD's range from the first step;
- a NaN from the arithmetic with calm gradients before it: a softmax in half precision without
  the max subtracted, a hand-written cross-entropy taking log(0), a masked mean over a batch with
  no token to count;
- rare bad batches: spikes that recover, in an otherwise healthy run.

Each checks at generation time that its fault shows, whatever the seed."""
from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from tests.scenarios import training
from tests.scenarios.grid import (
    schedule,
    nonfinite_at,
    Family,
    Knobs,
    Variant,
    dataset,
    lm_loss,
    losses,
    mean,
    optimizer,
    require,
    train,
    write,
)

V = Variant


def _grew_geometrically(rows, factor: float = 100.0) -> None:
    """The gradient norm rose `factor`x over its early level (or overflowed after rising), the LR constant."""
    bad = nonfinite_at(rows)
    gn = [r["grad_norm"] for r in rows[:bad]]
    require(len(gn) >= 4, f"the gradients overflowed at once (step {bad})")
    top = max(range(len(gn)), key=gn.__getitem__)
    # a rise over several steps to a new high, not one large first step that the run then recovers from
    require(top >= 2 and (gn[top] > factor * gn[0] or (bad is not None and gn[top] > 10 * gn[0])),
            f"gradient norm did not grow: {gn[0]:.3g} -> {gn[top]:.3g} at step {top + 1}")
    lrs = {r["lr"] for r in rows}
    require(len(lrs) == 1, "the LR changed")


# --- exploding gradients under a small, constant LR --------------------------------------------------

class ResidualStack(nn.Module):
    """x + f(x) blocks, `depth` of them, with no normalisation anywhere: each block adds its output
    to the stream, so the stream (and the gradient through it) grows with the depth."""

    def __init__(self, inp: int, width: int, out: int, depth: int) -> None:
        super().__init__()
        self.stem = nn.Linear(inp, width)
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.head = nn.Linear(width, out)

    def forward(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = h + block(torch.relu(h))
        return self.head(h)


RESIDUAL = {"mlp": (16, 1.7)}    # blocks, block weight std x sqrt(fan-in)
RESIDUAL_LR = {"momentum": 1e-3}


def residual_stack_unnormalised(dest: Path, v: Variant) -> None:
    """A deep residual stack with no LayerNorm/BatchNorm and blocks initialised a little wide: the
    stream doubles every few blocks, the gradients are large at step 1 and grow step after step
    to Inf/NaN under a small constant SGD rate."""
    depth, gain = RESIDUAL[v.arch]
    training.seed_all(v.seed)
    x, y, loss_fn, classes = dataset(v, 1024)
    model = ResidualStack(x.shape[-1], v.width, classes or 1, depth)
    with torch.no_grad():
        for block in model.blocks:
            fan_in = block.weight[0].numel()
            block.weight.normal_(0.0, gain / math.sqrt(fan_in))
    lr = RESIDUAL_LR[v.opt]
    opt = optimizer(v.opt, model.parameters(), lr)
    rows = _fit(v, model, opt, x, y, loss_fn, lr)
    bad = nonfinite_at(rows)
    require(bad is not None and bad >= 3, f"no blow-up to Inf/NaN after a few finite steps (at {bad})")
    require(rows[0]["grad_norm"] > 100, f"first gradient norm only {rows[0]['grad_norm']:.3g}")
    require(max(r["grad_norm"] for r in rows[:bad]) > 10 * rows[0]["grad_norm"], "the gradients did not grow")
    k = Knobs(lr=lr, extra_config={"model": {"arch": f"residual_{v.arch}", "blocks": depth, "hidden": v.width,
                                             "norm": None}, "init": {"block_gain": gain}})
    write(dest, v.with_(depth=depth), k, rows, None, code=(ResidualStack, residual_stack_unnormalised, _fit))


def _fit(v: Variant, model: nn.Module, opt, x, y, loss_fn, lr: float, sched: str = "constant") -> list[dict]:
    """SGD-style steps over random batches, logging the loss, the rate and the gradient norm; under
    a schedule other than constant, the optimizer's rate follows grid.schedule."""
    g = torch.Generator().manual_seed(v.seed + 7)
    rows = []
    for step in range(1, v.steps + 1):
        rate = lr * schedule(sched, step, v.steps)
        if sched != "constant":
            for group in opt.param_groups:
                group["lr"] = rate
        idx = torch.randint(0, len(x), (v.batch,), generator=g)
        loss = loss_fn(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        gn = float(nn.utils.clip_grad_norm_(model.parameters(), float("inf")))
        opt.step()
        rows.append({"step": step, "loss": loss.item(), "lr": rate, "grad_norm": gn})
    return rows


LOSS_SCALE = {"mlp": (2000.0, 1e-3), "regression": (1000.0, 1e-3), "lm": (512.0, 2e-2), "cnn": (2000.0, 1e-3)}


def loss_summed_not_averaged(dest: Path, v: Variant) -> None:
    """The loss is summed where a mean was meant (x the batch, or x batch x tokens): the gradients
    are hundreds of times their size from step 1 and, fed back through SGD, grow to Inf/NaN while
    the configured LR is small and constant."""
    factor, lr = LOSS_SCALE[v.arch]
    base = lm_loss if v.arch == "lm" else (nn.functional.mse_loss if v.arch == "regression"
                                           else nn.functional.cross_entropy)

    def summed(out, target):
        return base(out, target) * factor

    k = Knobs(lr=lr, loss=summed,
              extra_config={"loss": {"reduction": "sum", "scale": factor}})
    model, rows, _ = train(v, k, dest)
    _grew_geometrically(rows)
    write(dest, v, k, rows, None)


# --- LR too high --------------------------------------------------------------------------------------

def _learned_then_rose(rows, what: str) -> None:
    ls = losses(rows)
    start = mean(ls[:10])
    finite = [x for x in ls if math.isfinite(x)]
    best = min(mean(finite[i: i + 10]) for i in range(0, len(finite) - 9))     # the best level, not one lucky batch
    require(best < 0.85 * start, f"{what}: it never learned ({start:.3g} -> {best:.3g})")
    tail = [x if math.isfinite(x) else 1e30 for x in ls[-20:]]
    require(mean(tail) > best + 0.5 * (start - best),
            f"{what}: the loss did not rise again ({best:.3g} -> {mean(tail):.3g})")


# the warm-up's length as a share of the run: after it (the bug) the factor keeps rising, 40-80x by the end
WARMUP_SHARE = {"cnn": 0.0125, "regression": 0.0125, "lstm": 0.025}


def warmup_never_capped(dest: Path, v: Variant) -> None:
    """A linear warm-up written as `lr = base * step / warmup_steps` with no min(1, ...): after the
    warm-up the factor keeps rising, to 40-80x the intended peak by the end, and the loss gives way."""
    warm = max(1, int(v.steps * WARMUP_SHARE[v.arch]))
    k = Knobs(lr_factor=lambda s: s / warm, label_noise=0.1,
              extra_config={"scheduler": {"name": "linear_warmup", "warmup_steps": warm}})
    model, rows, _ = train(v, k, dest)
    _learned_then_rose(rows, "uncapped warm-up")
    write(dest, v, k, rows, model)


CLASSES = {"mlp": 4, "cnn": 4, "lstm": 3, "lm": 24}
SGD_RATE = {"adam": 0.1, "adamw": 0.1, "rmsprop": 0.1, "momentum": 2.0}


def sgd_rate_from_the_start(dest: Path, v: Variant) -> None:
    """A rate from SGD's range left in after switching to an adaptive optimizer (Adam normalises the
    update, so 0.05 moves every weight by ~0.05 a step), or a momentum SGD at a rate its momentum
    multiplies ten-fold: from the first step the loss oscillates high or diverges."""
    k = Knobs(lr=SGD_RATE[v.opt], label_noise=0.1)
    model, rows, _ = train(v, k, dest)
    ls = losses(rows)
    finite = [x for x in ls if math.isfinite(x)]
    start, end = mean(finite[:10]), mean(finite[-20:]) if len(finite) >= 20 else math.inf
    chance = math.log(CLASSES[v.arch])
    require(len(finite) < len(ls) or end > 0.8 * start or end > 0.9 * chance,
            f"it learned: {start:.3f} -> {end:.3f}")
    write(dest, v, k, rows, model)


# --- numerical instability: a NaN from the arithmetic, the gradients calm before it -------------------

def _nan_after_calm(rows, what: str) -> None:
    bad = next((i for i, r in enumerate(rows) if not math.isfinite(r["loss"])), None)
    require(bad is not None and bad > 10, f"{what}: no NaN, or NaN from the start ({bad})")
    gn = [r["grad_norm"] for r in rows[:bad]]
    require(max(gn[-10:]) < 10 * sorted(gn)[len(gn) // 2], f"{what}: the gradients grew before the NaN")


def half_softmax(logits, target):
    """Cross-entropy with the softmax computed in float16 and no max subtracted."""
    e = logits.half().exp()
    p = (e / e.sum(-1, keepdim=True)).float()
    return -p.gather(-1, target.reshape(-1, 1)).clamp_min(1e-30).log().mean()


def bce_by_hand(logits, target):
    """One-vs-rest binary cross-entropy written out, with no eps: log(1 - sigmoid(z)) is log(0)
    once a logit passes ~17 in float32, and 0 * -inf is NaN."""
    y = nn.functional.one_hot(target, logits.shape[-1]).float()
    p = torch.sigmoid(logits)
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()


PAD = 0


def masked_token_mean(logits, target):
    """The LM loss averaged over the non-padding tokens: sum / count, and the count can be 0."""
    ce = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), reduction="none")
    mask = (target.reshape(-1) != PAD).float()
    return (ce * mask).sum() / mask.sum()


NUMERIC = {"mlp": half_softmax, "regression": bce_by_hand, "lm": masked_token_mean}
NUMERIC_LR = {"adam": 1e-2, "adamw": 1e-2, "rmsprop": 1e-2}


def arithmetic_nan(dest: Path, v: Variant) -> None:
    """A loss whose arithmetic breaks once the model is confident or a batch is degenerate: a
    float16 exp overflows (e^11 > 65504), a log of an exact 0, a mean over zero tokens (a batch
    made only of padding late in the run). The gradients stay calm until the NaN."""
    fn = NUMERIC[v.arch]
    pad_at = int(v.steps * 0.7)

    def rows(step, xb, yb):
        return (xb, torch.full_like(yb, PAD)) if fn is masked_token_mean and step == pad_at else (xb, yb)

    v = v.with_(arch="mlp") if v.arch == "regression" else v      # a one-vs-rest head on the blobs
    k = Knobs(lr=NUMERIC_LR[v.opt], loss=fn, rows=rows,
              extra_config={"loss": {"fn": fn.__name__}, **({"precision": "fp16"} if fn is half_softmax else {})})
    model, rows_, _ = train(v, k, dest)
    _nan_after_calm(rows_, fn.__name__)
    write(dest, v, k, rows_, None, code=(fn, Knobs, train))


# --- loss spikes: rare bad batches in a healthy run ----------------------------------------------------

def _spikes_recover(rows, at: list[int]) -> None:
    ls = losses(rows)
    require(all(math.isfinite(x) for x in ls), "a loss is not finite")
    for s in at:
        before = sorted(ls[s - 12: s - 1])[5]
        require(ls[s - 1] > 3 * before and ls[s - 1] > mean(ls[:5]), f"no spike at step {s}: {before:.3f} -> "
                f"{ls[s - 1]:.3f}")
        require(mean(ls[s + 10: s + 15]) < 1.5 * before + 0.05, f"no recovery after step {s}")
    require(mean(ls[-20:]) < 0.6 * mean(ls[:10]), "it did not learn")


def other_rows(v: Variant, g: torch.Generator):
    """A batch from another source for this task: pixel values on a 0-255 scale for the images,
    tokens drawn uniformly for the LM, targets in another unit (x 40) for the regression."""
    def rewrite(xb, yb):
        if v.arch == "cnn":
            return (xb - xb.min()) * 255.0 / (xb.max() - xb.min()), yb
        if v.arch == "lm":
            return xb, torch.randint(1, 24, yb.shape, generator=g)
        if v.arch == "regression":
            return xb, yb * 40.0
        raise ValueError(f"no bad batch for {v.arch}")
    return rewrite


def rare_corrupt_batches(dest: Path, v: Variant) -> None:
    """At three steps (about 1 batch in 100) a corrupt batch arrives; the loss jumps past where
    training started and is back to its level within a few steps. No clipping is needed to recover."""
    at = [int(v.steps * f) for f in (0.35, 0.6, 0.85)]
    rewrite = other_rows(v, torch.Generator().manual_seed(v.seed))
    k = Knobs(rows=lambda s, xb, yb: rewrite(xb, yb) if s in at else (xb, yb))
    model, rows, _ = train(v, k, dest)
    _spikes_recover(rows, at)
    write(dest, v, k, rows, model, code=(other_rows, Knobs, train))


FAMILIES = [
    Family("residual_unnormalised", residual_stack_unnormalised, "exploding_gradients", "tuning", (
        V("mlp", "momentum", fmt="csv", seed=1501), V("mlp", "momentum", fmt="kv", seed=1502, width=48),
        V("mlp", "momentum", fmt="hf", seed=1504))),
    Family("loss_summed", loss_summed_not_averaged, "exploding_gradients", "tuning", (
        V("mlp", "sgd", fmt="nanogpt", seed=1521), V("regression", "momentum", fmt="lightning", seed=1522),
        V("lm", "sgd", fmt="csv", seed=1523), V("cnn", "momentum", fmt="colon", seed=1524),
        V("mlp", "momentum", fmt="nanogpt", seed=7001))),     # a burst from step 1 that the run survives
    Family("warmup_uncapped", warmup_never_capped, "lr_too_high", "tuning", (
        V("cnn", "sgd", fmt="jsonl", seed=1532),
        V("lstm", "adam", fmt="hf", seed=1533), V("regression", "momentum", fmt="tb", seed=1534))),
    Family("sgd_rate_adaptive", sgd_rate_from_the_start, "lr_too_high", "tuning", (
        V("lstm", "adam", fmt="csv", seed=1541), V("lstm", "adamw", fmt="pipe", seed=1542),
        V("lstm", "rmsprop", fmt="lightning", seed=1543), V("lm", "momentum", fmt="kv", seed=1544),
        V("lstm", "adamw", "step", fmt="hf", seed=3163))),      # a step decay lets it learn a little late
    Family("arithmetic_nan", arithmetic_nan, "numerical_instability", "tuning", (
        V("mlp", "adam", fmt="jsonl", seed=1551), V("mlp", "adamw", fmt="hf", seed=1552),
        V("regression", "rmsprop", fmt="csv", seed=1553), V("lm", "adamw", fmt="tb", seed=1554))),
    Family("rare_corrupt_batches", rare_corrupt_batches, "loss_spikes", "tuning", (
        V("cnn", "adam", fmt="kv", seed=1561), V("lm", "adamw", fmt="jsonl", seed=1562),
        V("regression", "rmsprop", fmt="hf", seed=1563))),
]
