"""The measuring families once in grid_data.py (see tests/scenarios/__init__.py): never read one by one,
never tuned on; bench/accuracy.py measures them."""
from __future__ import annotations

from pathlib import Path

import torch

from tests.scenarios import training
from tests.scenarios.data_runs import write_gan
from tests.scenarios.grid import (BASE_LR, LM_SEQ, Family, Knobs, TinyTransformer, Variant, lm_loss,
                                  optimizer, require, train, write)
from tests.scenarios.grid_data import V, _memorises, _near_chance, _spikes_recover


def small_set_deep_model(dest: Path, v: Variant) -> None:
    """64 rows for a two-layer model; evaluation every 20 steps."""
    k = Knobs(samples=64, label_noise=0.3, val_every=20, extra_config={"data": {"train_rows": 64}})
    vv = v.with_(width=96, depth=2, steps=800, batch=16)
    model, rows, _ = train(vv, k, dest)
    _memorises(rows)
    write(dest, vv, k, rows, model, log_every=10)


CLASSES = {"mlp": 4, "cnn": 4, "lstm": 3, "lm": 24}


class PreviousTargets:
    """Hands each batch the targets of the batch before it (a prefetch off by one)."""

    def __init__(self) -> None:
        self.held = None

    def __call__(self, step, xb, yb):
        out, self.held = (yb if self.held is None else self.held), yb
        return xb, out


def targets_one_batch_late(dest: Path, v: Variant) -> None:
    k = Knobs(rows=PreviousTargets(), checkpoints=(v.steps // 4, v.steps))
    model, rows, _ = train(v, k, dest)
    _near_chance(rows, v)
    write(dest, v, k, rows, model)


def mislabelled_batches(dest: Path, v: Variant) -> None:
    """At three steps a batch's targets come from an unrelated file (random labels, or targets in
    other units for regression)."""
    at = [int(v.steps * f) for f in (0.45, 0.65, 0.85)]
    g = torch.Generator().manual_seed(v.seed)

    def rows(s, xb, yb):
        if s not in at:
            return xb, yb
        if yb.is_floating_point():
            return xb, yb * 12.0 + 6.0
        return xb, (yb + 1 + torch.randint(0, CLASSES[v.arch] - 1, yb.shape, generator=g)) % CLASSES[v.arch]

    k = Knobs(clip=1.0, rows=rows)
    vv = v.with_(steps=320)
    model, rows_, _ = train(vv, k, dest)
    _spikes_recover(rows_, at)
    write(dest, vv, k, rows_, model)


GAN_SHAPES = {231: (8, 8), 232: (6, 8), 233: (10, 8), 234: (8, 4), 235: (6, 4)}    # seed: (ring modes, noise size)


def gan_variant(dest: Path, v: Variant) -> None:
    """The ring GAN with the generator stepped five times per critic step; modes, noise size and
    width vary with the variant."""
    modes, z = GAN_SHAPES[v.seed]
    write_gan(dest, {"seed": v.seed, "samples": 4096, "modes": modes, "z": z, "hidden": v.width, "batch_size": 128,
                     "steps": 400, "lr_g": 5e-3, "lr_d": 1e-4, "g_steps": 5, "n_samples": 64},
              modes_hit=(0, modes // 2))


def transformer_wide_vocab(dest: Path, v: Variant) -> None:
    """grid's small transformer with a vocabulary of thousands and blocks `width` wide, on a corpus
    that uses part of the vocabulary."""
    cfg = {"seed": v.seed, "vocab": 3000 + 400 * (v.seed % 4), "used_vocab": 1000, "tokens": 12000, "sep_share": 0.2,
           "sep_id": 5, "seq": LM_SEQ}
    training.seed_all(v.seed)
    data = training.corpus(cfg)
    model = TinyTransformer(cfg["vocab"], v.width, LM_SEQ)
    lr = BASE_LR[v.opt]
    opt = optimizer(v.opt, model.parameters(), lr)
    n = LM_SEQ * v.batch
    rows = []
    for step in range(1, v.steps + 1):
        i = (step * n) % (len(data) - n - 1)
        chunk = data[i: i + n + 1]
        loss = lm_loss(model(chunk[:-1].view(v.batch, LM_SEQ)), chunk[1:].view(v.batch, LM_SEQ))
        opt.zero_grad()
        loss.backward()
        rows.append({"step": step, "loss": loss.item(), "lr": lr, "grad_norm": training.grad_norm(model)})
        opt.step()
    total = sum(p.numel() for p in model.parameters())
    vocab = model.embed.weight.numel() + model.head.weight.numel()
    require(vocab / total > 0.75, f"the vocabulary holds only {vocab / total:.2f} of the parameters")
    k = Knobs(extra_config={"vocab_size": cfg["vocab"], "d_model": v.width, "ffn_dim": v.width * 2, "num_layers": 1})
    write(dest, v.with_(arch="lm"), k, rows, model, log_every=4)


FAMILIES = [
    Family("small_set_deep", small_set_deep_model, "overfitting", "measuring", (
        V("mlp", "adamw", "cosine", fmt="lightning", seed=205), V("cnn", "adam", fmt="mlflow", seed=206),
        V("mlp", "rmsprop", fmt="jsonl", seed=207), V("mlp", "momentum", fmt="colon", seed=208),
        V("lstm", "adam", fmt="hf", seed=209))),
    Family("targets_late", targets_one_batch_late, "data_pipeline_bug", "measuring", (
        V("mlp", "sgd", "step", fmt="mlflow", seed=215), V("cnn", "adam", fmt="lightning", seed=216),
        V("lstm", "adamw", "cosine", fmt="csv", seed=217), V("mlp", "rmsprop", fmt="pipe", seed=218),
        V("lm", "adam", "warmup", fmt="tb", seed=219))),
    Family("mislabelled_batches", mislabelled_batches, "loss_spikes", "measuring", (
        V("mlp", "adamw", fmt="csv", seed=225), V("regression", "rmsprop", fmt="mlflow", seed=226),
        V("cnn", "adam", "cosine", fmt="kv", seed=227), V("mlp", "momentum", fmt="lightning", seed=228),
        V("regression", "adam", fmt="hf", seed=229))),
    Family("gan_modes", gan_variant, "mode_collapse", "measuring", tuple(
        V("gan", "adam", fmt="jsonl", width=w, seed=seed) for seed, w in zip(GAN_SHAPES, (64, 64, 96, 48, 64)))),
    Family("transformer_vocab", transformer_wide_vocab, "architecture_imbalance", "measuring", (
        V("lm", "adamw", fmt="hf", width=24, seed=245, batch=8),
        V("lm", "adam", fmt="lightning", width=16, seed=246, batch=8),
        V("lm", "adamw", "cosine", fmt="mlflow", width=32, seed=247, batch=8),
        V("lm", "rmsprop", fmt="pipe", width=24, seed=248, batch=8),
        V("lm", "adam", "warmup", fmt="nanogpt", width=20, seed=249, batch=8))),
]
