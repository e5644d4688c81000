"""Scenarios whose trouble lies in the optimisation: step sizes, gradient flow, updates that never
land, units that stop responding. Each trains for real and writes what the real tools write."""
from __future__ import annotations

import json
from pathlib import Path

import torch
import yaml
from safetensors.torch import save_file
from torch import nn

from tests.scenarios import training
from tests.scenarios.runs import _save_code, _weights
from tests.scenarios.sinks import Csv, Jsonl, LightningCsv, TensorBoard, TextLog


def cnn_plain_sgd(dest: Path) -> None:
    """CNN, plain SGD at a fixed rate from the first step; TensorBoard."""
    cfg = {"seed": 21, "samples": 1600, "classes": 5, "batch_size": 32, "epochs": 4, "lr": 0.2, "momentum": 0.9}
    (dest / "hparams.yaml").write_text(yaml.safe_dump({"optimizer": "sgd", **cfg}, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], 64, cfg["classes"], cfg["seed"])
    model = training.SmallCNN(cfg["classes"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"])
    tb = TensorBoard(dest / "runs")
    training.fit(model, opt, training.batches(x.view(-1, 1, 8, 8), y, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                 lambda step, loss, lr, grad_norm, **_: tb.log(step, loss=loss, lr=lr, grad_norm=grad_norm))
    tb.close()
    _save_code(dest, training.SmallCNN, training.fit)


def adamw_probe(dest: Path) -> None:
    """MLP with AdamW at 1e-7; JSON Lines metrics and two safetensors checkpoints."""
    cfg = {"seed": 22, "samples": 1024, "dim": 20, "classes": 6, "hidden": 64, "batch_size": 32, "epochs": 8, "lr": 1e-7}
    (dest / "config.yaml").write_text(yaml.safe_dump({"model": {"hidden": 64, "num_classes": 6},
                                                      "optim": {"name": "adamw", "lr": cfg["lr"], "weight_decay": 0.0},
                                                      "batch_size": 32, "epochs": 8}, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.0)
    out = Jsonl(dest / "metrics.jsonl")
    ckpts = dest / "checkpoints"
    ckpts.mkdir()

    def on_step(step, epoch, loss, lr, grad_norm, **_):
        out.log(step=step, epoch=epoch, loss=round(loss, 5), lr=lr, grad_norm=round(grad_norm, 5))
        if step in (64, 256):
            save_file(_weights(model), ckpts / f"step_{step}.safetensors")

    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]), on_step)
    out.close()
    _save_code(dest, training.mlp, training.fit)


def lstm_sgd(dest: Path) -> None:
    """LSTM sequence classifier with plain SGD at 1e-4; CSV metrics, torch checkpoints."""
    cfg = {"seed": 23, "samples": 768, "length": 12, "vocab": 50, "classes": 3, "d": 32, "batch_size": 32,
           "epochs": 6, "lr": 1e-4}
    (dest / "config.json").write_text(json.dumps({"optimizer": "SGD", "learning_rate": cfg["lr"], "momentum": 0.0,
                                                  "hidden_size": cfg["d"], "num_classes": cfg["classes"]}, indent=2))
    training.seed_all(cfg["seed"])
    x, y = training.sequences(cfg["samples"], cfg["length"], cfg["vocab"], cfg["classes"], cfg["seed"])
    model = training.SeqClassifier(cfg["vocab"], cfg["d"], cfg["classes"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    out = Csv(dest / "metrics.csv")

    def on_step(step, epoch, loss, lr, grad_norm, **_):
        out.log(step=step, epoch=epoch, train_loss=f"{loss:.5f}", learning_rate=lr, grad_norm=f"{grad_norm:.5f}")
        if step in (24, 144):
            torch.save({"model_state_dict": model.state_dict(), "step": step}, dest / f"ckpt_{step}.pt")

    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]), on_step)
    out.close()
    _save_code(dest, training.SeqClassifier, training.fit)


class ElmanNet(nn.Module):
    def __init__(self, vocab: int, d: int, classes: int, gain: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.RNN(d, d, batch_first=True, nonlinearity="relu")
        self.head = nn.Linear(d, classes)
        with torch.no_grad():
            nn.init.orthogonal_(self.rnn.weight_hh_l0, gain=gain)

    def forward(self, ids):
        out, _ = self.rnn(self.embed(ids))
        return self.head(out[:, -1])


def elman_rnn(dest: Path) -> None:
    """ReLU RNN regressing the sum of the first 20 token ids (raw, about 300) over long sequences;
    JSON Lines."""
    cfg = {"seed": 24, "samples": 640, "length": 40, "vocab": 30, "d": 32, "batch_size": 32, "epochs": 4,
           "lr": 8e-6, "gain": 1.0}
    (dest / "config.yaml").write_text(yaml.safe_dump({"model": {"type": "rnn", "nonlinearity": "relu", "hidden": 32},
                                                      "train": {"lr": cfg["lr"], "optimizer": "sgd", "momentum": 0.9,
                                                                "batch_size": 32, "seq_len": cfg["length"],
                                                                "loss": "mse"}}, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, _ = training.sequences(cfg["samples"], cfg["length"], cfg["vocab"], 2, cfg["seed"])
    y = x[:, :20].float().sum(1, keepdim=True)
    model = ElmanNet(cfg["vocab"], cfg["d"], 1, cfg["gain"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    out = Jsonl(dest / "train_metrics.jsonl")
    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                 lambda step, epoch, loss, lr, grad_norm, **_: out.log(global_step=step, train_loss=loss, lr=lr, grad_norm=grad_norm),
                 loss_fn=nn.functional.mse_loss)
    out.close()
    _save_code(dest, ElmanNet, training.fit)


def train_sgd_loop(cfg: dict, on_step) -> nn.Module:
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    step = 0
    for epoch, xb, yb in training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]):
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        gn = training.grad_norm(model)
        optimizer.step()
        step += 1
        on_step(step=step, epoch=epoch, loss=loss.item(), lr=cfg["lr"], grad_norm=gn)
    return model


def mlp_sgd_loop(dest: Path) -> None:
    """MLP whose loop never clears gradients between steps; plain-text log."""
    cfg = {"seed": 25, "samples": 1280, "dim": 16, "classes": 4, "hidden": 64, "batch_size": 32, "epochs": 6, "lr": 0.01}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    log = TextLog(dest / "train.log", style="kv")
    log.line("starting training: 6 epochs of 40 steps")
    train_sgd_loop(cfg, lambda step, epoch, loss, lr, grad_norm: log.log(epoch=epoch, step=step, loss=loss, lr=lr,
                                                                              grad_norm=grad_norm))
    log.close()
    _save_code(dest, train_sgd_loop)


def deep_sigmoid_mlp(dest: Path) -> None:
    """Twelve sigmoid layers, no normalisation; per-layer gradient norms to TensorBoard."""
    cfg = {"seed": 26, "samples": 1024, "dim": 16, "classes": 4, "hidden": 32, "depth": 12, "batch_size": 32,
           "epochs": 5, "lr": 0.05}
    (dest / "hparams.yaml").write_text(yaml.safe_dump({**cfg, "activation": "sigmoid", "optimizer": "sgd"}, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"], depth=cfg["depth"], act=nn.Sigmoid)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    tb = TensorBoard(dest / "tb")

    def on_step(step, loss, lr, grad_norm, layers, **_):
        tb.log(step, loss=loss, lr=lr, grad_norm=grad_norm)
        tb.log(step, **{f"grad_norm/{name}": v for name, v in layers.items()})

    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]), on_step, per_layer=True)
    tb.close()
    save_file(_weights(model), dest / "model.safetensors")
    _save_code(dest, training.mlp, training.fit)


def deep_sigmoid_adam(dest: Path) -> None:
    """Twelve sigmoid layers trained with Adam; JSON Lines loss and a torch checkpoint holding the
    optimizer state."""
    cfg = {"seed": 32, "samples": 1024, "dim": 16, "classes": 4, "hidden": 32, "depth": 12, "batch_size": 32,
           "epochs": 5, "lr": 1e-3}
    (dest / "config.json").write_text(json.dumps({**cfg, "activation": "sigmoid", "optimizer": "adam"}, indent=2))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"], depth=cfg["depth"], act=nn.Sigmoid)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    out = Jsonl(dest / "log.jsonl")
    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                 lambda step, epoch, loss, **_: out.log(step=step, epoch=epoch, loss=round(loss, 5)))
    out.close()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": len(out.rows)},
               dest / f"step{len(out.rows)}.pt")


class TanhTower(nn.Module):
    """Convolutions with tanh after each, then a linear head."""

    def __init__(self, depth: int, channels: int, classes: int) -> None:
        super().__init__()
        convs = [nn.Conv2d(1, channels, 3, padding=1)] + [nn.Conv2d(channels, channels, 3, padding=1) for _ in range(depth - 1)]
        self.convs = nn.ModuleList(convs)
        for c in self.convs:
            nn.init.normal_(c.weight, std=0.05)
        self.head = nn.Linear(channels * 64, classes)

    def forward(self, x):
        for c in self.convs:
            x = torch.tanh(c(x))
        return self.head(x.flatten(1))


def deep_tanh_cnn(dest: Path) -> None:
    """Ten tanh convolutions with small initial weights; per-layer norms in a Lightning CSV."""
    cfg = {"seed": 27, "samples": 768, "classes": 4, "depth": 10, "channels": 8, "batch_size": 32, "epochs": 3, "lr": 0.02}
    lg = LightningCsv(dest)
    (lg.version / "hparams.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], 64, cfg["classes"], cfg["seed"])
    model = TanhTower(cfg["depth"], cfg["channels"], cfg["classes"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])

    def on_step(step, epoch, loss, lr, grad_norm, layers, **_):
        lg.log(epoch=epoch, step=step - 1, train_loss=loss, **{f"grad_2.0_norm/{k}": v for k, v in layers.items()})

    training.fit(model, opt, training.batches(x.view(-1, 1, 8, 8), y, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                 on_step, per_layer=True)
    lg.close()
    _save_code(dest, TanhTower)


def train_probe(cfg: dict, on_step) -> nn.Module:
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg["steps"])
    step = 0
    for epoch, xb, yb in training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        gn = training.grad_norm(model)
        scheduler.step()
        step += 1
        on_step(step=step, epoch=epoch, loss=loss.item(), lr=scheduler.get_last_lr()[0], grad_norm=gn)
        if step in (50, 200):
            on_step(step=step, save=True, model=model)
    return model


def mlp_probe_loop(dest: Path) -> None:
    """An MLP loop with a scheduler; plain-text log and two safetensors checkpoints."""
    cfg = {"seed": 28, "samples": 1024, "dim": 16, "classes": 5, "hidden": 64, "batch_size": 16, "epochs": 4,
           "lr": 1e-3, "steps": 256}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    log = TextLog(dest / "train.log", style="pipe")

    def on_step(step, save=False, model=None, **m):
        if save:
            save_file(_weights(model), dest / f"ckpt-{step:06d}.safetensors")
            log.line(f"saved ckpt-{step:06d}.safetensors")
            return
        log.log(step=step, loss=round(m["loss"], 4), lr=m["lr"], grad_norm=round(m["grad_norm"], 4))

    train_probe(cfg, on_step)
    log.close()
    _save_code(dest, train_probe)


def lstm_ratio_schedule(dest: Path) -> None:
    """LSTM with a warm-up schedule written as an integer ratio; HF-style stdout lines."""
    cfg = {"seed": 29, "samples": 640, "length": 10, "vocab": 40, "classes": 4, "d": 32, "batch_size": 16,
           "epochs": 3, "lr": 1e-3, "warmup_steps": 500}
    (dest / "args.json").write_text(json.dumps({"learning_rate": cfg["lr"], "warmup_steps": cfg["warmup_steps"],
                                                "per_device_train_batch_size": 16, "num_train_epochs": 3}, indent=2))
    training.seed_all(cfg["seed"])
    x, y = training.sequences(cfg["samples"], cfg["length"], cfg["vocab"], cfg["classes"], cfg["seed"])
    model = training.SeqClassifier(cfg["vocab"], cfg["d"], cfg["classes"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    warmup = cfg["warmup_steps"]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1, s // warmup))
    lines = ["***** Running training *****", f"  Num examples = {cfg['samples']}", "  Num Epochs = 3"]

    def on_step(step, epoch, loss, lr, grad_norm, **_):
        if step % 4 == 0:
            lines.append(repr({"loss": round(loss, 4), "grad_norm": round(grad_norm, 4), "learning_rate": lr,
                               "epoch": round(epoch + (step % 40) / 40, 2)}))

    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]), on_step, sched=sched)
    (dest / "stdout.log").write_text("\n".join(lines) + "\n")


class BiasedMLP(nn.Module):
    def __init__(self, dim: int, hidden: int, classes: int, bias0: float) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, classes)
        nn.init.constant_(self.fc1.bias, bias0)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def biased_relu_mlp(dest: Path) -> None:
    """ReLU MLP on standardised features, first-layer bias initialised to a constant; CSV + safetensors."""
    cfg = {"seed": 30, "samples": 1024, "dim": 24, "classes": 4, "hidden": 64, "batch_size": 32, "epochs": 6,
           "lr": 0.05, "bias0": -4.0}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    x = (x - x.mean(0)) / x.std(0)
    model = BiasedMLP(cfg["dim"], cfg["hidden"], cfg["classes"], cfg["bias0"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    out = Csv(dest / "log.csv")
    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                 lambda step, epoch, loss, lr, grad_norm, **_: out.log(step=step, epoch=epoch, loss=loss, grad_norm=grad_norm))
    out.close()
    save_file(_weights(model), dest / "model.safetensors")
    _save_code(dest, BiasedMLP)


def train_with_raw_rows(cfg: dict, on_step) -> nn.Module:
    training.seed_all(cfg["seed"])
    g = torch.Generator().manual_seed(cfg["seed"])
    x = torch.randn(cfg["samples"], cfg["dim"], generator=g)
    y = (x @ torch.randn(cfg["dim"], cfg["classes"], generator=g) + 0.5 * torch.randn(cfg["samples"], cfg["classes"], generator=g)).argmax(1)
    raw = {cfg["raw_step"]}
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"], depth=2)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    step = 0
    for epoch, xb, yb in training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]):
        step += 1
        if step in raw:                      # rows exported before scaling
            xb = xb * cfg["raw_scale"]
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        gn = training.grad_norm(model)
        opt.step()
        on_step(step=step, epoch=epoch, loss=loss.item(), grad_norm=gn)
    return model


def relu_mlp_raw_rows(dest: Path) -> None:
    """Two-hidden-layer ReLU MLP; one batch arrives unscaled; Lightning CSV and checkpoint."""
    cfg = {"seed": 31, "samples": 2048, "dim": 16, "classes": 3, "hidden": 48, "batch_size": 64, "epochs": 8,
           "lr": 0.05, "raw_step": 60, "raw_scale": 300.0}
    lg = LightningCsv(dest)
    (lg.version / "hparams.yaml").write_text(yaml.safe_dump({k: v for k, v in cfg.items() if not k.startswith("raw")},
                                                            sort_keys=False))
    model = train_with_raw_rows(cfg, lambda step, epoch, loss, grad_norm: lg.log(epoch=epoch, step=step - 1,
                                                                                    train_loss_step=loss, grad_norm=grad_norm))
    lg.close()
    ck = lg.version / "checkpoints"
    ck.mkdir()
    n = len(lg.rows)
    torch.save({"epoch": cfg["epochs"] - 1, "global_step": n, "pytorch-lightning_version": "2.4.0",
                "state_dict": {f"model.{k}": v for k, v in _weights(model).items()}, "loops": {}, "callbacks": {},
                "optimizer_states": [], "lr_schedulers": []}, ck / f"epoch={cfg['epochs'] - 1}-step={n}.ckpt")
    _save_code(dest, training.mlp)
