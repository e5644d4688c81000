"""Later runs of the scenario `lr_jump_mlp` for the thread tests: the same real MLP training and
the same files, with the curriculum's second-stage LR and the seed as arguments, so that "did the
fix work" is tested on a rerun with mltd's own suggested fix (0.8 -> 0.06) and on a rerun that
still diverges. Kept outside tests/scenarios, whose code versions the scenario cache."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

from analysis.ingest import load_run
from analysis.metrics import fmt


def write(dest: Path, *, stage2_lr: float, seed: int = 3) -> Path:
    """Train and write the run folder (config.yaml, train.log, model.safetensors, train.py)."""
    from safetensors.torch import save_file

    from tests.scenarios import training
    from tests.scenarios.runs import _save_code, _stamp, _weights

    dest.mkdir(parents=True, exist_ok=True)
    cfg = {"seed": seed, "samples": 960, "dim": 16, "classes": 4, "hidden": 64, "batch_size": 32, "epochs": 10,
           "schedule": [[0, 0.02], [7, stage2_lr]]}
    (dest / "config.yaml").write_text(yaml.safe_dump({
        "model": {"hidden": cfg["hidden"], "num_classes": cfg["classes"]},
        "data": {"samples": cfg["samples"], "dim": cfg["dim"], "batch_size": cfg["batch_size"]},
        "optimizer": {"name": "sgd", "momentum": 0.9},
        "curriculum": {"stages": [{"start_epoch": 0, "lr": 0.02}, {"start_epoch": 7, "lr": stage2_lr}]},
        "epochs": cfg["epochs"], "seed": cfg["seed"]}, sort_keys=False))
    lines = [f"{_stamp(0)} INFO train.py: starting run, 10 epochs, 30 steps/epoch"]

    def on_step(step, epoch, loss, lr, grad_norm):
        lines.append(f"{_stamp(step)} INFO train.py: epoch={epoch} step={step} loss={loss:.4f} lr={lr:.4g} "
                     f"grad_norm={grad_norm:.3f}")

    model = training.train_mlp(cfg, on_step)
    (dest / "train.log").write_text("\n".join(lines) + "\n")
    save_file(_weights(model), dest / "model.safetensors")
    _save_code(dest, training.grad_norm, training.train_mlp)
    return dest


def cached(name: str, *, stage2_lr: float, seed: int = 3) -> Path:
    """The run under tests/.scenario-cache/thread-runs/NAME, trained once (in a child
    interpreter: training sets global torch flags)."""
    dest = Path(__file__).parent / ".scenario-cache" / "thread-runs" / name
    if not (dest / ".complete").exists():
        subprocess.run([sys.executable, "-m", "tests.thread_runs", str(dest), str(stage2_lr), str(seed)],
                       cwd=Path(__file__).parents[1], check=True)
    return dest


if __name__ == "__main__":
    import torch

    torch.set_num_threads(1)
    out = write(Path(sys.argv[1]), stage2_lr=float(sys.argv[2]), seed=int(sys.argv[3]))
    (out / ".complete").write_text("ok")


def window_max(run_dir, metric: str, lo: float, hi: float) -> str:
    """The largest value of `metric` between two steps, read from the run's files independently."""
    s = load_run(run_dir).metrics.get(metric)
    inside = s.values[(s.steps >= lo) & (s.steps <= hi)]
    return fmt(float(np.nanmax(inside)))
