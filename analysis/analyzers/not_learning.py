"""A loss that freezes: the same value, to the last printed digit, at the last FROZEN_POINTS reports,
at a level worse than the loss already reached. A loss that still learns moves with every batch; one
that repeats exactly means nothing reaches the weights, or the output no longer depends on them:
inputs with no information left (an integer division that zeroed every pixel), units that died
after a huge step, no optimizer step, or an LR that saturated the outputs. A loss that fell to its
level and stays there converged instead, which is why a frozen level below every earlier report is
not read here. Called by the excerpt analyzer, whose short-paste readings it joins.

Thresholds: FROZEN_POINTS = 4 reports; SAME_REL = 5e-5, the half of a 4th decimal place (Keras
prints 4), relative to values above 1.
"""
from __future__ import annotations

import numpy as np

from analysis.analyzers.common import point
from analysis.metrics import Series, fmt
from analysis.model import Evidence, Finding

FROZEN_POINTS = 4
SAME_REL = 5e-5


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
