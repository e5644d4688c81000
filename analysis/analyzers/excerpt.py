"""What a short pasted excerpt (a few epochs, even one line) supports, where the trend analyzers
need 12-20 points: a loss that turns NaN, a loss that grows report after report, a flat loss, an
accuracy stuck at one value, a result too good to be true, a confusion matrix with one column, a
train/validation gap at the same epoch, an LR above the range of every common optimizer.
Confidences stay below 0.8: a few lines suggest causes, the reply ranks them and says what would
tell them apart. Where the same lines have several readings (a NaN is an overflow, an LR too high or
bad data; a stuck accuracy is a data bug, a collapse or an LR too high), each is a finding with the
evidence that points to it, so the ranking keeps them as real alternatives.

Thresholds (named below):
- GAP_LOSS_RATIO = 3: validation loss at least 3x the training loss at the same epoch,
- GAP_ACC = 0.2: training accuracy at least 20 points above validation accuracy (10 where training is
  at 99% or more: FITTED, GAP_ACC_FITTED), accuracies compared as shares,
- LR_ABSURD = 1.0: above every optimizer family's usual range (SGD's tops out near 0.1),
- STUCK_POINTS = 3: an accuracy (or a loss) identical at 3 or more consecutive reports,
- RISE_POINTS = 4 and RISE_SHARE = 0.75: a loss that grows at three in four of at least four
  reports, ending RISE_GROWN = 20% above where it started (longer curves: RISE_LONG, RISE_RANK;
  before a NaN, RISE_MIN = 10% is a climb; a smaller or shorter rise at every report, or 2-3
  reports ending RISE_FAR = 2x their start, is a modest LR reading, RISE_FEW/RISE_SOME); a rise of 4
  reports or more within 5x the curve's own noise that more than BY_CHANCE = 0.3% of random orderings
  of its values show too is batch noise as much as a fault (medium), and an uneven one whose last
  third sits RISE_LONG times its first is a medium LR reading where at most NOISY_ORDER = 5% of
  orderings climb as far,
- TOO_GOOD_LOSS = 0.01 with an accuracy of 1.0 at the first report; a loss of exactly 0 at
  ZERO_REPORTS = 2 reports (nothing scored, or an fp16 underflow), and a detector's box (objectness,
  mask) part of the loss exactly 0 at every report of 2 or more (no object matched),
- GRAD_GROWTH = 100: a gradient norm that grows 100x over a few reports,
- SPIKE_RATIO = 3, SPIKE_BACK = 1.5: one report 3x the median of the others, the next within 1.5x,
- a confusion matrix: a square block of at least 2 rows of counts, MATRIX_MAX_BYTES of text read (one
  column of counts is read by `one_class.predicts_one_class`),
- a YOLO validation row over images with 0 labels: the labels were not loaded,
- HEALTHY_READ = 0.5 (HEALTHY_FALLING = 0.6 with a falling loss): a short paste read with no fault,
- TAIL_AT_CHANCE = 5: a loss that fell to within FLAT_REL of ln(K) (K <= 10) and stayed there this many reports,
  where no accuracy beside it sits above CHANCE_ACC times 1/K, reads as the flat loss at chance does,
- a column printed with no name that blew up (bare_rows' `explodes`) is an LR too high.
A loss frozen to the last digit above its best, and an accuracy at chance for the class count its own
report gives (top-k accuracies, a loss at ln(K)), are read by `not_learning.py`.
"""
from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import TypeGuard

import numpy as np

from analysis.analyzers.common import (
    LR_RANGE,
    NAN_DATA_SETTLE,
    SCALER_HALVINGS,
    SHORT_CURVE,
    VOCAB_REL,
    VOCABS,
    index_at_or_before,
    loss_scaler,
    losses,
    off_harmless_lines,
    optimizer_family,
    pasted_texts,
    peak_lr,
    point,
    reward_rose,
    rewarded,
    small_lr,
    thirds,
)
from analysis.analyzers.not_learning import TIE_SHARE, chance_accuracy, frozen_loss
from analysis.analyzers.one_class import predicts_one_class
from analysis.analyzers.same_output import same_output
from analysis.analyzers.stopped_at_setup import stopped_at_setup
from analysis.ingest.bare_rows import (
    PRINTED_NAN,
    PRINTED_ROW,
    PRINTED_VALUE,
    UNNAMED,
    explodes,
    masked_row,
)
from analysis.ingest.dressing import undress
from analysis.ingest.textlog import NONFINITE_PREFIX, PART_PREFIX
from analysis.metrics import Series, fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.run import Run
from analysis.signals import divergence, order_share, rank_trend, relative_change, rolling_median

NAME = "excerpt"
SHORT = SHORT_CURVE
GAP_LOSS_RATIO = 3.0
GAP_ACC = 0.2
GAP_TAIL = 20              # a long training accuracy's level: the mean of its last 20 reports
FITTED, GAP_ACC_FITTED = 0.99, 0.1   # a training accuracy of 99% or more, 10 points above the held-out one
LR_ABSURD = 1.0
NOTES = ("low", "info")
LR_NOTE = "an LR above its usual range over a loss that falls at every report"
FALLS_POINTS = 2          # an absurd LR over a loss that falls at every one of 2+ reports is a note...
FALLS_SHARE = 0.05        # ...by 5% of itself or more at each (a loss that holds at ln(K) does not fall)
FELL_POINTS, FELL_SHARE = 12, 0.2    # ...or, over 12+ noisy reports, by 20% from the first tenth to the last
FELL_ABOVE_FIRST = 1.5    # ...no report above 1.5x the first (a blow-up the loss came back from is the rate's harm)
FELL_FIRST_BLOWN = 10.0   # ...and the first report not 10x the median (the rate's blow-up, logged first)
STUCK_POINTS = 3
CHANCE_CLASSES, CHANCE_BAND = 10, 0.01   # an accuracy within 1 point of 1/K (K <= 10) at every report guesses
COLLAPSE_TAIL, COLLAPSE_DROP = 4, 0.05   # an accuracy identical at its last 4+ reports, 5+ points under its best
COLLAPSE_TAIL_AT_CHANCE = 3   # ...3+ where that value is a uniform guess's (1/K): no small set's tie lands there
COLLAPSE_CHANCE = 0.02     # ...within 2 points of 1/K (a balanced set's one-class share), or on two splits at once
HELD_OUT_CHANCE = 5        # a held-out loss at ln(K) at 5+ reports, its accuracy within a point throughout
# the loss of a wrong prediction made with full confidence, where a library clips the probability: Keras' 1e-7
# (-ln 1e-7), TF 2's binary cross-entropy (-ln 2e-7, its epsilon added again inside the log), PyTorch's BCELoss
# (its log clamped at -100), Caffe's SoftmaxWithLoss (-ln FLT_MIN)
SATURATED = {16.1181: "Keras' clipped cross-entropy (-ln 1e-7)", 15.4249: "TF 2's clipped binary cross-entropy",
             100.0: "PyTorch's BCELoss (its log clamped at -100)", 87.3365: "Caffe's SoftmaxWithLoss (-ln FLT_MIN)"}
CAFFE_SATURATED = 87.3365   # the one said alone: a loss of 100 is also a regression's MAPE at a constant output
SATURATED_TOL = 0.003       # loss / (1 - accuracy) within 0.3% of one of them, at the last 2 reports or more...
SATURATED_ONE = 0.0005      # ...or 0.05% at a paste's one report (real saturation matches to its printed digits)
SATURATED_LOSS = 2.0        # ...with a loss this high (a wrong answer a fifth of the time or more at Keras' 16.1)
SATURATED_TAIL = 2          # the saturated reports at the end, after any sound ones
TOPK_GUESS = (4.8, 8.5)     # a top-5 accuracy 4.8 to 8.5 times the top-1 (5x is a uniform guess over any K; a model
                            # that learns lifts its top-1 first: 4x at 4 to 15 times chance over 1000 classes)...
TOPK_CLASSES = 8            # ...over 8 classes or more (by the top-1: at 1/8 or under), is no ranking at all
TOPK_TRAINING = 3           # beside a training loss, the top-k at 3 reports or more (an evaluation alone at one)
LOW_ACC, LOW_ACC_POINTS = 0.1, 8   # an accuracy under 10% at 8+ reports from the run's start, never climbing
REWARD_FELL_POINTS, REWARD_FELL = 5, 0.5   # a reward over 5+ reports whose last third sits half its range lower
REWARD_FELL_LEVEL = 0.25    # ...and a quarter of its level lower
AUC_ROUNDS, AUC_LINES = 3, 2     # an AUC of exactly 0.5 (or 1) over 3 boosting rounds, or 2 lines of another printer
RISE_POINTS = 4
RISE_SHARE = 0.75
RISE_MIN = 0.10
RISE_GROWN = 0.20           # a short curve must end 20% above its start (a warm-up's early bump does not)
RISE_LONG = 1.5
RISE_STEADY, RISE_ORDERED = 1.25, 0.9   # ...or 1.25x where the smoothed curve climbs almost in order
RISE_FAR = 2.0              # ...or one that ends at twice its first report within 2-3 reports
RISE_FEW, RISE_SOME = 0.35, 0.45   # a loss up at each of 2 (or 3+) reports, below the divergence thresholds
RISE_RANK = 0.7
BY_CHANCE = 0.003           # a rise that more than 0.3% of random orderings of its values show: medium
NOISY_ORDER = 0.05          # ...and an uneven rise that at most 5% show, medium too, rather than no answer
NOISY_CONF = 0.4
ACC_HELD = 0.05             # an accuracy no more than 5% under its start over a rising loss holds: no divergence
VOCAB_STEPS = 50     # a language model's uniform guess (common.VOCABS) read past the first 50 steps of warm-up from 0
FLAT_REL = 0.005            # a loss within 0.5% of one value at every report is flat
CHANCE_ACC = 1.5            # ...beside an accuracy no higher than 1.5x chance (1/K): a char-RNN at ln(4), 58%, learned
TAIL_AT_CHANCE = 5          # a short loss that fell to ln(K) and stayed within FLAT_REL of it this many reports
STILL_EPOCHS, STILL_REL = 5, 0.002   # ...and within 0.2% over 5 whole epochs or more, it is not being trained
FALLING_SHARE = 0.75        # ...unless lower than the report before at 3 in 4 reports (and never higher): converging
ZERO_MAP_TOL = 1e-4        # an mAP under this is no match at all
ZERO_MAP_EPOCH = 5         # mAP 0 at two evaluations or more, the last from epoch 5 on: it matches nothing
LOW_MIOU = 0.05             # a segmentation's mIoU at 5% or below at every evaluation overlaps nothing learned
START_EPOCH = 0.05          # a fractional epoch this far in may still be the run's first steps
EARLY_STEPS = 500           # an accuracy of 0 within the first epoch's first 500 steps says nothing yet
MANY_CLASSES = 10           # a loss at ln(K) for K this large beside an accuracy over 0.5 is no uniform guess
TOO_GOOD_LOSS = 0.01
ZERO_REPORTS = 2            # a loss of exactly 0 at two reports is no loss at all...
ZERO_JUMP = 0.05            # ...when it drops there from above 0.05, not when it creeps down to it
ZERO_EMPTY = 0.5            # 0 from the first report: a loop that ran no batch, beside every label masked (0.6)
ZERO_FALL = 0.5             # one report at exactly 0 is enough after a loss this high (no rounding falls that far)
ZERO_FIRST, ZERO_SECOND = 0.6, 0.45     # the two readings of a loss at 0, the likelier first
ZERO_PARTS = 3              # ...or at one report, beside 3 or more of its parts at exactly 0 on the same line
GRAD_GROWTH = 100.0         # a gradient norm 100x its first report within a short excerpt
FINITE_BEFORE = 2           # an unnamed column finite at 2 rows, then NaN to its last, turned NaN...
NAN_AFTER = 2               # ...or finite at one row, then NaN at 2 or more to its last
NAN_COLUMNS = 2             # unnamed columns NaN at every row (3 or more), 2 of them, beside a finite one
SPIKE_POINTS, SPIKE_RATIO, SPIKE_BACK = 5, 3.0, 1.5
SKIP_JUMP = 2.0         # a loss this many times its last value at a non-finite norm: no skipped step
# a NaN at step 0: the first batch or a log of 0 in the loss (llm.c #68: numerical's, kept first), never the LR
FIRST_FORWARD_DATA, FIRST_FORWARD_LR = 0.52, 0.3
LONG_NAN_LR = 0.45          # the LR reading of a NaN in a long curve stays below the loss analyzer's
BOXED_DATA = 0.7            # a NaN held to the box parts of a detector's loss: the box targets first
BOOSTED_DATA = 0.6          # a NaN metric of a gradient-boosting library: the labels or features, never the LR
WARMING_REPORTS = 2         # an LR higher at the report of a NaN than at the one before: a warm-up still rising
SMALL_LR_CONF = 0.3         # the LR reading of a NaN under an LR too small to overflow the weights (common.small_lr)
EXCERPT_MAX = 0.75          # a few lines never make a confident diagnosis on their own
MATRIX_MAX_BYTES = 256 * 1024
MATRIX_LINE_MAX = 400       # a confusion-matrix row is short; longer lines are not tried (bounded regex work)
LOSS_FIRST = ("train_loss", "train_loss_epoch", "val_loss", "test_loss")
LOSS_WORDS = ("loss", "nll", "ppl", "perplexity", "xent", "cost", "objective")
PLATEAU_POINTS = 20         # from here on the loss analyzer reads a plateau; below it, this one
EXPLODED = 1000.0           # a loss 1000x its first report exploded, however few the reports
TURNED = 1.5                # a short curve that climbs at every report after its best to 1.5x it diverged
HEALTHY_READ = 0.5          # a short paste with no fault in it: healthy, modestly (a few lines are not a run)
HEALTHY_FALLING = 0.6       # ...and its loss falls across them
# messages that leave a paste's numbers to speak for it (a model summary's count of trainable parameters: its
# count of 0 is crashes.py's finding, which outranks a healthy reading)
QUIET_EVENTS = ("benign", "warning", "trainable_params")
BOOKKEEPING = ("epoch", "step", "iter", "iteration", "global_step", "time", "eta")   # counters, not readings


# names that hold a loss word and no loss: a mixed-precision scaler's scale (apex prints "loss scaler 0",
# its scaler's index)
NOT_LOSSES = ("loss_scale",)
BLOWN_UP = 1e10           # a value of a headerless table this large, finite and no counter: a run that diverged
SKIPPED_REPORTS = 3       # reports with every iteration skipped before a run that never stepped is read


def _short(run: Run, name: str):
    s = run.metrics.get(name)
    return s if s is not None and 1 <= len(s) < SHORT else None


def _losses(run: Run) -> list[Series]:
    """Every loss series, the training loss first: `loss_cls`, `val_loss`, `mloss0`... a loss under
    any name the reader kept. The parts of a summed loss (`train_loss/cls`) count only where no whole
    loss is printed: then the one part a paste shows is the loss it has."""
    others = [n for n in run.metrics.names()
              if any(w in n for w in LOSS_WORDS) and n not in LOSS_FIRST and "/" not in n and n not in NOT_LOSSES]
    names = [n for n in LOSS_FIRST if n in run.metrics] + sorted(others)
    if not names:
        names = sorted(n for n in run.metrics.names() if n.startswith(PART_PREFIX))
    return [s for n in names if (s := run.metrics.get(n)) is not None and len(s)]


def _main_loss(run: Run) -> Series | None:
    """The training loss, or the one loss series a paste holds (a GAN's two losses are not one
    curve to judge)."""
    for name in LOSS_FIRST[:2]:
        if (s := run.metrics.get(name)) is not None and len(s):
            return s
    others = [s for s in _losses(run) if s.name not in LOSS_FIRST]
    return others[0] if len(others) == 1 else None


def _gap(run: Run) -> list[Finding]:
    # a held-out set printed as `Testing Accuracy` where no validation set is: the same gap
    held = "validation" if run.metrics.get("val_loss") is not None or run.metrics.get("val_acc") is not None \
        else "test"
    prefix = "val" if held == "validation" else "test"
    tl, vl = _short(run, "train_loss"), _short(run, f"{prefix}_loss")
    ta, va = _short(run, "train_acc"), _short(run, f"{prefix}_acc")
    # a held-out accuracy printed once or twice beside a long training one (mxnet's batch lines, then
    # `Train-accuracy=1.000000` and `Validation-accuracy=0.808193`): no trend analyzer reads accuracies, so the
    # gap is read here, the training side as the mean of its reports in the held-out one's epoch, up to it (a batch
    # of 8 scores 1.0 a quarter of the time: no fit; an evaluation before training has none before it)
    long_ta, ta_mean = run.metrics.get("train_acc"), None
    if ta is None and va is not None and long_ta is not None and len(long_ta) >= SHORT:
        upto = _reports_beside(run, long_ta, va)
        if len(upto) and np.isfinite(long_ta.values[upto]).all():
            ta_mean = (long_ta, int(upto[0]), int(upto[-1]))
            ta = replace(long_ta, steps=long_ta.steps[upto[-1:]], values=np.array([np.mean(long_ta.values[upto])]),
                         lines=None if long_ta.lines is None else long_ta.lines[upto[-1:]])
    ev, said = [], []
    # a training loss that grew over the paste is diverging: a held-out loss above it is the same blow-up, no gap
    # between a fitted training set and the rest (fastai's docs: train 38 -> 839, valid 25 -> 9966)
    diverging = tl is not None and len(tl) >= 2 and np.isfinite(tl.values).all() and tl.values[0] > 0 and \
        float(tl.values[-1]) >= GAP_LOSS_RATIO * float(tl.values[0])
    if tl is not None and vl is not None and not diverging:
        t, v = float(tl.values[-1]), float(vl.values[-1])
        if np.isfinite([t, v]).all() and t > 0 and v >= GAP_LOSS_RATIO * t:
            ev += [point(tl, len(tl) - 1, "training loss"), point(vl, len(vl) - 1, f"{held} loss")]
            said.append(f"{held} loss {fmt(v)} is {v / t:.0f}x the training loss {fmt(t)}")
    if ta is not None and va is not None:
        t, v = float(as_share(ta.values)[-1]), float(as_share(va.values)[-1])     # 91.2 and 0.9 alike
        # ...or a training set fitted to the last example with a held-out one GAP_ACC_FITTED under it
        if np.isfinite([t, v]).all() and (t - v >= GAP_ACC or t >= FITTED and t - v >= GAP_ACC_FITTED):
            trained = point(ta, len(ta) - 1, "training accuracy") if ta_mean is None else Evidence(
                f"training accuracy {fmt(t)}, the mean of its {ta_mean[2] - ta_mean[1] + 1} reports up to the "
                f"{held} one", ta_mean[0].artifact, ta_mean[0].span_locator(ta_mean[1], ta_mean[2]))
            ev += [trained, point(va, len(va) - 1, f"{held} accuracy")]
            said.append(f"training accuracy {fmt(t)} against {fmt(v)} on {held}")
    if not said:
        return _test_apart(run, ta)
    conf = 0.7 if len(said) == 2 else 0.55
    return [Finding(code="overfitting",
                    issue=f"The model fits the training set far better than the {held} set: " + "; ".join(said),
                    severity="medium", confidence=conf, evidence=ev,
                    fix="Early-stop on validation loss, add augmentation, weight decay or dropout, or use a "
                        "smaller model; the validation curve per epoch would show where the gap opened",
                    expected_impact="validation loss and accuracy close in on the training figures",
                    analyzer=NAME, quick_fix="Early-stop on validation loss")]


def _reports_beside(run: Run, train: Series, held: Series) -> np.ndarray:
    """The indices of the reports of a long training series that the held-out series' last report is compared
    with: those of its epoch printed up to it (an epoch's batches and its summary line), or without epochs the
    last GAP_TAIL up to it; none where the held-out report came before any (an evaluation before training). Two
    files (a train log and an eval log) are not ordered by line: the training series' last epoch, or last
    GAP_TAIL reports."""
    if train.lines is not None and held.lines is not None and train.artifact == held.artifact:
        idx = np.flatnonzero(train.lines <= held.lines[-1])
        held_epochs = _epoch_of_lines(run, held)
    else:
        idx, held_epochs = np.arange(len(train)), None
    epochs = _epoch_of_lines(run, train)
    if len(idx) and epochs is not None:
        last = held_epochs[-1] if held_epochs is not None else epochs[idx[-1]]
        # (an epoch printed only on its end-of-epoch validation line labels its own batches with the one before)
        idx = idx[epochs[idx] == last] if np.any(epochs[idx] == last) else idx
    return idx[-GAP_TAIL:]


def _epoch_of_lines(run: Run, s: Series) -> np.ndarray | None:
    """The epoch printed at or above each report of `s` (NaN before the first), where the paste prints epochs
    in the same file."""
    epoch = run.metrics.get("epoch")
    if epoch is None or epoch.lines is None or s.lines is None or epoch.artifact != s.artifact or not len(epoch):
        return None
    j = np.searchsorted(epoch.lines, s.lines, side="right") - 1
    return np.where(j >= 0, epoch.values[np.maximum(j, 0)], np.nan)


def _test_apart(run: Run, ta: Series | None) -> list[Finding]:
    """Validation close to training and the test set far under both: the model generalises to data
    prepared like its training data, and the test data is prepared otherwise (a resize, a normalisation or
    a label order of its own), or its labels do not match."""
    va, te = _short(run, "val_acc"), _short(run, "test_acc")
    if va is None or te is None:
        return []
    v, t = float(as_share(va.values)[-1]), float(as_share(te.values)[-1])
    if not np.isfinite([v, t]).all() or v - t < GAP_ACC or (
            ta is not None and float(as_share(ta.values)[-1]) - v >= GAP_ACC):
        return []
    return [Finding(code="data_pipeline_bug",
                    issue=f"Validation accuracy {fmt(v)} but test accuracy {fmt(t)} (as shares): the test data is not "
                          "prepared like the training and validation data",
                    severity="medium", confidence=0.55,
                    evidence=[point(va, len(va) - 1, "validation accuracy"), point(te, len(te) - 1, "test accuracy")],
                    fix="Run the test set through the same transforms as validation (resize, normalisation, "
                        "tokenizer) and check its label order (class_to_idx) against training's",
                    analyzer=NAME, quick_fix="Compare the test transforms and labels with validation's")]


def _zero_map(run: Run) -> list[Finding]:
    """A detector's mAP at 0 (under ZERO_MAP_TOL) at every evaluation (two or more, reaching epoch ZERO_MAP_EPOCH;
    or one pycocotools summary or YOLO row with its mAP and mAP50 at 0, with less confidence): no prediction ever
    matches a labelled box.
    A few epochs in, even a weak detector matches some; what matches none is the labels (not loaded, class ids
    off by one or beyond the head, boxes in another convention) more often than the training."""
    def zero(name: str) -> Series | None:
        # (under ZERO_MAP_TOL: YOLO prints 2.4e-06, no detector that matches anything scores that little)
        s = run.metrics.get(name)
        return s if s is not None and len(s) and np.isfinite(s.values).all() and \
            not np.any(np.abs(s.values) >= ZERO_MAP_TOL) else None
    for name in ("map", "map50"):
        s = zero(name)
        if s is None or name == "map" and run.metrics.get("map50") is not None and zero("map50") is None:
            continue           # (mAP50-95 at 9e-05 beside an mAP50 of 0.001 and 8% recall: it matches some)
        epochs = run.metrics.get("epoch")
        late = epochs is not None and len(epochs) and float(np.nanmax(epochs.values)) >= ZERO_MAP_EPOCH
        # one evaluation (a pasted pycocotools summary) with its mAP and mAP50 both 0: said with less confidence
        single = name == "map" and len(s) == 1 and zero("map50") is not None
        early = epochs is not None and len(epochs) and not late      # YOLO's first epochs' row reads 0 too
        if not (len(s) >= 2 and late or single and not early):
            continue           # a detector's first evaluations read 0 while it learns to localise
        conf = 0.5 if len(s) >= 2 else 0.4
        ev = [point(s, 0, f"first {name}"), point(s, len(s) - 1, f"last {name}")]
        nil = "0" if not np.any(s.values) else f"under {fmt(ZERO_MAP_TOL)}"
        said = f"{name} is {nil} at every one of {len(s)} evaluations" if len(s) > 1 else f"{name} and map50 are {nil}"
        return [Finding(code="data_pipeline_bug", issue=f"{said}: no prediction ever matches a labelled box",
                        severity="medium", confidence=conf, evidence=ev, analyzer=NAME,
                        fix="Check the labels the loader hands the model: draw a few ground-truth boxes on their "
                            "images (format xywh vs xyxy, normalised or pixels), compare the class ids with the "
                            "head's num_classes (0- or 1-based), and check the label files were found at all",
                        quick_fix="Draw a batch's ground-truth boxes"),
                Finding(code="lr_too_high", issue=f"{said}: or a detector whose training never converged",
                        severity="medium", confidence=0.3, evidence=ev, analyzer=NAME,
                        fix="Check the loss falls; if it does not, lower the LR (a recipe's LR is for its "
                            "number of GPUs: scale it to yours)", quick_fix="Check the loss falls")]
    return []


# detectron2's evaluation results as printed (`OrderedDict([('bbox', {'AP': 0.0, 'AP50': 0.0, ..., 'AP-person': 0.0}),
# ('segm', ...`): a task's dict of metric names and numbers (nan where a size has no object)
_NUMBER = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan)"
_TASK_RESULTS = re.compile(r"\('(\w{1,20})',\s{0,4}\{((?:'[^'\n]{1,60}':\s{0,4}" + _NUMBER
                           + r"(?:,\s{0,4})?){1,400})\}\)")
_TASK_VALUE = re.compile(r"'([^'\n]{1,60})':\s{0,4}(" + _NUMBER + ")")
TASK_SCORES = 20.0          # an AP (detectron2 prints percentages) of a head that finds the objects, past a start


def _one_task_zero(run: Run) -> list[Finding]:
    """One task of a model's evaluation at exactly 0 at every threshold (bbox AP, AP50, AP75... all 0.0) while
    another task of the same model scores TASK_SCORES or more (keypoints AP 89; an early evaluation's 12 says
    less, a keypoint head starts at 0): the model finds the objects, so what scores the zero task is not what
    it predicts. Its ground truth is: boxes registered in another convention (detectron2's BoxMode.XYXY_ABS
    against XYWH_ABS, a negative height), or that task's annotations missing."""
    for a, text in pasted_texts(run, ("log", "traceback", "samples"), MATRIX_MAX_BYTES):
        for n, line in enumerate(text.split("\n"), 1):
            tasks = {m.group(1): [(k, float(v)) for k, v in _TASK_VALUE.findall(m.group(2))]
                     for m in _TASK_RESULTS.finditer(line) if "AP" in m.group(2)}
            # (a size with no object prints nan: the rest of the task's values say whether it scored)
            zero = [t for t, vals in tasks.items() if any(v == 0 for _, v in vals)
                    and all(v == 0 or math.isnan(v) for _, v in vals)]
            aps = {t: dict(vals).get("AP", 0.0) for t, vals in tasks.items()}
            good = {t: ap for t, ap in aps.items() if ap >= TASK_SCORES}
            if not zero or not good:
                continue
            others = ", ".join(f"{t} AP {fmt(v)}" for t, v in good.items())
            said = f"{zero[0]} AP is 0 at every threshold while {others}"
            ev = [Evidence(f"{said}: the model finds the objects", a.path, f"line {n}")]
            return [Finding(code="data_pipeline_bug",
                            issue=f"{said}: the {zero[0]} ground truth is not what the model predicts (boxes "
                                  "registered in another format, or that task's annotations missing)",
                            severity="high", confidence=0.65, evidence=ev, analyzer=NAME,
                            fix=f"Check the {zero[0]} annotations the evaluator compares with: in detectron2, the "
                                "BoxMode you registered must match the boxes (XYXY_ABS: x0, y0, x1, y1; XYWH_ABS: x, "
                                "y, w, h); open the *_coco_format.json the evaluator wrote and look for negative "
                                "widths or heights",
                            quick_fix="Check the BoxMode the dataset is registered with")]
    return []


def _low_miou(run: Run) -> list[Finding]:
    """A segmentation's mean IoU at LOW_MIOU or below at every evaluation, pasted without a training curve
    or epochs (a trained model evaluated), or with its last from epoch ZERO_MAP_EPOCH on: a model that
    trained at all overlaps its classes more than that, so the ground truth is not what the evaluation
    compares with: label ids not mapped to train ids, a palette PNG read as RGB (cv2.imread), the ignore
    index scored as a class."""
    s = run.metrics.get("miou")
    if s is None or not len(s) or not np.isfinite(s.values).all():
        return []
    percent = float(s.values.max()) > 1         # a series printed as percentages (mmseg's `mIoU: 3.2100`)
    v = s.values / 100 if percent else s.values
    epochs = run.metrics.get("epoch")
    late = epochs is not None and len(epochs) and float(np.nanmax(epochs.values)) >= ZERO_MAP_EPOCH
    early = not late and (epochs is not None and bool(len(epochs)) or run.metrics.get("train_loss") is not None)
    if float(v.max()) > LOW_MIOU or early:
        return []           # a segmenter's first evaluations overlap little while it learns
    ev = [point(s, len(s) - 1, "mIoU" + (" (a percentage)" if percent else ""))]
    return [Finding(code="data_pipeline_bug",
                    issue=f"mIoU is {float(v[-1]):.1%}: the predictions overlap almost nothing of the ground truth, "
                          "which is what ground truth in another encoding than the evaluation expects gives",
                    severity="medium", confidence=0.45, evidence=ev, analyzer=NAME,
                    fix="Check the label maps the evaluation reads: one class id per pixel (a palette PNG read "
                        "with PIL, not cv2.imread, which returns RGB), ids mapped to the train ids the model "
                        "predicts (Cityscapes' labelIds -> trainIds), and the ignore index (255) left out of the "
                        "classes",
                    quick_fix="Check the label maps' encoding and ids"),
            Finding(code="lr_too_high", issue=f"mIoU is {float(v[-1]):.1%}: or a model whose training never "
                                              "converged", severity="medium", confidence=0.25, evidence=ev,
                    analyzer=NAME, fix="Check the training loss fell; if it did not, lower the LR",
                    quick_fix="Check the loss falls")]


def _masked_row(run: Run) -> list[Finding]:
    """A printed tensor with a row that is -inf in every cell, and no NaN read anywhere: a row masked out
    whole. Harmless while it stays a mask; a softmax over it is exp(-inf) / 0 = NaN, the NaN of attention
    over padding, of a masked log-softmax, of a beam with no live hypothesis. Listed low: it says where a
    NaN would come from, not that one came."""
    if any(n.startswith((NONFINITE_PREFIX, UNNAMED)) or not np.isfinite(x.values).all()
           for n in run.metrics.names() if (x := run.metrics.get(n)) is not None):
        return []
    for a, text in pasted_texts(run, ("log", "traceback", "samples"), MATRIX_MAX_BYTES):
        for n, line in enumerate(map(undress, text.splitlines()), 1):
            if len(line) <= MATRIX_LINE_MAX and masked_row(line):
                return [Finding(code="numerical_instability",
                                issue="A printed row is -inf in every cell: a row masked out whole, which a "
                                      "softmax turns into NaN",
                                severity="low", confidence=0.3, analyzer=NAME,
                                evidence=[Evidence(f"{line.strip()}: every entry masked", a.path, f"line {n}")],
                                fix="Mask with a large finite negative (torch.finfo(scores.dtype).min) instead of "
                                    "-inf, or skip the rows with nothing to attend to (all padding) before the "
                                    "softmax; print the loss beside it: a finite loss leaves the mask harmless",
                                quick_fix="Mask with finfo.min instead of -inf")]
    return []


def _dice_out_of_range(run: Run) -> list[Finding]:
    """A Dice score outside what its formula allows. Above 1 but at most 2 (printed as a share, so not a
    percentage): the overlap formula cannot exceed 1 for masks of 0s and 1s, so the masks hold other values (0/255
    from an image file), and a binary loss on them goes negative. Below -1, of both signs, or above 100, it is no
    overlap of two masks on any scale: what reached the metric is not a mask and a probability map (region labels,
    raw logits, a target transformed apart from the prediction)."""
    s = run.metrics.get("dice")
    if s is None or not len(s) or not np.isfinite(s.values).any():
        return []
    top, low = float(np.nanmax(s.values)), float(np.nanmin(s.values))
    if 1.0 < top <= 2.0:
        i = int(np.nanargmax(s.values))
        issue = f"{s.name} reaches {fmt(top)}, above the 1 a Dice score cannot exceed: the masks are not 0/1"
        fix, quick = ("Map the masks to 0/1 (mask / 255, or mask > 127) in the dataset before the loss; check "
                      "mask.unique() on one batch", "Scale the masks to 0/1")
    elif low >= 0.0 and top <= 100.0 or -1.0 <= low and top <= 0.0:
        return []               # (all in [-1, 0]: a Dice printed negated, as the loss term it is in nnU-Net)
    else:
        i = int(np.nanargmin(s.values)) if low < 0.0 else int(np.nanargmax(s.values))
        issue = f"{s.name} reads {fmt(float(s.values[i]))}, which no Dice score can be (0 to 1, or 0 to 100 %): " \
                "what reaches the metric is not a mask and a probability"
        fix, quick = ("Print one batch's target and prediction as the metric gets them (unique values, min, max): "
                      "region or class labels where 0/1 masks are expected, or logits where probabilities are, "
                      "name the step of the pipeline that changed them (a label-to-region conversion, a transform "
                      "applied to one side only)", "Check the targets the metric gets")
    return [Finding(code="data_pipeline_bug", issue=issue, severity="high", confidence=0.6,
                    evidence=[point(s, i, s.name)], fix=fix, analyzer=NAME, quick_fix=quick)]


def _absurd_lr(run: Run) -> list[Finding]:
    lr = run.metrics.get("lr")
    if lr is None or not len(lr) or optimizer_family(run) is not None:
        return []                   # nothing to read, or a known family: learning_rate.py judges it
    i = int(np.nanargmax(lr.values)) if np.isfinite(lr.values).any() else None
    if i is None or lr.values[i] < LR_ABSURD:
        return []
    tops = ", ".join(f"{fam} ~{fmt(hi)}" for fam, (_, hi) in LR_RANGE.items() if fam in ("adam", "sgd"))
    issue = f"Learning rate {fmt(float(lr.values[i]))} is above the usual range of every common optimizer " \
            f"(upper ends: {tops})"
    ev = [point(lr, i, "lr")]
    falls = _falls_throughout(run)
    if falls is not None:
        # the rate's harm shows in the loss: one that falls at every report and stays finite is a run that takes
        # this rate (fairseq's NAG at 1.25, LARS), so the rate is a note, not the fault
        ev.append(point(falls, len(falls) - 1, falls.name))
        issue += (f"; but {falls.name} falls under it ({fmt(float(falls.values[0]))} -> "
                  f"{fmt(float(falls.values[-1]))}), so the run copes with it (an optimizer that takes such rates)")
    calm = falls is None and _no_harm_shown(run)
    if calm:
        issue += "; the one loss report beside it shows no harm, so it is a suspect, not a finding"
    return [Finding(code="lr_too_high",
                    issue=issue,
                    severity="low" if falls is not None else "medium" if calm else "high",
                    confidence=0.3 if falls is not None else 0.45 if calm else 0.65,
                    evidence=ev,
                    fix="Lower the learning rate (Adam ~1e-4 to 1e-3, SGD ~0.01 to 0.1) with a warm-up; if a "
                        "schedule multiplies it (Noam's lr factor), check the product it reaches at its peak",
                    expected_impact="the loss falls instead of exploding",
                    analyzer=NAME,
                    quick_fix="Lower the LR with a warm-up")]


def _no_harm_shown(run: Run) -> bool:
    """One report of each loss, finite and positive, and nothing else turned non-finite (fairseq's
    `train loss 2.24 | ... | lr 1.25` beside `valid loss 1.75`): no harm shown, and no trend to show one. Two
    reports or more are judged by how the loss moves (_falls_throughout)."""
    losses = _losses(run)
    series = [x for n in run.metrics.names() if (x := run.metrics.get(n)) is not None]
    # a perplexity of 1e43 beside the loss (OpenNMT's `ppl: 2.7e43; xent: 6776.20; lr: 2.00000`) is the harm
    blown = any(float(np.abs(x.values).max(initial=0.0)) >= BLOWN_UP and not (len(x) > 1 and _count_up(x.values))
                for x in series)
    # a `gnorm nan` beside it is harm (a value the reader kept under NONFINITE_PREFIX is one too)
    finite = all(np.isfinite(x.values).all() for x in series)
    unnamed = any(n.startswith(UNNAMED) for n in run.metrics.names())
    one_each = all(len(s) == 1 and (s.values > 0).all() for s in losses)
    return bool(losses) and one_each and finite and not blown and not unnamed


def _falls_throughout(run: Run) -> Series | None:
    """The training loss, where every loss the paste shows is finite, positive and falls by FALLS_SHARE or more at
    each of FALLS_POINTS or more reports; or, on a longer curve (FELL_POINTS reports or more, noisy from batch to
    batch), falls by FELL_SHARE from its first tenth to its last with no divergence under an LR that never moved,
    its validation loss lower at its last report than at its first (the PyTorch word-language-model example at its
    default lr=20 with clipping: an LSTM's loss 7.49 -> 4.51; where the rate was annealed, the fall is the anneal's).
    """
    losses = _losses(run)
    if not losses or any(not np.isfinite(s.values).all() or (s.values <= 0).any() for s in losses):
        return None
    if all(len(s) >= FALLS_POINTS and (s.values[1:] <= s.values[:-1] * (1 - FALLS_SHARE)).all() for s in losses):
        return losses[0]
    train, lr = losses[0], run.metrics.get("lr")
    held = lr is not None and len(lr) and float(np.nanmax(lr.values)) <= float(np.nanmin(lr.values)) * 1.01
    # a loss the rate threw far up and that came back (41546 at the first report, then ln(10)) is no fall under it
    first, median = float(train.values[0]), float(np.median(train.values))
    thrown = float(train.values.max()) > FELL_ABOVE_FIRST * first or first > FELL_FIRST_BLOWN * median
    if (not held or thrown or len(train) < FELL_POINTS or relative_change(train.values) < FELL_SHARE
            or divergence(train.values) is not None
            or any(len(s) >= 2 and s.values[-1] >= s.values[0] for s in losses[1:])):
        return None     # a fall that came as the rate was annealed is the anneal's, not the rate's
    return train


def _first_nonfinite(run: Run) -> tuple[Series, int, bool] | None:
    """The series and index where a loss (or the gradient norm) first turns NaN/Inf, the earliest
    line of all; a value mltd does not name only where no loss turns. The flag says the NaN is
    nameless: a value mltd does not name, or a headerless column NaN from the paste's first row, of
    which nothing is known before the NaN."""
    hits: list[tuple[bool, int, Series, int]] = []     # (nameless, line, series, index)
    losses = _losses(run)
    grad = run.metrics.get("grad_norm")
    skipped = grad is not None and _skipped_steps(grad, losses, loss_scaler(run))
    for s in losses + ([grad] if grad is not None and not skipped else []):
        bad = np.flatnonzero(~np.isfinite(s.values))
        if len(bad):
            i = int(bad[0])
            hits.append((False, int(s.lines[i]) if s.lines is not None else 0, s, i))
    for s in _unnamed(run):
        at = _turned_nan(s.values)
        if at is not None:
            hits.append((False, int(s.lines[at]) if s.lines is not None else 0, s, at))
    for s in _nan_throughout(run):    # already NaN where the paste starts: nothing said of before
        hits.append((True, int(s.lines[0]) if s.lines is not None else 0, s, 0))
    for s in _nameless_nonfinite(run, losses):   # starts at its first NaN/Inf report
        hits.append((True, int(s.lines[0]) if s.lines is not None else 0, s, 0))
    if not hits:
        return None
    nameless, _, s, i = min(hits, key=lambda h: h[:2])   # a loss's NaN outranks a nameless one, then the earliest
    return s, i, nameless


_RESUMED = re.compile(r"(?i)\b(?:load(?:ed|ing)?\s+(?:the\s+)?checkpoint|resum(?:e|ed|ing)\b)")


def _first_forward(run: Run, s: Series, i: int) -> bool:
    """Whether report `i` is a loss at step 0, the paste's first: the forward pass of the first batch, computed
    before the optimizer stepped once (Caffe's `Iteration 0, loss = nan`, a loop's `step 0`). Not a gradient norm
    (the backward pass's), not where the steps are epochs (an epoch 0's mean loss comes after many updates), not a
    later epoch's step 0 (a counter that restarts each epoch), nor after the log loaded a checkpoint (trained
    weights, which an LR may have broken)."""
    if i != 0 or "loss" not in s.name or s.step_kind != "step" or float(s.steps[0]) != 0 \
            or not _at_the_start(run, s, i):
        return False
    if s.lines is not None:
        for _, text in pasted_texts(run, ("log",), MATRIX_MAX_BYTES, only=s.artifact):
            if _RESUMED.search("\n".join(text.split("\n")[:int(s.lines[0])])):
                return False
    epochs, epoch = _epoch_of_lines(run, s), run.metrics.get("epoch")
    if epochs is None or epoch is None or epoch.lines is None or s.lines is None:
        return True
    on = np.isin(s.lines, epoch.lines)
    if not on.any():
        return True
    at = epochs[on]
    # steps that are the epochs printed beside them, where some is past 0 (`epoch 0 | step 0` alone says nothing)
    return not (np.array_equal(at, s.steps[on]) and bool(np.any(s.steps[on] != 0)))


def _at_the_start(run: Run, s: Series, i: int) -> bool:
    """Whether report `i` of `s` may be the run's start, as far as the paste says: not where its own step is
    past EARLY_STEPS, nor where the epoch printed at or before it is past the first (a Trainer's `'epoch': 0.53`
    is half an epoch in; Keras' `Epoch 1/10` is the first)."""
    if s.step_kind == "step" and float(s.steps[i]) > EARLY_STEPS:
        return False
    epoch = run.metrics.get("epoch")
    if epoch is None or not len(epoch):
        return True
    if epoch.lines is not None and s.lines is not None and epoch.artifact == s.artifact:
        above = np.flatnonzero(epoch.lines <= s.lines[i])          # on its line, or the last one above it
        j = int(above[np.argmax(epoch.lines[above])]) if len(above) else -1
    else:
        j = int(np.searchsorted(epoch.steps, s.steps[i], side="right")) - 1
    if j < 0 or not np.isfinite(epoch.values[j]):
        return True
    e = float(epoch.values[j])
    return e <= 1 and (e == round(e) or e <= START_EPOCH)


def _skipped_steps(grad: Series, losses: list[Series], scaler: bool) -> bool:
    """A gradient norm non-finite at some steps, finite again at its last, while every loss stays
    finite: those steps were skipped (a dynamic loss scaler's overflow, fp16's first steps); under a
    declared `scaler`, so is a run's start not yet finite, SCALER_HALVINGS reports or fewer. An
    update with an Inf or NaN gradient would have carried it into the weights and the loss. A skipped
    step leaves the loss where it was: one that jumped SKIP_JUMP times at the first bad norm was hit."""
    v, finite = grad.values, np.isfinite(grad.values)
    if not (len(v) and losses and all(np.isfinite(s.values).all() for s in losses)):
        return False
    tail = len(v) - (int(np.flatnonzero(finite)[-1]) + 1 if finite.any() else 0)    # non-finite at the end
    if tail and not (scaler and tail == len(v) < SCALER_HALVINGS):
        return False
    bad = np.flatnonzero(~np.isfinite(v))
    return not len(bad) or not any(_jumped_at(s, float(grad.steps[bad[0]])) for s in losses)


def _jumped_at(s: Series, step: float) -> bool:
    """Whether the loss's reports from `step` on (the first few) stand SKIP_JUMP times the last before."""
    before, after = s.values[s.steps < step], s.values[s.steps >= step]
    if not len(before) or not len(after) or before[-1] <= 0:
        return False
    return float(np.median(after[:3])) > SKIP_JUMP * float(before[-1])


def _turned_nan(v: np.ndarray) -> int | None:
    """Where a column of unknown meaning turned NaN: finite for FINITE_BEFORE rows or more (or one,
    then NAN_AFTER NaN rows or more), then non-finite at every row to the last. A NaN cell between
    finite ones is a value left out (a class with no sample, a metric not computed that epoch), not a
    computation that overflowed."""
    finite = np.isfinite(v)
    if not len(v) or finite[-1]:
        return None
    i = int(np.flatnonzero(finite)[-1]) + 1 if finite.any() else 0
    held = finite[:i].sum() >= FINITE_BEFORE or (i and len(v) - i >= NAN_AFTER)
    return i if held else None


def _unnamed(run: Run) -> list[Series]:
    """The columns of a table printed without its header: a metric whose name is unknown, yet one
    that was finite and turns NaN is a computation that overflowed all the same."""
    return [s for n in run.metrics.names() if n.startswith(UNNAMED) and (s := run.metrics.get(n)) is not None]


def _blown_up_unnamed(run: Run) -> list[Finding]:
    """A column printed with no name that blew up (bare_rows' `explodes`: a million-fold, growing at 3 rows in 4,
    to 1e10 or past) and stayed finite: whatever a training loop prints each step (its loss, a weight) grows
    geometrically only where the updates overshoot. Where a column turned NaN, the NaN readings speak instead; a
    column that starts at 0 (a bias) is left for the others beside it."""
    cols = _unnamed(run)
    if any(not np.isfinite(c.values).all() for c in cols):
        return []
    blown = [(math.log10(abs(c.values[-1])) - math.log10(abs(c.values[0])), c) for c in cols if explodes(c.values)]
    if not blown:
        return []
    orders, s = max(blown, key=lambda b: b[0])
    return [Finding(code="lr_too_high",
                    issue=f"{s.name}, a number printed with no name, grew {orders:.0f} orders of magnitude over "
                          f"{len(s)} prints ({fmt(float(s.values[0]))} -> {fmt(float(s.values[-1]))}), larger at "
                          f"{int((np.diff(np.abs(s.values)) > 0).sum())} of {len(s) - 1} steps: a loss or a weight "
                          "that grows geometrically step after step is updates that overshoot",
                    severity="high", confidence=0.6,
                    evidence=[point(s, 0, f"first {s.name}"), point(s, len(s) - 1, f"last {s.name}")],
                    fix="Lower the learning rate 10x or more (plain gradient descent on unscaled inputs needs far "
                        "less: normalise the inputs first) and print the loss beside the values",
                    expected_impact="the printed values stop growing and the loss falls", analyzer=NAME,
                    onset_step=float(s.steps[0]), quick_fix="Lower the LR 10x")]


def _nan_throughout(run: Run) -> list[Series]:
    """The columns of a headerless table NaN at every row, NAN_COLUMNS of them or more, beside a column
    that stays finite (the counter's time, an accuracy held): a paste cut after the run went NaN. One
    such column alone is a metric never computed, unless the finite one beside it has blown up."""
    cols = _unnamed(run)
    nan = [s for s in cols if len(s) >= FINITE_BEFORE + 1 and np.isnan(s.values).all()]
    finite = [s for s in cols if np.isfinite(s.values).all()]
    # one such column beside one at BLOWN_UP (HTSL's `-1.7e+19 0 -nan`): not a metric never computed, a run gone
    blown = any(float(np.abs(s.values).max(initial=0.0)) >= BLOWN_UP for s in finite if not _count_up(s.values))
    return nan if (len(nan) >= NAN_COLUMNS or (nan and blown)) and finite else []


def _nameless_nonfinite(run: Run, losses: list[Series]) -> list[Series]:
    """Values printed NaN/Inf under a name no alias knows (`lb=nan`), which the reader keeps from their
    first non-finite report on. NaN weights never heal: a value finite again at its last report (an
    RL reward before the first episode ends), or a loss printed finite (and not 0) on a later line (an
    AUC of a one-class batch), says the model's state held no NaN. A part of the loss does not (a
    detector's classification part stays finite beside a box part gone NaN). A value read off a line that
    is a harmless message (tensorboardX's `Warning: NaN or Inf found in input tensor.`) is that message."""
    named = [n for n in run.metrics.names() if n.startswith(NONFINITE_PREFIX) and not _EPISODIC.search(n)]
    out = []
    for s in (s for n in named if (s := run.metrics.get(n)) is not None and len(s)):
        if off_harmless_lines(run, s, also=("error",)):
            continue            # `Warning: NaN or Inf found in input tensor.` is a harmless message's words, and
            #                     an exception's message (`has invalid values: [nan, ...]`) the error's
        at = int(s.lines[0]) if s.lines is not None else 0
        outlived = any(x.lines is not None and "/" not in x.name and bool(_scored(x.values[x.lines > at]).any())
                       for x in losses)
        if not np.isfinite(s.values[-1]) and not outlived:
            out.append(s)
    return out


def _scored(v: np.ndarray) -> np.ndarray:
    """Values that score something: finite and not exactly 0 (a loss of 0.000000 after a NaN counted
    no batch, Lua Torch's `LOSS: 0.000000` at an epoch's end)."""
    return np.isfinite(v) & (v != 0)


# an RL statistic averaged over the episodes that ended (`episode_reward_mean`, SB3's `ep_rew_mean`)
_EPISODIC = re.compile(r"episode|reward|ep_?rew|ep_?len")      # (OpenAI Baselines prints `eplenmean`)


def _no_episode_ended(run: Run) -> list[Finding]:
    """An RL episode statistic printed NaN at its last report (RLlib's `episode_reward_mean: .nan`) is
    a mean over no episodes, not a NaN in the model: no episode ended in the iteration. An
    environment that never returns `done` (or `terminated`/`truncated`) never closes one, so no
    reward is ever counted, whatever the policy learns; a horizon longer than the rollout does the
    same. The policy's own loss, where one is printed NaN too, is read by `_nan_loss` instead; a
    statistic the log stops printing while other values go on (two or more reports of one after its
    last) says nothing of the paste's end."""
    if any(not np.isfinite(s.values).all() for s in _losses(run)):
        return []
    stats = [s for n in run.metrics.names() if n.startswith(NONFINITE_PREFIX) and _EPISODIC.search(n)
             and (s := run.metrics.get(n)) is not None and len(s) and np.isnan(s.values[-1])
             and not _printed_on(run, s)]
    if not stats:
        return []
    s = stats[0]
    names = ", ".join(_shown(x) for x in stats)
    return [Finding(code="data_pipeline_bug",
                    issue=f"{names} {'is' if len(stats) == 1 else 'are'} NaN: a statistic over no finished "
                          "episodes; the environment never ended an episode",
                    severity="high",
                    confidence=0.6,
                    evidence=[point(s, len(s) - 1, f"{_shown(s)} (no episode finished)")],
                    fix="Make the environment's step() return done=True (terminated or truncated) when an "
                        "episode ends, or cap it with a time limit (gymnasium's TimeLimit, RLlib's horizon) "
                        "shorter than the rollout; episodes_total should then rise above 0",
                    expected_impact="episodes finish and the reward statistics are finite",
                    analyzer=NAME,
                    quick_fix="Return done=True at the end of an episode")]


def _printed_on(run: Run, s: Series) -> bool:
    """Whether some other series has two or more reports after `s`'s last: the log went on without it."""
    if s.lines is None:
        return False
    last = int(s.lines[-1])
    return any(x.lines is not None and int((x.lines > last).sum()) >= 2
               for n in run.metrics.names() if (x := run.metrics.get(n)) is not None and x is not s)


def _shown(s: Series) -> str:
    name = s.name.removeprefix(NONFINITE_PREFIX)
    return {PRINTED_NAN: "the printed tensor", PRINTED_ROW: "the printed row",
            PRINTED_VALUE: "the printed value"}.get(name, name)


def _blown_up_before(run: Run, s: Series, i: int) -> Evidence | None:
    """A column of the same headerless table as `s` whose finite values reached BLOWN_UP in magnitude before
    `s` turned non-finite at its report `i`, or on its line: a print loop's values do not reach 1e10 unless
    the weights have diverged (HTSL's `-5.4e+19 0 0.97` before `nan`). Not a column of whole numbers that
    never falls (tokens or samples counted), nor a named loss: one large from its start that falls is a
    regression on unscaled targets, and one that climbed is read as a climb already."""
    if s.lines is None:
        return None
    at = int(s.lines[i])
    for x in _unnamed(run) if s.name.startswith(UNNAMED) else []:
        if x is s or x.lines is None or x.artifact != s.artifact or _count_up(x.values):
            continue
        early = np.flatnonzero((x.lines <= at) & np.isfinite(x.values) & (np.abs(x.values) >= BLOWN_UP))
        if len(early):
            j = int(early[np.argmax(np.abs(x.values[early]))])
            return Evidence(f"{x.name} reached {fmt(float(x.values[j]))} before {s.name} turned non-finite: values "
                            "that size mean the weights had already diverged, the LR's signature",
                            x.artifact, x.locator(j))
    return None


def _count_up(v: np.ndarray) -> bool:
    """Whole numbers that never fall: a counter (tokens, samples, a timestamp), whatever its size."""
    f = v[np.isfinite(v)]
    return bool(len(f) and np.all(f == np.round(f)) and np.all(np.diff(f) >= 0))


def _nan_loss(run: Run) -> list[Finding]:
    """A loss that turns NaN has three readings, each listed with what points to it: numerical
    instability (an overflow, a log(0), fp16: the mechanism, and the reading nothing contradicts),
    an LR too high (a loss that climbed first, an LR above its optimizer's range), and bad data (a
    NaN in the inputs, an empty box, a target out of range: a NaN from the very first report, or in
    the validation loss alone while training stays finite). A climb puts the LR first; a NaN only in
    validation puts the data first; otherwise the overflow leads and the reply says what would tell
    them apart."""
    hit = _first_nonfinite(run)
    if hit is None:
        return []
    s, i, nameless = hit
    if nameless and s.lines is not None and any(e.code and e.artifact == s.artifact and e.line == int(s.lines[i])
                                                for e in run.events):
        return []       # a value without a name on a line a signature read (`Magnitude of gradient is bad: inf`)
    line = Evidence(f"{s.name} became {fmt(float(s.values[i]))} at {s.step_kind} {fmt_step(s.steps[i])}",
                    s.artifact, s.locator(i))
    if nameless:
        line = Evidence(f"{_shown(s)} (a value mltd does not name) was printed as {fmt(float(s.values[i]))} "
                        f"at {s.step_kind} {fmt_step(s.steps[i])}", s.artifact, s.locator(i))
    before = s.values[:i][np.isfinite(s.values[:i])]
    ev_num, ev_lr, ev_data = [line], [line], [line]
    rose = len(before) >= 2 and before[-1] > before[0] * (1 + RISE_MIN)
    # a value printed beside it already at 1e10 and more: the run diverged, not one op (a climb of its own says so
    # already; a value NaN from its first report has no before to say it of)
    blown = None if rose or not (nameless or len(before)) else _blown_up_before(run, s, i)
    if blown is not None:
        rose = True
        ev_lr.append(blown)
    if nameless:                 # its finite values were not kept: nothing more is said about before the NaN
        pass
    elif len(before):
        last = point(s, i - 1, f"last finite {s.name}")
        if blown is not None:
            pass
        elif rose:
            ev_lr.append(Evidence(f"{s.name} climbed from {fmt(float(before[0]))} to "
                                  f"{fmt(float(before[-1]))} before it turned non-finite: a "
                                  "divergence, the LR's signature", s.artifact,
                                  s.span_locator(i - len(before), i - 1)))
        else:
            ev_num.append(Evidence(f"{last.text}: finite and not climbing, then non-finite in one report, "
                                   "the signature of an overflow", last.artifact, last.locator))
    elif _first_forward(run, s, i):
        ev_data.append(Evidence(f"{s.name} is non-finite at step 0, its first report: the first forward pass, "
                                "before any update, so no learning rate made it; the inputs or targets of the first "
                                "batch, or the initial weights, did", s.artifact, s.locator(i)))
    elif _at_the_start(run, s, i):
        ev_data.append(Evidence(f"{s.name} is non-finite from its first report: nothing was learned yet, so "
                                "the inputs or targets of the first batches are the first suspects",
                                s.artifact, s.locator(i)))
    train = _main_loss(run)
    val_only = (s.name in LOSS_FIRST[2:] and train is not None and train is not s
                and bool(np.isfinite(train.values).all()))
    if val_only and train is not None:
        ev_data.append(Evidence(f"the training loss stays finite ({fmt(float(train.values[-1]))} at "
                                f"its last report) while {s.name} is NaN: the evaluation data, not "
                                "the weights, carry the NaN",
                                train.artifact, train.locator(len(train) - 1)))
    empty = _empty_count(run, s, i)
    if empty is not None:
        ev_data.append(empty)
    boxed = _nan_in_boxes_only(run)
    if boxed is not None:
        ev_data.append(boxed)
    boosted = _boosting_log(run, s, i)
    if boosted is not None:
        ev_data.append(boosted)
    high_lr = _high_lr(run)
    if high_lr is not None:
        ev_lr.append(high_lr)
    warming = _warming_lr(run, s, i)
    if warming is not None:
        ev_lr.append(warming)
    step = float(s.steps[i])
    small = small_lr(run)
    if len(s) >= SHORT and not s.name.startswith((UNNAMED, NONFINITE_PREFIX)) and empty is None:
        # a long curve has the trend analyzers: the loss analyzer reads the NaN and the climb before
        # it; here only the LR reading is added, below theirs (held down as below). An accuracy NaN
        # beside it (no sample counted) is no trend's to read: the readings below, without the LR's
        ev_long = ev_lr[:1] + ([high_lr] if high_lr else []) + ([small] if small else [])
        return [_nan_lr(s, i, ev_long, LONG_NAN_LR if small is None else min(LONG_NAN_LR, SMALL_LR_CONF),
                        step, False)]
    c_num = 0.5 if val_only else (0.45 if rose or empty is not None else 0.55)
    c_lr = min(EXCERPT_MAX, 0.5 + (0.2 if rose else 0) + (0.1 if high_lr is not None or warming is not None else 0))
    c_data = 0.6 if val_only or empty is not None else (
        0.5 if len(before) == 0 and not nameless and _at_the_start(run, s, i) else 0.45)
    first_forward = not nameless and len(before) == 0 and _first_forward(run, s, i)
    if first_forward:
        c_data, c_lr = max(c_data, FIRST_FORWARD_DATA), min(c_lr, FIRST_FORWARD_LR)
    if boxed is not None:       # the boxes' own loss broke where the rest held: the boxes, not the LR
        c_data, c_lr = BOXED_DATA, min(c_lr, BOXED_DATA - 0.1)
    if boosted is not None:     # the library's own objective overflows only on labels it cannot score
        c_data, c_num = max(c_data, BOOSTED_DATA), min(c_num, BOOSTED_DATA - 0.1)
    out = [
        Finding(code="numerical_instability", issue=f"{_shown(s)} turned {fmt(float(s.values[i]))} at "
                f"{s.step_kind} {fmt_step(s.steps[i])}: a value overflowed (fp16, a log of 0, a division by "
                "~0) or the updates were too large", severity="critical", confidence=c_num, evidence=ev_num,
                fix="Find the first op that overflows: run a few steps with "
                    "torch.autograd.set_detect_anomaly(True); compute the loss in fp32, add an eps to logs "
                    "and divisions, and clip gradients",
                expected_impact="training continues past the step where the loss turned NaN",
                analyzer=NAME, onset_step=step, quick_fix="Guard the loss against NaN/Inf"),
        Finding(code="data_pipeline_bug",
                issue=f"{_shown(s)} turned {fmt(float(s.values[i]))}: a NaN or Inf in the inputs, or a "
                      "target the loss cannot score (an empty or inverted box, a label out of range), "
                      "gives a NaN whatever the LR",
                severity="critical" if val_only or empty is not None or boxed is not None or first_forward
                else "high",
                confidence=c_data,
                evidence=ev_data,
                fix="Check the data for non-finite values and broken targets: assert torch.isfinite(x).all() "
                    "on each batch, normalise the inputs (per feature, with the training set's statistics), "
                    "and drop samples with empty or degenerate boxes",
                expected_impact="the loss stays finite on every batch",
                analyzer=NAME,
                onset_step=step,
                quick_fix="Assert the inputs are finite",
                settle=NAN_DATA_SETTLE)]
    if small is not None:   # an LR too small to overflow the weights: listed, below the others
        ev_lr.append(small)
        c_lr = min(c_lr, SMALL_LR_CONF)
    if not val_only and empty is None and boosted is None:   # an LR too high would break the training loss first
        out.append(_nan_lr(s, i, ev_lr, c_lr, step, rose, "the values beside it blew up" if blown is not None
                           else "the loss climbed"))
    return out


# a gradient-boosting library's evaluation line, as it prints it: XGBoost's `[3]\ttrain-rmse:0.51` (tab-separated
# `set-metric:value` pairs, no blank after the colon; R's cv adds `+0.01`), LightGBM's `[3]\tvalid_0's l2: 0.51`,
# its R package's `[1]:  test's auc:0.5` and its CLI's `[LightGBM] [Info] Iteration:1, valid_1 auc : 0.5`
_BOOSTING_ROW = re.compile(r"^\[\d{1,7}\]:?\s+(?:[\w.]{1,40}-[\w@.]{1,40}:[-+\w.]|[\w.]{1,40}'s [\w@.]{1,40}: ?[-+\w.])"
                           r"|^\[LightGBM\] \[Info\] Iteration:\d+, ")


def _boosting_log(run: Run, s: Series, i: int) -> Evidence | None:
    """The NaN is printed on a gradient-boosting library's evaluation line: its learning rate shrinks each
    tree's output and has no weights to overflow, so a NaN metric is the data's (NaN or Inf labels, a metric
    undefined on the labels: MAPE on a 0, RMSLE on a negative) and never the LR's."""
    if s.lines is None or s.artifact is None:
        return None
    for a, text in pasted_texts(run, ("log",), MATRIX_MAX_BYTES):
        lines = text.split("\n") if a.path == s.artifact else []
        n = int(s.lines[i])
        if 0 < n <= len(lines) and len(lines[n - 1]) <= MATRIX_LINE_MAX and _BOOSTING_ROW.match(undress(lines[n - 1])):
            return Evidence(f"{lines[n - 1].strip()}: a gradient-boosting evaluation line; boosting has no weights a "
                            "learning rate could overflow, so a NaN metric comes from the labels or features",
                            a.path, f"line {n}")
    return None


def _nan_in_boxes_only(run: Run) -> Evidence | None:
    """Every part of the loss that went non-finite scores boxes (regression, IoU, objectness) while a
    classification part stays finite to its last report: a learning rate too high breaks every weight,
    so every part; a NaN held to the boxes comes from box targets the loss cannot score (a zero or
    negative width, coordinates of another convention)."""
    parts = [x for n in run.metrics.names() if n.startswith(PART_PREFIX) or (n.startswith(NONFINITE_PREFIX)
                                                                           and "loss" in n)
             if (x := run.metrics.get(n)) is not None and len(x)]
    broken = [x for x in parts if not np.isfinite(x.values).all()]
    held = [x for x in parts if np.isfinite(x.values[-1]) and not _box_part(x.name) and x.values[-1] != 0]
    if not broken or not held or not all(_box_part(x.name) for x in broken):
        return None
    b, h = broken[0], held[0]
    j = int(np.flatnonzero(~np.isfinite(b.values))[0])
    return Evidence(f"only the box part of the loss broke: {_shown(b)} is {fmt(float(b.values[j]))} while "
                    f"{h.name} stays {fmt(float(h.values[-1]))}: box targets the loss cannot score (a zero or "
                    "negative width, 0- vs 1-based coordinates) make a NaN a learning rate would spread to "
                    "every part", b.artifact, b.locator(j))


# the accuracy beside each loss: counted over the same samples
_ACC_OF = {"train_loss": "train_acc", "train_loss_epoch": "train_acc", "val_loss": "val_acc", "test_loss": "test_acc"}


def _empty_count(run: Run, s: Series, i: int) -> Evidence | None:
    """The accuracy beside a NaN loss, NaN at the same report: correct/total is NaN only as 0/0 (a model's
    NaN outputs still get an argmax, so an overflow leaves the accuracy a number): no sample was
    counted, an evaluation set smaller than one batch with the last batch dropped, an empty split."""
    acc = run.metrics.get(_ACC_OF.get(s.name, ""))
    if acc is None or not len(acc):
        return None
    j = index_at_or_before(acc, float(s.steps[i]))
    if j is None or acc.steps[j] != s.steps[i] or np.isfinite(acc.values[j]):
        return None
    at = point(acc, j)
    return Evidence(f"{at.text}, beside the NaN loss: an accuracy is NaN only as 0/0, so no sample was counted "
                    "(a set smaller than one batch with drop_last, an empty split)", at.artifact, at.locator)


def _high_lr(run: Run) -> Evidence | None:
    """The LR where it exceeds its optimizer family's range; with the family unknown, every
    family's (0.02 is SGD's norm, not an excess)."""
    lr = run.metrics.get("lr")
    if lr is None or not len(lr) or not np.isfinite(lr.values).any():
        return None
    j = int(np.nanargmax(lr.values))
    fam = optimizer_family(run)
    hi = LR_RANGE[fam[0]][1] if fam else max(h for _, h in LR_RANGE.values())
    if lr.values[j] <= hi:
        return None
    return point(lr, j, f"lr (above ~{fmt(hi)}, the top of "
                        f"{fam[0] if fam else 'every optimizer'}'s usual range)")


def _warming_lr(run: Run, s: Series, i: int) -> Evidence | None:
    """The LR higher at each of the last WARMING_REPORTS reports up to the one where `s` turned
    non-finite: a warm-up that had not ended. A NaN that comes as the LR grows points at the LR's level,
    not at an overflow a steady LR would meet as well."""
    lr = run.metrics.get("lr")
    if lr is None or s.lines is None or lr.lines is None:
        return None
    upto = np.flatnonzero(lr.lines <= s.lines[i])
    v = lr.values[upto][-WARMING_REPORTS:]
    if len(v) < WARMING_REPORTS or not np.isfinite(v).all() or not np.all(np.diff(v) > 0):
        return None
    k = int(upto[-len(v)])
    return Evidence(f"lr rose from {fmt(float(v[0]))} to {fmt(float(v[-1]))} over the {len(v)} reports up to the "
                    f"NaN: a warm-up still raising the LR when the loss broke", lr.artifact,
                    lr.span_locator(k, int(upto[-1])))


def _nan_lr(s: Series, i: int, ev: list[Evidence], conf: float, step: float, rose: bool,
            climbed: str = "the loss climbed") -> Finding:
    return Finding(code="lr_too_high",
                   issue=f"{_shown(s)} turned {fmt(float(s.values[i]))} at {s.step_kind} "
                         f"{fmt_step(s.steps[i])}: a learning rate too high drives the weights to overflow"
                         + (f" after {climbed}" if rose else ""),
                   severity="critical" if conf > LONG_NAN_LR else "high",
                   confidence=conf,
                   evidence=ev,
                   fix="Lower the learning rate 10x (Adam ~1e-4, SGD ~0.01) with a warm-up and clip "
                       "gradients (max_norm 1.0); if the NaN goes away, raise it back gradually",
                   expected_impact="the loss keeps falling instead of turning NaN",
                   analyzer=NAME,
                   onset_step=step - (1 if rose else 0),
                   quick_fix="Lower the LR 10x and clip gradients")


def _rising_loss(run: Run) -> list[Finding]:
    """A loss that grows from the start: a divergence even with four points (the trend analyzer
    needs twelve, and a fall first), with two when it ends EXPLODED times its start. On a longer curve, the
    smoothed loss of the last fifth at least RISE_LONG times that of the first fifth, rising in rank order
    (Spearman >= RISE_RANK), or EXPLODED times it in any order. A rise within NOISE_RISE times the curve's own
    report-to-report noise that more than BY_CHANCE of random orderings of its values show too is batch noise as
    much as a fault: a medium reading, not an alarm (4 or 5 noisy reports in order are 1 ordering in 24 or 120)."""
    s = _main_loss(run)
    if s is None or _policy_gradient(run) or reward_rose(run) is not None:
        return []               # a policy-gradient loss rises as the policy moves from its reference (an RL
                                # loss as the returns it predicts grow)
    end = np.flatnonzero(~np.isfinite(s.values))
    v = s.values[: int(end[0])] if len(end) else s.values
    if len(v) < 2 or v[0] <= 0:
        return []
    chance = 0.0
    if v[-1] >= EXPLODED * v[0] and len(v) < SHORT:
        said = f"{s.name} exploded to {v[-1] / v[0]:,.0f}x its first report"
        first, last = float(v[0]), float(v[-1])
    elif len(v) < RISE_POINTS or (len(v) < SHORT and _climbs_a_little(v)):
        return _loss_above_start(s, v)
    elif len(v) < SHORT:
        shape = _short_rise(v)
        if shape is None:
            return []
        b, ratio = shape
        chance = 0.0 if ratio >= EXPLODED else order_share(
            v, lambda p: (r := _short_rise(p)) is not None and r[1] >= ratio, float(v[-1] - v[b]), past=BY_CHANCE)
        if b > 0:
            # it fell, then climbed at every report after its best: the divergence the trend rule
            # would read on a longer curve
            ev = [point(s, b, f"lowest {s.name}"),
                  Evidence(f"{s.name} rose from {fmt(float(v[b]))} to {fmt(float(v[-1]))}"
                           + (f", {v[-1] / v[b]:.1f}x its best" if v[b] > 0 else ""),
                           s.artifact, s.span_locator(b, len(v) - 1))]
            said = f"{s.name} fell to {fmt(float(v[b]))}, then climbed at each of the last {len(v) - 1 - b} reports"
            if chance > BY_CHANCE:
                return [_noisy_rise(s, v, ev, said, chance)]
            return [Finding(code="lr_too_high",
                            issue=f"{said} to {fmt(float(v[-1]))}",
                            severity="high",
                            confidence=0.6,
                            evidence=ev,
                            fix="Lower the learning rate where the loss turns (halve it, or decay it from "
                                "there) and clip gradients",
                            expected_impact="the loss keeps falling past its best",
                            analyzer=NAME,
                            onset_step=float(s.steps[b]),
                            quick_fix="Reduce LR by 50%")]
        said = f"{s.name} grew at {int((np.diff(v) > 0).sum())} of {len(v) - 1} reports"
        first, last = float(v[0]), float(v[-1])
    else:
        if divergence(v) is not None:
            return []            # it fell first: the loss analyzer reads that divergence
        grown = _grew(v)
        if grown is None:
            return _rise_within_noise(run, s, v)
        first, last = grown
        k = max(2, len(v) // 5)
        said = f"the median {s.name} of the last {k} reports is {last / first:.1f}x that of the first {k}"
        # a loss EXPLODED times its start is no batch noise, whatever order the values came in
        chance = 0.0 if last >= EXPLODED * first else order_share(
            v, lambda p: (g := _grew(p)) is not None and g[1] / g[0] >= last / first, last - first, past=BY_CHANCE)
    if _accuracy_holds(run, s, len(v)):
        return []                # updates that overshoot would take the accuracy down with them
    ev = [Evidence(f"{said}, from {fmt(first)} to {fmt(last)} ({s.step_kinds} {fmt_step(s.steps[0])}-"
                   f"{fmt_step(s.steps[len(v) - 1])})", s.artifact, s.span_locator(0, len(v) - 1))]
    if chance > BY_CHANCE:
        return [_noisy_rise(s, v, ev, f"{s.name} rose from {fmt(first)} to {fmt(last)}", chance)]
    return [Finding(code="lr_too_high",
                    issue=f"{s.name} grows epoch over epoch from the start ({fmt(first)} -> "
                          f"{fmt(last)}): the updates overshoot",
                    severity="high",
                    confidence=0.65,
                    evidence=ev,
                    fix="Lower the learning rate 10x and add a warm-up; check that the loss is minimised "
                        "(not maximised) and that gradients are zeroed every step (optimizer.zero_grad())",
                    expected_impact="the loss falls from the first epochs",
                    analyzer=NAME,
                    onset_step=float(s.steps[0]),
                    quick_fix="Lower the LR 10x")]


def _short_rise(v: np.ndarray) -> tuple[int, float] | None:
    """A short curve's rise (RISE_POINTS to SHORT reports): (0, last / first) where it grew at RISE_SHARE of its reports
    to RISE_GROWN above its start, or (best, last / best) where it fell to its best, then climbed at every report after
    it to TURNED times that best; None for neither."""
    d = np.diff(v)
    if (d > 0).mean() >= RISE_SHARE and v[-1] >= v[0] * (1 + RISE_GROWN):
        return 0, float(v[-1] / v[0]) if v[0] > 0 else math.inf
    b = int(np.argmin(v))
    if 1 <= b <= len(v) - 3 and (d[b:] > 0).all() and v[-1] >= v[b] * TURNED:
        return b, float(v[-1] / v[b]) if v[b] > 0 else math.inf
    return None


def _grew(v: np.ndarray) -> tuple[float, float] | None:
    """A longer curve's rise: the medians of its first and last fifths, where the last is RISE_LONG times the first
    or more and the smoothed curve rises in rank order (Spearman >= RISE_RANK), or EXPLODED times it in any order;
    or RISE_STEADY times it where the smoothed curve climbs almost in order throughout (Spearman >= RISE_ORDERED:
    a loss that rises from its first report to its last, however slowly, is never a sound run's)."""
    k = max(2, len(v) // 5)
    first, last = float(np.median(v[:k])), float(np.median(v[-k:]))
    if first <= 0 or last < RISE_STEADY * first:
        return None
    trend = rank_trend(rolling_median(v, max(3, len(v) // 10))) if last < EXPLODED * first else 1.0
    if trend < (RISE_RANK if last >= RISE_LONG * first else RISE_ORDERED):
        return None
    return first, last


def _rise_within_noise(run: Run, s: Series, v: np.ndarray) -> list[Finding]:
    """A longer curve whose last third sits RISE_LONG times its first or more, too unevenly for `_grew`, in an order
    that at most NOISY_ORDER of random orderings of the same values climb as far (or well past its own noise): a
    loss going up is never evidence of health, so the LR reading stays on the list, as medium. Not where the
    second half falls in rank order (a warm restart's jump, decaying): that came back by itself."""
    first, last = thirds(v)
    if first <= 0 or last < RISE_LONG * first or _accuracy_holds(run, s, len(v)):
        return []
    if rank_trend(v[len(v) // 2:]) <= -RISE_RANK:
        return []
    chance = order_share(v, lambda p: (t := thirds(p))[0] > 0 and t[1] >= t[0] * last / first, last - first,
                         past=NOISY_ORDER)
    if chance > NOISY_ORDER:
        return []
    n = len(v) // 3
    ev = [Evidence(f"the median {s.name} of the last {n} reports is {last / first:.1f}x that of the first {n}, "
                   f"from {fmt(first)} to {fmt(last)} ({s.step_kinds} {fmt_step(s.steps[0])}-"
                   f"{fmt_step(s.steps[len(v) - 1])})", s.artifact, s.span_locator(0, len(v) - 1))]
    few = f"; {chance:.1%} of random orderings of the same values climb as far" if chance else ""
    return [_medium_rise(s, ev, f"{s.name} went from {fmt(first)} to {fmt(last)} over {len(v)} reports, unevenly{few}: "
                                "updates that overshoot, or a noisy stretch of batches. More reports, the validation "
                                "loss or the config's LR would tell")]


def _noisy_rise(s: Series, v: np.ndarray, ev: list[Evidence], said: str, chance: float) -> Finding:
    """The LR reading of a rise that `chance` of random orderings of the same values show too: the batch noise could
    make it."""
    return _medium_rise(s, ev, f"{said} over {len(v)} reports, but {chance:.1%} of random orderings of the same values "
                               "rise as far: it may be updates that overshoot, or batch noise. More reports, the "
                               "validation loss or the config's LR would tell")


def _medium_rise(s: Series, ev: list[Evidence], issue: str) -> Finding:
    """The LR reading of a rise these reports cannot tell from noise: medium, with what would tell."""
    return Finding(code="lr_too_high",
                   issue=issue,
                   severity="medium",
                   confidence=NOISY_CONF,
                   evidence=ev,
                   fix="If more reports keep rising, lower the learning rate 10x and add a warm-up",
                   expected_impact="the loss falls from the first epochs",
                   analyzer=NAME,
                   onset_step=float(s.steps[0]),
                   quick_fix="Lower the LR 10x if the rise holds")


def _accuracy_holds(run: Run, s: Series, n: int) -> bool:
    """Whether an accuracy printed on the loss's own lines, over its first `n` reports (RISE_POINTS or
    more of them), ends no more than ACC_HELD under where it started (or above it): a loss that grows
    under an accuracy that holds or rises is a term the accuracy does not see (a regulariser, a norm
    growing), not updates that overshoot."""
    if s.lines is None:
        return False
    lines = s.lines[:n]
    for name in ("train_acc", "val_acc", "test_acc"):
        a = run.metrics.get(name)
        if a is None or a.lines is None or a.artifact != s.artifact:
            continue
        vals = a.values[np.isin(a.lines, lines)]
        if len(vals) < max(RISE_POINTS, n // 2) or not np.isfinite(vals).all():
            continue
        k = max(2, len(vals) // 5)
        start, end = float(np.median(vals[:k])), float(np.median(vals[-k:]))
        if start > 0 and end >= start * (1 - ACC_HELD):
            return True
    return False


def _climbs_a_little(v: np.ndarray) -> bool:
    """Up at every report, yet by less than `RISE_GROWN` over them: too little to call a divergence."""
    return bool((np.diff(v) > 0).all() and v[-1] < v[0] * (1 + RISE_GROWN))


def _finite_ends(s: Series | None) -> tuple[float, float] | None:
    """A series' first and last values, where it has two and both are finite."""
    if s is None or len(s) < 2 or not np.isfinite(s.values[[0, -1]]).all():
        return None
    return float(s.values[0]), float(s.values[-1])


def _loss_above_start(s: Series, v: np.ndarray) -> list[Finding]:
    """A short loss that went up at every report, by RISE_MIN or more, or that ends RISE_FAR times
    its first report in fewer than RISE_POINTS reports whatever it did between, yet with too few
    reports or too small a rise to call a divergence: the LR reading, with little confidence, rather
    than no answer (a loss going up is never evidence of health)."""
    every = len(v) >= 2 and bool((np.diff(v) > 0).all()) and v[-1] >= v[0] * (1 + RISE_MIN)
    far = 2 <= len(v) < RISE_POINTS and v[-1] >= v[0] * RISE_FAR
    if not (every or far):
        return []
    said = (f"went up at each of {len(v)} reports" if every else
            f"ends at {v[-1] / v[0]:.1f}x its first report after {len(v)} reports")
    ev = [Evidence(f"{s.name} {said}, from {fmt(float(v[0]))} to {fmt(float(v[-1]))}",
                   s.artifact, s.span_locator(0, len(v) - 1))]
    return [Finding(code="lr_too_high",
                    issue=f"{s.name} rises ({fmt(float(v[0]))} -> {fmt(float(v[-1]))}) over {len(v)} "
                          "reports: too few to call a divergence, and the LR is its most common cause",
                    severity="medium",
                    confidence=RISE_FEW if len(v) < STUCK_POINTS else RISE_SOME,
                    evidence=ev,
                    fix="Send more of the log (the loss over a few hundred steps) and the config; if the "
                        "loss keeps climbing, lower the learning rate 10x and add a warm-up",
                    analyzer=NAME,
                    onset_step=float(s.steps[0]),
                    quick_fix="Lower the LR 10x")]


def _finite(s: Series | None, most: float = math.inf) -> TypeGuard[Series]:
    """At least STUCK_POINTS reports, fewer than `most`, all finite."""
    return s is not None and STUCK_POINTS <= len(s) < most and bool(np.isfinite(s.values).all())


def as_share(v: np.ndarray) -> np.ndarray:
    """Percentages as shares (any value above 1 says the figures are percentages)."""
    return v / 100.0 if np.nanmax(v) > 1.0 else v


def _loss_falls_over(run: Run, s: Series, name: str = "train_loss") -> bool:
    """Whether the training loss (or `name`) fell over `s`'s reports: a model that answers the same whatever the
    input does not keep lowering its loss, so a constant accuracy beside it was computed once."""
    loss = run.metrics.get(name)
    if loss is None:
        return False
    v = loss.values[(loss.steps >= s.steps[0]) & (loss.steps <= s.steps[-1])]
    return len(v) >= STUCK_POINTS and bool(np.isfinite(v).all()) and v[-1] < v[0] - 0.01 * abs(v[0])


def _accuracy_misfit(run: Run, s: Series) -> bool:
    """Whether an accuracy at exactly 0 at every report is a metric that does not fit the output, not a model that
    answers the same: no training accuracy (nor, for the training one, validation accuracy) moves beside it, and a
    loss falls over its reports (Keras' `acc` read as categorical on a one-unit output; a sequence's exact match,
    which lags its loss). A validation accuracy at 0 beside a training one that moves is the validation data's."""
    if not np.all(s.values == 0):
        return False
    for other in ("train_acc", "val_acc") if s.name == "train_acc" else ("train_acc",):
        o = run.metrics.get(other)
        if o is not None and o is not s and len(o) and not np.all(o.values == 0):
            return False
    return _loss_falls_over(run, s) or (s.name == "val_acc" and _loss_falls_over(run, s, "val_loss"))


def _stuck_accuracy(run: Run) -> list[Finding]:
    """An accuracy identical at every report, or hovering at chance (1/K): the model answers the same
    (or guesses) whatever the input. Three
    readings, each listed: labels disconnected from the inputs (a data bug), one class predicted
    for everything (a collapse, often onto the majority class), or an LR so high it pinned the
    model to a constant."""
    if _first_nonfinite(run) is not None:
        return []            # an accuracy frozen after a NaN is the NaN's consequence
    for name in ("val_acc", "train_acc", "test_acc"):   # a test accuracy printed each step is an eval too
        s = run.metrics.get(name)
        if not _finite(s):       # at any length: no other analyzer reads accuracy
            continue
        v, share = s.values, as_share(s.values)
        if np.unique(s.steps).size < STUCK_POINTS or share[0] >= 0.999:
            continue
        chance = next((k for k in range(2, CHANCE_CLASSES + 1)
                       if np.all(np.abs(share - 1 / k) <= CHANCE_BAND)), None)
        if not np.all(v == v[0]) and chance is None:
            continue
        if name == "test_acc" and chance is None and _loss_falls_over(run, s):
            continue         # a test accuracy carried between evaluations, printed at each step
        if _accuracy_misfit(run, s):
            continue         # 0 while a loss falls: a metric that does not fit the output
        if share[0] == 0 and np.all(v == 0) and _epochs_spanned(run, s) <= 1 and s.steps[-1] <= EARLY_STEPS:
            continue         # 0 over a many-class model's first steps (face ids, a vocabulary): too early
        ev = [point(s, 0, name), point(s, len(s) - 1, name)]
        said = (f"{name} is {fmt(float(v[0]))} at every one of {len(v)} reports" if np.all(v == v[0]) else
                f"{name} stays within {CHANCE_BAND:.0%} of 1/{chance} (chance for {chance} classes) at "
                f"every one of {len(v)} reports")
        return _guessing(said, ev)
    if _collapse(run) is not None:
        return []            # an accuracy at chance after a better one: the collapse reading says more
    at_chance = chance_accuracy(run.metrics, _main_loss(run), CHANCE_BAND)
    return _guessing(*at_chance) if at_chance else []


def _low_accuracy(run: Run) -> list[Finding]:
    """An accuracy under LOW_ACC at every one of LOW_ACC_POINTS reports or more, counted by step from the run's
    start to past its first EARLY_STEPS, its last third no higher than its first (a quarter of it, or 0.2 points,
    aside), and no loss beside it that falls by a fifth or at every report: the model has not begun to learn
    (frereit's handwriting model at 0.025 to 0.065 over 2,400 steps)."""
    if _first_nonfinite(run) is not None or _stuck_accuracy(run):
        return []
    for name in ("train_acc", "val_acc"):
        a = run.metrics.get(name)
        if a is None or len(a) < LOW_ACC_POINTS or not np.isfinite(a.values).all():
            continue
        share = as_share(a.values)
        first, last = thirds(share)
        # counted from the run's start (a step counter at its first steps) and past its first EARLY_STEPS (a
        # many-class model scores ~0 there: ArcFace's 85k identities, ImageNet's 0.1% tripling to 0.3%)
        if float(share.max()) >= LOW_ACC or last > max(first * 1.25, first + 0.002) or a.step_kind != "step" \
                or a.steps[0] > EARLY_STEPS or a.steps[-1] <= EARLY_STEPS or not _at_the_start(run, a, 0):
            continue
        loss = _main_loss(run)
        if loss is not None and len(loss) >= 2 and np.isfinite(loss.values).all() and (
                float(loss.values[-1]) <= 0.8 * float(loss.values[0])
                or len(loss) >= RISE_POINTS and bool(np.all(np.diff(loss.values) < 0))):
            continue         # a loss that falls learns: the accuracy figure is another question
        ev = [point(a, 0, f"first {name}"), point(a, len(a) - 1, f"last {name}")]
        return _guessing(f"{name} stays under {LOW_ACC:.0%} at every one of {len(a)} reports from the start "
                         f"({fmt(float(a.values.min()))} to {fmt(float(a.values.max()))}), no higher at the end", ev)
    return []


def _pinned(loss: np.ndarray, wrong: np.ndarray, c: float, tol: float) -> np.ndarray:
    """Per report, whether the loss is C x the share wrong: relative to it, or within 5e-4 of C where every answer is
    wrong (a loss alone at C is then no ratio, and a regression's loss near 87 must match to its printed digits)."""
    return np.where(wrong >= 1.0, np.abs(loss - c) <= 5e-4, np.abs(loss / np.maximum(wrong, 1e-12) / c - 1) <= tol)


def _saturated(run: Run) -> tuple[Series, Series | None, float, int] | None:
    """(loss, accuracy, constant, sound reports before) where the loss's last reports are what answers made with
    full confidence cost under a library's clipping: C x (1 - accuracy) at each report printing both (Keras'
    `loss: 14.5063 - acc: 0.1000` is 16.1181 x 0.9), or Caffe's C itself at a loss printed alone (`loss =
    87.3365`). From some report to the last, 2 or more (or the one report a paste has, matched to 0.05%, and its
    validation pair on the same line too); the reports before it may be sound (a start, then the blow-up). The series
    come back at their saturated reports only."""
    pairs = []
    for loss_name, acc_name in (("train_loss", "train_acc"), ("val_loss", "val_acc")):
        loss, acc = run.metrics.get(loss_name), run.metrics.get(acc_name)
        if loss is None or acc is None or loss.lines is None or acc.lines is None or not len(loss) or not len(acc):
            continue
        lines, il, ia = np.intersect1d(loss.lines, acc.lines, return_indices=True)
        if len(lines) and np.isfinite(loss.values[il]).all() and np.isfinite(acc.values[ia]).all():
            pairs.append((loss, acc, lines, il, ia))
    for n, (loss, acc, lines, il, ia) in enumerate(pairs):
        lv, wrong = loss.values[il], 1.0 - as_share(acc.values)[ia]
        for c in SATURATED:
            if len(lines) == 1:
                others = [(o[0].values[o[3]], 1.0 - as_share(o[1].values)[o[4]]) for o in pairs[n + 1:]
                          if np.array_equal(o[2], lines) and float(o[0].values[o[3]][0]) >= SATURATED_LOSS]
                ok = lv[0] >= SATURATED_LOSS and bool(_pinned(lv, wrong, c, SATURATED_ONE)[0]) and all(
                    bool(_pinned(ol, ow, c, SATURATED_ONE)[0]) for ol, ow in others)
                start = 0
            else:
                hit = _pinned(lv, wrong, c, SATURATED_TOL) & (lv >= SATURATED_LOSS)
                start = len(hit) - int(np.argmin(hit[::-1])) if not hit.all() else 0
                ok = len(hit) - start >= SATURATED_TAIL
            if ok:
                return loss.take(il[start:]), acc.take(ia[start:]), c, start
    loss = run.metrics.get("train_loss")
    if loss is not None and len(loss) >= SATURATED_TAIL and np.isfinite(loss.values).all() \
            and not any(run.metrics.get(n) is not None for n in ("train_acc", "val_acc")):
        hit = np.abs(loss.values - CAFFE_SATURATED) <= 5e-4
        start = len(hit) - int(np.argmin(hit[::-1])) if not hit.all() else 0
        if len(hit) - start >= SATURATED_TAIL:
            return loss.take(slice(start, None)), None, CAFFE_SATURATED, start
    return None


def _saturated_loss(run: Run) -> list[Finding]:
    """Every wrong answer made with full confidence: the loss is exactly what a library's clipped log charges for a
    probability of 0 on the true class (SATURATED), times the share answered wrong. The outputs are pinned at 0 and
    1: logits blown up by an LR too high (Caffe's 87.3365 is its FAQ's 'lower base_lr'), inputs never scaled (pixels
    of 0-255 into a network that expects 0-1), or an output layer that can only say one thing (a softmax over one
    unit answers 1.0 for every input). Saturated from the paste's first report at the run's start, nothing was
    learned to blow up yet: the data or the model's output leads."""
    got = _saturated(run)
    if got is None:
        return []
    loss, acc, c, start = got
    lib = SATURATED[c]
    rose = start > 0            # sound reports first, then saturated: the weights blew up under training
    if acc is None:
        said = (f"{loss.name} is {fmt(c)} at every one of {len(loss)} reports: {lib}, every answer wrong with full "
                "confidence")
    else:
        said = (f"{loss.name} {fmt(float(loss.values[-1]))} is {fmt(c)} x (1 - {acc.name} {fmt(float(acc.values[-1]))})"
                + (f" at every one of {len(loss)} reports" if len(loss) > 1 else "")
                + f": {lib}, each wrong answer made with full confidence")
    if rose:
        said += f", after {start} sound report{'s' if start > 1 else ''} before it"
    ev = [point(loss, 0, f"first saturated {loss.name}"), point(loss, len(loss) - 1, f"last {loss.name}")]
    if acc is not None:
        ev.append(point(acc, len(acc) - 1, acc.name))
    first = not rose and _at_the_start(run, loss, 0) and (loss.step_kind != "step" or float(loss.steps[0]) <= 1)
    # medium, under a reading of why nothing moves (identical epochs): saturation is how, these are why
    lr_conf, data_conf = (0.45, 0.5) if first else (0.5, 0.45)
    return [Finding(code="lr_too_high", issue=f"{said}: the outputs are pinned at 0 and 1, logits blown up by an LR "
                    "too high", severity="medium", confidence=lr_conf, evidence=ev,
                    fix="Lower the learning rate 10x (Adam ~1e-4, SGD ~0.01) and check the loss comes down from the "
                        "saturated value in the first steps", analyzer=NAME, quick_fix="Lower the LR 10x"),
            Finding(code="data_pipeline_bug", issue=f"{said}: inputs never scaled (0-255 pixels into a network "
                    "that expects 0-1) or labels outside the classes drive the outputs to 0 and 1",
                    severity="medium", confidence=data_conf, evidence=ev,
                    fix="Print one batch's input range and label range: scale inputs to 0-1 (or standardise), keep "
                        "labels in [0, classes); with one output unit, use sigmoid, not softmax", analyzer=NAME,
                    quick_fix="Scale the inputs to 0-1")]


def _topk_at_chance(run: Run) -> list[Finding]:
    """A top-1 and a top-5 accuracy printed together at every report at what a uniform guess scores: 1/K and 5/K
    for one K (the top-5 four to 8.5 times the top-1, the top-1 at 1/TOPK_CLASSES or under). A model that ranks
    anything lifts its top-1 more than its top-5; at the ratio of a guess its ranking carries nothing, whether
    the figures are shares or percents (DynamicViT #17's `Acc@1 0.080 Acc@5 0.582`: 0.08% and 0.58% over
    ImageNet's 1000 classes, validation folders not named as training's). Not within a run's first EARLY_STEPS
    steps, where every model still guesses."""
    for top1, top5 in (("train_acc", "train_acc_top5"), ("val_acc", "val_acc_top5")):
        a, b = run.metrics.get(top1), run.metrics.get(top5)
        if a is None or b is None or a.lines is None or b.lines is None \
                or not (np.isfinite(a.values).all() and np.isfinite(b.values).all()):
            continue
        lines, ia, ib = np.intersect1d(a.lines, b.lines, return_indices=True)
        if not len(lines) or early_line(run, a, int(ia[-1])):
            continue
        va, vb = a.values[ia], b.values[ib]
        scale = 100.0 if max(float(va.max()), float(vb.max())) > 1.0 else 1.0
        if float(va.min()) <= 0 or float(va.max()) / scale > 1 / TOPK_CLASSES:
            continue
        pooled = float(vb.sum() / va.sum())      # one noisy report of a true guess falls under the band's floor
        if not TOPK_GUESS[0] <= pooled <= TOPK_GUESS[1]:
            continue
        held = top1 != "train_acc"
        # a top-1 that climbs, or a loss of the same split that falls, is a model learning from chance (a training
        # loss falling beside a held-out guess is the held-out data's fault, the case this reading is for)
        if float(va[-1]) >= 1.5 * float(va[0]) or a_loss_falls(run, held):
            continue
        if not held and len(lines) < TOPK_TRAINING and _main_loss(run) is not None:
            continue             # a training run's report or two is no trend (timm's first epoch: 5.0x at 0.4%)
        i, j = int(ia[-1]), int(ib[-1])
        said = (f"{a.name} {fmt(float(a.values[i]))} beside {b.name} {fmt(float(b.values[j]))} ({pooled:.1f}x"
                + (f", at every one of {len(lines)} reports" if len(lines) > 1 else "")
                + "): a top-5 about 5 times the top-1 is what a uniform guess scores, so the model ranks the "
                  "classes at random")
        return _guessing(said, [point(a, i, a.name), point(b, j, b.name)])
    return []


def a_loss_falls(run: Run, held: bool | None = None) -> bool:
    """Whether any loss the paste prints (only the held-out ones, or only the others, where `held` says) fell by a
    twentieth or more from its first report to its last."""
    return any(len(s) >= 2 and np.isfinite(s.values[[0, -1]]).all() and s.values[-1] <= 0.95 * s.values[0]
               for n in run.metrics.names() if "loss" in n and held in (None, n.startswith(("val_", "test_")))
               and (s := run.metrics.get(n)) is not None)


def early_line(run: Run, s: Series, i: int) -> bool:
    """Whether `s`'s report i sits in a run's first epoch or its first EARLY_STEPS steps, by the counters printed on
    its line (its own step, any series' step there, the epoch printed at or above it)."""
    steps = [float(s.steps[i])] if s.step_kind == "step" else []
    if s.lines is not None:
        line = int(s.lines[i])
        for name in run.metrics.names():
            o = run.metrics.get(name)
            if o is not None and o.step_kind == "step" and o.lines is not None and o.artifact == s.artifact \
                    and len(at := np.flatnonzero(o.lines == line)):
                steps.append(float(o.steps[at[0]]))
    epochs = _epoch_of_lines(run, s)
    first_epoch = epochs is not None and np.isfinite(epochs[i]) and float(epochs[i]) <= 1
    return first_epoch or any(st <= EARLY_STEPS for st in steps)


def _collapse(run: Run) -> list[tuple[Series, int, int, bool]] | None:
    """An accuracy identical to its printed digits at its last COLLAPSE_TAIL reports or more, COLLAPSE_DROP or
    more under the best it reached before, at chance (1/K) or frozen on two splits at once: the model had
    learned, then began to answer one class for every input (the accuracy is that class's share, whatever the
    weights do to the loss beside it). A collapse after learning is what an LR too high does (BERT fine-tuned
    above ~5e-5 falls to the majority class). Not a running best (never under its own earlier values), nor one
    evaluation printed again until the next (its loss identical too: Lightning's bar, a loop's carried
    `val_acc`), nor a small held-out set's tie while its loss falls or the training accuracy climbs, nor two
    runs pasted one after the other (the steps restart)."""
    frozen = []
    for name in ("val_acc", "train_acc", "test_acc"):
        a = run.metrics.get(name)
        if a is None or len(a) < COLLAPSE_TAIL_AT_CHANCE + 1 or not np.isfinite(a.values).all():
            continue
        v, share = a.values, as_share(a.values)
        n = len(v) - int(np.flatnonzero(v != v[-1])[-1]) - 1 if np.any(v != v[-1]) else len(v)
        chance = any(abs(float(share[-1]) - 1 / k) <= COLLAPSE_CHANCE for k in range(2, CHANCE_CLASSES + 1))
        if n < (COLLAPSE_TAIL_AT_CHANCE if chance else COLLAPSE_TAIL) or n == len(v) \
                or float(share[:len(v) - n].max()) < float(share[-1]) + COLLAPSE_DROP:
            continue
        best = int(np.argmax(share[:len(v) - n]))
        if not np.all(np.diff(a.steps[best:]) > 0) or _tail_moves_beside(run, a, n):
            continue
        frozen.append((a, n, best, chance))
    # one split's tie away from chance is a small set's (40 samples move by 2.5 points); at chance, or on two
    # splits at once, it is one answer for every input
    if not frozen or not (any(c for *_, c in frozen) or len(frozen) >= 2 and all(
            _printed_finely(float(as_share(x.values)[-1])) for x, *_ in frozen)):
        return None
    return frozen


def _collapsed_accuracy(run: Run) -> list[Finding]:
    """The readings of an accuracy that collapsed after learning (`_collapse`), where no accuracy was stuck
    from its first report (the stuck reading's)."""
    if _first_nonfinite(run) is not None or _stuck_accuracy(run):
        return []
    frozen = _collapse(run)
    if frozen is None:
        return []
    a, n, best, _ = frozen[0]
    said = (f"{a.name} fell from {fmt(float(a.values[best]))} to {fmt(float(a.values[-1]))} and is identical at "
            f"each of its last {n} reports" + (f" ({' and '.join(x.name for x, _, _, _ in frozen[1:])} too)"
                                               if len(frozen) > 1 else ""))
    ev = [point(a, best, f"best {a.name}"), point(a, len(a) - n, f"{a.name} from here"),
          point(a, len(a) - 1, f"last {a.name}")]
    return [Finding(code="lr_too_high", issue=f"{said}: the model learned, then collapsed to one answer for every "
                    "input; an LR too high is what usually does that (fine-tuning a pretrained model above ~5e-5, "
                    "no warm-up)", severity="medium", confidence=0.5, evidence=ev,
                    fix="Lower the learning rate 10x (fine-tuning ~2e-5) with a warm-up, and clip gradients",
                    expected_impact="the accuracy keeps its early level and climbs instead of freezing",
                    analyzer=NAME, quick_fix="Lower the LR 10x with a warm-up"),
            Finding(code="mode_collapse", issue=f"{said}: every input gets the same class, and the accuracy is that "
                    "class's share", severity="medium", confidence=0.45, evidence=ev,
                    fix="Check the class balance of the predictions (a histogram of argmax per epoch); weight the "
                        "loss by class or rebalance the sampler", analyzer=NAME,
                    quick_fix="Print the predicted classes' histogram"),
            Finding(code="data_pipeline_bug", issue=f"{said}: labels that stopped matching their inputs (a "
                    "shuffle of one and not the other) leave only the majority class to predict",
                    severity="medium", confidence=0.35, evidence=ev,
                    fix="Print a batch of (input, label) pairs from the later epochs", analyzer=NAME,
                    quick_fix="Print a batch of (input, label) pairs")]


CRASH_LEARNED = 0.5         # a training accuracy that reached this share...
CRASH_KEPT = 0.5            # ...then fell under half of it within CRASH_WITHIN reports and never came back
CRASH_WITHIN = 2
CRASH_NEAR = 0.9            # ...from within 10% of its best
CRASH_CLIMB = 0.05          # ...and not climbing back more than 5 points by the last report


def _accuracy_crashed(run: Run) -> list[Finding]:
    """A training accuracy that had learned, then fell under half its best within a report or two and stayed
    there (Eesen's `TokenAcc = 97.49%` to `19.01%` to `4.45%`): the accuracy's picture of a loss that blew up, an
    LR too high for the weights the run reached. Not where a loss turned non-finite (that reading names it), nor
    an accuracy frozen at one value (the collapse reading's), nor beside any loss printed through it: one that
    rose is the rising loss's reading, one that fell says the weights still learn (a new task, a metric reset), and
    a GAN's discriminator accuracy settles near 50% by design; nor one climbing again after the fall (a
    curriculum's next stage)."""
    a = run.metrics.get("train_acc")
    if a is None or len(a) < 3 or not np.isfinite(a.values).all() or _first_nonfinite(run) is not None \
            or _collapse(run) is not None:
        return []
    share = as_share(a.values)
    best = int(np.argmax(share))
    after = np.flatnonzero(share[best + 1:] < CRASH_KEPT * share[best])
    if share[best] < CRASH_LEARNED or not len(after) or not np.all(np.diff(a.steps[best:]) > 0):
        return []
    fell = best + 1 + int(after[0])
    # near its best just before (a fall, not a slide); down from there at two reports or more, not climbing again
    # (a new curriculum stage or task starts low and learns)
    near = [j for j in range(max(best, fell - CRASH_WITHIN), fell) if share[j] >= CRASH_NEAR * share[best]]
    if not near or fell > len(a) - 2 or not np.all(share[fell:] < CRASH_KEPT * share[best]) \
            or share[-1] > share[fell] + CRASH_CLIMB:
        return []
    top = near[-1]
    if any(np.isfinite(s.values[(s.steps >= a.steps[best]) & (s.steps <= a.steps[-1])]).sum() >= 2
           for s in losses(run)):
        return []               # a loss beside it speaks for the same steps (a rise is its own reading; a GAN's
                                # discriminator accuracy falls to 50% by design)
    ev = [point(a, top, a.name), point(a, fell, f"{a.name} fell to"), point(a, len(a) - 1, f"last {a.name}")]
    return [Finding(code="lr_too_high", issue=f"{a.name} fell from {fmt(float(a.values[top]))} to "
                    f"{fmt(float(a.values[fell]))} in {fell - top} report{'s' if fell - top > 1 else ''} and "
                    f"stayed down ({fmt(float(a.values[-1]))} at the last): the model had learned, then its updates "
                    "threw the weights off; an LR too high for where training reached does that",
                    severity="medium", confidence=0.5, evidence=ev, onset_step=float(a.steps[fell]),
                    fix="Lower the learning rate 2-10x (or decay it before this point), add a warm-up if the run "
                        "restarted, and clip gradients; resume from the checkpoint before the fall",
                    expected_impact="the accuracy holds its level past this point instead of falling",
                    analyzer=NAME, quick_fix="Lower the LR and clip gradients")]


_LOSS_BESIDE = {"val_acc": ("val_loss",), "test_acc": ("test_loss",), "train_acc": ("train_loss", "train_loss_epoch")}


def _tail_moves_beside(run: Run, a: Series, n: int) -> bool:
    """Whether what is printed beside the frozen tail of accuracy `a` says the weights still learn, or that the
    tail is no collapse: the same split's loss identical through it (one evaluation printed again; on the
    training side, weights that do not change at all, the frozen-loss reading's) or lower at every report
    (learning), or the training accuracy climbing COLLAPSE_DROP through it."""
    if a.lines is None:
        return False
    lines = a.lines[len(a) - n:]
    for name in _LOSS_BESIDE[a.name]:
        loss = run.metrics.get(name)
        if loss is None or loss.lines is None or loss.artifact != a.artifact:
            continue
        v = loss.values[np.isin(loss.lines, lines)]
        # (equal to its printed digits: Keras' bar rounds the 17.269388 printed bare beside it to 17.2694; a loss
        # that eases down onto ln(K) is settling at the uniform guess the collapse left, not learning)
        if len(v) >= 2 and np.isfinite(v).all() and (np.all(np.abs(v - v[0]) <= 1e-4 * abs(v[0])) or (
                np.all(np.diff(v) < 0) and not any(abs(v[-1] - math.log(k)) <= 0.01 * math.log(k)
                                                   for k in range(2, CHANCE_CLASSES + 1)))):
            return True
    ta = run.metrics.get("train_acc")
    if a.name != "train_acc" and ta is not None and ta.lines is not None and ta.artifact == a.artifact:
        t = as_share(ta.values)[(ta.lines >= lines[0]) & (ta.lines <= lines[-1])]
        if len(t) >= 2 and np.isfinite(t).all() and float(t[-1] - t[0]) >= COLLAPSE_DROP:
            return True
    return False


def _held_out_at_chance(run: Run) -> list[Finding]:
    """A validation (or test) loss within 1% of ln(K) at every one of HELD_OUT_CHANCE reports or more, with
    its accuracy within a point of one level throughout and that level at chance (within TIE_SHARE/K of 1/K):
    on held-out data the model outputs the uniform distribution over K classes, whatever the training loss does
    beside it. Training that learns beside it points at the held-out data (prepared otherwise, labels of
    another order); training that does not, at the model learning nothing. A loss near ln(K) beside an
    accuracy above chance is a plateau (BERT on RTE at 0.69 and 66%; a converged CIFAR-100 at 1.10 is no
    guess over 3), and a loss identical at every report is one evaluation printed again."""
    if _first_nonfinite(run) is not None:
        return []
    for split in ("val", "test"):
        loss, acc = run.metrics.get(f"{split}_loss"), run.metrics.get(f"{split}_acc")
        if not _finite(loss) or not _finite(acc) or len(loss) < HELD_OUT_CHANCE:
            continue
        k = next((k for k in range(2, CHANCE_CLASSES + 1)
                  if np.all(np.abs(loss.values - math.log(k)) <= 0.01 * math.log(k))), None)
        share = as_share(acc.values)
        if k is None or float(share.max() - share.min()) > 0.01 + 1e-9 or np.all(loss.values == loss.values[0]) \
                or not np.all(np.abs(share - 1 / k) <= TIE_SHARE / k):
            continue
        said = (f"{loss.name} stays within 1% of ln({k}) = {math.log(k):.3f} at every one of {len(loss)} reports and "
                f"{acc.name} between {fmt(float(acc.values.min()))} and {fmt(float(acc.values.max()))}, near 1/{k}: "
                f"on held-out data the model outputs a uniform guess over {k} classes")
        ev = [point(loss, 0, f"first {loss.name}"), point(loss, len(loss) - 1, f"last {loss.name}"),
              point(acc, len(acc) - 1, f"last {acc.name}")]
        ta = run.metrics.get("train_acc")
        if ta is not None and len(ta) >= 2 and np.isfinite(ta.values).all() and \
                float(as_share(ta.values)[-1]) >= float(share.max()) + GAP_ACC:
            ev.append(point(ta, len(ta) - 1, "training accuracy"))
            return [Finding(code="data_pipeline_bug", issue=f"{said}, while training accuracy reaches "
                            f"{fmt(float(ta.values[-1]))}: the held-out data is not what the model learned from",
                            # above the train/val gap's overfitting (0.7): a held-out set at chance at every
                            # report never generalised at all, so it was never a fit that went too far
                            severity="medium", confidence=0.72, evidence=ev,
                            fix="Run the held-out data through the training transforms (normalisation, resize, "
                                "tokenizer) and check its label order against training's", analyzer=NAME,
                            quick_fix="Compare the validation transforms and labels with training's")]
        return _guessing(said, ev)
    return []


# what makes a reward fall by design: self-play's stronger snapshots (judged by ELO), a curriculum's harder lesson
_REWARD_BY_DESIGN = re.compile(r"\bELO: |\blesson changed\b|\bNow in lesson\b", re.IGNORECASE)


def _reward_fell(run: Run) -> list[Finding]:
    """An RL run's reward that fell as it trained: over REWARD_FELL_POINTS reports or more, the medians of its
    thirds each no higher than the one before (a plateau at the reward's cap, then the fall), the last
    REWARD_FELL of its range under the first, and its last report near its lowest (medians, not steps: one
    episode's return is noisy). The policy unlearned what it had:
    updates too large for it (an LR too high, a PPO clip range or KL target too loose), the RL form of a loss
    that diverges (ml-agents' `Mean Reward: 1.320` to `-88.323`). Not where the paste says the reward falls by
    design: self-play against stronger snapshots (ml-agents prints ELO), a curriculum's harder lesson."""
    r = rewarded(run)
    if r is None:
        return []
    ok = np.isfinite(r.values)
    v = r.values[ok]
    span = float(v.max() - v.min()) if len(v) else 0.0
    if len(v) < REWARD_FELL_POINTS or span <= 0:
        return []
    third = len(v) // 3
    first, middle, last = (float(np.median(x)) for x in (v[:third], v[third:len(v) - third], v[len(v) - third:]))
    if not (first >= middle >= last and first > last) or first - last < REWARD_FELL * span \
            or float(v[-1]) > float(v.min()) + 0.25 * span \
            or first - last < REWARD_FELL_LEVEL * max(abs(first), abs(last)):
        return []        # (MountainCar's -178 to its floor of -200 as epsilon decays: no policy it had unlearned)
    if any(_REWARD_BY_DESIGN.search(text) for _, text in pasted_texts(run, ("log",), MATRIX_MAX_BYTES)):
        return []
    idx = np.flatnonzero(ok)
    best = int(idx[int(np.argmax(v[:max(1, len(v) // 2)]))])
    ev = [point(r, best, f"{r.name} at its best"), point(r, int(idx[-1]), f"last {r.name}")]
    return [Finding(code="lr_too_high",
                    issue=f"{r.name} fell from {fmt(first)} to {fmt(last)} (medians of the first and last thirds of "
                          f"{len(v)} reports): the policy got worse as it trained, the updates undo what it learned",
                    severity="medium", confidence=0.45, evidence=ev,
                    fix="Lower the learning rate 3-10x; for PPO keep clip_range at 0.2 and set target_kl (~0.02), and "
                        "check the reward and observation scaling did not change during the run",
                    expected_impact="the reward holds its best level and climbs",
                    analyzer=NAME, quick_fix="Lower the LR 3-10x")]


def _auc_pinned(run: Run) -> list[Finding]:
    """An AUC at exactly 0.5 or 1, to its printed digits, at every report. A model that ranks at random lands
    near 0.5 and moves, never on it round after round: exactly 0.5 is every example given the same score (ties
    count half), one constant output. A held-out AUC pinned there while the training AUC moves is the held-out
    rows' (features missing or misaligned there). 1 from a boosting library's first round, every AUC on the
    line, ranks every example right before anything was learned: the answer is in the inputs, or the
    evaluation set holds one class (LightGBM prints 1 then). Two lines are enough (RecBole's valid and test
    results), but a boosting log's 0.5 needs AUC_ROUNDS rounds (a first tree may not split yet)."""
    if _first_nonfinite(run) is not None or _stuck_accuracy(run):
        return []
    aucs = [s for name in ("auc", "val_auc", "test_auc")
            if (s := run.metrics.get(name)) is not None and len(s) and np.isfinite(s.values).all()]
    texts = {a.path: text.split("\n") for a, text in pasted_texts(run, ("log",), MATRIX_MAX_BYTES)}
    def on(s: Series) -> list[str]:
        lines = texts.get(s.artifact or "", [])
        return [lines[n - 1] for n in (s.lines if s.lines is not None else []) if 0 < n <= len(lines)]
    rounds = {(s.artifact, int(n)) for s in aucs for n in (s.lines if s.lines is not None else range(len(s)))}
    boosting = any(_BOOSTING_ROW.match(undress(line)) for s in aucs for line in on(s))
    if len(rounds) < AUC_LINES:
        return []
    pinned = [s for s in aucs if np.all(s.values == 0.5)]
    held = [s for s in pinned if s.name != "auc"]
    if pinned and (len(pinned) == len(aucs) or held) and len(rounds) >= (AUC_ROUNDS if boosting else AUC_LINES):
        shown = held if len(pinned) < len(aucs) else pinned
        names = f"{' and '.join(s.name for s in shown)} {'is' if len(shown) == 1 else 'are'}"
        n = len({(s.artifact, int(k)) for s in shown for k in (s.lines if s.lines is not None else range(len(s)))})
        ev = [point(s, i, s.name) for s in shown for i in sorted({0, len(s) - 1})]
        moving = [s for s in aucs if s not in pinned]
        return _one_score(f"{names} exactly 0.5 at every one of {n} reports" + (
            f" while {moving[0].name} moves ({fmt(float(moving[0].values[0]))} to {fmt(float(moving[0].values[-1]))})"
            if moving else ""), ev, boosting, held_out=bool(moving))
    lines = [line for s in aucs for line in on(s)]
    if aucs and all(np.all(s.values == 1) and _first_round(s, texts.get(s.artifact or "", [])) for s in aucs) \
            and not any(v < 1 for line in lines for v in _auc_values(line)):
        names = f"{' and '.join(s.name for s in aucs)} {'is' if len(aucs) == 1 else 'are'}"
        ev = [point(s, i, s.name) for s in aucs for i in sorted({0, len(s) - 1})]
        return [Finding(code="data_pipeline_bug",
                        issue=f"Too good to be true: {names} 1 at every one of {len(rounds)} reports from the "
                              "first round: every example ranked right before anything was learned",
                        severity="high", confidence=0.6, evidence=ev,
                        fix="Look for a leak, the answer in the inputs: the label (or a column computed from it, an "
                            "id sorted by it) left in the features, evaluation rows also in training; and check the "
                            "evaluation set holds both classes (LightGBM prints an AUC of 1 for a set of one class)",
                        expected_impact="a realistic AUC that climbs over the first rounds",
                        analyzer=NAME, quick_fix="Check for a label leak")]
    return []


_AUC_ON_LINE = re.compile(r"auc\W{0,4}\s*[:=]?\s*([01](?:\.\d+)?)\b", re.IGNORECASE)


def _auc_values(line: str) -> list[float]:
    """Every AUC printed on a line, whatever set it is for (LightGBM's `training's auc: 1  valid_1's auc: 0.81`,
    XGBoost's `validation_0-auc:1.0  validation_1-auc:0.83` read as one name each, the first value kept)."""
    return [float(m.group(1)) for m in _AUC_ON_LINE.finditer(line)]


def _one_score(said: str, ev: list[Evidence], boosting: bool, held_out: bool) -> list[Finding]:
    """The readings of an AUC of exactly 0.5: one score for every example. A held-out set's while training
    ranks: its rows (features missing, columns in another order). A boosting library's: trees that never split
    (too few rows for min_data_in_leaf, constant or missing features, one label); its learning rate only
    shrinks each tree and cannot pin them. A network's: a stuck output (a stuck accuracy's readings)."""
    if held_out:
        return [Finding(code="data_pipeline_bug", issue=f"{said}: the held-out rows all get one score, while "
                        "other rows are ranked: these rows' features are not what the model was trained on",
                        severity="medium", confidence=0.55, evidence=ev,
                        fix="Compare the evaluation features with training's: the same columns in the same order, "
                            "the same encoding, no column all missing", analyzer=NAME,
                        quick_fix="Compare the evaluation columns with training's")]
    if boosting:
        return [Finding(code="data_pipeline_bug", issue=f"{said}: every tree gives every row one score, so no "
                        "split was found: features constant or missing, or one label only", severity="medium",
                        confidence=0.5, evidence=ev,
                        fix="Check the features vary and the labels hold both classes (print X.nunique() and "
                            "y.value_counts()); on a small set lower min_data_in_leaf / min_child_weight, whose "
                            "defaults (20 rows; 1 of hessian) forbid every split", analyzer=NAME,
                        quick_fix="Print X.nunique() and y.value_counts()"),
                Finding(code="no_parameter_updates", issue=f"{said}: the trees are not growing; a minimum leaf "
                        "size larger than the data allows stops every split (LightGBM warns `No further splits "
                        "with positive gain`)", severity="medium", confidence=0.45, evidence=ev,
                        fix="Lower min_data_in_leaf (LightGBM) or min_child_weight (XGBoost) to fit the data's size",
                        analyzer=NAME, quick_fix="Lower min_data_in_leaf")]
    said += ", the AUC of one score for every example"
    return [replace(f, issue=f"{said}: the model outputs one score for every input, whatever its class",
                    fix="Print a histogram of the predicted scores: one value (or one per batch) is a stuck output; "
                        "then check the last layer's activation and the inputs' scale",
                    quick_fix="Print a histogram of the predicted scores")
            if f.code == "mode_collapse" else f for f in _guessing(said, ev)]


_FIRST_ROUND = re.compile(r"\s*\[[01]\]")     # a boosting library's first rounds: `[0]\ttrain-auc:`, `[1]:\ttest's`


def _first_round(s: Series, lines: list[str]) -> bool:
    """Whether `s`'s first report is the run's first: at step 0 or 1, or, with no step read, on a boosting
    library's line for round 0 or 1 (`lines`: its file's; a paste from mid-run that starts at a good model is no
    leak)."""
    if s.step_kind != "index":
        return bool(s.steps[0] <= 1)
    n = int(s.lines[0]) if s.lines is not None else 0
    return 0 < n <= len(lines) and _FIRST_ROUND.match(lines[n - 1]) is not None


def _guessing(said: str, ev: list[Evidence]) -> list[Finding]:
    """The readings of an accuracy that says the model answers the same (or guesses) whatever the input."""
    return [Finding(code="data_pipeline_bug",
                    issue=f"{said}: the model is not learning; it predicts the same answer "
                          "whatever the input",
                    severity="medium",
                    confidence=0.5,
                    evidence=ev,
                    fix="Why this happens, most likely first: labels disconnected from inputs (print a "
                        "few (input, label) pairs), one class dominating (the accuracy equals its "
                        "share), an output layer that cannot express the classes (one unit with "
                        "softmax, a sigmoid on multi-class), inputs not normalised, an LR so high the "
                        "model collapsed to a constant",
                    analyzer=NAME,
                    quick_fix="Print a batch of (input, label) pairs"),
                Finding(code="mode_collapse",
                    issue=f"{said}: every input gets the same class, and the accuracy is that "
                          "class's share",
                    severity="medium",
                    confidence=0.4,
                    evidence=ev,
                    fix="Compare the accuracy with the share of the largest class; weight the "
                        "loss by class or rebalance the sampler, and check the output layer "
                        "matches the number of classes",
                    analyzer=NAME,
                    quick_fix="Check the class balance"),
                Finding(code="lr_too_high", issue=f"{said}: an LR too high pins a "
                                              "classifier to one constant answer",
                    severity="medium", confidence=0.35, evidence=ev,
                    fix="Lower the learning rate 10x (Adam ~1e-4) and watch whether "
                        "the accuracy starts to move",
                    analyzer=NAME, quick_fix="Lower the LR 10x")]


def _flat_loss(run: Run) -> list[Finding]:
    """A loss at one value at every report of a short excerpt, near ln(K) (a uniform guess over K
    classes), identical to the last digit, or held within STILL_REL over STILL_EPOCHS whole epochs or
    more: nothing is learned. An epoch's mean loss moves by more than that while the weights change (a
    run at lr=0 wavers only with the batches' order). A low loss that settled converged. Where a paste
    prints only a validation (or test) loss, that one is read."""
    s = _main_loss(run) or next((h for n in ("val_loss", "test_loss") if (h := run.metrics.get(n)) is not None
                                 and len(h)), None)
    if not _finite(s, PLATEAU_POINTS) or np.unique(s.steps).size < STUCK_POINTS:
        return []
    v = s.values
    level = float(np.median(v))
    spread = float(np.max(np.abs(v - level)))
    tail = False
    if level <= 0 or spread > FLAT_REL * level:
        s = _chance_tail(s)
        if s is None:
            return []
        v, tail = s.values, True
        level = float(np.median(v))
        spread = float(np.max(np.abs(v - level)))
    # (of the K within 1%, the one whose ln is nearest: not the first, ln(96) for a loss at ln(100))
    chance = min((k for k in range(2, 1001) if abs(level - math.log(k)) <= 0.01 * math.log(k)),
                 key=lambda k: abs(level - math.log(k)), default=None) or next(
        (k for k in VOCABS if abs(level - math.log(k)) <= VOCAB_REL * math.log(k)
         and (s.step_kind != "step" or float(s.steps[-1]) > VOCAB_STEPS)), None)
    if tail and (chance is None or _accuracy_level(run) > CHANCE_ACC / chance):
        return []               # a loss that converged near ln(K) beside an accuracy above chance: no guess
    if not tail and len(v) >= STILL_EPOCHS and bool(np.all(np.diff(v) < 0)) and (
            chance or 0 < _accuracy_level(run) < 0.5):
        return _creeping(s)     # near chance, or at a low accuracy: a converged tail creeps down too
    if chance and chance >= MANY_CLASSES and _accuracy_level(run) > 0.5:
        chance = None           # a uniform guess over many classes scores ~1/K, not the accuracy printed beside it
    exact = bool(np.all(v == v[0]))
    epochs = _epochs_spanned(run, s)
    # (a loss never higher than at the report before, and lower at FALLING_SHARE of them, converges, however little
    # it moves, a tie of the printed digits aside: not still)
    d = np.diff(v)
    still = epochs >= STILL_EPOCHS and spread <= STILL_REL * level and not (
        bool(np.all(d <= 0)) and float(np.mean(d < 0)) >= FALLING_SHARE)
    if not (chance or exact or still):
        return []               # a low loss that settled (0.05, 0.051, 0.05) converged; it is not stuck
    ev = [point(s, 0, f"first {s.name} at this level" if tail else f"first {s.name}"),
          point(s, len(s) - 1, f"last {s.name}")]
    # a validation loss is computed on the same data each time: identical to the last digit at three
    # evaluations, the weights it was computed from did not change between them
    same_weights = exact and (len(v) >= STILL_EPOCHS or s.name.startswith(("val_", "test_")) and len(v) >= 3
                              and _printed_finely(level) and _accuracy_still(run, s))
    said = f"{s.name} stays at {fmt(level)} at {'each of its last' if tail else 'every one of'} {len(v)} reports" + (
        f", ln({chance}) = {math.log(chance):.3f}: a uniform guess over {chance} classes" if chance else
        f" over {epochs} epochs, within {STILL_REL:.1%}" if still and not exact else
        " to the last digit" if same_weights else "")
    if s.name.startswith(("val_", "test_")) and not same_weights:
        return []       # a held-out loss alone is read for weights that did not change, nothing else
    if not chance and (still or same_weights):
        return _not_trained(said, ev, exact)
    why_still = ("identical to the last digit, as if the weights never change" if exact
                 else "the updates are too small to move it")
    # an LR read below every optimizer's range cannot pin the loss by being too high: it is the LR's other reading
    # (not a schedule's end, an LR falling over the reports: the rate the run trained at came before these lines)
    peak, lr = peak_lr(run), run.metrics.get("lr")
    decaying = lr is not None and len(lr) >= 2 and float(lr.values[-1]) < float(lr.values[0])
    tiny = small_lr(run) if peak is not None and peak[0] < min(lo for lo, _ in LR_RANGE.values()) and not decaying \
        else None
    if peak is not None and tiny is not None:
        return [Finding(code="lr_too_low",
                        issue=f"{said}: at an LR of {fmt(peak[0])}, below every optimizer's range, the updates are "
                              "too small to move it",
                        severity="medium", confidence=0.55, evidence=[*ev, tiny],
                        fix="Raise the learning rate into its optimizer's usual range (Adam ~1e-4 to 1e-3, SGD "
                            "~1e-2); if a warm-up starts this low, check it reaches its peak",
                        analyzer=NAME, quick_fix="Raise the LR into its optimizer's range"),
                Finding(code="data_pipeline_bug", issue=f"{said}: the model learns nothing from its inputs",
                        severity="medium", confidence=0.3, evidence=ev,
                        fix="If a normal LR leaves it here too, print a batch of (input, label) pairs",
                        analyzer=NAME, quick_fix="Print a batch of (input, label) pairs")]
    return [Finding(code="data_pipeline_bug",
                    issue=f"{said}: the model learns nothing from its inputs",
                    severity="medium",
                    confidence=0.5 if chance else 0.4,
                    evidence=ev,
                    fix="Check that labels still match their inputs: print a batch of (input, label) pairs "
                        "after the dataset, the collate function and any shuffling",
                    analyzer=NAME,
                    quick_fix="Print a batch of (input, label) pairs"),
            Finding(code="lr_too_high",
                    issue=f"{said}: an LR far too high pins the loss at chance",
                    severity="medium",
                    confidence=0.4,
                    evidence=ev,
                    fix="Lower the learning rate 10x and see whether the loss starts to fall",
                    analyzer=NAME,
                    quick_fix="Lower the LR 10x"),
            Finding(code="no_parameter_updates" if exact else "lr_too_low",
                    issue=f"{said}: {why_still}",
                    severity="medium",
                    confidence=0.35,
                    evidence=ev,
                    fix="Check that optimizer.step() runs over the model's "
                        "parameters and that lr > 0" if exact else
                        "Raise the learning rate toward its optimizer's usual range (Adam ~1e-4 to 1e-3)",
                    analyzer=NAME,
                    quick_fix="Verify optimizer.step() runs" if exact else "Raise the LR")]


def _chance_tail(s: Series) -> Series | None:
    """The reports that end `s` within FLAT_REL of ln(K), K <= CHANCE_CLASSES, where every report before them
    was above that: a loss that came down to a uniform guess over K classes and stayed there (a binary
    classifier from 16.4 to 0.6933 for nine epochs). None where fewer than TAIL_AT_CHANCE reports sit there, or
    where the loss came up to it from below (it had learned, then lost it: the divergence readings')."""
    v = s.values
    k = next((k for k in range(2, CHANCE_CLASSES + 1) if abs(v[-1] - math.log(k)) <= FLAT_REL * math.log(k)), None)
    if k is None:
        return None
    near = np.abs(v - math.log(k)) <= FLAT_REL * math.log(k)
    n = len(v) - int(np.flatnonzero(~near)[-1]) - 1 if not near.all() else len(v)
    if n < TAIL_AT_CHANCE or n == len(v) or not (v[:len(v) - n] > math.log(k) * (1 + FLAT_REL)).all():
        return None
    k0 = len(v) - n
    return replace(s, steps=s.steps[k0:], values=v[k0:], lines=None if s.lines is None else s.lines[k0:])


def _printed_finely(value: float) -> bool:
    """Printed with more than two decimals (0.67718, not 0.21): equal to that many digits is no coincidence."""
    return abs(value * 100 - round(value * 100)) > 1e-6


def _accuracy_still(run: Run, s: Series) -> bool:
    """Whether every accuracy printed on the lines of `s` is identical there too (or none is printed): an
    accuracy that moves says the weights do."""
    for name in ("val_acc", "test_acc", "train_acc"):
        a = run.metrics.get(name)
        if a is None or a.lines is None or s.lines is None or a.artifact != s.artifact:
            continue
        at = a.values[np.isin(a.lines, s.lines)]
        if len(at) and not np.all(at == at[0]):
            return False
    return True


def _accuracy_level(run: Run) -> float:
    """The median of the accuracy printed beside the loss (train, else validation); 0 where none is."""
    for name in ("train_acc", "val_acc"):
        a = run.metrics.get(name)
        if a is not None and len(a) and np.isfinite(a.values).any():
            level = float(np.nanmedian(a.values))
            return level / 100 if level > 1 else level
    return 0.0


def _creeping(s: Series) -> list[Finding]:
    """A loss that falls at every report, each time by a sliver: the gradient reaches the weights and
    points the right way, and the steps are too small (at chance, a shuffled label's memorising also
    creeps down, listed after it)."""
    v = s.values
    ev = [point(s, 0, f"first {s.name}"), point(s, len(s) - 1, f"last {s.name}")]
    said = (f"{s.name} falls at every one of {len(v)} reports, but only {(v[0] - v[-1]) / v[0]:.2%} in all "
            f"({fmt(float(v[0]))} -> {fmt(float(v[-1]))})")
    return [Finding(code="lr_too_low", issue=f"{said}: it learns, with steps far too small", severity="medium",
                    confidence=0.5, evidence=ev, analyzer=NAME, quick_fix="Raise the LR 10x",
                    fix="Raise the learning rate toward its optimizer's usual range (Adam ~1e-4 to 1e-3, SGD "
                        "~1e-2), or check the scheduler did not start it near 0"),
            Finding(code="data_pipeline_bug", issue=f"{said}: labels that do not match their inputs are only "
                    "memorised, slowly", severity="medium", confidence=0.35, evidence=ev, analyzer=NAME,
                    quick_fix="Print a batch of (input, label) pairs",
                    fix="Print a batch of (input, label) pairs after the dataset and the collate function")]


def _epochs_spanned(run: Run, s: Series) -> int:
    """How many distinct epochs the reports of `s` were printed in (0 where the paste names none): each report's
    epoch is the last one named at or before it, on its own line or on a header line above it (Keras prints
    `Epoch 3/10` on the line before the epoch's metrics)."""
    epoch = run.metrics.get("epoch")
    if epoch is None or not len(epoch):
        return 0
    ok = np.isfinite(epoch.values)
    steps, values = epoch.steps[ok], epoch.values[ok]
    if not len(steps):
        return 0
    at = np.searchsorted(steps, s.steps, side="right") - 1
    return int(np.unique(values[at[at >= 0]]).size)


def _not_trained(said: str, ev: list[Evidence], exact: bool = False) -> list[Finding]:
    """A loss that holds still over whole epochs without being at chance: the weights barely change.
    Identical to the last digit, epoch after epoch, they do not change at all: a stuck accuracy's
    readings (a data bug, one class for every input) come after it."""
    def finding(code: str, why: str, conf: float, fix: str, quick: str) -> Finding:
        return Finding(code=code, issue=f"{said}: {why}", severity="medium", confidence=conf, evidence=ev,
                       fix=fix, analyzer=NAME, quick_fix=quick)
    return [finding("no_parameter_updates", "the weights are not being updated (an LR of 0 from the scheduler, "
                    "frozen parameters, an optimizer built over other parameters, or an output layer that "
                    "saturates so no gradient reaches them)", 0.55 if exact else 0.45,
                    "Print optimizer.param_groups[0]['lr'] at each epoch and check that the optimizer holds the "
                    "model's trainable parameters (count the elements in optimizer.param_groups' params)",
                    "Print the LR the optimizer uses at each epoch"),
            finding("lr_too_low", "an LR far too small moves the weights too little to change the loss", 0.4,
                    "Raise the learning rate toward its optimizer's usual range (Adam ~1e-4 to 1e-3, SGD ~1e-2)",
                    "Raise the LR 10x"),
            finding("data_pipeline_bug", "inputs that carry nothing about the labels leave the loss at the "
                    "labels' own entropy", 0.35,
                    "Print a batch of (input, label) pairs after the dataset and the collate function",
                    "Print a batch of (input, label) pairs")]


def _frozen_loss(run: Run) -> list[Finding]:
    return frozen_loss(_main_loss(run), NAME) if _first_nonfinite(run) is None else []


def _policy_gradient(run: Run) -> bool:
    """Whether the loss is an RL policy's (GRPO, PPO: printed beside rewards and a KL to a reference),
    whose level and trend say nothing of learning the way a supervised loss's do."""
    names = run.metrics.names()
    return any(n.startswith("reward") for n in names) and any(n.startswith("kl") for n in names)


def _batches_ran(run: Run, loss: Series) -> bool:
    """Whether the paste shows batches went through: a gradient norm printed (even NaN, backward ran), an LR
    that moves, or a step or epoch counted in fractions (a trainer's progress between whole epochs)."""
    lr = run.metrics.get("lr")
    return (run.metrics.get("grad_norm") is not None or (lr is not None and len(np.unique(lr.values)) > 1)
            or bool(np.any(loss.steps != np.round(loss.steps))))


_PERFECT = re.compile(r"acc\w*['\"]?[ \t]*[:=][ \t]*(?:1\.0+|100(?:\.0+)?)(?![\d.])", re.I)


def _perfect_beside(run: Run, loss: Series) -> bool:
    """Whether an accuracy printed on the loss's last line is 1.0 (100%): a fit so perfect in float32 that the loss
    underflowed to 0 (a Keras model at epoch 500 of 8 samples), not a loss with nothing to score."""
    if loss.lines is None or not len(loss):
        return False
    for name in run.metrics.names():     # `acc`, `val_acc`
        a = run.metrics.get(name)
        if "acc" not in name or a is None or a.lines is None:
            continue
        at = np.flatnonzero(a.lines == loss.lines[-1])
        if len(at) and float(a.values[at[0]]) in (1.0, 100.0):
            return True
    line = int(loss.lines[-1])           # an accuracy under a name no series took (a Keras output's `out_a_accuracy`)
    for _, text in pasted_texts(run, ("log",), MATRIX_MAX_BYTES, only=loss.artifact):
        lines = text.split("\n")
        return 0 < line <= len(lines) and bool(_PERFECT.search(lines[line - 1]))
    return False


def _zero_parts(run: Run, loss: Series) -> int:
    """How many other loss series print exactly 0 at every one of the loss's lines (and nowhere else)."""
    if loss.lines is None:
        return 0
    n = 0
    for name in run.metrics.names():     # flat parts (`loss_bbox`) and a summed loss's (`train_loss/bbox`) alike
        p = run.metrics.get(name)
        if "loss" not in name or p is None or p.name == loss.name or p.lines is None or len(p) != len(loss):
            continue
        n += bool(np.array_equal(p.lines, loss.lines) and np.all(p.values == 0))
    return n


def _zero_loss(run: Run) -> list[Finding]:
    """A loss that drops to exactly 0 and stays there for ZERO_REPORTS or more reports (or for the last
    report, from ZERO_FALL or more): no real loss is exactly zero. Either nothing is scored (every label
    masked, -100 everywhere, an empty target) or the loss underflows in half precision. A loss that was
    real first and falls to 0 mid-run is the precision's (threads settle fp16 loss scaling and bf16), one
    that is 0 from its first report the data's. A policy-gradient loss printed beside its rewards and KL
    (TRL's GRPO) is the exception: it is 0 by construction while the KL to the reference is."""
    s = _main_loss(run)
    if s is None or not len(s):
        return []
    # one report whose whole loss and many of its parts print exactly 0 (DETR's cut log line: loss_ce, loss_bbox,
    # loss_giou and their per-layer copies all 0.0) is as sure as two: no rounding zeroes every term at once
    # ...not where the line is a perfect fit's (a Keras model at `Epoch 500/500` of 8 samples, every output's accuracy
    # 1.0000): its float32 softmax saturated to exactly 1, and a converged loss underflows to 0 with every part
    parts = _zero_parts(run, s) if len(s) < ZERO_REPORTS and not _perfect_beside(run, s) else 0
    if len(s) < ZERO_REPORTS and parts < ZERO_PARTS:
        return []
    zero = np.flatnonzero(s.values == 0)
    if not len(zero) or not np.all(s.values[zero[0]:] == 0):
        return []                # zeros among other values are rounding, not a loss that stays at nothing
    if len(zero) < ZERO_REPORTS and not (zero[0] > 0 and s.values[zero[0] - 1] >= ZERO_FALL) \
            and parts < ZERO_PARTS:
        return []
    if zero[0] > 0 and 0 <= s.values[zero[0] - 1] < ZERO_JUMP:
        return []                # a loss that crept down to a printed 0.0000 converged; it did not drop to 0
    if _policy_gradient(run):
        return []                # a GRPO loss is 0 while its KL term is (its advantages sum to 0 in a group)
    ev = [point(s, int(zero[0]), s.name), point(s, int(zero[-1]), s.name)]
    said = f"{s.name} is exactly 0 at " + ("its one report" if len(s) == 1 else f"{len(zero)} of {len(s)} reports") + (
        f", with {parts} of its parts on the same line" if parts >= ZERO_PARTS else "")
    # 0 from the very first report was never a loss: a loop that ran no batch prints the sum it started at
    # (medium: an alternative to the masked labels, not a stall that would take the lead from them)
    empty = [] if zero[0] > 0 or _batches_ran(run, s) else [Finding(
        code="no_parameter_updates",
        issue=f"{said}, from the first: no batch may reach the loss at all (a loader that yields nothing: "
              "drop_last=True with fewer samples than one batch, a filter that drops every sample), so the "
              "printed loss is the 0 it was initialized to and no step is taken",
        severity="medium", confidence=ZERO_EMPTY, evidence=ev,
        fix="Print len(train_loader) and the number of batches seen per epoch: 0 batches means the dataset is "
            "smaller than the batch size under drop_last=True (set drop_last=False or a smaller batch), or empty",
        analyzer=NAME, quick_fix="Print len(train_loader)")]
    dropped = bool(zero[0] > 0)     # real first, then 0: the precision leads; 0 throughout: the data
    return empty + [Finding(code="data_pipeline_bug",
                    issue=f"{said}: nothing is being scored",
                    severity="high",
                    confidence=ZERO_SECOND if dropped else ZERO_FIRST,
                    evidence=ev,
                    fix="Check that some labels are real: with every label masked (-100, padding, a "
                        "prompt-only mask) the loss is 0 and nothing is learned; print the count of "
                        "unmasked labels per batch",
                    expected_impact="a non-zero loss that falls",
                    analyzer=NAME,
                    quick_fix="Count the unmasked labels"),
            Finding(code="numerical_instability",
                    issue=f"{said}: a half-precision loss that underflowed (or overflowed and "
                          "was zeroed) reads 0",
                    severity="high",
                    confidence=ZERO_FIRST if dropped else ZERO_SECOND,
                    evidence=ev,
                    fix="Train in bf16 or fp32 for a few steps; if the loss comes back, keep the loss "
                        "computation in fp32 (autocast off around it)",
                    analyzer=NAME,
                    quick_fix="Compute the loss in fp32")]


# the parts of a detector's loss that score matched objects only: box regression, IoU, objectness, masks
_MATCHED_PARTS = re.compile(r"bbox|box|reg|iou|dfl|obj|mask")


def _box_part(name: str) -> bool:
    """Whether a loss part (`train_loss/rpn_bbox`, `nonfinite/rpn_loss_box`) scores matched objects."""
    return bool(_MATCHED_PARTS.search(name.split("/", 1)[1]))


def _unscored_part(run: Run) -> list[Finding]:
    """A part of a detector's loss that scores matched objects only (box regression, objectness, a mask)
    exactly 0 at every report, ZERO_REPORTS or more, while the whole loss is not: no ground-truth object
    was matched in any batch, so none reached the loss. The class names the dataset was given do not
    match the annotations' (every box dropped), the boxes were filtered out as empty or invalid, or the
    annotation file is not the one the images go with."""
    total = _main_loss(run)
    if total is None or not len(total) or not np.all(np.isfinite(total.values)) or np.all(total.values == 0):
        return []
    parts = [s for n in run.metrics.names() if n.startswith(f"{total.name}/")
             and _box_part(n) and (s := run.metrics.get(n)) is not None
             and len(s) >= ZERO_REPORTS and np.all(s.values == 0)]
    if not parts:
        return []
    names = ", ".join(s.name for s in parts)
    s = parts[0]
    return [Finding(code="data_pipeline_bug",
                    issue=f"{names} {'is' if len(parts) == 1 else 'are'} exactly 0 at every report while "
                          f"{total.name} is not: no ground-truth object is matched, so none reaches the loss",
                    severity="high",
                    confidence=0.6,
                    evidence=[point(s, 0, f"first {s.name}"), point(s, len(s) - 1, f"last {s.name}"),
                              point(total, len(total) - 1, total.name)],
                    fix="Check that the annotations reach the model: the dataset's class names must be the "
                        "annotation file's (mmdet: set `classes=` in data.train as well as num_classes), boxes "
                        "must not all be filtered out as empty or invalid, and the annotation file must be the "
                        "one the images go with; print the number of ground-truth boxes in one batch",
                    expected_impact="the box (objectness, mask) loss is non-zero and falls",
                    analyzer=NAME,
                    quick_fix="Count the ground-truth boxes in a batch")]


def _too_good(run: Run) -> list[Finding]:
    """A loss near zero with an accuracy of 1.0 from the first report: too good to be true. The
    model sees the answer (a label leaked into the inputs, validation overlapping training) or the
    labels are constant. An accuracy of 1.0 at step 0, before training moved the weights, is too
    good whatever the loss beside it (a weight-decay term keeps the total above 0): an untrained
    model scores every sample right only when every label is the class it happens to predict."""
    for name in ("train_acc", "val_acc"):
        # each accuracy beside its own loss: an evaluation's printout holds no training loss
        loss = (run.metrics.get("val_loss") if name == "val_acc" else None) or _main_loss(run)
        acc = run.metrics.get(name)
        if acc is None or not len(acc) or not np.isfinite(acc.values[0]) or as_share(acc.values)[0] < 0.999:
            continue
        if acc.step_kind != "index" and acc.steps[0] > 1:
            continue             # the paste starts mid-training: a model may well be that good by then
        untrained = acc.step_kind == "step" and acc.steps[0] == 0
        low = loss if loss is not None and 0 <= loss.values[0] <= TOO_GOOD_LOSS else None
        if untrained or low is not None:
            ev = ([point(low, 0, f"first {low.name}")] if low is not None else []) + [point(acc, 0, f"first {name}")]
            beside = (f" and {low.name} {fmt(float(low.values[0]))} from the first report" if low is not None
                      else " at step 0, before any update")
            return [Finding(code="data_pipeline_bug",
                            issue=f"Too good to be true: {name} is {fmt(float(acc.values[0]))}{beside}",
                            severity="high",
                            confidence=0.65,
                            evidence=ev,
                            fix="Look for a leak, the answer in the inputs: a label column left in the "
                                "features, validation samples also in training, labels that are all one "
                                "value, or a metric computed against the predictions themselves",
                            expected_impact="a realistic loss that falls over the first epochs",
                            analyzer=NAME,
                            quick_fix="Check for a label leak")]
    return []


_ROW = re.compile(r"^\s*\[*\s*((?:\d+\.?\s+)+\d+\.?)\s*\]*\s*$")


def _matrices(text: str):
    """Square blocks of count rows that read as a confusion matrix: numpy's bracketed rows
    (`[[ 0 12]` / ` [ 0 30]]`), or bare rows under a line that says "confusion". Yields (first
    line, rows)."""
    lines = [undress(ln) for ln in text.splitlines()] + [""]
    block: list[list[int]] = []
    start = 0
    for n, line in enumerate(lines, 1):
        m = _ROW.match(line) if len(line) <= MATRIX_LINE_MAX else None
        row = [int(float(x)) for x in m.group(1).split()] if m else None
        if row and (not block or len(row) == len(block[0])):
            start = start if block else n
            block.append(row)
            continue
        named = any("confusion" in lines[k].lower() for k in range(max(0, start - 4), max(0, start - 1)))
        square = len(block) >= 2 and len(block) == len(block[0])
        if square and (named or lines[start - 1].lstrip().startswith("[")):
            yield start, block
        block, start = ([row], n) if row else ([], 0)


def _one_column(run: Run) -> list[Finding]:
    """A confusion matrix whose counts sit in one column: every sample is predicted as one class."""
    for a, text in pasted_texts(run, ("log", "traceback", "samples"), MATRIX_MAX_BYTES):
        for line, rows in _matrices(text):
            m = np.array(rows)
            cols = np.flatnonzero(m.sum(axis=0))
            if len(cols) != 1 or m.sum() == 0:
                continue
            j, share = int(cols[0]), m.sum(axis=1) / m.sum()
            ev = Evidence(f"confusion matrix {m.shape[0]}x{m.shape[1]}: all {int(m.sum())} predictions in "
                          f"column {j}, none in the others", a.path, f"lines {line}-{line + len(rows) - 1}")
            return predicts_one_class(str(j), share, j, ev, NAME)
    return []


# A YOLO validation summary row: `all  <images>  <labels>  P  R  mAP@.5  mAP@.5:.95` (labels named
# `Labels`, `Instances` or `Targets` in the header, by version).
_YOLO_ALL = re.compile(r"^\s*all\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+[\d.]+)?\s*$")


def _no_labels(run: Run) -> list[Finding]:
    """A detector validated on images that hold no labels at all (YOLO's `all  10  0  0  0  0`):
    nothing can be matched, so precision, recall and mAP are 0 whatever the model learned. The
    labels were not found: a labels folder that does not mirror the images folder, a stale label
    cache, class ids filtered out."""
    for a, text in pasted_texts(run, ("log", "traceback"), MATRIX_MAX_BYTES):
        for n, line in enumerate(map(undress, text.splitlines()), 1):
            m = _YOLO_ALL.match(line) if len(line) <= MATRIX_LINE_MAX else None
            if m and int(m.group(1)) > 0 and int(m.group(2)) == 0:
                ev = [Evidence(f"{line.strip()}: {m.group(1)} images validated, 0 labels among "
                               "them, so every metric is 0", a.path, f"line {n}")]
                return [Finding(code="data_pipeline_bug",
                                issue=f"Validation found {m.group(1)} images and no labels: the labels "
                                      "were not loaded, so mAP is 0 whatever the model learned",
                                severity="high",
                                confidence=0.7,
                                evidence=ev,
                                fix="Check that each image has its label file where the loader looks (YOLO "
                                    "maps images/ to labels/ in the same path), delete the stale *.cache "
                                    "files, and that the class ids in the label files are below the number "
                                    "of classes in the data config",
                                expected_impact="validation counts the labels and mAP rises from 0",
                                analyzer=NAME,
                                quick_fix="Check the label paths and delete the label cache")]
    return []


def _growing_gradients(run: Run) -> list[Finding]:
    """A gradient norm that grows by GRAD_GROWTH or more over a few reports, mostly rising: the
    gradient analyzer's geometric fit needs a longer curve."""
    g = run.metrics.get("grad_norm")
    if g is None or not (STUCK_POINTS <= len(g) < SHORT):
        return []
    end = np.flatnonzero(~np.isfinite(g.values))
    v = g.values[: int(end[0])] if len(end) else g.values
    if len(v) < STUCK_POINTS or v[0] <= 0:
        return []
    if v[-1] < GRAD_GROWTH * v[0] or (np.diff(v) > 0).mean() < RISE_SHARE:
        return []
    loss = _main_loss(run)
    ends = _finite_ends(loss)
    if ends is not None and ends[1] < 0.95 * ends[0]:
        return []                # gradients that grow while the loss falls are a warm-up, not an explosion
    ev = [Evidence(f"grad_norm grew {v[-1] / v[0]:,.0f}x in {len(v)} reports, from {fmt(float(v[0]))} to "
                   f"{fmt(float(v[-1]))}", g.artifact, g.span_locator(0, len(v) - 1))]
    conf = 0.6
    if loss is not None and ends is not None and ends[1] > ends[0]:
        # the loss rose with them: the gradients are the mechanism seen, ahead of the LR reading of the rise
        rose = f"{loss.name} rose with them, from {fmt(ends[0])} to {fmt(ends[1])}"
        ev.append(Evidence(rose, loss.artifact, loss.span_locator(0, len(loss) - 1)))
        conf = 0.65
    return [Finding(code="exploding_gradients",
                    issue=f"The gradient norm grows {v[-1] / v[0]:,.0f}x over {len(v)} reports",
                    severity="high",
                    confidence=conf,
                    evidence=ev,
                    fix="Clip the gradient norm (max_norm 1.0), lower the learning rate, and check for a "
                        "missing normalisation layer or an unscaled target",
                    analyzer=NAME,
                    onset_step=float(g.steps[0]),
                    quick_fix="Clip gradients")]


def _short_spike(run: Run) -> list[Finding]:
    """One report of a short loss curve SPIKE_RATIO times the median of the others, with the report
    before and the next near it: a transient spike (the trend analyzer's spike search needs 21
    points). The report before must be near the rest too, or the spike SPIKE_RATIO times it (a high
    first report is where training started): a report that stands between a higher one before it and
    a lower one after is a fast early fall, not a spike."""
    s = _main_loss(run)
    if s is None or not (SPIKE_POINTS <= len(s) < SHORT) or not np.isfinite(s.values).all():
        return []
    v = s.values
    for i in range(1, len(v) - 1):
        rest = float(np.median(np.delete(v, i)))
        before_low = v[i - 1] <= SPIKE_BACK * rest or v[i] >= SPIKE_RATIO * v[i - 1]
        if rest > 0 and v[i] >= SPIKE_RATIO * rest and v[i + 1] <= SPIKE_BACK * rest and before_low:
            ev = [point(s, i, f"{s.name} spike"), point(s, i + 1, f"{s.name} back")]
            return [Finding(code="loss_spikes",
                            issue=f"{s.name} spiked to {fmt(float(v[i]))} ({v[i] / rest:.0f}x the other "
                                  f"reports) at {s.step_kind} {fmt_step(s.steps[i])} and came back",
                            severity="medium",
                            confidence=0.55,
                            evidence=ev,
                            fix="Log the batch indices of the spiking step and inspect those samples; clip "
                                "gradients (max_grad_norm 1.0) so one bad batch cannot move the weights far",
                            expected_impact="spikes shrink or vanish; the trend is unchanged",
                            analyzer=NAME,
                            onset_step=float(s.steps[i]),
                            quick_fix="Inspect the spiking batch; clip gradients")]
    return []


def _no_fault_read(run: Run) -> list[Finding]:
    """A short paste whose numbers were read and show no fault is evidence of health, if modest: say
    `healthy`, with what was checked, rather than "needs more data". Only where nothing else in the
    paste speaks (an error, a NaN anywhere, a loss above its start, an LR above every optimizer's
    range); any fault another analyzer finds outranks it (analysis/rank.py)."""
    high_lr = _high_lr(run) is not None
    if any(e.signature not in QUIET_EVENTS for e in run.events) or high_lr and _falls_throughout(run) is None:
        return []               # (an LR above every range over a loss that falls at each report is a note)
    series = [s for s in (run.metrics.get(n) for n in run.metrics.names())
              if s is not None and len(s) and s.name not in BOOKKEEPING]
    if not series or any(len(s) >= SHORT or not np.isfinite(s.values).all() for s in series):
        return []
    loss = _main_loss(run)
    if loss is not None and len(loss) >= 2 and loss.values[-1] > loss.values[0] * (1 + RISE_MIN):
        return []
    reports = max(len(s) for s in series)
    more = f" and {len(series) - 6} more" if len(series) > 6 else ""
    names = ", ".join(s.name for s in series[:6]) + more
    ev = [Evidence(f"read {len(series)} series ({names}) over {reports} report{'s' * (reports > 1)}: every "
                   f"value finite, no error, {LR_NOTE if high_lr else 'no LR above its usual range'}",
                   series[0].artifact, series[0].span_locator(0, len(series[0]) - 1))]
    conf = HEALTHY_READ
    if loss is not None and len(loss) >= 2 and loss.values[-1] < loss.values[0]:
        ev.append(Evidence(f"{loss.name} fell from {fmt(float(loss.values[0]))} to "
                           f"{fmt(float(loss.values[-1]))}",
                           loss.artifact, loss.span_locator(0, len(loss) - 1)))
        conf = HEALTHY_FALLING
    return [Finding(code="healthy",
                    issue="Nothing in these lines shows a fault: the numbers read are finite "
                          f"and in range ({reports} report{'s' * (reports > 1)}, too few to "
                          "judge a trend with confidence)",
                    severity="info",
                    confidence=conf,
                    evidence=ev,
                    fix="Nothing to fix from these lines; if training misbehaves, share more of the log (the "
                        "loss per step over a few hundred steps, and the validation metrics)",
                    analyzer=NAME)]


def _every_step_skipped(run: Run) -> list[Finding]:
    """Megatron-LM's `number of skipped iterations` equal to the iterations of its interval at every report,
    SKIPPED_REPORTS or more, under a loss scale that does not fall: the fp16 scaler found an overflow at
    every step and skipped it, so the optimizer never stepped (its state stays empty). A dynamic scaler's
    first skipped steps are its search, the scale halving at each; a scale that holds is not searching."""
    s = run.metrics.get("skipped_iterations")
    if s is None or len(s) < SKIPPED_REPORTS or s.step_kind != "step" or _losses(run):
        return []           # a loss printed at a report is an iteration that ran (Megatron prints none when all skip)
    steps = np.diff(s.steps)
    if not len(steps) or np.any(steps <= 0) or not np.all(s.values[1:] >= steps) or s.values[0] < steps.min():
        return []
    scale = run.metrics.get("loss_scale")
    if scale is not None and len(scale) and np.nanmin(scale.values) < np.nanmax(scale.values):
        return []           # halving: the scaler's search at a start
    ev = [point(s, 0, "number of skipped iterations"), point(s, len(s) - 1, "number of skipped iterations")]
    said = f"every iteration of the {len(s)} reports was skipped"
    scale_said = f" while the loss scale held at {fmt(float(scale.values[-1]))}" if scale is not None and len(scale) \
        else ""
    return [Finding(code="no_parameter_updates",
                    issue=f"{said}{scale_said}: the fp16 loss scaler found an overflow at every step and skipped "
                          "it, so the optimizer has never stepped (its state is empty) and no lm loss is printed",
                    severity="high", confidence=0.7, evidence=ev,
                    fix="Train in bf16 (--bf16 instead of --fp16), or let the scale fall: drop a fixed --loss-scale "
                        "or lower --initial-loss-scale so the dynamic scaler can find a scale that does not overflow; "
                        "'number of skipped iterations' should fall to 0 and an lm loss be printed",
                    expected_impact="iterations that step: an lm loss printed and falling",
                    analyzer=NAME, quick_fix="Train with --bf16"),
            Finding(code="numerical_instability",
                    issue=f"{said}{scale_said}: the gradients overflow fp16 at every step",
                    severity="medium", confidence=0.5, evidence=ev,
                    fix="Train in bf16, or find the layer whose gradients overflow fp16 (log the gradient norm "
                        "per layer)",
                    expected_impact="gradients finite in half precision", analyzer=NAME,
                    quick_fix="Train with --bf16")]


def analyze(run: Run) -> list[Finding]:
    readings = (_gap, _zero_map, _one_task_zero, _low_miou, _dice_out_of_range, _absurd_lr, _nan_loss, _rising_loss,
                _reward_fell, _saturated_loss, _stuck_accuracy, _low_accuracy, _topk_at_chance, _collapsed_accuracy,
                _accuracy_crashed, _held_out_at_chance, _auc_pinned, _flat_loss, _frozen_loss, _too_good, _one_column,
                _growing_gradients, _short_spike, _zero_loss, _no_labels, _no_episode_ended, _unscored_part,
                _masked_row, _every_step_skipped, _blown_up_unnamed, same_output, stopped_at_setup)
    found = [f for reading in readings for f in reading(run)]
    # notes (low severity: a masked row, an LR the falling loss copes with) leave the lines healthy
    return found if any(f.severity not in NOTES for f in found) else found + _no_fault_read(run)
