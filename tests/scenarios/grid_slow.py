"""Slow faults: trouble that builds over hundreds of steps before the run breaks, so a live watch
has something to see before the post-mortem is certain (bench/watch.py's live-only lead).

- an LR that creeps up: an exponential schedule whose factor is above 1 (gamma 1.01 for 0.99);
- a curriculum that keeps lengthening the sequences of a small LM whose loss is summed over the
  tokens and divided by the batch (not the token count), so each step's size grows with the length;
- an fp16 loss scale that decays toward underflow: half-precision layers and gradients, a real
  `torch.amp.GradScaler`, and input features whose scale drifts up (raw counters); the scaler keeps
  halving, then the forward overflows.

Each is checked at generation time, whatever the seed: the run learns first, the fault builds
gradually (no jump), and the run breaks at the end.
"""
from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from tests.scenarios import training
from tests.scenarios.grid import (
    BASE_LR,
    Family,
    Knobs,
    TinyTransformer,
    Variant,
    losses,
    mean,
    optimizer,
    require,
    train,
    write,
)

V = Variant


def _learned_then_broke(rows, what: str) -> int:
    """The step the run broke at (its loss non-finite, or past twice its best); checks it learned first."""
    ls = losses(rows)
    start = mean(ls[:10])
    finite = [x for x in ls if math.isfinite(x)]
    best_at = min(range(len(finite)), key=finite.__getitem__)
    require(finite[best_at] < 0.8 * start, f"{what}: it never learned ({start:.3g} -> {finite[best_at]:.3g})")
    broke = next((i for i, x in enumerate(ls) if i > best_at and not (x < 2.0 * max(finite[best_at], 0.05))), None)
    require(broke is not None and mean(x if math.isfinite(x) else 1e30 for x in ls[-10:]) > 2.0 * finite[best_at],
            f"{what}: the run did not break")
    return broke


# --- an LR that creeps up -----------------------------------------------------------------------------

GAMMA = {"sgd": 1.012, "momentum": 1.012, "adam": 1.012, "adamw": 1.012, "rmsprop": 1.012}


def lr_creeping_up(dest: Path, v: Variant) -> None:
    """ExponentialLR with gamma above 1: the rate grows 1.2% a step, 100x in 400 steps."""
    gamma = GAMMA[v.opt]
    k = Knobs(lr_factor=lambda s: gamma ** s, label_noise=0.1,
              extra_config={"scheduler": {"name": "exponential", "gamma": gamma}})
    model, rows, _ = train(v, k, dest)
    broke = _learned_then_broke(rows, "creeping lr")
    lrs = [r["lr"] for r in rows]
    require(max(b / a for a, b in zip(lrs, lrs[1:])) < 1.05, "the LR jumped")
    require(broke > 150, f"it broke too early, at step {broke + 1}")
    write(dest, v, k, rows, model)


# --- a curriculum that keeps lengthening the sequences ------------------------------------------------

SEQ_FROM, SEQ_TO, VOCAB = 4, 64, 24
SEQ_LR = {"sgd": 0.2, "momentum": 0.05}     # rates that train the shortest windows well


def _motif_stream(n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    motifs = [torch.randint(1, VOCAB, (int(k),), generator=g) for k in torch.randint(3, 7, (8,), generator=g)]
    return torch.cat([motifs[int(i)] for i in torch.randint(0, 8, (n,), generator=g)])


def seq_len_at(step: int, steps: int) -> int:
    """The curriculum: the window grows linearly from SEQ_FROM to SEQ_TO tokens over the run."""
    return int(SEQ_FROM + (SEQ_TO - SEQ_FROM) * (step - 1) / max(1, steps - 1))


def lm_lengthening(dest: Path, v: Variant) -> None:
    """A small causal LM on motif text; every step's windows are longer than the last. The loss is
    summed over the tokens and divided by the batch size, so the gradient grows with the length."""
    training.seed_all(v.seed)
    stream = _motif_stream(6000, v.seed)
    model = TinyTransformer(VOCAB, v.width, SEQ_TO, v.depth)
    base = SEQ_LR[v.opt]
    opt = optimizer(v.opt, model.parameters(), base)
    g = torch.Generator().manual_seed(v.seed + 7)
    rows = []
    for step in range(1, v.steps + 1):
        seq = seq_len_at(step, v.steps)
        starts = torch.randint(0, len(stream) - seq - 1, (v.batch,), generator=g)
        w = torch.stack([stream[s: s + seq + 1] for s in starts.tolist()])
        logits = model(w[:, :-1])
        summed = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), w[:, 1:].reshape(-1), reduction="sum")
        loss = summed / v.batch
        opt.zero_grad()
        loss.backward()
        gn = float(nn.utils.clip_grad_norm_(model.parameters(), float("inf")))
        opt.step()
        rows.append({"step": step, "loss": summed.item() / (v.batch * seq), "lr": base, "grad_norm": gn,
                     "seq_len": seq})
    broke = _learned_then_broke(rows, "lengthening curriculum")
    require(broke > 100, f"it broke too early, at step {broke + 1}")
    k = Knobs(lr=base, extra_config={
        "curriculum": {"seq_len": {"start": SEQ_FROM, "end": SEQ_TO, "schedule": "linear"}},
        "loss": {"reduction": "sum", "divide_by": "batch_size"}})
    write(dest, v.with_(arch="lm"), k, rows, model, code=(seq_len_at, lm_lengthening))


# --- an fp16 loss scale that decays toward underflow --------------------------------------------------

DRIFT = 1.02       # the inputs' scale grows 2% a step (raw counters)


def _half(model: nn.Module) -> None:
    """Layers and gradients in float16, as a half-precision model's (fp32 master weights aside)."""
    for m in model.modules():
        if isinstance(m, nn.Linear):
            m.register_forward_hook(lambda m, i, o: o.half().float())
    for p in model.parameters():
        p.register_hook(lambda g: g.half().float())


def fp16_scale_decaying(dest: Path, v: Variant) -> None:
    training.seed_all(v.seed)
    g = torch.Generator().manual_seed(v.seed)
    x = torch.randn(2048, 12, generator=g)
    y = (x @ torch.randn(12, 1, generator=g)).tanh()
    model = training.mlp(12, v.width, 1, v.depth)
    _half(model)
    base = BASE_LR[v.opt]
    opt = optimizer(v.opt, model.parameters(), base)
    scaler = torch.amp.GradScaler("cpu", growth_interval=100)
    rows = []
    for step in range(1, v.steps + 1):
        idx = torch.randint(0, len(x), (v.batch,), generator=g)
        loss = nn.functional.mse_loss(model(x[idx] * DRIFT ** step), y[idx])
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        gn = float(nn.utils.clip_grad_norm_(model.parameters(), float("inf")))
        rows.append({"step": step, "loss": loss.item(), "lr": base, "grad_norm": gn, "loss_scale": scaler.get_scale()})
        scaler.step(opt)
        scaler.update()
    bad = next((i for i, r in enumerate(rows) if not math.isfinite(r["loss"])), None)
    require(bad is not None and bad > 200, "no non-finite loss, or one too early")
    scales = [r["loss_scale"] for r in rows[:bad]]
    require(min(scales[-20:]) < max(scales) / 1000, f"the loss scale did not decay: {max(scales):g} -> {scales[-1]:g}")
    require(_learned_then_broke(rows, "fp16 drift") >= 0, "")
    k = Knobs(extra_config={"precision": "fp16", "amp": {"init_scale": 65536, "growth_interval": 100},
                            "inputs": {"normalize": False}})
    write(dest, v.with_(arch="regression"), k, rows, model, code=(_half, fp16_scale_decaying))


FAMILIES = [
    Family("lr_creeping", lr_creeping_up, "lr_too_high", "tuning", (
        V("mlp", "momentum", fmt="kv", steps=600, seed=701), V("cnn", "adam", fmt="jsonl", steps=600, seed=702))),
    Family("seq_lengthening", lm_lengthening, "exploding_gradients", "tuning", (
        V("lm", "momentum", fmt="jsonl", steps=600, seed=711), V("lm", "momentum", fmt="kv", steps=600, seed=712))),
    Family("fp16_scale_decay", fp16_scale_decaying, "numerical_instability", "tuning", (
        V("regression", "adam", fmt="csv", steps=800, seed=721),
        V("regression", "adamw", fmt="kv", steps=800, seed=722))),
]
