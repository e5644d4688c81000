"""Two signs that a model is not learning, which the excerpt analyzer adds to its short-paste readings.

A loss that freezes: the same value, to the last printed digit, at the last FROZEN_POINTS reports,
at a level worse than the loss already reached by more than one printed unit and ABOVE_BEST of it
(a loss printed to 2 decimals that converged wavers by one unit: 0.73, 0.74, 0.74). A loss that
still learns moves with every batch; one that repeats exactly means nothing reaches the weights, or
the output no longer depends on them: inputs with no information left (an integer division that
zeroed every pixel), units that died after a huge step, no optimizer step, or an LR that saturated
the outputs. A loss that fell to its level and stays there converged instead, which is why a frozen
level below every earlier report is not read here.

An accuracy at chance for a class count the same report gives on its own (top-k accuracies that
bound it on both sides, or a loss at ln(K) beside it): one report after the first epoch is enough, or
one report whose training and validation losses are both at ln(K) (validation runs after training).

Thresholds: FROZEN_POINTS = 4 reports, equal to the last digit both print; ABOVE_BEST = 2%;
CHANCE_REPORTS = 3; a loss within LN_BAND = 1% of ln(K), K <= 10; beside such a loss, an accuracy within
TIE_SHARE = 20% of 1/K.
"""
from __future__ import annotations

import math

import numpy as np

from analysis.analyzers.common import point
from analysis.metrics import MetricTable, Series, fmt
from analysis.model import Evidence, Finding

FROZEN_POINTS = 4
ABOVE_BEST = 0.02            # a frozen level this far above the best reached, and one printed unit
TOP_K = (5, 10)             # the top-k accuracies the metric names know (`acc_top5`, `top_k_accuracy_10`)
MAX_CLASSES, LN_BAND = 10, 0.01   # a loss within 1% of ln(K), K <= 10, is a uniform guess's
CHANCE_REPORTS = 3          # an accuracy at chance at 3 reports, or after the first epoch, is no early guess
# a loss at ln(K) says the outputs are uniform: the accuracy is then the share of whichever class wins
# the ties, 1/K on a balanced set, up to TIE_SHARE/K from it on a mildly unbalanced one (MNIST's
# commonest digit is 11.35% of its test set)
TIE_SHARE = 0.2


def _frozen_tail(v: np.ndarray) -> int:
    """How many reports at the end repeat the last value to the last digit both print (a progress
    bar's `17.2694` is the `17.269388197455335` printed beside it, rounded)."""
    d = _decimals(v)
    unit = 10.0 ** -np.minimum(d, d[-1])
    same = np.abs(v - v[-1]) <= unit / 2
    return len(v) if same.all() else int(len(v) - 1 - np.flatnonzero(~same)[-1])


def _decimals(v: np.ndarray) -> np.ndarray:
    """The decimals each value was printed to, as far as a float keeps them (no trailing zeros)."""
    return np.array([len(t.split(".")[1]) if "." in t else 0
                     for t in (np.format_float_positional(x, trim="-") for x in v.tolist())])


def _printed_unit(v: np.ndarray) -> float:
    """The place of the last digit printed, the finest among the values."""
    return float(10.0 ** -_decimals(v).max())


def frozen_loss(s: Series | None, analyzer: str) -> list[Finding]:
    """The not-learning differential for a loss frozen at a level worse than it had reached."""
    if s is None or len(s) <= FROZEN_POINTS or not np.isfinite(s.values).all():
        return []
    v = s.values
    k = _frozen_tail(v)
    if k < FROZEN_POINTS or k == len(v):     # a loss flat from its first report: the flat-loss reading
        return []
    level, best = float(v[-1]), int(np.argmin(v[:-k]))
    if level - v[best] <= max(_printed_unit(v), ABOVE_BEST * abs(float(v[best]))):
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
        finding("data_pipeline_bug", "the output no longer depends on the inputs; inputs with nothing left "
                "in them (an integer division that zeroed every pixel, a constant batch) give this", 0.45,
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


def chance_accuracy(metrics: MetricTable, loss: Series | None,
                    band: float) -> tuple[str, list[Evidence]] | None:
    """An accuracy at chance for a class count the same report gives on its own, after training went
    on (a later epoch, or several reports): a guess. The count comes from the top-k accuracies (a
    top-k of 1.0 means at most k classes, as mxnet's `top_k_accuracy_10=1.000000`, one below 1.0 more
    than k), or from the loss beside it at ln(K) (a uniform guess over K classes scores exactly that),
    and the top-1 is within `band` of 1/K."""
    epoch = metrics.get("epoch")
    seen = epoch.values[np.isfinite(epoch.values)] if epoch is not None else np.array([])
    trained_epoch = bool(len(seen)) and float(seen.max()) >= 1 or _both_sides_uniform(metrics, loss)
    for acc_name in ("val_acc", "train_acc"):
        acc = metrics.get(acc_name)
        if acc is None or not len(acc) or not np.isfinite(acc.values[-1]):
            continue
        if not (trained_epoch or len(acc) >= CHANCE_REPORTS):
            continue
        a = _share(float(acc.values[-1]))
        by_top_k = _count_by_top_k(metrics, acc_name)
        found = by_top_k or _count_by_loss(loss, acc)
        if found is None:
            continue
        (least, most), why, ev = found
        wide = band if by_top_k else max(band, TIE_SHARE / most)
        k = next((k for k in range(least, most + 1) if abs(a - 1 / k) <= wide), None)
        if k is not None:
            shown = fmt(float(acc.values[-1])) + ("%" if acc.values[-1] > 1 else "")
            return (f"{acc_name} is {shown}, chance for {k} classes ({why})",
                    [point(acc, len(acc) - 1, acc_name), ev])
    return None


def _both_sides_uniform(metrics: MetricTable, loss: Series | None) -> bool:
    """Whether the training loss and the validation loss both sit at ln(K) for the same K at their
    last reports: a validation pass beside a training loss is made after training ran (Keras prints
    `val_loss` at an epoch's end), so a uniform guess on both sides is no model at initialisation."""
    val = metrics.get("val_loss")
    if loss is None or val is None or loss is val or not len(loss) or not len(val):
        return False
    k = _ln_count(float(loss.values[-1]))
    return k is not None and k == _ln_count(float(val.values[-1]))


def _ln_count(v: float) -> int | None:
    """The K whose ln(K) the loss `v` is within LN_BAND of: a uniform guess over K classes."""
    if not np.isfinite(v):
        return None
    return next((k for k in range(2, MAX_CLASSES + 1) if abs(v - math.log(k)) <= LN_BAND * math.log(k)), None)


def _count_by_top_k(metrics: MetricTable, acc_name: str):
    tops = [(k, s) for k in TOP_K if (s := metrics.get(f"{acc_name}_top{k}")) is not None and len(s)]
    full = [k for k, s in tops if _share(float(s.values[-1])) >= 0.999]
    below = [k for k, s in tops if not full or k < min(full)]   # a top-k under 1.0: more than k classes
    if not full or not below:
        return None             # a count bounded on one side only: a top-1 of 0.5 may be a good model's
    most, least = min(full), max(below) + 1
    top = next(s for n, s in tops if n == most)
    return ((least, most), f"a top-{most} accuracy of 1.0 and a top-{max(below)} below it say there are "
                           f"{least} to {most}", point(top, len(top) - 1, f"top-{most} accuracy"))


def _count_by_loss(loss: Series | None, acc: Series):
    if loss is None or loss.lines is None or acc.lines is None or not len(loss):
        return None
    at = np.flatnonzero(loss.lines <= acc.lines[-1])
    if not len(at) or not np.isfinite(loss.values[at[-1]]):
        return None
    i = int(at[-1])
    v = float(loss.values[i])
    k = _ln_count(v)
    if k is None:
        return None
    return ((k, k), f"{loss.name} {fmt(v)} beside it is ln({k}), a uniform guess over {k} classes",
            point(loss, i, loss.name))


def _share(v: float) -> float:
    return v / 100.0 if v > 1.0 else v
