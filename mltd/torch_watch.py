"""`mltd.watch(model, optimizer)`: the plain-PyTorch hook. It registers an optimizer step pre-hook
(nothing in the loop changes but one `w.log(loss=loss)` before `optimizer.step()`) that records
grad_norm and lr every step and, with `guard=True`, judges the step first."""
from __future__ import annotations

from pathlib import Path

import torch

from mltd.guard import Guard, StopTraining, grad_norm
from mltd.notify import Notifier
from mltd.watcher import CHECK_EVERY, OVERHEAD_BUDGET, Watcher, to_float

GUARD_FILE = "mltd-last-good.safetensors"


class TorchWatch:
    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, *, run_id: str = "live",
                 guard: bool = False, save_to: str | Path = GUARD_FILE, max_bad_steps: int = 3,
                 notifier: Notifier | None = None, context=None, every: int = CHECK_EVERY,
                 budget: float | None = OVERHEAD_BUDGET) -> None:
        self.model, self.optimizer = model, optimizer
        self.watcher = Watcher(run_id, notifier=notifier, context=context, every=every, budget=budget)
        self.guard = Guard(model, save_to, max_bad_steps) if guard else None
        self.step = 0
        self._loss: float | None = None
        self._extra: dict = {}
        self._params = [p for g in optimizer.param_groups for p in g["params"]]
        self._hook = optimizer.register_step_pre_hook(self._before_step)

    def log(self, loss=None, **metrics) -> None:
        """The step's loss (a tensor or a float), and any other metric, recorded with the next optimizer step."""
        self._loss = None if loss is None else float(loss.detach() if hasattr(loss, "detach") else loss)
        self._extra = metrics

    def _before_step(self, optimizer, args, kwargs) -> None:
        self.step += 1
        norm = grad_norm(self._params)
        values = {"grad_norm": norm, "lr": float(optimizer.param_groups[0]["lr"]), **self._extra}
        if self._loss is not None:
            values["loss"] = self._loss
        action = self.guard.before_step(optimizer, self._loss, norm, self.step) if self.guard else None
        found = self.watcher.log(self.step, **values) if action is None else self.watcher.append(
            self.step, {k: to_float(v) for k, v in values.items()}, action=action, checkpoint=str(self.guard.saved))
        self._loss, self._extra = None, {}
        if self.guard and action is None and found:
            action = self.guard.on_alarm([f.code for f in found], self.step)
            if action:
                self.watcher.check(action=action, checkpoint=str(self.guard.saved))
        if self.guard and self.guard.stop_reason:
            raise StopTraining(self.guard.stop_reason)

    def close(self) -> None:
        self._hook.remove()

    def __enter__(self) -> "TorchWatch":
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        self.close()
        return kind is StopTraining


def watch(model: torch.nn.Module, optimizer: torch.optim.Optimizer, **options) -> TorchWatch:
    """Watches a plain PyTorch loop; see TorchWatch for the options (guard=True to opt in)."""
    return TorchWatch(model, optimizer, **options)


__all__ = ["StopTraining", "TorchWatch", "watch"]
