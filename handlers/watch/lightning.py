"""The Lightning callback: `Trainer(callbacks=[MltdCallback()])`.

Each training batch's loss (from `training_step`'s output), the LR and, sampled (every step with
the guard), the gradient norm go to the watcher; with `guard=True` every optimizer step is judged
before it is taken. Needs `lightning`; nothing else beyond the core install.
"""
from __future__ import annotations

from pathlib import Path

from lightning.pytorch.callbacks import Callback

from handlers.watch.guard import MAX_BAD_STEPS, Guard, grad_norm
from handlers.watch.notify import Notifier
from handlers.watch.torch_watch import GRAD_NORM_EVERY, GUARD_FILE
from handlers.watch.watcher import CHECK_EVERY, OVERHEAD_BUDGET, Watcher, to_float


class MltdCallback(Callback):
    def __init__(self, *, guard: bool = False, save_to: str | Path | None = None, max_bad_steps: int = MAX_BAD_STEPS,
                 notifier: Notifier | None = None, context=None, every: int = CHECK_EVERY,
                 budget: float | None = OVERHEAD_BUDGET) -> None:
        self.options = dict(notifier=notifier, context=context, every=every, budget=budget)
        self.use_guard, self.save_to, self.max_bad_steps = guard, save_to, max_bad_steps
        self.watcher: Watcher | None = None
        self.guard: Guard | None = None
        self._norm: float | None = None
        self._action: str | None = None

    def on_train_start(self, trainer, pl_module):
        root = Path(trainer.default_root_dir)
        self.watcher = Watcher(root.resolve().name or "run", **self.options)
        self._params = [p for p in pl_module.parameters() if p.requires_grad]
        if self.use_guard:
            self.guard = Guard(pl_module, self.save_to or root / GUARD_FILE, self.max_bad_steps)

    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        step = trainer.global_step + 1
        sample = self.guard is not None or step % GRAD_NORM_EVERY == 1
        self._norm = grad_norm(self._params) if sample else None
        if self.guard is not None:
            self._action = self.guard.before_step(optimizer, None, self._norm, step)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        values = {"lr": trainer.optimizers[0].param_groups[0]["lr"]} if trainer.optimizers else {}
        if loss is not None:
            values["loss"] = to_float(loss.detach() if hasattr(loss, "detach") else loss)
        if self._norm is not None:
            values["grad_norm"] = self._norm
        action, self._action, self._norm = self._action, None, None
        saved = str(self.guard.saved) if action else None
        found = self.watcher.append(trainer.global_step, values, action=action, checkpoint=saved)
        if self.guard is None:
            return
        if found and not self.guard.stop_reason and self.guard.on_alarm([f.code for f in found], trainer.global_step):
            self.watcher.check(action=self.guard.stop_reason, checkpoint=str(self.guard.saved))
        if self.guard.stop_reason:
            trainer.should_stop = True


__all__ = ["MltdCallback"]
