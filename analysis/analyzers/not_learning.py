"""Two signs that a model is not learning, which the excerpt analyzer adds to its short-paste readings.

A loss that freezes: the same value, to the last printed digit, at the last FROZEN_POINTS reports,
at a level worse than the loss already reached. A loss that still learns moves with every batch; one
that repeats exactly means nothing reaches the weights, or the output no longer depends on them:
inputs with no information left (an integer division that zeroed every pixel), units that died
after a huge step, no optimizer step, or an LR that saturated the outputs. A loss that fell to its
level and stays there converged instead, which is why a frozen level below every earlier report is
not read here.

An accuracy at chance for the class count its own top-k accuracies give: one report is enough when
the top-k bound the count on both sides.

Thresholds: FROZEN_POINTS = 4 reports; SAME_REL = 5e-5, the half of a 4th decimal place (Keras
prints 4), relative to values above 1; CHANCE_REPORTS = 3.
"""
from __future__ import annotations

import numpy as np

from analysis.analyzers.common import point
from analysis.metrics import MetricTable, Series, fmt
from analysis.model import Evidence, Finding

FROZEN_POINTS = 4
SAME_REL = 5e-5
TOP_K = (5, 10)             # the top-k accuracies the metric names know (`acc_top5`, `top_k_accuracy_10`)
CHANCE_REPORTS = 3          # an accuracy at chance at 3 reports, or after the first epoch, is no early guess


def _frozen_tail(v: np.ndarray) -> int:
    """How many reports at the end repeat the last value to its printed precision."""
    same = np.abs(v - v[-1]) <= SAME_REL * max(1.0, abs(float(v[-1])))
    return len(v) if same.all() else int(len(v) - 1 - np.flatnonzero(~same)[-1])


def frozen_loss(s: Series | None, analyzer: str) -> list[Finding]:
    """The not-learning differential for a loss frozen at a level worse than it had reached."""
    if s is None or len(s) <= FROZEN_POINTS or not np.isfinite(s.values).all():
        return []
    v = s.values
    k = _frozen_tail(v)
    if k < FROZEN_POINTS or k == len(v):     # a loss flat from its first report: the flat-loss reading
        return []
    level, best = float(v[-1]), int(np.argmin(v[:-k]))
    if level <= v[best]:
        return []                   # it fell to this level and stays: converged, or printed too coarsely
    first = len(v) - k
    jumped = v[first - 1] * 2 < level          # a step that doubled the loss at once
    said = (f"{s.name} is {fmt(level)} at each of the last {k} reports, to the last digit, after it had "
            f"reached {fmt(float(v[best]))}")
    ev = [Evidence(f"{s.name} repeats {fmt(level)} from report {first + 1} to {len(v)}", s.artifact,
                   s.span_locator(first, len(v) - 1)),
          point(s, best, f"lowest earlier {s.name}")]

    def finding(code: str, why: str, conf: float, fix: str, quick: str) -> Finding:
        return Finding(code=code, issue=f"{said}: {why}", severity="medium", confidence=conf, evidence=ev,
                       fix=fix, analyzer=analyzer, onset_step=float(s.steps[first]), quick_fix=quick)

    return [
        finding("data_pipeline_bug", "the output no longer depends on the inputs; inputs with nothing left in "
                "them (an integer division that zeroed every pixel, a constant batch) give this", 0.45,
                "Print the min, max and dtype of one batch after preprocessing: all zeros (x / 255 on an int "
                "array) or one value repeated is the data; cast to float before normalising",
                "Print a batch's min, max and dtype"),
        finding("no_parameter_updates", "the weights no longer change between reports", 0.4,
                "Compare the weight norm at two reports: unchanged means optimizer.step() does not run over "
                "the model's parameters, or they are frozen (requires_grad=False, trainable=False)",
                "Compare the weights at two reports"),
        finding("dead_relu", ("it jumped there from " + fmt(float(v[first - 1])) + " and froze, the signature"
                              if jumped else "the signature") + " of units a huge step pushed where no input "
                "activates them", 0.35 if jumped else 0.3,
                "Count the ReLU outputs that are 0 for a batch (most of them is dead units); lower the LR, "
                "use LeakyReLU or a better initialisation", "Count the zero activations"),
        finding("lr_too_high", "an LR too high saturates the outputs, after which the gradient is ~0", 0.3,
                "Lower the learning rate 10x and see whether the loss moves again", "Lower the LR 10x"),
    ]


def chance_by_top_k(metrics: MetricTable, band: float) -> tuple[str, list[Evidence]] | None:
    """An accuracy at chance for the class count its own top-k accuracies give: a top-k of 1.0 means
    at most k classes (mxnet's `top_k_accuracy_10=1.000000`), one below 1.0 more than k, and a top-1
    within `band` of 1/K for a K in that range after training went on (a later epoch, or several
    reports) is a guess."""
    for acc_name in ("val_acc", "train_acc"):
        acc = metrics.get(acc_name)
        if acc is None or not len(acc) or not np.isfinite(acc.values[-1]):
            continue
        tops = [(k, s) for k in TOP_K if (s := metrics.get(f"{acc_name}_top{k}")) is not None and len(s)]
        full = [k for k, s in tops if _share(float(s.values[-1])) >= 0.999]
        if not full:
            continue
        most = min(full)
        below = [k for k, s in tops if k < most]      # a top-k below 1.0 means more than k classes
        if not below:
            continue            # a count bounded from above only: a top-1 of 0.5 may be a good model's
        least = max(below) + 1
        epoch = metrics.get("epoch")
        trained = len(acc) >= CHANCE_REPORTS or (epoch is not None and float(np.nanmax(epoch.values)) >= 1)
        a = _share(float(acc.values[-1]))
        k = next((k for k in range(least, most + 1) if abs(a - 1 / k) <= band), None)
        if k is None or not trained:
            continue
        top = next(s for n, s in tops if n == most)
        said = (f"{acc_name} is {fmt(float(acc.values[-1]))}, chance for {k} classes (a top-{most} accuracy "
                f"of 1.0 and a top-{max(below)} below it say there are {least} to {most})")
        return said, [point(acc, len(acc) - 1, acc_name), point(top, len(top) - 1, f"top-{most} accuracy")]
    return None


def _share(v: float) -> float:
    return v / 100.0 if v > 1.0 else v
