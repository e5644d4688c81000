"""The Hugging Face `Trainer` callback: `Trainer(..., callbacks=[MltdCallback()])`.

It reads what the Trainer logs (loss, grad_norm, learning_rate at each `logging_steps`) and, with
`guard=True`, judges every optimizer step before it is taken. Needs `transformers`; nothing else
beyond the core install.
"""
from __future__ import annotations

from pathlib import Path

from transformers import TrainerCallback

from handlers.watch.guard import MAX_BAD_STEPS, Guard, grad_norm
from handlers.watch.notify import Notifier
from handlers.watch.watcher import OVERHEAD_BUDGET, Watcher

GUARD_FILE = "mltd-last-good.safetensors"


class MltdCallback(TrainerCallback):
    def __init__(self, *, guard: bool = False, save_to: str | Path | None = None, max_bad_steps: int = MAX_BAD_STEPS,
                 notifier: Notifier | None = None, context=None, every: int = 1,
                 budget: float | None = OVERHEAD_BUDGET) -> None:
        # `every` counts logged points: the Trainer logs every `logging_steps` steps already
        self.options = dict(notifier=notifier, context=context, every=every, budget=budget)
        self.use_guard, self.save_to, self.max_bad_steps = guard, save_to, max_bad_steps
        self.watcher: Watcher | None = None
        self.guard: Guard | None = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.watcher = Watcher(Path(args.output_dir).name or "run", **self.options)
        if self.use_guard:
            self.guard = Guard(model, self.save_to or Path(args.output_dir) / GUARD_FILE, self.max_bad_steps)
            self._params = [p for p in model.parameters() if p.requires_grad]

    def on_pre_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
        if self.guard is None:
            return
        step = state.global_step + 1
        action = self.guard.before_step(optimizer, None, grad_norm(self._params), step)
        if action:
            self.watcher.append(step, {}, action=action, checkpoint=str(self.guard.saved))
        if self.guard.stop_reason:
            control.should_training_stop = True

    def on_log(self, args, state, control, logs=None, **kwargs):
        values = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, (int, float)) and k != "epoch"}
        if self.watcher is None or not values:
            return
        found = self.watcher.append(state.global_step, values)
        if self.guard is not None and found and not self.guard.stop_reason:
            action = self.guard.on_alarm([f.code for f in found], state.global_step)
            if action:
                self.watcher.check(action=action, checkpoint=str(self.guard.saved))
                control.should_training_stop = True
