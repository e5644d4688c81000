"""Small helpers the analyzers share."""
from __future__ import annotations

from analysis.metrics import Series, fmt, fmt_step
from analysis.model import Evidence
from analysis.run import Run

LOSS_NAMES = ("train_loss", "train_loss_epoch", "val_loss")


def train_loss(run: Run) -> Series | None:
    for name in LOSS_NAMES[:2]:
        s = run.metrics.get(name)
        if s is not None and len(s) >= 2:
            return s
    return None


def point(s: Series, i: int, label: str | None = None) -> Evidence:
    """Evidence for one value of a series: `loss 2.31 at step 400`."""
    return Evidence(f"{label or s.name} {fmt(float(s.values[i]))} at {s.step_kind} {fmt_step(s.steps[i])}",
                    s.artifact, s.locator(i))


def index_at_or_after(s: Series, step: float) -> int | None:
    import numpy as np
    i = int(np.searchsorted(s.steps, step, side="left"))
    return i if i < len(s) else None


def index_at_or_before(s: Series, step: float) -> int | None:
    import numpy as np
    i = int(np.searchsorted(s.steps, step, side="right")) - 1
    return i if i >= 0 else None
