"""Pairs of real tiny CPU runs for `mltd compare`, each a failing run A and a reference run B with
the same seed, so that the curves are identical until the fault and part right where it starts:

- `lr_jump`: the MLP of `lr_jump_mlp`, written as tests/scenarios writes it (config.yaml,
  train.log, train.py), once with the curriculum's second stage raising the LR 40x at step 211
  (epoch 7, the injected fault) and once keeping it (and once more keeping it with another seed);
- `zero_grad`: the `no_zero_grad_mlp` scenario's run, and the same run with the one missing
  `optimizer.zero_grad()` line back in its loop (the code that ran is the code saved).

Built here rather than in tests/scenarios so that adding them leaves the scenario cache's version
(a hash of that package) as it is; each pair trains in about a second.
"""
from __future__ import annotations

from pathlib import Path

import torch
import yaml
from torch import nn

from tests.scenarios import optim_runs, training
from tests.scenarios.runs import _save_code, _stamp
from tests.scenarios.sinks import TextLog

FAULT_STEP = 211                  # the first step of epoch 7 (30 steps an epoch)
FAKE_KEY = "wandb-" + "k3y" + "9f8e7d6c5b4a39281706f5e4d3c2b1a0"   # a secret each config carries, never shown


def mlp_run(dest: Path, *, stage2_lr: float, run_name: str, api_key: str, seed: int = 3) -> Path:
    """The curriculum MLP of `lr_jump_mlp`, its second stage at `stage2_lr`."""
    dest.mkdir(parents=True, exist_ok=True)
    cfg = {"seed": seed, "samples": 960, "dim": 16, "classes": 4, "hidden": 64, "batch_size": 32, "epochs": 10,
           "schedule": [[0, 0.02], [7, stage2_lr]]}
    (dest / "config.yaml").write_text(yaml.safe_dump({
        "run_name": run_name,
        "model": {"hidden": cfg["hidden"], "num_classes": cfg["classes"]},
        "data": {"samples": cfg["samples"], "dim": cfg["dim"], "batch_size": cfg["batch_size"]},
        "optimizer": {"name": "sgd", "momentum": 0.9},
        "curriculum": {"stages": [{"start_epoch": 0, "lr": 0.02}, {"start_epoch": 7, "lr": stage2_lr}]},
        "tracking": {"project": "mlp-curriculum", "api_key": api_key},
        "epochs": cfg["epochs"], "seed": cfg["seed"]}, sort_keys=False))
    lines = [f"{_stamp(0)} INFO train.py: starting run {run_name}, 10 epochs, 30 steps/epoch"]

    def on_step(step, epoch, loss, lr, grad_norm):
        lines.append(f"{_stamp(step)} INFO train.py: epoch={epoch} step={step} loss={loss:.4f} lr={lr:.4g} "
                     f"grad_norm={grad_norm:.3f}")

    training.train_mlp(cfg, on_step)
    (dest / "train.log").write_text("\n".join(lines) + "\n")
    _save_code(dest, training.grad_norm, training.train_mlp)
    return dest


def lr_jump_pair(root: Path) -> tuple[Path, Path]:
    """(failing run A, reference run B)."""
    a = mlp_run(root / "run-42", stage2_lr=0.8, run_name="curriculum-boost", api_key=FAKE_KEY + "a")
    b = mlp_run(root / "run-41", stage2_lr=0.02, run_name="curriculum-flat", api_key=FAKE_KEY + "b")
    # the reference with another seed too: its data and weights differ from the first step
    mlp_run(root / "run-40", stage2_lr=0.02, run_name="curriculum-flat", api_key=FAKE_KEY + "c", seed=11)
    return a, b


# `no_zero_grad_mlp`'s loop (tests/scenarios/optim_runs.py) as it should be: the one line that
# scenario lacks, `optimizer.zero_grad()`, is back (no docstring: the saved source must differ by that line)
def train_sgd_loop(cfg: dict, on_step) -> nn.Module:
    training.seed_all(cfg["seed"])
    x, y = training.blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = training.mlp(cfg["dim"], cfg["hidden"], cfg["classes"])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    step = 0
    for epoch, xb, yb in training.batches(x, y, cfg["batch_size"], cfg["epochs"], cfg["seed"]):
        loss = nn.functional.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        gn = training.grad_norm(model)
        optimizer.step()
        step += 1
        on_step(step=step, epoch=epoch, loss=loss.item(), lr=cfg["lr"], grad_norm=gn)
    return model


def zero_grad_pair(root: Path) -> tuple[Path, Path]:
    """(A: the `no_zero_grad_mlp` scenario's run, B: the same run with the loop fixed): the same
    config and seed, the code differs by one line, and the gradients pile up from step 2."""
    a, b = root / "run-7", root / "run-6"
    for dest in (a, b):
        dest.mkdir(parents=True, exist_ok=True)
    optim_runs.mlp_sgd_loop(a)
    cfg = yaml.safe_load((a / "config.yaml").read_text())
    (b / "config.yaml").write_text((a / "config.yaml").read_text())
    log = TextLog(b / "train.log", style="kv")
    log.line("starting training: 6 epochs of 40 steps")
    train_sgd_loop(cfg, lambda step, epoch, loss, lr, grad_norm: log.log(epoch=epoch, step=step, loss=loss, lr=lr,
                                                                              grad_norm=grad_norm))
    log.close()
    _save_code(b, train_sgd_loop)
    return a, b


def cached_pairs() -> dict[str, tuple[Path, Path]]:
    """Both pairs, built once per version of this file and of the scenario code (in a child
    interpreter: training sets global torch flags that do not belong in a test session)."""
    import hashlib
    import subprocess
    import sys

    from tests import scenarios

    version = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    root = scenarios.CACHE / scenarios._version() / f"compare-pair-{version}"
    if not (root / ".complete").exists():
        subprocess.run([sys.executable, "-m", "tests.compare_runs", str(root)], cwd=Path(__file__).resolve().parents[1],
                       check=True)
    return {"lr_jump": (root / "lr_jump" / "run-42", root / "lr_jump" / "run-41"),
            "lr_jump_other_seed": (root / "lr_jump" / "run-42", root / "lr_jump" / "run-40"),
            "zero_grad": (root / "zero_grad" / "run-7", root / "zero_grad" / "run-6")}


def cached_pair() -> tuple[Path, Path]:
    """The lr-jump pair."""
    return cached_pairs()["lr_jump"]


if __name__ == "__main__":
    import shutil
    import sys

    torch.set_num_threads(1)
    root = Path(sys.argv[1])
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    lr_jump_pair(tmp / "lr_jump")
    zero_grad_pair(tmp / "zero_grad")
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    (root / ".complete").write_text("ok")
