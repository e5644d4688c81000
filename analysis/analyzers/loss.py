"""The loss curve: non-finite values, divergence after a good start, isolated spikes, a plateau at
chance level, and a train/validation gap.

Thresholds: divergence = a rise of 15% above the best smoothed value that persists (signals.py), an alarm
where at most BY_CHANCE = 0.3% of random orderings of the same values diverge as far (a medium reading
otherwise: a short window of a noisy minibatch loss falls and rises by chance);
spike = 6 robust deviations above the rolling median that recovers within 5 points; chance level =
a plateau (the smoothed loss within 8% of its level) within 4% of ln(K) for a class count K;
overfitting = validation `OVERFIT_RISE` (10%) above its best, and still `OVERFIT_KEPT` (5%) above it
at the end, while training loss still falls.
"""
from __future__ import annotations

import math
import re

import numpy as np

from analysis.analyzers.common import (
    SHORT_CURVE,
    SMALL_LR,
    VOCAB_REL,
    VOCABS,
    from_start,
    index_at_or_before,
    last_attempt,
    pasted_texts,
    peak_lr,
    point,
    reward_rose,
    steady_swing,
    thirds,
    train_loss,
)
from analysis.metrics import Series, fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.run import Run
from analysis.signals import (
    Divergence,
    divergence,
    first_nonfinite,
    order_share,
    rank_trend,
    relative_change,
    rolling_median,
    spikes,
)

NAME = "loss"
NAN_IN_EXCERPT = 0.5
# a plateau: the smoothed loss wanders under 8% from its level (small batches are noisy) with no
# trend over 3% between the first and last third of it
PLATEAU_WANDER, PLATEAU_TREND = 0.08, 0.03
BAD_BATCH_SHARE = 0.5      # of the spikes, the share past the starting loss that makes them bad batches
# chance level: the plateau's level within 4% of ln(K), and its smoothed floor never below 90% of it
CHANCE_TOLERANCE, CHANCE_FLOOR = 0.04, 0.9
# ...and where the class count is not known and the loss is not logged from the run's start (common.from_start),
# one reading at this confidence: a plateau seen late may be where a long run has got to
WINDOW_CHANCE = 0.3
# a bad batch stands apart from the noise: its spikes' median height over the rolling median is at
# least this many times the 99th percentile of the other points' (small batches' heavy tail is a
# continuum that reaches as high as its "spikes")
STAND_APART = 2.0
END_JUMP, END_ABOVE = 100.0, 10.0   # a last report 100x the median before it and 10x the highest: a jump at the end
SKELETON_BYTES = 1 << 20    # pastes read again for the words of their last report's line
THROWN = 2.0                # a median from the first spike on this many times the median before: no recovery
THROWN_UNDONE = 0.25        # ...and above it by this share of the progress made before the spike
CHANCE_LR_READING = 0.45    # an LR outside its range beside a loss at chance: a real rival to the data bug
OVERFIT_POINTS = 3          # three validation reports already show a best and a rise after it
OVERFIT_RISE, OVERFIT_KEPT = 0.10, 0.05
VAL_WITH = 1.5             # a validation loss this many times its best, rising with the training loss: a divergence
TRAIN_STAYS = 1.3          # ...where the training loss's last third also stays this many times its smoothed best
VAL_ONLY_FELL = 3           # a validation loss logged alone: this many reports down to its best, as many up after
OVERFIT_WANDER = 3.0        # a rise over a best no larger than 3x the median change between reports: the wander
WANDER_RANK = 0.8           # ...of reports after the best that do not climb in rank order (Spearman under 0.8)
VAL_ONLY_CONF = 0.5         # ...overfitting, most likely; the training loss it lacks would settle it
VAL_ONLY_NOISE = 3.0        # the fall and the climb each past 3x the median change from one report to the next
VAL_ONLY_MAX_RISE = 2.0     # and at most 3x its best at the end
ONE_EXAMPLE_ROWS = 2        # a batch this small: a step's loss is an example's, its spikes are examples
ACCUMULATION_KEYS = ("gradient_accumulation_steps", "accumulate_grad_batches", "grad_accum_steps",
                     "accumulation_steps")
WORLD_SIZE_KEYS = ("world_size", "num_gpus", "n_gpus", "num_processes")
CAME_BACK = 0.6             # of a rise under an unchanged LR, the share the loss must fall back by
BY_CHANCE = 0.003           # a divergence that more than 0.3% of random orderings of the same values show is noise's...
CHANCE_CONF = 0.4           # ...a medium reading at this confidence, not an alarm
EXPLODED = 1000.0           # (a loss 1000x its best is no batch noise, whatever order its values came in)
SAME_RATE = 0.2             # an LR that moved less than this share between a rise and its undoing did not undo it
BLEW_UP = 100.0             # a grad norm this many times its level before a rise made the rise, not the data


def analyze(run: Run) -> list[Finding]:
    s = train_loss(run)
    if s is None:
        return _validation_only_overfitting(run)
    out: list[Finding] = []
    v = s.values
    bad = first_nonfinite(v)
    if bad is not None:
        prev = bad - 1 if bad > 0 else None
        ev = [Evidence(f"loss became {fmt(float(v[bad]))} at {s.step_kind} {fmt_step(s.steps[bad])}",
                       s.artifact, s.locator(bad))]
        if prev is not None:
            ev.append(point(s, prev, "last finite loss"))
        n_bad = int((~np.isfinite(v[bad:])).sum())
        # a NaN in a few pasted lines is as much the LR's as an overflow's (excerpt.py weighs both);
        # the history of a longer curve, calm gradients and fp16 speak for the overflow
        conf, patch = (0.7 if len(v) >= SHORT_CURVE else NAN_IN_EXCERPT), None
        calm = _calm_gradients(run, float(s.steps[bad]))
        if calm is not None:
            ev.append(calm)
            conf += 0.1
        half = _half_precision(run)
        if half:
            ev += half[0]
            patch = half[1]
            conf += 0.1
        out.append(Finding(code="numerical_instability",
                           issue=f"Loss became {fmt(float(v[bad]))} at {s.step_kind} {fmt_step(s.steps[bad])}"
                                 + (f" and stayed non-finite for {n_bad} of the next {len(v) - bad} values"
                                    if n_bad > 1 else "")
                                 + (" with no gradient blow-up before it" if calm is not None else ""),
                           severity="critical",
                           confidence=conf,
                           evidence=ev,
                           patch=patch,
                           fix=("Train in bf16 (same range as fp32) instead of fp16, or keep fp16 "
                                "with a GradScaler and compute exp/softmax/normalisations in fp32 "
                                "(subtract the max before exp)") if half else
                               "Find the first op that overflows: run a few steps with "
                               "torch.autograd.set_detect_anomaly(True); "
                               "compute the loss in fp32 and add an eps to logs and divisions",
                           expected_impact="training continues past the step where the loss turned NaN",
                           analyzer=NAME,
                           onset_step=float(s.steps[bad]),
                           quick_fix="Guard the loss against NaN/Inf"))
    # the trend rules read the last run of a log several runs appended to; a NaN above is a NaN in any of them
    s = last_attempt(run, s)
    v = s.values
    if reward_rose(run) is not None:
        return out      # an RL loss rises as the returns it predicts grow: read the reward, not its trend
    d = divergence(v)
    if d is not None:
        rise = f"+{d.rise * 100:.0f}%" if d.rise < 10 else f"{d.rise + 1:,.0f}x"
        ev = [point(s, int(np.nanargmin(v[: d.onset + 1])), "lowest loss"),
              Evidence(f"loss rose from {s.step_kind} {fmt_step(s.steps[d.onset])} to "
                       f"{fmt(float(v[d.peak]))} at {s.step_kind} {fmt_step(s.steps[d.peak])}, {rise} over "
                       f"its smoothed best of {fmt(d.level)}",
                       s.artifact, s.span_locator(d.onset, d.peak))]
        # a rise that takes back under half the progress may be noise, unless the validation loss rose with it
        with_val = _validation_rose_with(run, s, d.peak, d.level)
        clear = d.undone >= 0.5 or with_val is not None
        if with_val is not None:
            ev.append(with_val)
        steady = _came_back_under_the_same_lr(run, s, d) if clear else None
        # a validation loss that rose with it, or a rise to EXPLODED times the best, is no chance ordering
        chance = (_chance_divergence(v, d) if clear and steady is None and with_val is None and d.rise + 1 < EXPLODED
                  else 0.0)
        onset = f"{s.step_kind} {fmt_step(s.steps[d.onset])}"
        if steady is not None:
            out.append(steady)
        else:
            if chance > BY_CHANCE:
                issue = (f"Loss fell, then rose {rise} over its smoothed best from {onset}, but {chance:.1%} of random "
                         "orderings of these same values fall and rise as far: the batch noise could make this. More "
                         "reports, or a validation loss beside it, would tell")
                severity, conf = "medium", CHANCE_CONF
            elif clear:
                issue = f"Loss diverged at {onset} after falling to {fmt(float(v[d.best]))}"
                severity, conf = "critical" if d.rise > 0.5 else "high", 0.55
            else:
                issue = (f"Loss crept back up {d.undone:.0%} of the way toward its start from {onset}: worth watching, "
                         "not yet a divergence")
                severity, conf = "low", 0.35
            out.append(Finding(code="lr_too_high",
                               issue=issue,
                               severity=severity,
                               confidence=conf,
                               evidence=ev,
                               fix=_halve_lr_fix(run, float(s.steps[d.onset])),
                               expected_impact="the loss keeps falling past the onset",
                               analyzer=NAME,
                               onset_step=float(s.steps[d.onset]),
                               quick_fix="Reduce LR by 50%"))
    worse = _worse_on_both(run, s) if d is None else None
    if worse is not None:
        out.append(worse)
    sp = spikes(v) if d is None and worse is None else []
    if sp:
        out.append(_thrown_off(run, s, sp) or _spikes(run, s, sp))
    ended = _blew_up_at_end(run, s) if d is None else None
    if ended is not None:
        out.append(ended)
    swung = _swinging(run, s) if d is None and not sp and ended is None else None
    if swung is not None:
        out.append(swung)
    out += _plateau(run, s)
    out += _overfitting(run, s)
    return out


def _chance_divergence(v: np.ndarray, d: Divergence) -> float:
    """The share of random orderings of the loss's finite values up to its first non-finite one that diverge as far
    (signals.order_share; 0 for a rise well past the curve's noise): a fall and a rise that batch noise makes in a
    short noisy window, not the LR."""
    end = first_nonfinite(v)
    fin = v[:end] if end is not None else v

    def shows(p: np.ndarray) -> bool:
        e = divergence(p)
        return e is not None and e.rise >= d.rise

    return order_share(fin, shows, d.rise * abs(d.level), past=BY_CHANCE)


def _worse_on_both(run: Run, s: Series) -> Finding | None:
    """A noisy training loss (too noisy for `divergence`) whose last third sits VAL_WITH times its smoothed best or
    more, beside a validation loss that rose as far: the model got worse on both sets. Overfitting lowers the
    training loss; noise does not move a held-out loss computed on the same data each time."""
    v = s.values
    if len(v) < SHORT_CURVE or not np.isfinite(v).all() or float(v.min()) <= 0:
        return None
    smooth = rolling_median(v, max(3, len(v) // 10))
    best = int(np.argmin(smooth))
    end = float(np.median(v[-max(3, len(v) // 3):]))
    if best >= len(v) * 2 // 3 or end < VAL_WITH * float(smooth[best]):
        return None
    with_val = _validation_rose_with(run, s, len(v) - 1, float(smooth[best]))
    if with_val is None:
        return None
    ev = [point(s, best, "lowest smoothed loss"),
          Evidence(f"the last third of the training loss sits at {fmt(end)}, {end / float(smooth[best]):.1f}x its "
                   "smoothed best", s.artifact, s.span_locator(len(v) - max(3, len(v) // 3), len(v) - 1)), with_val]
    return Finding(code="lr_too_high", issue=f"Training and validation loss both rose after {s.step_kind} "
                   f"{fmt_step(s.steps[best])}: the model got worse on both, which a learning rate too high does "
                   "(overfitting would keep the training loss falling)", severity="high", confidence=0.5,
                   evidence=ev, fix=_halve_lr_fix(run, float(s.steps[best])),
                   expected_impact="both losses keep falling past that step", analyzer=NAME,
                   onset_step=float(s.steps[best]), quick_fix="Reduce LR by 50%")


def _validation_rose_with(run: Run, s: Series, peak: int, level: float) -> Evidence | None:
    """The validation loss rising with a training loss that climbs back part of its way (a Whisper fine-tune whose
    loss went 0.12 -> 0.31 as its warm-up reached 1e-4, its eval loss 0.22 -> 0.42): both getting worse is the
    model getting worse, not noise, and not overfitting (whose training loss keeps falling). Where the validation
    loss's best comes by the training loss's report `peak` and its last report is VAL_WITH times that best or more,
    while the training loss's last third stays TRAIN_STAYS times `level` (its smoothed best before the rise) or more:
    a training loss that came all the way back down (to 1e-6 while the validation loss climbed from its first
    epoch) is memorising, overfitting's."""
    val = run.metrics.get("val_loss")
    if val is None or len(val) < 2 or not np.isfinite(val.values).all() or float(val.values.min()) <= 0:
        return None
    v = s.values[np.isfinite(s.values)]
    if not len(v) or thirds(v)[1] < TRAIN_STAYS * level:
        return None
    best = int(np.argmin(val.values))
    if val.steps[best] > s.steps[peak] or val.values[-1] < VAL_WITH * val.values[best]:
        return None
    at = [f"{fmt(float(val.values[i]))} at {val.step_kind} {fmt_step(val.steps[i])}" for i in (best, -1)]
    return Evidence(f"validation loss rose with it: {at[0]} -> {at[1]}", val.artifact,
                    val.span_locator(best, len(val) - 1))


def _came_back_under_the_same_lr(run: Run, s, d) -> Finding | None:
    """A rise the run came back from while the learning rate stayed what it was, read as a change in
    the data (a curriculum stage, a harder shard, a run of hard batches), not the rate: a note.
    Either the loss fell back under `CAME_BACK` of the rise under an LR constant from the best point
    on, and the rise came at once (the smoothing window before the loss first passed half its rise
    still sat in the rise's lower quarter: a change in the data shows at its first batch, while an
    unstable rate builds its divergence over many steps and may come back part way under the same
    rate); or the loss came all the way back to its level before the rise, and ended the run under
    it, with the LR within `SAME_RATE` of what it was at the onset when it did (a rate too high is
    not undone while it stays). Neither where the gradient norm blew up over the rise (`_norms_blew_up`),
    nor while the peak is in the run's last tenth: a rise still under way has not come back, whatever
    a median over its first high points says."""
    lr = run.metrics.get("lr")
    v = s.values
    if lr is None or not len(lr) or not np.isfinite(v).all() or not np.isfinite(lr.values).all():
        return None
    if _norms_blew_up(run, s, d):
        return None
    if d.peak >= len(v) - max(5, len(v) // 10):
        return None               # the rise is still under way at the end: nothing has come back yet
    window = max(5, len(v) // 40)
    sm = rolling_median(v, window)
    peak = float(sm[d.peak])
    held = lr.values[lr.steps >= s.steps[d.best]]      # from the best point on, before the rise
    if len(held) and held.min() > 0 and held.max() <= held.min() * 1.01:
        end = float(np.median(v[-max(5, len(v) // 20):]))
        risen = v[d.onset:] > d.level + (peak - d.level) / 2
        k = d.onset + int(np.argmax(risen))
        before = v[max(d.best, k - window):k]
        if (end <= peak - CAME_BACK * (peak - d.level) and risen.any() and len(before)
                and float(np.median(before)) <= d.level + (peak - d.level) / 4):
            return _data_changed(s, d, lr, len(lr) - len(held))
    back = np.flatnonzero(sm[d.peak:] <= d.level)
    if not len(back) or float(np.median(v[-max(5, len(v) // 10):])) > d.level:
        return None
    i, j = index_at_or_before(lr, float(s.steps[d.onset])), index_at_or_before(lr, float(s.steps[d.peak + back[0]]))
    if i is None or j is None or lr.values[i] <= 0 or abs(lr.values[j] / lr.values[i] - 1) > SAME_RATE:
        return None
    return _data_changed(s, d, lr, i, j)


def _norms_blew_up(run: Run, s, d) -> bool:
    """The gradient norm, where logged, went non-finite or reached BLEW_UP times its median before
    the rise somewhere from the rise's onset to its peak: the gradients made that rise (a summed
    loss, gradients never cleared), whatever the data did; a harder batch moves the norm tens of
    times over at most."""
    g = run.metrics.get("grad_norm")
    if g is None:
        return False
    before = g.values[g.steps < s.steps[d.onset]]
    before = before[np.isfinite(before)]
    over = g.values[(g.steps >= s.steps[d.onset]) & (g.steps <= s.steps[d.peak])]
    if not len(before) or not len(over):
        return False
    return not np.isfinite(over).all() or float(over.max()) >= BLEW_UP * max(float(np.median(before)), 1e-12)


def _data_changed(s, d, lr, i: int, j: int | None = None) -> Finding:
    j = len(lr) - 1 if j is None else j
    return Finding(code="lr_too_high",
                   issue=f"Loss rose at {s.step_kind} {fmt_step(s.steps[d.onset])} and came back down under "
                         f"the same learning rate ({fmt(float(lr.values[i]))}): the data changed (a curriculum "
                         "stage, a harder shard), not the rate",
                   severity="low", confidence=0.3,
                   evidence=[point(s, d.peak, "loss peak"), point(s, len(s) - 1, "final loss"),
                             Evidence(f"lr {fmt(float(lr.values[i]))} to {fmt(float(lr.values[j]))} from the onset "
                                      "until the loss was back down", lr.artifact, lr.span_locator(i, j))],
                   fix="Nothing to change if the rise matches a change in the data; otherwise halve the LR",
                   expected_impact="the loss keeps falling past the onset", analyzer=NAME,
                   onset_step=float(s.steps[d.onset]),
                   quick_fix="Check what changed in the data at the onset")


def _halve_lr_fix(run: Run, step: float) -> str:
    lr = run.metrics.get("lr")
    if lr is not None and len(lr):
        i = int(np.clip(np.searchsorted(lr.steps, step, side="right") - 1, 0, len(lr) - 1))
        now = float(lr.values[i])
        if np.isfinite(now) and now > 0:
            return (f"Halve the learning rate where the loss turns up, from {fmt(now)} to "
                    f"{fmt(now / 2)}, and clip gradients")
    return "Lower the learning rate in the phase where the loss turns up (halve it) and clip gradients"


def _blew_up_at_end(run: Run, s) -> Finding | None:
    """A loss whose last report (repeated, where a logger printed each line twice) is END_JUMP times the median
    of the reports before it, END_ABOVE times the highest of them and above where the paste started, on a line
    printed as the reports before it were (the same words: an epoch's sum or a run's total is another line):
    the paste ends at a jump, with no report after it to show whether the loss came back (TF1's object
    detection at 0.15-0.54, then 3417.76 at its last step)."""
    v = s.values
    last = len(v) - 1
    while last > 0 and v[last - 1] == v[-1] and s.steps[last - 1] == s.steps[-1]:
        last -= 1           # the same report printed twice
    before = v[:last][np.isfinite(v[:last])]
    if len(before) < 3 or not np.isfinite(v[-1]) or s.lines is None:
        return None
    level, top, start = float(np.median(before)), float(before.max()), float(np.median(before[:3]))
    if level <= 0 or v[-1] < END_JUMP * level or v[-1] < END_ABOVE * top or v[-1] <= start:
        return None
    if not _same_skeleton(run, s, last):
        return None
    return Finding(code="lr_too_high",
                   issue=f"Loss jumped to {fmt(float(v[-1]))} at {s.step_kind} {fmt_step(s.steps[-1])}, its last "
                         f"report, {v[-1] / level:,.0f}x its median of {fmt(level)} before: the paste ends at the "
                         "jump, so whether it came back is not shown",
                   severity="high", confidence=0.55,
                   evidence=[point(s, last, "the jump"),
                             Evidence(f"median loss {fmt(level)} and at most {fmt(top)} over the {len(before)} reports "
                                      "before it", s.artifact, s.span_locator(0, max(last - 1, 0)))],
                   fix=_halve_lr_fix(run, float(s.steps[-1])),
                   expected_impact="the loss holds its level past the step where it jumped",
                   analyzer=NAME, onset_step=float(s.steps[-1]), quick_fix="Reduce LR by 50%")


_NUMBERS = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_WORDS = re.compile(r"[A-Za-z_]+")


def _same_skeleton(run: Run, s, i: int) -> bool:
    """Whether report `i` of `s` is printed on a line with the words (numbers, padding and bars aside; a progress
    bar's last state) of the report before it: the same print statement, not a summary line after the loop. True
    where the lines are not read again (a metrics file, a log over SKELETON_BYTES): nothing says otherwise."""
    if i < 1 or s.lines is None:
        return True
    for _, text in pasted_texts(run, ("log",), SKELETON_BYTES, only=s.artifact):
        lines = text.split("\n")
        before, at = int(s.lines[i - 1]) - 1, int(s.lines[i]) - 1
        if 0 <= before < len(lines) and 0 <= at < len(lines):
            return _words(lines[before]) == _words(lines[at])
    return True


def _words(line: str) -> list[str]:
    return _WORDS.findall(_NUMBERS.sub(" ", line.rstrip("\r").rsplit("\r", 1)[-1]))


def _thrown_off(run: Run, s, sp: list[int]) -> Finding | None:
    """Spikes after which the loss never came back: the median from the first spike on is THROWN times the
    loss's level before it (the median of the later half of the reports before it) or more, and above that
    level by THROWN_UNDONE of the progress made by then (a level near 0 doubling is no divergence). A CIFAR net
    at 0.6 jumped to 4e7, then to 5e11, and sat at 2.3, ln 10, between more such values: each spike fell back
    from its own height, but the run did not return to where it was, a divergence the spikes' own recoveries
    hide, the updates' size first."""
    v = s.values
    before, after = v[:sp[0]], v[sp[0]:]
    before, after = before[np.isfinite(before)], after[np.isfinite(after)]
    if len(before) < 3 or len(after) < 3:
        return None
    start = float(np.median(before[:3]))
    was, now = float(np.median(before[len(before) // 2:])), float(np.median(after))
    if was <= 0 or now < THROWN * was or now - was < THROWN_UNDONE * max(start - was, 0.0):
        return None
    top = max(sp, key=lambda i: float(v[i]))
    ev = [point(s, sp[0], "first jump")] + ([point(s, top, "highest loss")] if top != sp[0] else []) + [
        Evidence(f"median loss {fmt(was)} over the later half of the reports before the first jump, {fmt(now)} from "
                 "it on", s.artifact, s.span_locator(sp[0], len(s) - 1))]
    return Finding(code="lr_too_high",
                   issue=f"Loss jumped to {fmt(float(v[sp[0]]))} at {s.step_kind} {fmt_step(s.steps[sp[0]])} and never "
                         f"came back: its median was {fmt(was)} before, {fmt(now)} from there on",
                   severity="high", confidence=0.55, evidence=ev,
                   fix=_halve_lr_fix(run, float(s.steps[sp[0]])),
                   expected_impact="the loss holds its level past the step where it jumped",
                   analyzer=NAME, onset_step=float(s.steps[sp[0]]), quick_fix="Reduce LR by 50%")


def _swinging(run: Run, s: Series) -> Finding | None:
    """A loss that swings by most of its level, up and down, and never settles (signals.swings): updates that
    overshoot the minimum and bounce around it, an LR too high for where training is (said as likely, not proven: a
    cyclic schedule's amplitude, or batches of very different difficulty in order, swing it too)."""
    sw = steady_swing(run, s)
    if sw is None:
        return None
    low, high = sw
    half = len(s) // 2
    ev = [Evidence(f"over the later half of the reports the loss (rolling median of 5) swings between {fmt(low)} and "
                   f"{fmt(high)}, {(high - low) / float(np.median(s.values)):.0%} of its median, and never settles",
                   s.artifact, s.span_locator(half, len(s) - 1))]
    return Finding(code="lr_too_high", issue=f"Loss swings between {fmt(low)} and {fmt(high)} without settling: the "
                   "updates overshoot", severity="medium", confidence=0.45, evidence=ev,
                   fix="Lower the learning rate 3-10x (or add a decay) and see whether the swings shrink; if the LR "
                       "follows a cyclic schedule, lower its peak",
                   expected_impact="the loss settles and falls", analyzer=NAME, quick_fix="Lower the LR 3-10x")


def _spikes(run: Run, s, sp: list[int]) -> Finding:
    """Isolated spikes, more certain when they throw the loss back past where training started
    (a batch unlike the rest) and when the gradient norm spiked at the same steps. A cause (medium)
    only when most of them do: spikes that mostly stay below the start are the heavy tail of small
    batches, a note (low)."""
    v = s.values
    top = sorted(sp, key=lambda i: -float(v[i]))[:3]
    ev = [point(s, i, "loss spike") for i in sorted(top)]
    start = float(np.median(v[: max(3, len(v) // 20)]))
    conf = 0.75
    past_start = [i for i in sp if v[i] > start]
    if past_start:
        conf += 0.05
        ev.append(Evidence(f"{len(past_start)} of the {len(sp)} spikes rose above the loss at the start of "
                           f"training ({fmt(start)}), then fell back within a few steps",
                           s.artifact, s.span_locator(0, len(s) - 1)))
    apart = _stand_apart(v, sp)
    if not apart:
        heavy_tail = ("the other steps' losses reach as high over their neighbours as the spikes do: "
                      "the heavy tail of noisy minibatches, not batches unlike the rest")
        ev.append(Evidence(heavy_tail, s.artifact, s.span_locator(0, len(s) - 1)))
    g = run.metrics.get("grad_norm")
    if g is not None and len(g) >= 20:
        gsp = ({float(g.steps[i]) for i in spikes(g.values, z=8.0)}
               | {float(g.steps[i]) for i in np.flatnonzero(g.values > 5 * np.nanmedian(g.values))})
        both = [i for i in sp if float(s.steps[i]) in gsp]
        if both:
            conf += 0.1
            j = int(np.searchsorted(g.steps, s.steps[both[0]]))
            ev.append(point(g, j, "grad_norm at the same step"))
    few_rows = _rows_per_batch(run)
    if few_rows is not None:
        ev.append(few_rows)
    bad_batches = len(sp) > 2 and len(past_start) >= BAD_BATCH_SHARE * len(sp) and apart and few_rows is None
    return Finding(code="loss_spikes",
                   issue=f"{len(sp)} isolated loss spike{'s' if len(sp) > 1 else ''} that recovered, at "
                         f"{s.step_kinds if len(sp) > 1 else s.step_kind} "
                         + ", ".join(fmt_step(s.steps[i]) for i in sp[:5]),
                   severity="medium" if bad_batches else "low",
                   confidence=round(conf, 2),
                   evidence=ev,
                   fix="Log the batch indices of the spiking steps and inspect those samples; clip gradients "
                       "(max_grad_norm 1.0) so one bad batch cannot move the weights far",
                   expected_impact="spikes shrink or vanish; the trend is unchanged",
                   analyzer=NAME,
                   onset_step=float(s.steps[sp[0]]),
                   quick_fix="Inspect the spiking batches; clip gradients")


def _rows_per_batch(run: Run) -> Evidence | None:
    """Evidence that a logged loss averages at most `ONE_EXAMPLE_ROWS` rows (the batch, times its
    accumulation steps and workers): a step's loss is then one
    example's, and a hard or mislabeled example scores far above the rest every so often; a spike
    says nothing of a batch unlike the others."""
    hit = run.config_value("per_device_train_batch_size", "micro_batch_size", "batch_size",
                           "train_batch_size")
    if hit is None or hit.number is None or not 0 < hit.number <= ONE_EXAMPLE_ROWS:
        return None
    # a logged loss averages every micro-batch of the optimizer step, on every worker
    rows = hit.number
    for keys in (ACCUMULATION_KEYS, WORLD_SIZE_KEYS):
        more = run.config_value(*keys)
        if more is not None and more.number is not None and more.number > 0:
            rows *= more.number
    if rows > ONE_EXAMPLE_ROWS:
        return None
    return Evidence(f"{hit.key} = {hit.value}: each step's loss is that of {int(hit.number)} example"
                    f"{'s' if hit.number > 1 else ''}, so a hard or mislabeled one shows as a spike",
                    hit.config.artifact, hit.locator)


def _stand_apart(values: np.ndarray, sp: list[int], window: int = 21) -> bool:
    """Whether the spikes stand apart from the rest of the curve's noise (STAND_APART)."""
    v = np.where(np.isfinite(values), values, np.nanmedian(values))      # as spikes() reads it: same indices
    ratio = v / np.maximum(np.abs(rolling_median(v, window)), 1e-12)
    rest = np.delete(ratio, sp)
    return not len(rest) or float(np.median(ratio[sp])) >= STAND_APART * float(np.quantile(rest, 0.99))


def _calm_gradients(run: Run, step: float) -> Evidence | None:
    """Evidence that grad_norm stayed within 10x of its median up to `step`: the NaN came from a
    forward overflow, not from gradients growing."""
    g = run.metrics.get("grad_norm")
    if g is None:
        return None
    before = g.values[g.steps < step]
    before = before[np.isfinite(before)]
    if len(before) < 3:
        return None
    med = float(np.median(before))
    if before.max() > 10 * max(med, 1e-12):
        return None
    return Evidence(f"grad_norm stayed between {fmt(float(before.min()))} and {fmt(float(before.max()))} "
                    f"until then (median {fmt(med)})",
                    g.artifact, g.span_locator(0, int(np.searchsorted(g.steps, step)) - 1))


def _half_precision(run: Run) -> tuple[list[Evidence], str | None] | None:
    """Evidence that the run computes in fp16, and a patch to use bf16 instead."""
    from analysis.patches import set_config_value
    hit = run.config_value("fp16", "half", "use_fp16", "amp_fp16")
    ev, patch = [], None
    if hit and hit.value is True:
        cfg, key = hit.config, hit.key
        ev.append(hit.evidence(f"{key} = true: float16 has a range of +-65504"))
        patch = set_config_value(cfg, key, "false") if cfg.format != "json" else _json_bool_patch(cfg, key)
    for code in run.code:
        ln = code.first_line("half", "float16")
        if ln:
            ev.append(Evidence(code.text.splitlines()[ln - 1].strip(), code.artifact, f"line {ln}"))
            break
    return (ev, patch) if ev else None


def _json_bool_patch(cfg, key: str) -> str | None:
    from analysis.patches import replace_in_config
    line = cfg.lines.get(key)
    return replace_in_config(cfg, line, "true", "false") if line else None


def _plateau(run: Run, s) -> list[Finding]:
    v = s.values[np.isfinite(s.values)]
    if len(v) < 20:
        return []
    late = v[len(v) // 5:]
    level = float(np.median(late))
    if float(np.std(v[len(v) // 2:])) == 0.0 and abs(relative_change(v)) <= 0.03:
        return [Finding(code="no_parameter_updates",
                        issue=f"Loss is exactly {fmt(level)} at every logged step",
                        severity="critical",
                        confidence=0.8,
                        evidence=[point(s, 0, "first loss"), point(s, len(s) - 1, "last loss")],
                        fix="Check that optimizer.step() runs, that the optimizer holds the model's "
                            "trainable parameters, and that lr > 0",
                        analyzer=NAME,
                        quick_fix="Verify optimizer.step() runs")]
    smooth = rolling_median(late, max(5, len(late) // 10))
    third = len(late) // 3
    trend = abs(float(np.median(late[:third])) - float(np.median(late[-third:])))
    if np.abs(smooth - level).max() > PLATEAU_WANDER * abs(level) or trend > PLATEAU_TREND * abs(level):
        return []                          # still moving: not a plateau
    hit = run.config_value("num_classes", "n_classes", "num_labels", "vocab_size", "n_vocab")
    known = int(hit.number) if hit is not None and hit.number is not None and hit.number >= 2 else None
    # a window of a long run (steps 19028-19072): whether its loss ever fell is not shown, and any flat loss
    # sits near ln(k) for some k, so a guessed k is one plausible reading, said as such
    window = not known and not from_start(s)
    if window and run.metrics.get("perplexity") is not None:
        return []      # a language model's window: a word-piece vocabulary's chance is far past 1000 classes
    candidates = [known] if known else list(range(2, 1001))
    floor = float(rolling_median(v, max(5, len(v) // 20))[len(v) // 20:].min())
    # the K whose ln is nearest the level, of those within the tolerance (the first that fits would name ln(85) for
    # a loss at ln(100) = 4.605)
    fits = [k for k in candidates if abs(level - math.log(k)) <= CHANCE_TOLERANCE * math.log(k)
            and floor >= CHANCE_FLOOR * math.log(k)]
    # ...or a language model's, over a common tokenizer's vocabulary (a loss of 10.82 is GPT-2's uniform guess)
    fits += [k for k in VOCABS if not known and abs(level - math.log(k)) <= VOCAB_REL * math.log(k)
             and floor >= CHANCE_FLOOR * math.log(k)]
    for k in sorted(fits, key=lambda k: abs(level - math.log(k)))[:1]:
        chance = math.log(k)
        plateau = (f"ln({k}) = {chance:.4f}: the loss of a uniform guess over {k} classes; "
                   f"the smoothed loss stayed within {PLATEAU_WANDER:.0%} of {fmt(level)} "
                   f"over the last {len(late)} of {len(v)} points and never went below {fmt(floor)}")
        whole = s.span_locator(0, len(s) - 1)
        ev = [point(s, len(s) - 1, "final loss"), Evidence(plateau, s.artifact, whole)]
        conf = 0.65 if known else WINDOW_CHANCE if window else 0.5
        if hit is not None and known:
            ev.append(hit.evidence(f"{hit.key} = {k}"))
        g = run.metrics.get("grad_norm")
        median_grad = float(np.nanmedian(g.values)) if g is not None and len(g) else 0.0
        if g is not None and median_grad > 0 and not window:
            moving = (f"gradients are not zero (median grad_norm {fmt(median_grad)}): "
                      "the weights move, yet the loss learns nothing")
            ev.append(Evidence(moving, g.artifact, g.span_locator(0, len(g) - 1)))
            conf += 0.15
        if k in VOCABS and not window:
            if g is not None and median_grad > 0:      # computed, yet not applied: no evidence the weights move
                ev[2:3] = [Evidence(f"gradients are not zero (median grad_norm {fmt(median_grad)}): they are computed, "
                                    "so the step that applies them is what fails", g.artifact,
                                    g.span_locator(0, len(g) - 1))]
            return _stuck_at_vocabulary(run, s, k, ev) + _lr_at_chance(run, ev[0], k)
        return [Finding(code="data_pipeline_bug",
                        issue=f"Loss stuck at chance level ln({k}) = {chance:.3f}: the model learns "
                              "nothing from its inputs" + (
                                  f" (if the task has {k} classes: this window starts at {s.step_kind} "
                                  f"{fmt_step(s.steps[0])}, so whether the loss ever fell is not shown; "
                                  "send the config's class count or the log from the start)" if window else ""),
                        severity="medium" if window else "high",
                        confidence=round(conf, 2),
                        evidence=ev,
                        fix="Check that labels still match their inputs: print a batch of (input, label) "
                            "pairs after the dataset, the collate function and any shuffling",
                        expected_impact="loss drops below ln(K) within the first epoch",
                        analyzer=NAME,
                        quick_fix="Print a batch of (input, label) pairs")] + _lr_at_chance(run, ev[0], k)
    return []


def _stuck_at_vocabulary(run: Run, s: Series, k: int, ev: list[Evidence]) -> list[Finding]:
    """A language model's loss held at ln(vocabulary): even a model that ignores its input learns the tokens'
    frequencies (far below ln(V)) within a few hundred steps, so its output does not change at all: the weights
    that make it do not move (frozen, an LR of ~0, an optimizer over other parameters). Not the labels: wrong ones
    still leave the frequencies to learn."""
    said = f"Loss held at ln({k}) = {math.log(k):.3f}, a uniform guess over a {k:,}-token vocabulary"
    return [Finding(code="no_parameter_updates",
                    issue=f"{said}: even the token frequencies were not learned, so the output never changed",
                    severity="high", confidence=0.6, evidence=ev,
                    fix="Check that the optimizer holds the trainable parameters (print the count it holds and "
                        "which require grad; a PEFT/LoRA model's adapters, an lm_head not frozen by mistake) and "
                        "that the LR after warm-up is above ~1e-5",
                    expected_impact="the loss falls below ln(V) within a few hundred steps",
                    analyzer=NAME, quick_fix="Check what the optimizer updates")] + ([] if (
                peak := peak_lr(run)) is not None and peak[0] >= SMALL_LR else [
            Finding(code="lr_too_low", issue=f"{said}: an LR near 0 (a warm-up or schedule that never rises) "
                                             "leaves it there",
                    severity="medium", confidence=0.4, evidence=ev[:2],
                    fix="Log the LR per step: raise it to the usual range for the optimizer (AdamW ~1e-4 to 3e-4)",
                    analyzer=NAME, quick_fix="Log and raise the LR")])


def _lr_at_chance(run: Run, stuck: Evidence, k: int) -> list[Finding]:
    """The LR reading of a loss pinned at chance, where the LR itself is outside its optimizer
    family's range: far too high pins a classifier at a uniform guess, far too low never moves it.
    An alternative below the data reading, with the LR as its own evidence."""
    from analysis.analyzers.common import LR_RANGE, optimizer_family

    lr, fam = run.metrics.get("lr"), optimizer_family(run)
    if lr is None or not len(lr) or fam is None or not np.isfinite(lr.values).any():
        return []
    low, high = LR_RANGE[fam[0]]
    top = float(np.nanmax(lr.values))
    if low <= top <= high:
        return []
    code, why = ("lr_too_high", f"above {fam[0]}'s usual range (up to ~{fmt(high)}): an LR that "
                 f"high pins the loss at ln({k})") if top > high else \
        ("lr_too_low", f"below {fam[0]}'s useful range (from ~{fmt(low)}): the "
                       "weights barely move off chance")
    i = int(np.nanargmax(lr.values))
    return [Finding(code=code,
                    issue=f"Learning rate {fmt(top)} is {why}",
                    severity="medium",
                    confidence=CHANCE_LR_READING,
                    evidence=[point(lr, i, "lr"), fam[1], stuck],
                    fix=f"Bring the learning rate into {fam[0]}'s range (~{fmt(low * 10)} to "
                        f"~{fmt(high / 2)}) and watch whether the loss leaves ln(K) in the first epoch",
                    analyzer=NAME,
                    quick_fix="Move the LR into its optimizer's range")]


def _validation_rose(run: Run) -> tuple[Series, int, np.ndarray] | None:
    """The validation loss, its best report and its rise over the best at each report, where it rose
    OVERFIT_RISE over its best and is still OVERFIT_KEPT over it at the end."""
    val = run.metrics.get("val_loss")
    if val is None or len(val) < OVERFIT_POINTS:
        return None
    vv = val.values
    if not np.isfinite(vv).all():
        return None
    best = int(np.argmin(vv))
    if best >= len(vv) - 1:
        return None
    worst = best + 1 + int(np.argmax(vv[best + 1:]))
    # a rise as a share of the best; a loss that goes to zero or below (a density's NLL, an ELBO) has
    # no level to take a share of, so there it is a share of the descent made, or of the level's size
    scale = vv[best] if vv[best] > 0 else max(abs(float(vv[best])), float(vv[0] - vv[best]), 1e-12)
    rise = (vv - vv[best]) / scale
    if rise[worst] < OVERFIT_RISE or rise[-1] < OVERFIT_KEPT:
        return None
    return val, best, rise


def _within_noise(vv: np.ndarray, best: int) -> tuple[float, float, float] | None:
    """(median after the best, median before it, the median change between reports) where the best is one dip
    of a level that wanders: the reports after it do not climb in rank order (Spearman under WANDER_RANK: a
    climb at each report is overfitting's, however small), their median is within OVERFIT_WANDER changes of
    the best, and no higher than the median of the reports before it; else None."""
    after = len(vv) - 1 - best
    if best < 2 or after < 2 or rank_trend(vv[best + 1:]) >= WANDER_RANK:
        return None
    noise = float(np.median(np.abs(np.diff(vv))))
    later, earlier = float(np.median(vv[best + 1:])), float(np.median(vv[:best]))
    if later - vv[best] > OVERFIT_WANDER * noise or later > earlier:
        return None
    return later, earlier, noise


def _validation_only_overfitting(run: Run) -> list[Finding]:
    """A log of the validation loss alone (Lightning's metrics.csv of `val_loss` per epoch) that fell for
    VAL_ONLY_FELL reports and then climbed for as many more, ending above its best: overfitting is the
    usual reason, and the training loss, not logged, would say (still falling: overfitting; rising with
    it: a divergence)."""
    rose = _validation_rose(run)
    if rose is None or run.metrics.get("train_loss") is not None:
        return []
    val, best, rise = rose
    vv = val.values
    after = len(vv) - 1 - best
    if best < VAL_ONLY_FELL or after < VAL_ONLY_FELL or rise[-1] > VAL_ONLY_MAX_RISE:
        return []               # a loss many times its best is a divergence's, which the training loss would show
    # a fall and then a climb, each well past the report-to-report noise: a level that wanders is neither
    noise = float(np.median(np.abs(np.diff(vv))))
    third = max(1, after // 3)
    fell = float(np.median(vv[:VAL_ONLY_FELL])) - vv[best]
    climbed = float(np.median(vv[-third:])) - float(np.median(vv[best + 1:best + 1 + third]))
    if min(fell, climbed, float(np.median(vv[-third:])) - vv[best]) <= VAL_ONLY_NOISE * noise:
        return []
    at = f"{val.step_kind} {fmt_step(val.steps[best])}"
    ev = [point(val, 0, "first validation loss"), point(val, best, "best validation loss"),
          point(val, len(val) - 1, "final validation loss")]
    return [Finding(code="overfitting", issue=f"Validation loss fell to its best at {at}, then rose "
                    f"{rise[-1] * 100:.0f}% over the {after} reports after it (no training loss is logged to "
                    "show it kept falling, which would settle it)",
                    severity="medium", confidence=VAL_ONLY_CONF, evidence=ev,
                    fix=f"Keep the checkpoint from {at} (early stopping on val loss); add weight "
                        "decay, dropout or data augmentation; log the training loss beside it",
                    expected_impact="validation loss stays at or below its best", analyzer=NAME,
                    onset_step=float(val.steps[best]), quick_fix="Early-stop on validation loss")]


def _overfitting(run: Run, train) -> list[Finding]:
    rose = _validation_rose(run)
    if rose is None:
        return []
    val, best, rise = rose
    t = train.values
    m = train.steps >= val.steps[best]
    if m.sum() < 2 or not np.isfinite(t[m]).all() or relative_change(t[m]) <= 0.02:
        return []
    i_tb = int(np.flatnonzero(m)[0])
    ev = [point(val, best, "best validation loss"), point(val, len(val) - 1, "final validation loss"),
          Evidence(f"training loss kept falling: {fmt(float(t[i_tb]))} -> "
                   f"{fmt(float(t[-1]))} over the same steps",
                   train.artifact, train.span_locator(i_tb, len(train) - 1))]
    issue = (f"Validation loss rose {rise[-1] * 100:.0f}% after {val.step_kind} {fmt_step(val.steps[best])} while "
             "training loss kept falling")
    conf, severity = 0.8, "medium"
    wander = _within_noise(val.values, best)
    if wander is not None:
        # a best that is one dip of a level that wanders (0.33, 0.31, 0.37, 0.26, 0.32, 0.35): the reports after it
        # sit where the ones before it did, so no rise from a fall is shown
        later, earlier, noise = wander
        issue += (f", but from a best that is one dip: the reports after it sit at {fmt(later)} (median), no higher "
                  f"than the {fmt(earlier)} before it, and do not climb (the loss moves {fmt(noise)} between reports)")
        conf, severity = CHANCE_CONF, "low"
    return [Finding(code="overfitting", issue=issue,
                    severity=severity, confidence=conf, evidence=ev,
                    fix=f"Keep the checkpoint from {val.step_kind} {fmt_step(val.steps[best])} "
                        "(early stopping on val loss); add weight decay, dropout or data augmentation",
                    expected_impact="validation loss stays at or below its best", analyzer=NAME,
                    onset_step=float(val.steps[best]), quick_fix="Early-stop on validation loss")]
