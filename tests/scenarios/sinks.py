"""Where a scenario's metrics go, written the way the real tools write them: a plain-text log in
several house styles, JSON Lines, a CSV, TensorBoard event files (through torch's SummaryWriter),
HF Trainer's trainer_state.json, and Lightning's CSVLogger folder."""
from __future__ import annotations

import csv
import json
from datetime import datetime, timedelta
from pathlib import Path

T0 = datetime(2026, 3, 1, 9, 0, 0)


def stamp(tick: int, per_tick: float = 0.35) -> str:
    t = T0 + timedelta(seconds=tick * per_tick)
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def _num(v) -> str:
    return f"{v:.5g}" if isinstance(v, float) else str(v)


class TextLog:
    """style: `kv` (`step=3 loss=2.1`), `pipe` (`| step 3 | loss 2.1 |`), `nanogpt`
    (`iter 3: loss 2.1, time 10.2ms`) or `colon` (`step: 3, loss: 2.1`)."""

    def __init__(self, path: Path, style: str = "kv", logger: str = "train") -> None:
        self.path, self.style, self.logger = path, style, logger
        self.lines: list[str] = []
        self.tick = 0

    def line(self, text: str, level: str = "INFO") -> None:
        self.tick += 1
        self.lines.append(f"{stamp(self.tick)} {level} {self.logger}: {text}")

    def raw(self, text: str) -> None:
        self.lines.extend(text.rstrip("\n").split("\n"))

    def log(self, **m) -> None:
        if self.style == "nanogpt":
            rest = ", ".join(f"{k} {_num(v)}" for k, v in m.items() if k != "step")
            self.lines.append(f"iter {m['step']}: {rest}")
        elif self.style == "pipe":
            self.line("| " + " | ".join(f"{k} {_num(v)}" for k, v in m.items()) + " |")
        elif self.style == "colon":
            self.line(", ".join(f"{k}: {_num(v)}" for k, v in m.items()))
        else:
            self.line(" ".join(f"{k}={_num(v)}" for k, v in m.items()))

    def close(self) -> None:
        self.path.write_text("\n".join(self.lines) + "\n")


class Jsonl:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict] = []

    def log(self, **m) -> None:
        self.rows.append(m)

    def close(self) -> None:
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.rows))


class Csv:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict] = []

    def log(self, **m) -> None:
        self.rows.append(m)

    def close(self) -> None:
        cols = list(dict.fromkeys(k for r in self.rows for k in r))
        with open(self.path, "w", newline="") as f:
            w = csv.DictWriter(f, cols)
            w.writeheader()
            w.writerows(self.rows)


class TensorBoard:
    def __init__(self, log_dir: Path, prefix: str = "train/") -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=str(log_dir))
        self.prefix = prefix

    def log(self, step: int, **m) -> None:
        for k, v in m.items():
            self.writer.add_scalar(k if "/" in k else self.prefix + k, v, step)

    def close(self) -> None:
        self.writer.close()


class TrainerState:
    """`trainer_state.json` under `checkpoint-N/`, as transformers writes it."""

    def __init__(self, dest: Path, batch_size: int, logging_steps: int = 1) -> None:
        self.dest, self.batch_size, self.logging_steps = dest, batch_size, logging_steps
        self.history: list[dict] = []

    def log(self, **m) -> None:
        self.history.append(m)

    def close(self, epochs: float) -> Path:
        step = max(h["step"] for h in self.history)
        state = {"best_metric": None, "best_model_checkpoint": None, "epoch": float(epochs), "eval_steps": 500,
                 "global_step": step, "is_hyper_param_search": False, "is_local_process_zero": True,
                 "is_world_process_zero": True, "log_history": self.history, "logging_steps": self.logging_steps,
                 "max_steps": step, "num_train_epochs": int(epochs), "save_steps": 500, "total_flos": 0.0,
                 "train_batch_size": self.batch_size, "trial_name": None, "trial_params": None}
        ck = self.dest / f"checkpoint-{step}"
        ck.mkdir(parents=True, exist_ok=True)
        (ck / "trainer_state.json").write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
        return ck


class LightningCsv(Csv):
    """`lightning_logs/version_0/metrics.csv`: one row per logging call, empty cells elsewhere."""

    def __init__(self, dest: Path) -> None:
        self.version = dest / "lightning_logs" / "version_0"
        self.version.mkdir(parents=True, exist_ok=True)
        super().__init__(self.version / "metrics.csv")
