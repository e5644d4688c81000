"""More healthy runs on grid.py's data and models, in the shapes real healthy runs take and the
other healthy families lack: one-cycle and cyclic rates, warm restarts with a bump at each restart,
a frozen backbone unfrozen midway, a curriculum that adds harder rows, a loss floor well above zero
(label smoothing, noisy targets), gradient accumulation, AMP whose GradScaler skips the first steps,
a large SGD rate that suits BatchNorm after a warm-up, batches of one or two, early stopping after a
mild rise of the evaluation loss, losses below zero or far above ln(K), clipped gradient spikes, and
logs full of warnings. Each checks at generation time that it learned, with no NaN loss, and that
its look-alike feature is there."""
from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn

from tests.scenarios import training
from tests.scenarios.grid import (BASE_LR, TEXT_STYLES, Family, Knobs, Variant, build_model, dataset, losses, mean,
                                  noisy, require, write)

V = Variant
NOISE = 0.05    # a few wrong labels, as real data has


@dataclass
class Plan:
    """What a family's loop does beyond grid.py's: the optimizer steps are v.steps, each over
    `accumulate` micro-batches of v.batch rows."""
    lr: float | None = None
    sched: Callable | None = None          # (optimizer, optimizer steps) -> a torch LR scheduler
    accumulate: int = 1
    log_micro: bool = False                # a row per micro-batch (grad_norm only where the step is taken)
    loss: Callable | None = None
    rows: Callable | None = None           # (step, inputs, targets) -> (inputs, targets)
    penalty: Callable | None = None        # (step, model) -> a term added to the loss (not logged), or None
    model: Callable | None = None          # (variant, classes) -> module
    freeze: Callable | None = None         # runs once on the fresh model
    stage: Callable | None = None          # (step, model, optimizer), before each optimizer step
    clip: float | None = None
    init_scale: float | None = None        # a GradScaler's first scale; the forward runs in float16
    val_every: int = 0
    patience: int = 0                      # early stopping: evaluations without a new best
    label_noise: float = NOISE
    samples: int = 1024
    weight_decay: float = 0.0
    nesterov: bool = False
    config: dict = field(default_factory=dict)


def make_optimizer(name: str, params, lr: float, wd: float = 0.0, nesterov: bool = False):
    if name in ("sgd", "momentum"):
        return torch.optim.SGD(params, lr=lr, momentum=0.9 if name == "momentum" else 0.0, weight_decay=wd,
                               nesterov=nesterov)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd or 0.01)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, weight_decay=wd)
    return torch.optim.Adam(params, lr=lr, weight_decay=wd)


def fit(v: Variant, p: Plan):
    """Trains `v` as `p` says; returns (model, logged rows)."""
    training.seed_all(v.seed)
    n_val = max(256, p.samples // 5)
    x, y, loss_fn, classes = dataset(v, p.samples + n_val)
    x, y, xv, yv = x[:p.samples], y[:p.samples], x[p.samples:], y[p.samples:]
    if p.label_noise:
        y, yv = noisy(y, classes, p.label_noise, v.seed), noisy(yv, classes, p.label_noise, v.seed + 1)
    loss_fn = p.loss or loss_fn
    model = p.model(v, classes) if p.model else build_model(v, classes)
    if p.freeze:
        p.freeze(model)
    base = p.lr if p.lr is not None else BASE_LR[v.opt]
    opt = make_optimizer(v.opt, [q for q in model.parameters() if q.requires_grad], base, p.weight_decay,
                         p.nesterov)
    sched = p.sched(opt, v.steps) if p.sched else None
    scaler = torch.amp.GradScaler("cpu", init_scale=p.init_scale) if p.init_scale else None
    half = scaler is not None
    g = torch.Generator().manual_seed(v.seed + 7)
    rows: list[dict] = []
    best, waited, micro = math.inf, 0, 0
    for step in range(1, v.steps + 1):
        if p.stage:
            p.stage(step, model, opt)
        lr = opt.param_groups[0]["lr"]
        model.train()
        opt.zero_grad()
        total = 0.0
        for i in range(p.accumulate):
            micro += 1
            idx = torch.randint(0, len(x), (v.batch,), generator=g)
            xb, yb = x[idx], y[idx]
            if p.rows:
                xb, yb = p.rows(step, xb, yb)
            with torch.autocast("cpu", dtype=torch.float16, enabled=half):
                out = model(xb)
            loss = loss_fn(out.float(), yb)
            scaled = loss / p.accumulate
            extra = p.penalty(step, model) if p.penalty else None
            if extra is not None:
                scaled = scaled + extra / p.accumulate
            (scaler.scale(scaled) if scaler else scaled).backward()
            total += loss.item()
            if p.log_micro and i < p.accumulate - 1:
                rows.append({"step": micro, "loss": loss.item(), "lr": lr})
        if scaler:
            scaler.unscale_(opt)
        gn = float(nn.utils.clip_grad_norm_(model.parameters(), p.clip or math.inf))
        row = {"step": micro if p.log_micro else step, "loss": loss.item() if p.log_micro else total / p.accumulate,
               "lr": lr, "grad_norm": gn}
        if scaler:
            row["loss_scale"] = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        if sched:
            sched.step()
        if p.val_every and step % p.val_every == 0:
            model.eval()
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16, enabled=half):
                row["val_loss"] = float(loss_fn(model(xv).float(), yv))
            best, waited = (row["val_loss"], 0) if row["val_loss"] < best else (best, waited + 1)
        rows.append(row)
        if p.patience and waited >= p.patience:
            break
    return model, rows


# --- writing and checks ------------------------------------------------------------------------------

def sched_config(v: Variant, hf_type: str, **cfg) -> dict:
    """The schedule as the run's config states it: HF's lr_scheduler_type, or a scheduler block."""
    if v.fmt == "hf":
        return {"lr_scheduler_type": hf_type}
    return {"scheduler": {"name": hf_type, **cfg}}


def save(dest: Path, v: Variant, p: Plan, rows: list[dict], model, log_every: int = 1, tail: str = "") -> None:
    k = Knobs(lr=p.lr, clip=p.clip, samples=p.samples, extra_config=p.config)
    write(dest, v, k, rows, model, log_every=log_every, tail=tail, code=(Plan, fit))


def _finite(rows) -> None:
    require(all(math.isfinite(r["loss"]) for r in rows), "a loss is not finite")


def learned(rows, by: float = 0.6, n: int = 0) -> None:
    """Finite losses, and the last points' mean under `by` of the first points' (or, for losses that
    reach below zero, lower by at least 0.5)."""
    _finite(rows)
    ls = losses(rows)
    n = n or max(5, len(ls) // 20)
    first, last = mean(ls[:n]), mean(ls[-n:])
    ok = last < first - 0.5 if last < 0 else last < by * first
    require(ok, f"did not learn: {first:.3f} -> {last:.3f}")
    not_overfit(rows)


def not_overfit(rows) -> None:
    """The evaluation loss does not meet the taxonomy's overfitting (10% above its best, still 5% at
    the end)."""
    val = [r["val_loss"] for r in rows if "val_loss" in r]
    if len(val) >= 3 and min(val) > 0:
        best = min(val)
        later = val[val.index(best):]
        require(max(later) < 1.10 * best or val[-1] < 1.05 * best, f"the evaluation loss rose {max(later) / best - 1:.0%}")


def stable(rows) -> None:
    """The loss, smoothed over 5 steps, never climbs back above where it started: a rate that suits
    its optimizer may bump the loss, never undo the training."""
    ls = losses(rows)
    start = mean(ls[:5])
    worst = max(mean(ls[i: i + 5]) for i in range(5, len(ls) - 4))
    require(worst <= 1.05 * start, f"the loss climbed back to {worst:.3f} above its start {start:.3f}")


def _smooth(ls, i: int, w: int) -> float:
    return mean(ls[max(0, i - w): i]) if i > 0 else ls[0]


# --- one-cycle and cyclic rates ----------------------------------------------------------------------

def one_cycle(dest: Path, v: Variant) -> None:
    """OneCycleLR: the rate climbs to ten times the usual one (twice for SGD) by 30% of the run, then
    anneals to ~0."""
    top = BASE_LR[v.opt] * (2 if v.opt in ("sgd", "momentum") else 10)
    p = Plan(sched=lambda opt, n: torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=top, total_steps=n),
             val_every=40, config=sched_config(v, "one_cycle", max_lr=top, pct_start=0.3))
    model, rows = fit(v, p)
    learned(rows)
    stable(rows)
    lrs = [r["lr"] for r in rows]
    require(max(lrs) > 8 * lrs[0] and lrs[-1] < lrs[0], "the cycle did not show")
    save(dest, v, p, rows, model)


def cyclic(dest: Path, v: Variant) -> None:
    """CyclicLR, triangular2: the rate sweeps 0.2x..3x the usual one every 80 steps, each cycle's top halved."""
    lo, hi = BASE_LR[v.opt] * 0.2, BASE_LR[v.opt] * 3
    p = Plan(sched=lambda opt, n: torch.optim.lr_scheduler.CyclicLR(
        opt, lo, hi, step_size_up=40, mode="triangular2", cycle_momentum=v.opt == "momentum"),
        config=sched_config(v, "cyclic", base_lr=lo, max_lr=hi, step_size_up=40, mode="triangular2"))
    model, rows = fit(v, p)
    learned(rows)
    stable(rows)
    lrs = [r["lr"] for r in rows]
    require(sum(1 for a, b, c in zip(lrs, lrs[1:], lrs[2:]) if b > a and b > c) >= 2, "fewer than two cycles")
    save(dest, v, p, rows, model)


# --- warm restarts -------------------------------------------------------------------------------------

def warm_restarts(dest: Path, v: Variant) -> None:
    """CosineAnnealingWarmRestarts every 80 steps at four times the usual rate: the loss bumps at each restart."""
    period = 80
    p = Plan(lr=BASE_LR[v.opt] * 4,
             sched=lambda opt, n: torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=period, eta_min=0),
             config=sched_config(v, "cosine_with_restarts", T_0=period, eta_min=0))
    model, rows = fit(v, p)
    learned(rows)
    stable(rows)
    ls = losses(rows)
    bumps = [s for s in range(period, len(ls) - 10, period) if max(ls[s + 1: s + 10]) > 1.15 * _smooth(ls, s, 10)]
    require(len(bumps) >= 1, "no bump at any restart")
    save(dest, v, p, rows, model)


# --- a frozen backbone, unfrozen midway -----------------------------------------------------------------

def _head(model: nn.Module) -> list[nn.Parameter]:
    last = [m for m in model.modules() if isinstance(m, nn.Linear)][-1]
    return list(last.parameters())


def _freeze_backbone(model: nn.Module) -> None:
    head = {id(q) for q in _head(model)}
    for q in model.parameters():
        q.requires_grad_(id(q) in head)


def unfrozen_midway(dest: Path, v: Variant) -> None:
    """Only the head trains for the first third; then the backbone joins at a tenth of the head's rate."""
    at = v.steps // 3
    base = BASE_LR[v.opt]

    def stage(step, model, opt):
        if step == at:
            rest = [q for q in model.parameters() if not q.requires_grad]
            for q in rest:
                q.requires_grad_(True)
            opt.add_param_group({"params": rest, "lr": base / 10})
            logging.getLogger("train").info("unfroze %d backbone tensors at step %d", len(rest), step)

    p = Plan(freeze=_freeze_backbone, stage=stage, val_every=40,
             config={"freeze_backbone_steps": at, "backbone_lr": base / 10})
    model, rows = fit(v, p)
    learned(rows, by=0.75)
    ls = losses(rows)
    require(mean(ls[at + 20: at + 60]) < 0.95 * mean(ls[at - 40: at]), "unfreezing did not lower the loss")
    save(dest, v, p, rows, model)


# --- a curriculum that adds harder rows ------------------------------------------------------------------

def curriculum(dest: Path, v: Variant) -> None:
    """The first 40% of steps see two classes only; then every class: the loss rises, then falls."""
    at = int(v.steps * 0.4)

    def rows(step, xb, yb):
        if step > at:
            return xb, yb
        keep = yb < 2
        return xb[keep], yb[keep]

    p = Plan(rows=rows, val_every=40, config={"curriculum": [{"from_step": 0, "classes": [0, 1]},
                                                             {"from_step": at, "classes": "all"}]})
    model, rows_ = fit(v, p)
    _finite(rows_)
    ls = losses(rows_)
    before, peak = mean(ls[at - 20: at]), max(mean(ls[i: i + 5]) for i in range(at, at + 20))
    require(before < 0.6 * mean(ls[:10]), "the easy stage did not learn")
    require(peak > 1.5 * before, "no rise when the harder rows came")
    require(mean(ls[-20:]) < 0.6 * peak, "the loss did not fall after the rise")
    save(dest, v, p, rows_, model)


# --- a loss floor well above zero -------------------------------------------------------------------

def smoothed(dest: Path, v: Variant) -> None:
    """Label smoothing 0.3 (or, for regression, noisy targets): the loss levels off well above zero."""
    if v.arch == "regression":
        p = Plan(label_noise=0.6, val_every=40, config={"target_noise_std": 0.6})
    else:
        flat = v.arch == "lm"

        def loss(out, y):
            if flat:
                out, y = out.reshape(-1, out.shape[-1]), y.reshape(-1)
            return nn.functional.cross_entropy(out, y, label_smoothing=0.3)
        p = Plan(loss=loss, val_every=40, config={"label_smoothing": 0.3})
    model, rows = fit(v, p)
    learned(rows, by=0.85)
    ls = losses(rows)
    require(mean(ls[-40:]) > 0.3, "the loss did not keep a floor")
    save(dest, v, p, rows, model)


# --- gradient accumulation ---------------------------------------------------------------------------------

def accumulated(dest: Path, v: Variant) -> None:
    """Micro-batches of v.batch, four per optimizer step; the log has either a row per optimizer step
    or a row per micro-batch (grad_norm where the step is taken)."""
    micro = v.fmt in ("csv", "jsonl", "kv")
    p = Plan(accumulate=4, log_micro=micro, val_every=30,
             config={"gradient_accumulation_steps": 4, "micro_batch_size": v.batch})
    model, rows = fit(v, p)
    learned(rows)
    save(dest, v, p, rows, model)


# --- AMP with a GradScaler that skips the first steps ------------------------------------------------------

def _captured(caught) -> str:
    """Warnings as Python prints them, the library path cut at site-packages."""
    out = []
    for w in caught:
        path = str(w.filename)
        path = "/usr/lib/python3.11/site-packages/" + path.split("site-packages/", 1)[1] \
            if "site-packages/" in path else "train.py"
        out.append(f"{path}:{w.lineno}: {w.category.__name__}: {w.message}")
    return "\n".join(out)


def amp_scaler(dest: Path, v: Variant) -> None:
    """float16 autocast with a GradScaler started at 2**24: the first steps overflow (grad norm inf or
    nan, step skipped, scale halved) until the scale fits, then training is ordinary. A warm-up
    LambdaLR steps each time, so torch warns that the scheduler stepped before the optimizer."""
    warm = max(1, v.steps // 10)
    p = Plan(init_scale=2.0 ** 24, clip=1.0,
             sched=lambda opt, n: torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm)),
             val_every=40, config={"fp16": True, "amp": {"init_scale": 2.0 ** 24}, "warmup_steps": warm})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, rows = fit(v, p)
    learned(rows)
    skipped = [r["step"] for r in rows if not math.isfinite(r["grad_norm"])]
    require(len(skipped) >= 3 and max(skipped) < 40, f"the scaler's overflows: {skipped}")
    require(rows[-1]["loss_scale"] < 2.0 ** 22, "the scale did not fall")
    save(dest, v, p, rows, model, tail=_captured(caught))


# --- a large SGD rate with BatchNorm and warm-up -----------------------------------------------------------

class BatchNormConv(nn.Module):
    def __init__(self, width: int, classes: int) -> None:
        super().__init__()
        c = width // 2
        self.features = nn.Sequential(nn.Conv2d(1, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                                      nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.head = nn.Linear(c * 4, classes)

    def forward(self, x):
        return self.head(self.features(x))


def _bn_model(v: Variant, classes: int) -> nn.Module:
    if v.arch == "cnn":
        return BatchNormConv(v.width, classes)
    d = 12 if v.arch == "regression" else 16
    return nn.Sequential(nn.Linear(d, v.width, bias=False), nn.BatchNorm1d(v.width), nn.ReLU(),
                         nn.Linear(v.width, v.width, bias=False), nn.BatchNorm1d(v.width), nn.ReLU(),
                         nn.Linear(v.width, classes or 1))


def large_rate_bn(dest: Path, v: Variant, top: float = 0.4) -> None:
    """SGD, momentum 0.9 (Nesterov), weight decay 5e-4, BatchNorm: the rate warms up linearly to `top`
    over 10% of the steps, then follows a cosine to zero, as ImageNet recipes do."""
    warm = v.steps // 10

    def factor(s):
        return (s + 1) / warm if s < warm else 0.5 * (1 + math.cos(math.pi * (s - warm) / (v.steps - warm)))

    p = Plan(lr=top, model=_bn_model, weight_decay=5e-4, nesterov=True, val_every=40,
             sched=lambda opt, n: torch.optim.lr_scheduler.LambdaLR(opt, factor),
             config={**sched_config(v, "cosine", warmup_steps=warm), "warmup_steps": warm,
                     "optimizer": {"name": "sgd", "lr": top, "momentum": 0.9, "nesterov": True,
                                   "weight_decay": 5e-4}})
    model, rows = fit(v, p)
    learned(rows)
    stable(rows)
    save(dest, v, p, rows, model)


def large_rate_bn_02(dest: Path, v: Variant) -> None:
    large_rate_bn(dest, v, top=0.2)


# --- batches of one or two ------------------------------------------------------------------------------------

def tiny_batches(dest: Path, v: Variant) -> None:
    """Batches of v.batch (1 or 2) rows at a quarter of the usual rate (plain SGD a tenth): every step's loss is one or two
    rows' own, from near zero to several times the mean."""
    p = Plan(lr=BASE_LR[v.opt] / (10 if v.opt == "sgd" else 4), val_every=50)
    model, rows = fit(v, p)
    _finite(rows)
    ls = losses(rows)
    n = len(ls) // 5
    require(mean(ls[-n:]) < 0.6 * mean(ls[:n]), "did not learn")
    not_overfit(rows)
    tail = sorted(ls[-n:])
    require(tail[-1] > 4 * tail[len(tail) // 2], "the per-step losses are not noisy")
    save(dest, v, p, rows, model)


# --- early stopping after a mild rise of the evaluation loss --------------------------------------------------

def early_stopped(dest: Path, v: Variant) -> None:
    """Few training rows, an evaluation every 20 steps, early stopping with patience 3: the evaluation
    loss creeps up a little (under the 10% that the taxonomy's overfitting needs) and the run stops."""
    p = Plan(samples=192, label_noise=0.15, val_every=20, patience=3,
             config={"early_stopping": {"monitor": "val_loss", "patience": 3}})
    model, rows = fit(v, p)
    learned(rows, by=0.7)
    val = [r["val_loss"] for r in rows if "val_loss" in r]
    rise = val[-1] / min(val) - 1
    peak = max(val[val.index(min(val)):]) / min(val) - 1
    require(0.005 < rise and peak < 0.08, f"the evaluation loss rose {rise:.1%} (at most {peak:.1%})")
    require(len(rows) < v.steps, "early stopping never fired")
    save(dest, v, p, rows, model)


# --- losses below zero, or far above ln(K) ------------------------------------------------------------

def _gaussian_nll(out, y):
    return nn.functional.gaussian_nll_loss(out[:, :1], y, nn.functional.softplus(out[:, 1:]) + 1e-4)


def _two_outputs(v: Variant, classes: int) -> nn.Module:
    return training.mlp(12, v.width, 2, v.depth)


def unbounded_loss(dest: Path, v: Variant) -> None:
    """Regression: a Gaussian negative log-likelihood (mean and variance), which falls below zero.
    Classifiers: cross-entropy summed over the batch (and the tokens), far above ln(K)."""
    if v.arch == "regression":
        p = Plan(model=_two_outputs, loss=_gaussian_nll, label_noise=0.0, val_every=40,
                 config={"loss": "gaussian_nll"})
    else:
        flat = v.arch == "lm"

        def summed(out, y):
            if flat:
                out, y = out.reshape(-1, out.shape[-1]), y.reshape(-1)
            return nn.functional.cross_entropy(out, y, reduction="sum")
        p = Plan(loss=summed, lr=BASE_LR[v.opt] / (v.batch if v.opt in ("sgd", "momentum") else 1), val_every=40,
                 config={"loss": "cross_entropy", "reduction": "sum"})
    model, rows = fit(v, p)
    learned(rows)
    ls = losses(rows)
    require(min(ls) < 0 or ls[0] > 10, "the loss is in the usual range")
    save(dest, v, p, rows, model)


# --- clipped gradient spikes ----------------------------------------------------------------------------

LAZY_EVERY, LAZY_WEIGHT = 25, 1e-2


def _lazy_l2(step: int, model: nn.Module):
    """Lazy regularisation (as StyleGAN2 does): the weight penalty only every LAZY_EVERY steps, scaled
    up by LAZY_EVERY to keep its average strength."""
    if step % LAZY_EVERY:
        return None
    return LAZY_EVERY * LAZY_WEIGHT * sum(q.pow(2).sum() for n, q in model.named_parameters() if n.endswith("weight"))


def clipped_spikes(dest: Path, v: Variant) -> None:
    """A lazy L2 penalty every 25 steps: the gradient norm jumps several-fold on those steps and is
    clipped at 1.0; the logged (task) loss does not move."""
    p = Plan(penalty=_lazy_l2, clip=1.0, val_every=40,
             config={"max_grad_norm": 1.0, "lazy_regularization": {"every": LAZY_EVERY, "l2": LAZY_WEIGHT}})
    model, rows = fit(v, p)
    learned(rows)
    gn, ls = [r["grad_norm"] for r in rows], losses(rows)
    at = range(3 * LAZY_EVERY - 1, len(rows), LAZY_EVERY)     # once the task's own gradients have settled
    missed = [i + 1 for i in at if gn[i] < 3 * float(np.median(gn[i - 10: i]))]
    require(len(missed) <= len(at) // 4, f"no gradient spike at steps {missed}")
    on, near = mean(ls[i] for i in at), mean(x for i in at for x in ls[i - 5: i] + ls[i + 1: i + 6])
    require(on < 1.3 * near, f"the loss rose on the penalty's steps: {on:.3f} against {near:.3f}")
    save(dest, v, p, rows, model)


# --- logs full of warnings --------------------------------------------------------------------------------

def _warn_at(step: int, model: nn.Module) -> None:
    """The benign warnings real loops trigger, each from the real call."""
    if step == 1:
        torch.utils.data.DataLoader(list(range(8)), num_workers=64)
        nn.init.kaiming_normal(torch.empty(2, 2))
    if step % 60 == 0:
        nn.functional.softmax(torch.zeros(1, 2))       # the accuracy metric's implicit dim
    if step % 90 == 0:
        np.exp(np.float16(12.0))                         # perplexity computed in half: overflows to inf


def warning_heavy(dest: Path, v: Variant) -> None:
    """A run whose log interleaves warnings with its metrics: deprecations, a softmax without dim, a
    perplexity that overflows in float16, logger warnings about skipped rows. Nothing is wrong."""
    caught_at: dict[int, list[str]] = {}

    def stage(step, model, opt):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _warn_at(step, model)
        msgs = _captured(caught).splitlines()
        if step % 45 == 0:
            msgs.append(f"WARNING train.data: skipped 3 rows with empty inputs in shard {step // 45}")
        if step % 75 == 0:
            msgs.append("WARNING train.ckpt: checkpoint dir exists and is not empty; overwriting")
        if msgs:
            caught_at[step] = msgs

    p = Plan(stage=stage, val_every=40)
    model, rows = fit(v, p)
    learned(rows)
    require(sum(len(m) for m in caught_at.values()) >= 10, "too few warnings")
    text = "\n".join(m for s in sorted(caught_at) for m in caught_at[s])
    if v.fmt in TEXT_STYLES:
        save(dest, v, p, rows, model)
        _interleave(dest / "train.log", rows, caught_at)
    else:
        save(dest, v, p, rows, model, tail=text)


def _interleave(path: Path, rows, caught_at: dict[int, list[str]]) -> None:
    """The warnings above the metric line of the step that printed them (the log's first line is the
    start banner, then a line per row)."""
    lines = path.read_text().splitlines()
    out = lines[:1]
    for row, line in zip(rows, lines[1:]):
        out += caught_at.get(row["step"], []) + [line]
    out += lines[1 + len(rows):]
    path.write_text("\n".join(out) + "\n")


FAMILIES = [
    Family("one_cycle", one_cycle, "healthy", "tuning", (
        V("mlp", "momentum", fmt="csv", seed=2101), V("cnn", "adamw", fmt="tb", seed=2102),
        V("lm", "adam", fmt="hf", steps=300, seed=2103))),
    Family("cyclic_lr", cyclic, "healthy", "tuning", (
        V("regression", "sgd", fmt="pipe", steps=320, seed=2111), V("cnn", "adam", fmt="lightning", steps=320, seed=2112))),
    Family("warm_restarts", warm_restarts, "healthy", "tuning", (
        V("mlp", "momentum", fmt="kv", steps=320, seed=2121), V("lstm", "adam", fmt="mlflow", steps=480, seed=2122),
        V("cnn", "sgd", fmt="jsonl", steps=320, seed=2123),
        V("mlp", "momentum", fmt="colon", steps=320, seed=2221), V("mlp", "momentum", fmt="tb", steps=320, seed=2521))),
    Family("unfrozen_midway", unfrozen_midway, "healthy", "tuning", (
        V("cnn", "adam", fmt="colon", steps=300, seed=2131), V("lm", "adamw", fmt="hf", steps=300, seed=2132),
        V("regression", "adam", fmt="jsonl", steps=300, seed=2133))),
    Family("curriculum", curriculum, "healthy", "tuning", (
        V("mlp", "adam", fmt="colon", steps=300, seed=2141), V("cnn", "rmsprop", fmt="csv", steps=300, seed=2142),
        V("cnn", "momentum", fmt="hf", steps=300, seed=2143),
        V("cnn", "rmsprop", fmt="mlflow", steps=300, seed=2243),
        V("cnn", "rmsprop", fmt="lightning", steps=300, seed=2543))),
    Family("smoothed_floor", smoothed, "healthy", "tuning", (
        V("mlp", "adamw", fmt="tb", seed=2151), V("lm", "adam", fmt="nanogpt", steps=300, seed=2152),
        V("regression", "rmsprop", fmt="lightning", seed=2153))),
    Family("accumulated", accumulated, "healthy", "tuning", (
        V("lm", "adamw", fmt="hf", steps=150, batch=8, seed=2161), V("mlp", "sgd", fmt="csv", steps=150, batch=8,
                                                                       seed=2162),
        V("regression", "adam", fmt="nanogpt", steps=150, batch=8, seed=2163))),
    Family("amp_scaler", amp_scaler, "healthy", "tuning", (
        V("mlp", "adamw", fmt="hf", seed=2171), V("cnn", "adam", fmt="lightning", seed=2172),
        V("lm", "adamw", fmt="kv", steps=300, seed=2173))),
    Family("large_rate_bn", large_rate_bn, "healthy", "tuning", (
        V("cnn", "momentum", fmt="tb", steps=300, batch=64, seed=2181),
        V("mlp", "momentum", fmt="kv", steps=300, batch=64, seed=2182))),
    Family("large_rate_bn_02", large_rate_bn_02, "healthy", "tuning", (
        V("cnn", "momentum", fmt="mlflow", steps=300, batch=64, seed=2183),
        V("cnn", "momentum", fmt="hf", steps=300, batch=64, seed=2185))),
    Family("tiny_batches", tiny_batches, "healthy", "tuning", (
        V("regression", "sgd", fmt="jsonl", steps=600, batch=1, seed=2194),
        V("mlp", "adam", fmt="pipe", steps=600, batch=1, seed=2192),
        V("mlp", "momentum", fmt="lightning", steps=600, batch=2, seed=2193))),
    Family("early_stopped", early_stopped, "healthy", "tuning", (
        V("mlp", "adam", fmt="csv", steps=1000, seed=2201), V("cnn", "adamw", fmt="hf", steps=1000, seed=2202),
        V("lm", "adam", fmt="lightning", steps=1000, seed=2203))),
    Family("unbounded_loss", unbounded_loss, "healthy", "tuning", (
        V("regression", "adam", fmt="jsonl", steps=600, seed=2211), V("mlp", "momentum", fmt="kv", seed=2212),
        V("lm", "adamw", fmt="tb", steps=300, seed=2213),
        V("regression", "adam", fmt="hf", steps=600, seed=2311))),
    Family("clipped_spikes", clipped_spikes, "healthy", "tuning", (
        V("mlp", "adam", fmt="csv", steps=300, seed=2221), V("cnn", "momentum", fmt="pipe", steps=300, seed=2222))),
    Family("warning_heavy", warning_heavy, "healthy", "tuning", (
        V("mlp", "adamw", fmt="kv", steps=300, seed=2231), V("regression", "rmsprop", fmt="csv", steps=300, seed=2232),
        V("cnn", "adam", fmt="hf", steps=300, seed=2233))),
]
