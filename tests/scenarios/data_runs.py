"""Scenarios whose trouble lies in the data or in what the model learns from it: labels that
carry nothing, memorisation, rare bad batches, outputs that all look alike, a parameter budget
spent on the vocabulary. Each trains for real and writes what the real tools write."""
from __future__ import annotations

import json
from pathlib import Path

import torch
import yaml
from safetensors.torch import save_file
from torch import nn

from tests.scenarios import training
from tests.scenarios.runs import _save_code, _weights
from tests.scenarios.sinks import Csv, Jsonl, LightningCsv, TextLog, TrainerState


def load_pairs(cfg: dict):
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    g = torch.Generator().manual_seed(cfg["seed"] + 100)
    y = y[torch.randperm(len(y), generator=g)]
    return x, y


def mlp_permuted_pairs(dest: Path) -> None:
    """MLP; the loader pairs each input with another row's class; plain-text log, pipe style."""
    cfg = {"seed": 40, "samples": 4096, "dim": 16, "classes": 4, "hidden": 32, "batch_size": 64, "epochs": 3, "lr": 1e-3}
    (dest / "config.yaml").write_text(yaml.safe_dump({"data": {"num_classes": 4, "samples": 4096},
                                                      "model": {"hidden": 32}, "lr": 1e-3, "batch_size": 64}, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = load_pairs(cfg)
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    log = TextLog(dest / "train.log", style="pipe")
    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                 lambda step, epoch, loss, lr, grad_norm, **_: log.log(epoch=epoch, step=step, loss=round(loss, 4),
                                                                       lr=lr, grad_norm=round(grad_norm, 4)))
    log.close()
    save_file(_weights(model), dest / "model.safetensors")
    _save_code(dest, load_pairs)


def lstm_batch_targets(dest: Path) -> None:
    """LSTM; each batch's targets are drawn from the whole label column; CSV metrics."""
    cfg = {"seed": 41, "samples": 1536, "length": 12, "vocab": 40, "classes": 5, "d": 32, "batch_size": 32,
           "epochs": 3, "lr": 3e-3}
    (dest / "config.json").write_text(json.dumps({"num_labels": 5, "learning_rate": 3e-3, "hidden_size": 32}, indent=2))
    training.seed_all(cfg["seed"])
    x, y = training.sequences(cfg["samples"], cfg["length"], cfg["vocab"], cfg["classes"], cfg["seed"])
    g = torch.Generator().manual_seed(7)

    def data():
        for epoch, xb, _ in training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]):
            yield epoch, xb, y[torch.randint(0, len(y), (len(xb),), generator=g)]

    model = training.SeqClassifier(cfg["vocab"], cfg["d"], cfg["classes"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    out = Csv(dest / "metrics.csv")
    training.fit(model, opt, data(), lambda step, epoch, loss, lr, grad_norm, **_: out.log(
        step=step, epoch=epoch, loss=f"{loss:.5f}", lr=lr, grad_norm=f"{grad_norm:.5f}"))
    out.close()
    _save_code(dest, training.SeqClassifier)


def mlp_small_train_set(dest: Path) -> None:
    """A wide MLP on 48 training rows with label noise, evaluated on 512 held-out rows; JSON Lines."""
    cfg = {"seed": 42, "train": 48, "val": 512, "dim": 32, "classes": 4, "hidden": 256, "batch_size": 16,
           "epochs": 60, "lr": 2e-3}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["train"] + cfg["val"], cfg["dim"], cfg["classes"], cfg["seed"], scale=0.5)
    x = x + 1.0 * torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    xt, yt, xv, yv = x[:cfg["train"]], y[:cfg["train"]].clone(), x[cfg["train"]:], y[cfg["train"]:]
    yt[::4] = (yt[::4] + 1) % cfg["classes"]      # annotator disagreement in the small set
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"], depth=2)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    out = Jsonl(dest / "history.jsonl")

    def on_step(step, epoch, loss, lr, grad_norm, **_):
        out.log(step=step, epoch=epoch, train_loss=round(loss, 5), lr=lr)
        if step % 15 == 0:
            with torch.no_grad():
                val = nn.functional.cross_entropy(model(xv), yv).item()
            out.log(step=step, epoch=epoch, val_loss=round(val, 5))

    training.fit(model, opt, training.batches(xt, yt, cfg["batch_size"], cfg["epochs"], cfg["seed"]), on_step)
    out.close()
    _save_code(dest, training.mlp)


def cnn_few_images(dest: Path) -> None:
    """CNN on 64 training images with noisy pixels, validated each epoch; Lightning CSV."""
    cfg = {"seed": 43, "train": 64, "val": 400, "classes": 5, "batch_size": 16, "epochs": 40, "lr": 3e-3}
    lg = LightningCsv(dest)
    (lg.version / "hparams.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["train"] + cfg["val"], 64, cfg["classes"], cfg["seed"], scale=0.5)
    x = (x + 1.5 * torch.randn(x.shape, generator=torch.Generator().manual_seed(2))).view(-1, 1, 8, 8)
    xt, yt, xv, yv = x[:cfg["train"]], y[:cfg["train"]].clone(), x[cfg["train"]:], y[cfg["train"]:]
    yt[::3] = (yt[::3] + 2) % cfg["classes"]      # annotator disagreement in the small set
    model = training.SmallCNN(cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    per_epoch = cfg["train"] // cfg["batch_size"]

    def on_step(step, epoch, loss, **_):
        lg.log(epoch=epoch, step=step - 1, train_loss_step=loss)
        if step % per_epoch == 0:
            with torch.no_grad():
                lg.log(epoch=epoch, step=step - 1, val_loss=nn.functional.cross_entropy(model(xv), yv).item())

    training.fit(model, opt, training.batches(xt, yt, cfg["batch_size"], cfg["epochs"], cfg["seed"]), on_step)
    lg.close()
    _save_code(dest, training.SmallCNN)


def mlp_mixed_sources(dest: Path) -> None:
    """MLP with clipping; a few batches come from a source whose rows are unreadable; CSV metrics."""
    cfg = {"seed": 44, "samples": 2048, "dim": 16, "classes": 4, "hidden": 64, "batch_size": 32, "epochs": 5,
           "lr": 1e-3, "other_unit": 20.0, "other_steps": [70, 150, 240]}
    (dest / "config.yaml").write_text(yaml.safe_dump({k: v for k, v in cfg.items() if not k.startswith("other")},
                                                     sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"], scale=0.35)
    g = torch.Generator().manual_seed(5)

    def data():
        for n, (epoch, xb, yb) in enumerate(training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]), 1):
            yield epoch, (torch.randn(xb.shape, generator=g) * cfg["other_unit"] if n in cfg["other_steps"] else xb), yb

    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    out = Csv(dest / "train_log.csv")
    training.fit(model, opt, data(), lambda step, epoch, loss, lr, grad_norm, **_: out.log(
        step=step, epoch=epoch, train_loss=f"{loss:.5f}", grad_norm=f"{grad_norm:.4f}", lr=lr), clip=1.0)
    out.close()
    _save_code(dest, training.mlp, training.fit)


def lm_rare_batches(dest: Path) -> None:
    """Tiny LM; three batches come from an unrelated byte stream; nanoGPT-style log."""
    cfg = dict(training_lm_cfg(), seed=45, epochs=3)
    g = torch.Generator().manual_seed(9)
    data = counting_corpus(cfg)
    model = training.TinyLM(cfg["vocab"], cfg["d_model"], cfg["ffn"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    log = TextLog(dest / "train.log", style="nanogpt")
    n = cfg["seq"] * cfg["batch_size"]
    odd = {60, 130, 200}

    def batches():
        step = 0
        for epoch in range(cfg["epochs"]):
            for i in range(0, len(data) - n - 1, n):
                step += 1
                chunk = data[i:i + n + 1]
                if step in odd:
                    chunk = torch.randint(cfg["vocab"] - 40, cfg["vocab"], (n + 1,), generator=g)
                yield epoch, chunk[:-1].view(cfg["batch_size"], -1), chunk[1:].view(cfg["batch_size"], -1)

    def lm_loss(logits, target):
        return nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab"]), target.reshape(-1))

    training.seed_all(cfg["seed"])
    training.fit(model, opt, batches(), lambda step, loss, **_: log.log(step=step, loss=round(loss, 4),
                                                                       time=f"{31.5 + step % 7 * 0.3:.2f}ms"),
                 loss_fn=lm_loss, clip=1.0)
    log.close()


def counting_corpus(cfg: dict) -> torch.Tensor:
    """Runs of consecutive token ids with an occasional random jump: learnable by a tiny model."""
    g = torch.Generator().manual_seed(cfg["seed"])
    jumps = torch.rand(cfg["tokens"], generator=g) < 0.08
    ids = torch.zeros(cfg["tokens"], dtype=torch.long)
    for i in range(1, cfg["tokens"]):
        ids[i] = torch.randint(0, cfg["vocab"] - 40, (1,), generator=g) if jumps[i] else (ids[i - 1] + 1) % (cfg["vocab"] - 40)
    return ids


def training_lm_cfg() -> dict:
    return {"seed": 2, "vocab": 96, "d_model": 48, "ffn": 128, "tokens": 24000, "sep_share": 0.1, "sep_id": 26,
            "seq": 32, "batch_size": 8, "epochs": 2, "lr": 3e-3}


GAN_COLLAPSE_SEEDS = (46, 44, 45, 47, 48, 49)


def gan_ring(seed: int):
    """GAN on an eight-mode ring; generator updated five times per critic step, so it collapses onto
    one mode, a segment or a few modes, depending on the seed; samples as CSV."""
    def write(dest: Path) -> None:
        write_gan(dest, {"seed": seed, "samples": 4096, "modes": 8, "z": 8, "hidden": 64, "batch_size": 128,
                         "steps": 400, "lr_g": 5e-3, "lr_d": 1e-4, "g_steps": 5, "n_samples": 64}, modes_hit=(0, 4))
    write.__name__ = f"gan_ring_{seed}"
    return write


def write_gan(dest: Path, cfg: dict, modes_hit: tuple[int, int]) -> None:
    """Trains the ring GAN of `cfg` and writes its config, losses (JSONL), generated and real samples
    (CSV) and generator. Fails unless the generator's samples land on `modes_hit` (lo, hi) of the
    ring's modes, so a scenario never depends on one machine's arithmetic to show its fault."""
    (dest / "gan.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = Jsonl(dest / "losses.jsonl")
    gen, samples, real = training.train_gan(cfg, lambda step, d_loss, g_loss, grad_norm: out.log(
        step=step, d_loss=round(d_loss, 5), g_loss=round(g_loss, 5), g_grad_norm=round(grad_norm, 5)))
    out.close()
    hit = training.ring_modes_hit(samples, cfg["modes"])
    if not modes_hit[0] <= hit <= modes_hit[1]:
        raise RuntimeError(f"GAN seed {cfg['seed']}: samples on {hit} of {cfg['modes']} modes, wanted {modes_hit}")
    for name, column, rows in (("generated.csv", "generated", samples), ("real_samples.csv", "real", real[:256])):
        table = Csv(dest / name)
        for i, (a, b) in enumerate(rows.tolist()):
            table.log(sample_id=i, **{column: f"{a:.3f} {b:.3f}"})
        table.close()
    save_file(_weights(gen), dest / "generator.safetensors")


def skewed_classifier(dest: Path) -> None:
    """Classifier trained on a set where one class is 97% of rows; predictions on a balanced set."""
    cfg = {"seed": 47, "samples": 2048, "dim": 16, "classes": 4, "hidden": 32, "batch_size": 64, "epochs": 2, "lr": 1e-3}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"] * 2, cfg["dim"], cfg["classes"], cfg["seed"], scale=0.3)
    keep = (y == 0) | (torch.rand(len(y), generator=torch.Generator().manual_seed(3)) < 0.01)
    xt, yt = x[keep][: cfg["samples"]], y[keep][: cfg["samples"]]
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    out = Jsonl(dest / "train.jsonl")
    training.fit(model, opt, training.batches(xt, yt, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                 lambda step, epoch, loss, **_: out.log(step=step, epoch=epoch, loss=round(loss, 5)))
    out.close()
    xe, ye = training.blobs(400, cfg["dim"], cfg["classes"], cfg["seed"] + 1, scale=0.3)
    with torch.no_grad():
        pred = model(xe).argmax(1)
    rows = Csv(dest / "predictions.csv")
    for i in range(len(ye)):
        rows.log(id=i, label=int(ye[i]), prediction=int(pred[i]))
    rows.close()


def hf_wide_vocab_lm(dest: Path) -> None:
    """A small LM with a 4000-token vocabulary (its corpus uses 1500) and 24-wide blocks; HF Trainer
    layout with two checkpoints."""
    cfg = {"seed": 48, "vocab": 4000, "used_vocab": 1500, "d_model": 24, "ffn": 24, "tokens": 30000, "sep_share": 0.2,
           "sep_id": 3, "seq": 32, "batch_size": 16, "epochs": 2, "lr": 2e-3}
    (dest / "config.json").write_text(json.dumps({"vocab_size": cfg["vocab"], "hidden_size": cfg["d_model"],
                                                  "intermediate_size": cfg["ffn"], "num_hidden_layers": 1,
                                                  "tie_word_embeddings": False}, indent=2))
    state = TrainerState(dest, cfg["batch_size"], logging_steps=5)

    def on_step(step, epoch, loss):
        if step % 5 == 0:
            state.log(epoch=round(epoch + 0.01 * step, 4), learning_rate=cfg["lr"], loss=round(loss, 4), step=step)

    def on_eval(step, epoch, val_loss):
        state.log(epoch=float(epoch + 1), eval_loss=round(val_loss, 4), eval_runtime=1.5, step=step)

    snapshots = {40: None}
    model = training.train_lm(cfg, on_step, on_eval, snapshots)
    ck = state.close(cfg["epochs"])
    save_file(_weights(model), ck / "model.safetensors")
    early = dest / "checkpoint-40"
    early.mkdir()
    save_file(snapshots[40], early / "model.safetensors")
