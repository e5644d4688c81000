"""Families that die of something outside the loss curve: a statistic over one element, memory,
a rank, a DataLoader worker. Every error is raised for real by PyTorch and captured the way a
launcher or a logging setup captures it; each family checks that its error shows."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path

import torch
from torch import nn

from tests.scenarios import training
from tests.scenarios.grid import (BASE_LR, Family, Knobs, Variant, build_model, dataset, optimizer, require, train,
                                  write)
from tests.scenarios.runs import _save_code

V = Variant


def _shows(dest: Path, text: str) -> None:
    found = any(text in f.read_text(errors="replace") for f in dest.rglob("*.log"))
    require(found, f"no log shows {text!r}")


# --- a statistic over one element ----------------------------------------------------------------

class NormedHead(nn.Module):
    """grid's model with a BatchNorm1d over its output features before the classifier."""

    def __init__(self, body: nn.Module, features: int, classes: int) -> None:
        super().__init__()
        self.body, self.norm, self.out = body, nn.BatchNorm1d(features), nn.Linear(features, classes)

    def forward(self, x):
        return self.out(torch.relu(self.norm(self.body(x))))


def batchnorm_last_row(dest: Path, v: Variant) -> None:
    """Batches of `batch` over 1 + a multiple of it rows, the last (single-row) batch kept."""
    n = v.batch * 12 + 1
    x, y, loss_fn, classes = dataset(v, n)
    training.seed_all(v.seed)
    model = NormedHead(build_model(v, 16), 16, classes)
    opt = optimizer(v.opt, model.parameters(), BASE_LR[v.opt])
    rows, tail = [], ""
    try:
        training.fit(model, opt, training.batches(x, y, v.batch, 3, v.seed, drop_last=False),
                     lambda step, loss, lr, grad_norm, **_: rows.append(
                         {"step": step, "loss": loss, "lr": lr, "grad_norm": grad_norm}), loss_fn=loss_fn)
    except ValueError:
        tail = traceback.format_exc()
    k = Knobs(samples=n, extra_config={"data": {"rows": n, "drop_last": False}, "model": {"norm": "batchnorm"}})
    write(dest, v, k, rows, model, tail=tail)
    _shows(dest, "Expected more than 1 value per channel")


# --- memory ---------------------------------------------------------------------------------------

def eval_buffer(dest: Path, v: Variant) -> None:
    """After training, the evaluation preallocates batch x sequence x vocabulary logits."""
    k = Knobs(extra_config={"eval": {"batch_size": 512, "seq_len": 8192, "vocab_size": 32000 + 1000 * (v.seed % 7)}})
    model, rows, _ = train(v, k, dest)
    ev = k.extra_config["eval"]
    try:
        torch.empty(ev["batch_size"], ev["seq_len"], ev["vocab_size"])
        tail = ""
    except RuntimeError:
        tail = "running evaluation\n" + traceback.format_exc()
    write(dest, v, k, rows, model, tail=tail)
    _shows(dest, "can't allocate memory")


# --- ranks ----------------------------------------------------------------------------------------

def _ranks(dest: Path, mode: str, world: int, at: int) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen([sys.executable, "-m", "tests.scenarios.ranks", str(r), str(port), mode,
                               str(dest / f"rank{r}.log"), str(world), str(at)], cwd=root,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for r in range(world)]
    for p in procs:
        try:
            p.wait(40)
        except subprocess.TimeoutExpired:
            p.kill()
    (dest / "launch.json").write_text(json.dumps({"nnodes": 1, "nproc_per_node": world, "backend": "gloo"}, indent=2))
    texts = [(dest / f"rank{r}.log").read_text() for r in range(world) if (dest / f"rank{r}.log").exists()]
    require(any("Traceback" in t or "Error" in t for t in texts), f"no rank logged an error ({mode})")


def rank_lost(dest: Path, v: Variant) -> None:
    """The last rank's process ends, or stops past the collective timeout."""
    _ranks(dest, "exit" if v.seed % 2 else "stall", 2 + v.seed % 2, 10 + v.seed % 20)


# --- DataLoader workers ---------------------------------------------------------------------------

class Records(torch.utils.data.Dataset):
    """Rows decoded from records; record `bad` fails as `mode` says."""

    def __init__(self, n: int, bad: int, mode: str, seed: int) -> None:
        self.n, self.bad, self.mode = n, bad, mode
        self.x, self.y = training.blobs(n, 16, 4, seed)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            if self.mode == "signal":
                time.sleep(1.5)
                os.kill(os.getpid(), signal.SIGKILL)
            if self.mode == "open":
                open(f"/nonexistent/shards/part-{i // 100:05d}.npy", "rb")
            if self.mode == "shape":
                return torch.zeros(17), self.y[i]
            raise ValueError(f"cannot decode record {i}: unexpected end of stream in shard-{i // 100:05d}.tar")
        return self.x[i], self.y[i]


def _loader(dest: Path, v: Variant, mode: str, bad: int, workers: int) -> None:
    training.seed_all(v.seed)
    loader = torch.utils.data.DataLoader(Records(640, bad, mode, v.seed), batch_size=v.batch, num_workers=workers,
                                         multiprocessing_context="fork")
    model = training.mlp(16, v.width, 4)
    opt = optimizer(v.opt, model.parameters(), BASE_LR[v.opt])
    rows, error, step = [], None, 0
    batches = iter(loader)
    try:
        for xb, yb in batches:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            rows.append({"step": step, "loss": loss.item(), "lr": BASE_LR[v.opt],
                         "grad_norm": training.grad_norm(model)})
    except Exception as exc:
        error = exc
    for _ in range(10):      # shut the workers down first: torch's SIGCHLD handler raises while any is tracked
        try:
            batches._shutdown_workers()
            break
        except RuntimeError:
            continue
    tail = "".join(traceback.format_exception(error)) if error is not None else ""
    k = Knobs(extra_config={"data": {"num_workers": workers, "records": 640}})
    write(dest, v, k, rows, model, tail=tail)
    _save_code(dest, Records, _loader)
    _shows(dest, "DataLoader worker")


def worker_lost(dest: Path, v: Variant) -> None:
    _loader(dest, v, "signal" if v.seed % 2 else "decode", 150 + 37 * (v.seed % 9), 1 + v.seed % 2)


FAMILIES = [
    Family("batchnorm_last_row", batchnorm_last_row, "zero_variance", "tuning", (
        V("mlp", "adam", fmt="kv", seed=301), V("cnn", "momentum", fmt="jsonl", seed=302),
        V("lstm", "adamw", fmt="tb", seed=303), V("mlp", "sgd", fmt="hf", seed=304))),
    Family("eval_buffer", eval_buffer, "out_of_memory", "tuning", (
        V("mlp", "adam", fmt="colon", seed=311), V("cnn", "sgd", fmt="jsonl", seed=312),
        V("lm", "adamw", fmt="hf", seed=313), V("lstm", "adam", fmt="tb", seed=314))),
    Family("rank_lost", rank_lost, "distributed_failure", "tuning",
           tuple(V("linear", "sgd", fmt="ranklogs", seed=seed) for seed in range(321, 325))),
    Family("worker_lost", worker_lost, "dataloader_failure", "tuning", (
        V("mlp", "adam", fmt="kv", seed=331), V("mlp", "sgd", fmt="jsonl", seed=332),
        V("mlp", "adamw", fmt="hf", seed=333), V("mlp", "momentum", fmt="csv", seed=334))),
]
