"""Scenarios that die of something outside the loss curve: a statistic over one element, a
division by a zero spread, memory, a rank or a DataLoader worker that goes away. Every error here
is raised for real by PyTorch (gloo collectives over loopback, real DataLoader worker processes)
and captured the way a launcher or a logging setup captures it."""
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
import yaml
from torch import nn

from tests.scenarios import training
from tests.scenarios.runs import _save_code
from tests.scenarios.sinks import Jsonl, TextLog


class TabularNet(nn.Module):
    def __init__(self, dim: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.bn1 = nn.BatchNorm1d(hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn1(self.fc1(x))))


def tabular_batchnorm(dest: Path) -> None:
    """BatchNorm MLP; 1025 rows in batches of 32, the last batch kept; text log with the traceback."""
    cfg = {"seed": 50, "samples": 1025, "dim": 16, "classes": 4, "hidden": 32, "batch_size": 32, "epochs": 1,
           "lr": 1e-3, "drop_last": False}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = TabularNet(cfg["dim"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    log = TextLog(dest / "train.log", style="kv")
    try:
        training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"], drop_last=False),
                     lambda step, epoch, loss, lr, grad_norm, **_: log.log(epoch=epoch, step=step, loss=loss, lr=lr))
    except ValueError:
        log.raw(traceback.format_exc())
    log.close()
    _save_code(dest, TabularNet, training.fit)


class StandardisedCNN(nn.Module):
    """Each image is standardised by its own mean and spread before the convolutions."""

    def __init__(self, classes: int) -> None:
        super().__init__()
        self.body = training.SmallCNN(classes)

    def forward(self, x):
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        std = x.std(dim=(1, 2, 3), keepdim=True)
        return self.body((x - mean) / std)


def cnn_blank_frames(dest: Path) -> None:
    """CNN with per-image standardisation; some frames from one camera are blank; text log."""
    cfg = {"seed": 51, "samples": 1280, "classes": 4, "batch_size": 32, "epochs": 5, "lr": 1e-3}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], 64, cfg["classes"], cfg["seed"])
    x = x.view(-1, 1, 8, 8)
    x[700] = 0.0                          # camera 3, frames after the outage
    model = StandardisedCNN(cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    log = TextLog(dest / "train.log", style="colon")
    log.line("dataset: 1280 frames from 4 cameras")
    training.fit(model, opt, training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]),
                 lambda step, epoch, loss, lr, grad_norm, **_: log.log(epoch=epoch, step=step, loss=loss, grad_norm=grad_norm))
    log.close()
    _save_code(dest, StandardisedCNN)


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def train_with_history(cfg: dict, on_step) -> list:
    training.seed_all(cfg["seed"])
    x, y = training.sequences(cfg["samples"], cfg["length"], cfg["vocab"], cfg["classes"], cfg["seed"])
    model = training.SeqClassifier(cfg["vocab"], cfg["d"], cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    history = []
    step = 0
    for epoch, xb, yb in training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]):
        out = model(xb)
        loss = nn.functional.cross_entropy(out, yb)
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
        history.append((out, loss))
        step += 1
        on_step(step=step, epoch=epoch, loss=loss.item(), rss=resident_bytes())
        if step == cfg["report_at"]:
            torch.empty(cfg["report_rows"], cfg["report_cols"])
    return history


def lstm_keep_outputs(dest: Path) -> None:
    """LSTM loop that keeps every step's outputs; memory logged each step; JSONL + stderr log."""
    cfg = {"seed": 52, "samples": 1024, "length": 16, "vocab": 40, "classes": 4, "d": 64, "batch_size": 32,
           "epochs": 4, "lr": 1e-3, "report_at": 100, "report_rows": 2 ** 22, "report_cols": 2 ** 22}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = Jsonl(dest / "metrics.jsonl")
    log = TextLog(dest / "stderr.log", style="kv")
    try:
        train_with_history(cfg, lambda step, epoch, loss, rss: out.log(
            step=step, epoch=epoch, loss=round(loss, 5), mem=round(rss / 2 ** 20, 1)))
    except RuntimeError:
        log.raw(traceback.format_exc())
    out.close()
    log.close()
    _save_code(dest, resident_bytes, train_with_history)


# --- two ranks over gloo ------------------------------------------------------------------------

RANK_TRIES, RANK_WAIT = 3, 60     # a rank's run takes seconds; on a loaded machine, a minute each try


def _two_ranks(dest: Path, mode: str) -> None:
    """Both ranks run as their own interpreters (tests/scenarios/ranks.py), as torchrun starts them. Checked at
    generation: both rank logs written, or the pair is run again (two ranks killed at a timeout on a machine busy
    with other jobs left a run of only its launch.json, read "nothing shows a fault"), then a loud failure."""
    root = Path(__file__).resolve().parents[2]
    logs = [dest / f"rank{r}.log" for r in (0, 1)]
    for _ in range(RANK_TRIES):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = [subprocess.Popen([sys.executable, "-m", "tests.scenarios.ranks", str(r), str(port), mode,
                                   str(log)], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for r, log in enumerate(logs)]
        for p in procs:
            try:
                p.wait(RANK_WAIT)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if all(log.exists() and log.stat().st_size for log in logs):
            break
        for log in logs:
            log.unlink(missing_ok=True)
    else:
        raise RuntimeError(f"the two {mode} ranks wrote no logs in {RANK_TRIES} tries of {RANK_WAIT} s")
    (dest / "launch.json").write_text(json.dumps({"nnodes": 1, "nproc_per_node": 2, "backend": "gloo"}, indent=2))


def ddp_rank_exits(dest: Path) -> None:
    """Two gloo ranks; rank 1's process ends at step 25."""
    _two_ranks(dest, "exit")


def ddp_rank_stalls(dest: Path) -> None:
    """Two gloo ranks with a 2 s collective timeout; rank 1 stops for 3.5 s at step 25."""
    _two_ranks(dest, "stall")


# --- DataLoader workers -------------------------------------------------------------------------

class ShardDataset(torch.utils.data.Dataset):
    def __init__(self, n: int, mode: str) -> None:
        self.n, self.mode = n, mode
        self.x, self.y = training.blobs(n, 16, 4, 53)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == 300:
            if self.mode == "signal":
                # let the main process take the batches already sent (their shared-memory handles live in
                # this worker), so the death shows as the DataLoader's own "killed by signal"
                time.sleep(1.5)
                os.kill(os.getpid(), signal.SIGKILL)
            raise ValueError(f"cannot decode record {i}: unexpected end of stream in shard-00003.tar")
        return self.x[i], self.y[i]


def _loader_run(dest: Path, mode: str) -> None:
    cfg = {"seed": 53, "samples": 640, "batch_size": 32, "num_workers": 1, "lr": 1e-3}
    (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    training.seed_all(cfg["seed"])
    ds = ShardDataset(cfg["samples"], mode)
    loader = torch.utils.data.DataLoader(ds, batch_size=cfg["batch_size"], num_workers=cfg["num_workers"],
                                         multiprocessing_context="fork")
    model = training.mlp(16, 32, 4)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    log = TextLog(dest / "train.log", style="kv")
    step, error = 0, None
    batches = iter(loader)
    try:
        for xb, yb in batches:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            log.log(step=step, loss=round(loss.item(), 4))
    except Exception as exc:
        error = exc
    for _ in range(10):      # shut the workers down first: torch's SIGCHLD handler raises while any is tracked
        try:
            batches._shutdown_workers()
            break
        except RuntimeError:
            continue
    if error is not None:
        log.raw("".join(traceback.format_exception(error)))
    log.close()
    _save_code(dest, ShardDataset)
    shown = {"signal": "is killed by signal", "raise": "Caught ValueError in DataLoader worker process"}[mode]
    if shown not in (dest / "train.log").read_text():
        raise RuntimeError(f"DataLoader scenario {mode!r}: the log does not show {shown!r}")


def loader_worker_signal(dest: Path) -> None:
    """A DataLoader worker receives SIGKILL while reading one record."""
    _loader_run(dest, "signal")


def loader_worker_raises(dest: Path) -> None:
    """A DataLoader worker fails to decode one record."""
    _loader_run(dest, "raise")
