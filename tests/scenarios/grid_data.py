"""Families whose trouble lies in the data or in what the model makes of it: memorisation, labels
that carry nothing, rare bad batches, a generator that covers a few modes, a parameter budget spent
on the vocabulary. Each runs on grid.py's trainer (or the suite's GAN and LM loops) and checks
that its trouble shows."""
from __future__ import annotations

from pathlib import Path

import torch

from tests.scenarios import training
from tests.scenarios.grid import (Family, Knobs, Variant, dataset, losses, mean, require, train, write)

V = Variant


# --- overfitting --------------------------------------------------------------------------------------

def _memorises(rows) -> None:
    val = [(r["step"], r["val_loss"]) for r in rows if "val_loss" in r]
    best = min(v for _, v in val)
    ls = losses(rows)
    require(mean(ls[-10:]) < 0.5 * mean(ls[:10]), "training loss did not fall")
    require(val[-1][1] > 1.3 * best, f"validation loss did not rise: best {best:.3f}, last {val[-1][1]:.3f}")


def few_noisy_rows(dest: Path, v: Variant) -> None:
    """96 training rows, a fifth of their labels wrong, a wide model, many passes."""
    k = Knobs(samples=96, label_noise=0.2, val_every=10, extra_config={"data": {"train_rows": 96}})
    vv = v.with_(width=128, steps=600, batch=16)
    model, rows, _ = train(vv, k, dest)
    _memorises(rows)
    write(dest, vv, k, rows, model, log_every=5)


# --- labels disconnected from inputs ------------------------------------------------------------------

def label_entropy(v: Variant) -> float:
    """The loss of the best guess that ignores the inputs: the entropy of the targets' frequencies."""
    _, y, _, classes = dataset(v, 1024)
    p = torch.bincount(y.reshape(-1), minlength=classes).float() / y.numel()
    return float(-(p[p > 0] * p[p > 0].log()).sum())


def _near_chance(rows, v: Variant) -> None:
    end, floor = mean(losses(rows)[-30:]), label_entropy(v)
    require(end > 0.95 * floor, f"the loss left the chance level: {end:.3f} vs {floor:.3f}")


def labels_permuted_in_batch(dest: Path, v: Variant) -> None:
    """The collate function sorts the labels of each batch apart from its inputs."""
    k = Knobs(rows=lambda s, xb, yb: (xb, yb[torch.randperm(len(yb), generator=torch.Generator().manual_seed(s))]),
              checkpoints=(v.steps // 4, v.steps))
    model, rows, _ = train(v, k, dest)
    _near_chance(rows, v)
    write(dest, v, k, rows, model)


# --- transient spikes ---------------------------------------------------------------------------------

def _spikes_recover(rows, at: list[int]) -> None:
    ls = losses(rows)
    for s in at:
        before = sorted(ls[s - 12: s - 1])[5]
        require(ls[s - 1] > 3 * before, f"no spike at step {s}: {before:.3f} -> {ls[s - 1]:.3f}")
        require(mean(ls[s + 10: s + 15]) < 1.5 * before + 0.05, f"no recovery after step {s}")


def rows_from_another_source(dest: Path, v: Variant) -> None:
    """At three steps a batch from a source in other units (x 25) arrives; clipping at 1.0."""
    at = [int(v.steps * f) for f in (0.4, 0.6, 0.8)]
    g = torch.Generator().manual_seed(v.seed)
    k = Knobs(clip=1.0, rows=lambda s, xb, yb: ((torch.randn(xb.shape, generator=g) * 25.0) if s in at else xb, yb))
    vv = v.with_(steps=300)
    model, rows, _ = train(vv, k, dest)
    _spikes_recover(rows, at)
    write(dest, vv, k, rows, model)


# --- a generator that covers a few modes --------------------------------------------------------------


# --- a parameter budget spent on the vocabulary -------------------------------------------------------

def wide_vocabulary_lm(dest: Path, v: Variant) -> None:
    """A small LM whose embedding and output layers hold most of the parameters."""
    cfg = {"seed": v.seed, "vocab": 2000 + 500 * (v.seed % 5), "used_vocab": 1200, "d_model": v.width, "ffn": v.width,
           "tokens": 16000, "sep_share": 0.2, "sep_id": 3, "seq": 32, "batch_size": 16, "epochs": 2, "lr": 2e-3}
    rows = []
    model = training.train_lm(cfg, lambda step, epoch, loss: rows.append({"step": step, "loss": loss, "lr": cfg["lr"]}),
                              lambda step, epoch, val_loss: rows[-1].update(val_loss=val_loss))
    total = sum(p.numel() for p in model.parameters())
    vocab = model.tok_embeddings.weight.numel() + model.lm_head.weight.numel()
    require(vocab / total > 0.75, f"the vocabulary holds only {vocab / total:.2f} of the parameters")
    k = Knobs(lr=cfg["lr"], extra_config={"vocab_size": cfg["vocab"], "d_model": cfg["d_model"],
                                          "ffn_dim": cfg["ffn"], "num_layers": 1})
    write(dest, v.with_(arch="lm", opt="adamw", steps=len(rows), batch=cfg["batch_size"]), k, rows, model, log_every=5)


FAMILIES = [
    Family("few_noisy_rows", few_noisy_rows, "overfitting", "tuning", (
        V("mlp", "adam", fmt="csv", seed=201), V("cnn", "adamw", fmt="tb", seed=202),
        V("mlp", "rmsprop", fmt="hf", seed=203), V("lstm", "adam", fmt="kv", seed=204))),
    Family("labels_permuted", labels_permuted_in_batch, "data_pipeline_bug", "tuning", (
        V("mlp", "adam", fmt="jsonl", seed=211), V("cnn", "momentum", fmt="kv", seed=212),
        V("lm", "adamw", fmt="hf", seed=213), V("lstm", "rmsprop", fmt="tb", seed=214))),
    Family("other_source_rows", rows_from_another_source, "loss_spikes", "tuning", (
        V("mlp", "adam", fmt="tb", seed=221), V("cnn", "adamw", fmt="hf", seed=222),
        V("regression", "adam", fmt="colon", seed=223), V("mlp", "momentum", fmt="jsonl", seed=224))),
    Family("wide_vocab", wide_vocabulary_lm, "architecture_imbalance", "tuning", (
        V("lm", "adamw", fmt="jsonl", width=24, seed=241), V("lm", "adamw", fmt="kv", width=16, seed=242),
        V("lm", "adamw", fmt="tb", width=24, seed=243), V("lm", "adamw", fmt="csv", width=32, seed=244))),
]
