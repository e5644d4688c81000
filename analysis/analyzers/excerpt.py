"""What a short pasted excerpt (a few epochs, even one line) supports, where the trend analyzers
need 12-20 points: a train/validation gap at the same epoch, an LR above the range of every common
optimizer, an accuracy stuck at one value. Confidences stay below 0.8: a few lines suggest a cause,
the reply says what would settle it.

Thresholds:
- GAP_LOSS_RATIO = 3: validation loss at least 3x the training loss at the same epoch,
- GAP_ACC = 0.2: training accuracy at least 20 points above validation accuracy,
- LR_ABSURD = 1.0: above every optimizer family's usual range (SGD's tops out near 0.1),
- STUCK_POINTS = 3: an accuracy identical at 3 or more consecutive reports.
"""
from __future__ import annotations

import numpy as np

from analysis.analyzers.common import LR_RANGE, optimizer_family, point
from analysis.metrics import fmt
from analysis.model import Finding
from analysis.run import Run

NAME = "excerpt"
SHORT = 12
GAP_LOSS_RATIO = 3.0
GAP_ACC = 0.2
LR_ABSURD = 1.0
STUCK_POINTS = 3


def _short(run: Run, name: str):
    s = run.metrics.get(name)
    return s if s is not None and 1 <= len(s) < SHORT else None


def _gap(run: Run) -> list[Finding]:
    tl, vl = _short(run, "train_loss"), _short(run, "val_loss")
    ta, va = _short(run, "train_acc"), _short(run, "val_acc")
    ev, said = [], []
    if tl is not None and vl is not None:
        t, v = float(tl.values[-1]), float(vl.values[-1])
        if np.isfinite([t, v]).all() and t > 0 and v >= GAP_LOSS_RATIO * t:
            ev += [point(tl, len(tl) - 1, "training loss"), point(vl, len(vl) - 1, "validation loss")]
            said.append(f"validation loss {fmt(v)} is {v / t:.0f}x the training loss {fmt(t)}")
    if ta is not None and va is not None:
        t, v = float(ta.values[-1]), float(va.values[-1])
        if np.isfinite([t, v]).all() and t - v >= GAP_ACC:
            ev += [point(ta, len(ta) - 1, "training accuracy"), point(va, len(va) - 1, "validation accuracy")]
            said.append(f"training accuracy {fmt(t)} against {fmt(v)} on validation")
    if not said:
        return []
    conf = 0.7 if len(said) == 2 else 0.55
    return [Finding("overfitting", "The model fits the training set far better than the validation set: " + "; ".join(said),
                    "medium", conf, ev,
                    fix="Early-stop on validation loss, add augmentation, weight decay or dropout, or use a smaller "
                        "model; the validation curve per epoch would show where the gap opened",
                    expected_impact="validation loss and accuracy close in on the training figures",
                    analyzer=NAME, quick_fix="Early-stop on validation loss")]


def _absurd_lr(run: Run) -> list[Finding]:
    lr = run.metrics.get("lr")
    if lr is None or not len(lr) or optimizer_family(run) is not None:   # a known family: learning_rate judges it
        return []
    i = int(np.nanargmax(lr.values)) if np.isfinite(lr.values).any() else None
    if i is None or lr.values[i] < LR_ABSURD:
        return []
    tops = ", ".join(f"{fam} ~{fmt(hi)}" for fam, (_, hi) in LR_RANGE.items() if fam in ("adam", "sgd"))
    return [Finding("lr_too_high", f"Learning rate {fmt(float(lr.values[i]))} is above the usual range of every common "
                    f"optimizer (upper ends: {tops})", "high", 0.65, [point(lr, i, "lr")],
                    fix="Lower the learning rate (Adam ~1e-4 to 1e-3, SGD ~0.01 to 0.1) with a warm-up; if a schedule "
                        "multiplies it (Noam's lr factor), check the product it reaches at its peak",
                    expected_impact="the loss falls instead of exploding", analyzer=NAME,
                    quick_fix="Lower the LR with a warm-up")]


def _stuck_accuracy(run: Run) -> list[Finding]:
    for name in ("val_acc", "train_acc"):
        s = _short(run, name)
        if s is None or len(s) < STUCK_POINTS or not np.isfinite(s.values).all():
            continue
        v = s.values
        if np.all(v == v[0]) and np.unique(s.steps).size >= STUCK_POINTS:
            return [Finding("data_pipeline_bug", f"{name} is {fmt(float(v[0]))} at every one of {len(v)} reports: the "
                            "model predicts the same answer whatever the input", "medium", 0.5,
                            [point(s, 0, name), point(s, len(s) - 1, name)],
                            fix="Likely causes, in order: labels disconnected from inputs (print a few (input, label) "
                                "pairs), one class dominating (the accuracy equals its share), an output layer that "
                                "cannot express the classes (one unit with softmax, a sigmoid on multi-class), an LR "
                                "so high the model collapsed to a constant",
                            analyzer=NAME, quick_fix="Print a batch of (input, label) pairs")]
    return []


def analyze(run: Run) -> list[Finding]:
    return _gap(run) + _absurd_lr(run) + _stuck_accuracy(run)
