"""`handlers.watch.watch(model, optimizer)`: the plain-PyTorch hook. It registers an optimizer step pre-hook
(nothing in the loop changes but one `w.log(loss=loss)` before `optimizer.step()`) that records
grad_norm and lr every step and, with `guard=True`, judges the step first."""
from __future__ import annotations

import math
from pathlib import Path

import torch

from handlers.watch.guard import Guard, StopTraining, grad_norm
from handlers.watch.notify import Notifier
from handlers.watch.watcher import CHECK_EVERY, OVERHEAD_BUDGET, Watcher, to_float

GUARD_FILE = "mltd-last-good.safetensors"
GRAD_NORM_EVERY = 32        # steps between two grad-norm samples when the guard is off


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
        self._queue: list[tuple] = []
        self._params = [p for g in optimizer.param_groups for p in g["params"]]
        self._hook = optimizer.register_step_pre_hook(self._before_step)

    def log(self, loss=None, **metrics) -> None:
        """The step's loss (a tensor or a float), and any other metric, recorded with the next optimizer step."""
        self._loss = None if loss is None else float(loss.detach() if hasattr(loss, "detach") else loss)
        if metrics:
            self._extra = {k: to_float(v) for k, v in metrics.items() if v is not None}

    def _before_step(self, optimizer, args, kwargs) -> None:
        self.step += 1
        # the guard judges every step; without it the norm is sampled (it costs a pass over the gradients)
        sample = self.guard is not None or self.step % GRAD_NORM_EVERY == 1
        norm = grad_norm(self._params) if sample else None
        loss = self._loss
        self._loss = None
        # a step is only queued: the queue goes to the watcher (and a check) every few steps, at once
        # on a non-finite value or a guard action
        self._queue.append((self.step, loss, optimizer.param_groups[0]["lr"], norm, self._extra))
        if self._extra:
            self._extra = {}
        action = self.guard.before_step(optimizer, loss, norm, self.step) if self.guard else None
        if (len(self._queue) >= self.watcher.every or action
                or (loss is not None and not math.isfinite(loss)) or (norm is not None and not math.isfinite(norm))):
            self._flush(action)

    def _flush(self, action: str | None = None) -> None:
        queue, self._queue = self._queue, []
        found = []
        for i, (step, loss, lr, norm, extra) in enumerate(queue):
            values = {"lr": lr, **extra}
            if norm is not None:
                values["grad_norm"] = norm
            if loss is not None:
                values["loss"] = loss
            last = i == len(queue) - 1
            found = self.watcher.append(step, values, action=action if last else None,
                                        checkpoint=str(self.guard.saved) if last and action else None) or found
        if self.guard and action is None and found:
            action = self.guard.on_alarm([f.code for f in found], self.step)
            if action:
                self.watcher.check(action=action, checkpoint=str(self.guard.saved))
        if self.guard and self.guard.stop_reason:
            raise StopTraining(self.guard.stop_reason)

    def close(self) -> None:
        """Removes the hook; queued steps reach the watcher (and a last check) first."""
        self._hook.remove()
        if self._queue:
            self._flush()

    def __enter__(self) -> "TorchWatch":
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        try:
            self.close()
        except StopTraining:        # the last queued steps ended the run: it is ending anyway
            pass
        return kind is StopTraining


def watch(model: torch.nn.Module, optimizer: torch.optim.Optimizer, **options) -> TorchWatch:
    """Watches a plain PyTorch loop; see TorchWatch for the options (guard=True to opt in)."""
    return TorchWatch(model, optimizer, **options)


__all__ = ["StopTraining", "TorchWatch", "watch"]
