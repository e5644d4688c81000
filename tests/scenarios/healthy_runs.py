"""Runs with nothing wrong, made to look alarming where real healthy runs do: small noisy
batches, benign warnings, GAN losses that seesaw, a warm-up ramp, no checkpoint or code saved,
and one that is merely slow (its input pipeline starves the model)."""
from __future__ import annotations

import json
import logging
import time
import warnings
from pathlib import Path

import torch
import yaml
from safetensors.torch import save_file
from torch import nn

from tests.scenarios import training
from tests.scenarios.runs import _FixedClock, _save_code, _weights
from tests.scenarios.data_runs import counting_corpus, write_gan
from tests.scenarios.sinks import Csv, TextLog, TrainerState


def mlp_small_batches(dest: Path) -> None:
    """MLP with batches of 4 (a noisy loss), cosine schedule; plain-text log and checkpoints."""
    cfg = {"seed": 60, "samples": 1200, "dim": 16, "classes": 6, "hidden": 64, "batch_size": 4, "epochs": 2,
           "lr": 3e-3}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"], scale=0.45)
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    total = cfg["epochs"] * cfg["samples"] // cfg["batch_size"]
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total)
    log = TextLog(dest / "train.log", style="kv")

    def on_step(step, epoch, loss, lr, grad_norm, **_):
        log.log(epoch=epoch, step=step, loss=loss, lr=lr, grad_norm=grad_norm)
        if step in (total // 2, total):
            save_file(_weights(model), dest / f"step{step}.safetensors")

    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]), on_step, sched=sched)
    log.close()
    _save_code(dest, training.mlp, training.fit)


def lstm_with_warnings(dest: Path) -> None:
    """LSTM classifier whose log carries the warnings real runs print; CSV metrics, no checkpoint
    and no code saved."""
    cfg = {"seed": 61, "samples": 1024, "length": 12, "vocab": 40, "classes": 4, "d": 48, "batch_size": 32,
           "epochs": 6, "lr": 3e-3}
    training.seed_all(cfg["seed"])
    x, y = training.sequences(cfg["samples"], cfg["length"], cfg["vocab"], cfg["classes"], cfg["seed"])
    model = training.SeqClassifier(cfg["vocab"], cfg["d"], cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    out = Csv(dest / "metrics.csv")
    handler = logging.FileHandler(dest / "stdout.log", mode="w")
    handler.setFormatter(_FixedClock("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    wlog = logging.getLogger("py.warnings")
    wlog.handlers[:] = [handler]
    wlog.propagate = False
    logging.captureWarnings(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            torch.utils.data.DataLoader(list(range(8)), num_workers=0, pin_memory=True)
            nn.utils.clip_grad_norm(model.parameters(), 1e9)
            torch.tensor(torch.ones(2))
            training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                         lambda step, epoch, loss, lr, grad_norm, **_: out.log(step=step, epoch=epoch, loss=f"{loss:.5f}",
                                                                               grad_norm=f"{grad_norm:.4f}"))
    finally:
        logging.captureWarnings(False)
        handler.close()
        wlog.handlers[:] = []
    out.close()


def hf_lm_with_warmup(dest: Path) -> None:
    """Small LM on a learnable stream, linear warm-up then constant; HF Trainer layout."""
    cfg = {"seed": 62, "vocab": 96, "d_model": 64, "ffn": 256, "tokens": 20000, "seq": 32, "batch_size": 8,
           "epochs": 2, "lr": 2e-3, "warmup_steps": 30}
    (dest / "config.json").write_text(json.dumps({"vocab_size": cfg["vocab"], "hidden_size": cfg["d_model"],
                                                  "intermediate_size": cfg["ffn"], "num_hidden_layers": 1}, indent=2))
    (dest / "training_args.json").write_text(json.dumps({"learning_rate": cfg["lr"], "warmup_steps": cfg["warmup_steps"],
                                                         "per_device_train_batch_size": cfg["batch_size"],
                                                         "max_grad_norm": 1.0}, indent=2))
    training.seed_all(cfg["seed"])
    data = counting_corpus(cfg)
    model = training.TinyLM(cfg["vocab"], cfg["d_model"], cfg["ffn"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / cfg["warmup_steps"]))
    n = cfg["seq"] * cfg["batch_size"]

    def batches():
        for epoch in range(cfg["epochs"]):
            for i in range(0, len(data) - n - 1, n):
                chunk = data[i:i + n + 1]
                yield epoch, chunk[:-1].view(cfg["batch_size"], -1), chunk[1:].view(cfg["batch_size"], -1)

    state = TrainerState(dest, cfg["batch_size"], logging_steps=2)
    steps_per_epoch = (len(data) - 1) // n

    def on_step(step, epoch, loss, lr, grad_norm, **_):
        if step % 2 == 0:
            state.log(epoch=round(step / steps_per_epoch, 4), grad_norm=round(grad_norm, 4), learning_rate=lr,
                      loss=round(loss, 4), step=step)

    training.fit(model, opt, batches(), on_step, sched=sched, clip=1.0,
                 loss_fn=lambda logits, t: nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab"]), t.reshape(-1)))
    ck = state.close(cfg["epochs"])
    save_file(_weights(model), ck / "model.safetensors")


def gan_ring_balanced(seed: int):
    """GAN on an eight-mode ring with balanced updates and an R1 penalty on the critic; samples as CSV."""
    def write(dest: Path) -> None:
        write_gan(dest, {"seed": seed, "samples": 4096, "modes": 8, "z": 8, "hidden": 64, "batch_size": 128,
                         "steps": 1500, "lr_g": 5e-4, "lr_d": 5e-4, "g_steps": 1, "r1": 5.0, "n_samples": 256},
                  modes_hit=(6, 8))
    write.__name__ = f"gan_ring_balanced_{seed}"
    return write


class DecodedRows(torch.utils.data.Dataset):
    """Rows decoded one at a time, as from compressed records."""

    def __init__(self, x, y, decode_s: float) -> None:
        self.x, self.y, self.decode_s = x, y, decode_s

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        time.sleep(self.decode_s)        # waits at least this long however busy the machine is
        return self.x[i], self.y[i]


def mlp_decoded_rows(dest: Path) -> None:
    """MLP fed by a single-process DataLoader over rows that take a while to decode; the loop
    times the data wait and the whole step; plain-text log."""
    cfg = {"seed": 64, "samples": 1536, "dim": 16, "classes": 4, "hidden": 64, "batch_size": 32, "epochs": 4,
           "lr": 3e-3, "num_workers": 0, "decode_s": 0.001}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"], scale=0.5)
    loader = torch.utils.data.DataLoader(DecodedRows(x, y, cfg["decode_s"]), batch_size=cfg["batch_size"],
                                         shuffle=True, num_workers=cfg["num_workers"],
                                         generator=torch.Generator().manual_seed(cfg["seed"]))
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    log = TextLog(dest / "train.log", style="kv")
    step, threads, waits = 0, torch.get_num_threads(), []
    torch.set_num_threads(1)         # a tiny model's compute must not swell with a busy machine's thread contention
    for epoch in range(cfg["epochs"]):
        t0 = time.perf_counter()
        for xb, yb in loader:
            t1 = time.perf_counter()
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            t2 = time.perf_counter()
            log.log(epoch=epoch, step=step, loss=round(loss.item(), 4), data_time=round((t1 - t0) * 1000, 2),
                    step_time=round((t2 - t0) * 1000, 2))
            waits.append((t1 - t0) / (t2 - t0))
            t0 = time.perf_counter()
    torch.set_num_threads(threads)
    log.close()
    _save_code(dest, DecodedRows)
    if sorted(waits)[len(waits) // 2] < 0.6:
        raise RuntimeError(f"starved-pipeline scenario: data loading took only {sorted(waits)[len(waits) // 2]:.0%} of a step")
