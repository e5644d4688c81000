"""The guard (opt-in): on a non-finite loss or gradient, skip the optimizer step so the NaN never
reaches the weights, save the last good weights once, and stop after `max_bad_steps` bad steps in
a row; on an established divergence, save and stop.

A step is skipped by dropping the gradients before `optimizer.step()` (every torch optimizer leaves a
parameter without a gradient untouched: no update, no momentum, no weight decay), so the user's
code is never changed. Stopping is the framework's own flag, or `StopTraining` in a plain loop.
"""
from __future__ import annotations

import math
from pathlib import Path

import torch
from safetensors.torch import save_model

MAX_BAD_STEPS = 3
STOP_CODES = ("lr_too_high", "exploding_gradients")   # an established divergence: save and stop


class StopTraining(Exception):
    """Raised by the plain-PyTorch watch when the guard stops the run; `with watch(...)` ends quietly on it."""


def grad_norm(params: list[torch.nn.Parameter]) -> float:
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return float("nan")
    return float(torch.nn.utils.get_total_norm(grads, foreach=True))


class Guard:
    def __init__(self, model: torch.nn.Module, save_to: str | Path, max_bad_steps: int = MAX_BAD_STEPS) -> None:
        self.model = model
        self.path = Path(save_to)
        self.max_bad_steps = max_bad_steps
        self.bad_in_a_row = 0
        self.skipped = 0
        self.saved: Path | None = None
        self.stop_reason: str | None = None

    def save(self) -> str:
        """The model's weights now, once per run (later calls keep the first file)."""
        if self.saved is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            save_model(self.model, str(self.path))
            self.saved = self.path
        return str(self.saved)

    def before_step(self, optimizer: torch.optim.Optimizer, loss: float | None, norm: float, step: float) -> str | None:
        """Judges the step about to be taken; returns what was done, if anything."""
        finite = math.isfinite(norm) and (loss is None or math.isfinite(loss))
        if finite:
            self.bad_in_a_row = 0
            return None
        first = self.saved is None
        path = self.save()          # the weights as they were before this step: the last good ones
        for group in optimizer.param_groups:
            for p in group["params"]:
                p.grad = None
        self.bad_in_a_row += 1
        self.skipped += 1
        what = "loss" if loss is not None and not math.isfinite(loss) else "gradient"
        if self.bad_in_a_row >= self.max_bad_steps:
            self.stop_reason = (f"stopped after {self.bad_in_a_row} non-finite steps in a row (last at step {step:g}); "
                                f"last good weights in {path}")
            return self.stop_reason
        if first:
            return f"skipped the optimizer step at step {step:g} (non-finite {what}); last good weights saved to {path}"
        return None

    def on_alarm(self, codes: list[str], step: float) -> str | None:
        hit = [c for c in codes if c in STOP_CODES]
        if not hit:
            return None
        path = self.save()
        self.stop_reason = f"stopped at step {step:g} on an established {hit[0]}; weights saved to {path}"
        return self.stop_reason
