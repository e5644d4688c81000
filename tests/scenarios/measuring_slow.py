"""The measuring families once in grid_slow.py (see tests/scenarios/__init__.py): never read one by one,
never tuned on; bench/accuracy.py measures them."""
from __future__ import annotations

import math
import statistics
from pathlib import Path

import torch
from torch import nn

from tests.scenarios import training
from tests.scenarios.grid import (
    BASE_LR,
    Family,
    Knobs,
    Variant,
    first_that_shows,
    nonfinite_at,
    optimizer,
    require,
    train,
    write,
)
from tests.scenarios.grid_slow import V, VOCAB, _half, _learned_then_broke, _motif_stream

EPOCH_STEPS, EPOCH_GAMMA = 25, 1.3


def lr_raised_every_epoch(dest: Path, v: Variant) -> None:
    """StepLR with gamma 1.3 (for 0.7) every 25 steps: the rate grows by a third an epoch."""
    k = Knobs(lr_factor=lambda s: EPOCH_GAMMA ** (s // EPOCH_STEPS), label_noise=0.1,
              extra_config={"scheduler": {"name": "step", "step_size": EPOCH_STEPS, "gamma": EPOCH_GAMMA}})
    model, rows, _ = train(v, k, dest)
    broke = _learned_then_broke(rows, "lr raised every epoch")
    require(broke > 150, f"it broke too early, at step {broke + 1}")
    write(dest, v, k, rows, model)


# rates tried in turn (first_that_shows): plain SGD at 0.5 broke at the 32-token doubling, its gradient
# norm barely 2x its start, a curriculum-transition LR jump rather than a gradient growing step over step
GRU_LR = {"sgd": (0.12, 0.15, 0.1, 0.2), "momentum": (0.1, 0.08, 0.12)}


class RecurrentLM(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.rnn = nn.GRU(width, width, batch_first=True)
        self.head = nn.Linear(width, VOCAB)

    def forward(self, ids):
        return self.head(self.rnn(self.embed(ids))[0])


def _grew_before_it_broke(rows, broke: int, early_steps: int) -> None:
    """Exploding gradients, as TAXONOMY.md has them: the gradient norm grows geometrically, by orders of
    magnitude (a sustained level, not one spike), and it had grown while the loss was still at its best."""
    gn = [r["grad_norm"] for r in rows]
    bad = nonfinite_at(rows)
    gn = gn[:bad] if bad is not None else gn
    require(len(gn) >= max(early_steps, 10) and broke > 0, f"too few finite gradient norms ({len(gn)}) to judge")
    early = statistics.median(gn[:early_steps])
    before = statistics.median(gn[max(0, broke - 50):broke])
    require(before >= 3.0 * early, f"the gradient norm had not grown before the loss broke at step {broke + 1}: "
                                   f"{early:.3g} -> {before:.3g}")
    peak = max(statistics.median(gn[i:i + 10]) for i in range(len(gn) - 9))
    require(peak >= 100.0 * early, f"the gradient norm did not grow by orders of magnitude: {early:.3g} -> {peak:.3g}")


def gru_lm_doubling_windows(dest: Path, v: Variant) -> None:
    """A GRU LM whose curriculum doubles the window every sixth of the run (4 -> 128 tokens); its
    loss is summed over the tokens and averaged over the batch."""
    stage = max(1, v.steps // 6)

    def attempt(base: float):
        training.seed_all(v.seed)
        stream = _motif_stream(8000, v.seed)
        model = RecurrentLM(v.width)
        opt = optimizer(v.opt, model.parameters(), base)
        g = torch.Generator().manual_seed(v.seed + 7)
        rows = []
        for step in range(1, v.steps + 1):
            seq = 4 * 2 ** min(5, (step - 1) // stage)
            starts = torch.randint(0, len(stream) - seq - 1, (v.batch,), generator=g)
            w = torch.stack([stream[s: s + seq + 1] for s in starts.tolist()])
            summed = nn.functional.cross_entropy(model(w[:, :-1]).reshape(-1, VOCAB), w[:, 1:].reshape(-1),
                                                 reduction="sum")
            opt.zero_grad()
            (summed / v.batch).backward()
            gn = float(nn.utils.clip_grad_norm_(model.parameters(), float("inf")))
            opt.step()
            rows.append({"step": step, "loss": summed.item() / (v.batch * seq), "lr": base, "grad_norm": gn,
                         "seq_len": seq})
        broke = _learned_then_broke(rows, "doubling windows")
        require(broke > 100, f"it broke too early, at step {broke + 1}")
        _grew_before_it_broke(rows, broke, max(1, stage // 2))
        return base, rows, model

    base, rows, model = first_that_shows(GRU_LR[v.opt], attempt)
    k = Knobs(lr=base, extra_config={"curriculum": {"seq_len": {"start": 4, "double_every": stage}},
                                     "loss": {"reduction": "sum", "divide_by": "batch_size"}})
    write(dest, v.with_(arch="lm"), k, rows, model, code=(RecurrentLM, gru_lm_doubling_windows))


def fp16_sensors_drifting(dest: Path, v: Variant) -> None:
    """A two-layer regression in half precision (layers and gradients) with a real GradScaler; half
    of its input sensors report raw counts whose scale grows 2.5% a step."""
    training.seed_all(v.seed)
    g = torch.Generator().manual_seed(v.seed)
    x = torch.randn(2048, 16, generator=g)
    y = (x @ torch.randn(16, 1, generator=g) * 0.5).tanh()
    gain = torch.ones(16)
    model = training.mlp(16, v.width, 1, 2)
    _half(model)
    base = BASE_LR[v.opt]
    opt = optimizer(v.opt, model.parameters(), base)
    scaler = torch.amp.GradScaler("cpu", growth_interval=100)
    rows = []
    for step in range(1, v.steps + 1):
        gain[8:] = 1.025 ** step
        idx = torch.randint(0, len(x), (v.batch,), generator=g)
        loss = nn.functional.mse_loss(model(x[idx] * gain), y[idx])
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
    k = Knobs(extra_config={"precision": "fp16", "amp": {"init_scale": 65536, "growth_interval": 100},
                            "inputs": {"normalize": False, "raw_counts": list(range(8, 16))}})
    write(dest, v.with_(arch="regression", depth=2), k, rows, model, code=(_half, fp16_sensors_drifting))


FAMILIES = [
    Family("lr_raised_every_epoch", lr_raised_every_epoch, "lr_too_high", "measuring", (
        V("mlp", "sgd", fmt="csv", steps=600, seed=703), V("regression", "adamw", fmt="tb", steps=600, seed=704))),
    Family("seq_doubling", gru_lm_doubling_windows, "exploding_gradients", "measuring", (
        V("lstm", "momentum", fmt="csv", steps=600, seed=713), V("lstm", "sgd", fmt="pipe", steps=600, seed=714))),
    Family("fp16_drifting_sensors", fp16_sensors_drifting, "numerical_instability", "measuring", (
        V("mlp", "adam", fmt="jsonl", steps=800, seed=723), V("mlp", "rmsprop", fmt="tb", steps=800, seed=724))),
]
