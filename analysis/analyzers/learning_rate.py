"""The learning rate: a jump that precedes a divergence, a rate that creeps up until the loss
diverges, a missing warm-up, lr = 0, an lr too low to move the loss.

Thresholds: jump = the LR multiplied by `JUMP`x (2x) or more between consecutive logged values
outside a warm-up ramp, with the loss diverging or turning non-finite within the following
`JUMP_LEAD` (25%) of the run; creep = no such jump, but the LR at the onset is `CREEP_FACTOR`x or
more the LR where the loss was at its best, having risen over at least `CREEP_SPAN` of the run (a
schedule that keeps raising it); too low = below the useful range of the optimizer's family
(`common.LR_RANGE`) with the loss moving less than `STUCK_MOVE` (10%) over the run; decayed away =
a rate that starts in its optimizer's range but falls below it and stays there from the first
`DECAYED_BY` of the run on (a per-epoch decay stepped every batch), with the loss moving under
`STILL_AFTER` (10%) after it fell; pinned = a rate `FAR_ABOVE` its range from the first step and a
loss that never fell `STUCK_MOVE` while the rate stayed that high; too short a budget = an adaptive
optimizer (or one not named, at a rate under SGD's range) whose rates summed over the run's steps stay
under `BUDGET_FLOOR`, with the loss (`CURVE_POINTS` values or more) moving less than `STUCK_MOVE`.
None of the low readings is made of a log that shows a run's tail only (its first step past
`LATE_START` of its last) with the rate falling at every value: the end of a schedule, unless its
highest rate lies `FAR_BELOW` (10x) under its family's floor over `FAR_BELOW_SPAN` of the run or more.
"""
from __future__ import annotations

import math
import re

import numpy as np

from analysis.analyzers.common import (
    GIVEN_BACK,
    LR_KEYS,
    LR_RANGE,
    index_at_or_after,
    optimizer_family,
    peak_lr,
    train_loss,
)
from analysis.metrics import fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.patches import format_value, replace_in_config
from analysis.run import Run
from analysis.signals import (
    change_said,
    divergence,
    first_nonfinite,
    rank_trend,
    relative_change,
    rolling_median,
    wide_residuals,
)

NAME = "learning_rate"
FAR_ABOVE = 3.0       # an LR this many times its optimizer's upper bound is the cause of what blows up
NOISE_RISE = 1.5      # a loss under 1.5x its start has not diverged, whatever its noise
WARMUP_DECADE = 10.0  # a missing warm-up matters for an LR within this factor of its optimizer's range top
# A model that guesses the label prior (what a data bug leaves) scores nearly the same loss on every batch
# (~1-2% spread, from the batches' class mix); weights thrown around by an LR far too high score each
# batch differently. Spread = 1.4826 x MAD over the level, on the last four fifths of the curve.
HOVER_SPREAD = 0.05
CREEP_FACTOR = 3.0
CREEP_SPAN = 0.1
JUMP = 2.0            # a step of the LR by this factor or more between two logged values is a jump
RESTART_MARGIN = 1.5  # ...to over this many times the highest rate before it (else it is a restart)
JUMP_LEAD = 0.25      # a jump up to this share of the run before the loss's onset explains it
JUMP_LAG = 0.02       # ... or this share after it (the LR is often logged more sparsely than the loss)
THROWN_BACK = 2       # reports of the loss back above its first value that a rate far above range explains
STUCK_MOVE = 0.1      # a loss that moved less than this (relative) over the run has not learned
STALL_POINTS = 50     # reports under a rate far above range needed to call the loss stuck under it
DECAYED_BY = 0.5      # a rate below its range for more than half the run: the run was trained at ~0
STILL_AFTER = 0.1     # the loss moved under 10% once the rate was below range: nothing left moved it
# A loss that had fallen this share of its start before the rate left its range was converging: the
# schedule followed it. (Per-batch decays in the tuning runs leave at 13-30%; a StepLR fine-tune and
# ReduceLROnPlateau runs that converged first leave at 49-79%.)
LEARNED_BEFORE = 0.4
# Adam, RMSprop, Adafactor and Lion move each weight by about the rate per step, whatever the
# gradient: over the run no weight travels farther than the rates summed. Under 0.02 that is below
# the init scale 1/sqrt(fan_in) of any layer narrower than ~2,500 units, so the network is, to the
# loss, where it started: a rate inside the family's nominal range can still be far too low for the
# number of steps it was given.
BUDGET_FLOOR = 0.02
# ...which a fine-tune's weights need not travel (a pretrained start, a LoRA adapter from zero): there a loss whose
# rank correlation with time is this or lower is learning
FALLS_IN_ORDER = -0.5
FINE_TUNE_KEYS = ("lora_r", "lora_rank", "lora_alpha", "peft_type", "lora", "model_name_or_path",
                  "pretrained_model_name_or_path", "base_model", "base_model_name_or_path", "adapter_name")
# a tail whose highest rate is this many times under its family's floor is no schedule's end: a
# cosine or linear decay is that low only over its last few percent, and a tail starts at half the run
FAR_BELOW = 10.0
SETTINGS_FAR = 10.0   # with no loss to weigh it, an LR this many times its optimizer's top is the first suspect
FAR_BELOW_SPAN = 0.1  # ...over a tenth of the run or more: its last few steps of a cosine are lower still
LATE_START = 0.5      # a log whose first logged step lies past half its last shows a run's tail only
CURVE_POINTS = 10     # "the loss did not move" needs a curve, not a few lines
MOVE_POINTS = 4       # finite loss reports that say how far it moved (relative_change's least)
RISING_REPORTS = 3    # a rate higher at each of 3 to CURVE_POINTS reports is a warm-up under way
ADAPTIVE = ("adam", "rmsprop", "adafactor", "lion")
WARMUP_KEYS = ("warmup_steps", "warmup", "warmup_iters", "warmup_ratio", "num_warmup_steps", "warmup_epochs")


def _onset(run: Run) -> tuple[float | None, str, float]:
    """Step where the loss went wrong (divergence onset or first non-finite), how, and the share of
    the progress made before that the rise took back (all of it, for a loss that turned non-finite)."""
    s = train_loss(run)
    if s is None:
        return None, "", 0.0
    bad = first_nonfinite(s.values)
    d = divergence(s.values)
    candidates = []
    if d is not None:
        candidates.append((float(s.steps[d.onset]), "diverged"))
    if bad is not None:
        candidates.append((float(s.steps[bad]), "became non-finite"))
    if not candidates:
        return None, "", 0.0
    onset, how = min(candidates)
    return onset, how, math.inf if bad is not None else d.undone if d is not None else 0.0


def _restarts(v: np.ndarray) -> np.ndarray:
    """Indices where the LR jumped back up to a rate the run had trained at before (a warm restart)."""
    before = np.maximum.accumulate(np.where(np.isfinite(v), v, 0.0))
    ratio = _ratios(v)
    return np.flatnonzero((ratio >= JUMP) & (v <= RESTART_MARGIN * np.concatenate([[0.0], before[:-1]])))


def _ratios(v: np.ndarray) -> np.ndarray:
    """Each logged LR over the one before it (1 at the first)."""
    ratio = np.ones(len(v))
    ratio[1:] = v[1:] / np.maximum(v[:-1], 1e-30)
    return ratio


def _restart_bump(lr, loss, onset: float) -> bool:
    """A rise that began within JUMP_LEAD of the run after the schedule restarted, and stays under
    where the loss started: the bump a warm restart is expected to cause, not a rate too high."""
    span = float(lr.steps[-1] - lr.steps[0]) or 1.0
    near = [i for i in _restarts(lr.values) if 0 <= onset - lr.steps[i] <= JUMP_LEAD * span]
    since = loss.values[loss.steps >= onset]
    start = float(np.median(loss.values[:3]))
    return bool(near) and bool(np.isfinite(since).all()) and float(since.max()) < start


def _lasting(values: np.ndarray, best: float, after: int = 0) -> bool:
    """A rise the run kept: the loss over its last tenth stays above the best before the rise by more
    than three times the curve's batch noise (or turns non-finite), and its smoothed curve from
    `after` (the rise) on never came back to within the noise of that best. An early bump the run
    later undid did no lasting harm, so no missing warm-up is read from it, even where the last
    tenth sits on a later bump (a warm restart's), or where the batches are so noisy that the
    smoothed best before the rise is one lucky stretch."""
    tail = values[-max(3, len(values) // 10):]
    if not np.isfinite(tail).all():
        return True
    v = values[np.isfinite(values)]
    noise = 1.4826 * float(np.median(wide_residuals(v))) if len(v) else 0.0
    rest = values[after:]
    rest = rest[np.isfinite(rest)]
    undone = len(rest) > 0 and float(rolling_median(rest, max(5, len(values) // 40)).min()) <= best + noise
    return float(np.median(tail)) > best + 3 * noise and not undone


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_LR_WORD = re.compile(r"\b(?:lr|learning_rate|base_lr|max_lr|peak_lr)\b", re.I)


def _config_lr_patch(run: Run, current: float, new: float) -> tuple[str | None, list[Evidence], str]:
    """The config line that sets `current` as an LR (an lr key holding that number, at any depth),
    and a patch that sets `new` there instead."""
    for cfg in run.configs:
        for n, line in enumerate(cfg.text.splitlines(), start=1):
            if not _LR_WORD.search(line):
                continue
            for m in _NUMBER.finditer(line):
                x = float(m.group())
                if x > 0 and abs(x - current) <= 1e-6 * current + 1e-3 * current:
                    ev = [Evidence(f"{line.strip()} sets the LR", cfg.artifact, f"line {n}")]
                    return replace_in_config(cfg, n, m.group(), format_value(new)), ev, line.strip()
    return None, [], ""


def _noise_only(values: np.ndarray) -> bool:
    """A "divergence" an LR below its optimizer's range cannot have caused: the loss stays finite
    and within NOISE_RISE of where it started (batch noise around a model that barely moves)."""
    start = float(np.median(values[: max(3, len(values) // 10)]))
    return bool(np.isfinite(values).all() and values.max() <= NOISE_RISE * start)


def _out_of_range(run: Run, lr, onset: float | None, how: str, given_back: float) -> list[Finding]:
    """An LR outside the useful range of the run's optimizer family, with the loss showing it: under
    FAR_ABOVE its top, by a rise that took back GIVEN_BACK of the progress or more (noise at a low
    level, on a short curve, rises by less) and is not a warm restart's bump."""
    fam = optimizer_family(run)
    peak = peak_lr(run)
    loss = train_loss(run)
    if peak is None or loss is None or peak[0] <= 0:
        return []
    value, lr_ev = peak
    if fam is None:
        # no optimizer named: below every family's floor is too low whichever optimizer ran. No top is
        # read: a high rate with no family to weigh it is left to the loss and the gradients.
        family, fam_evs = "any optimizer", []
        low, high = min(lo for lo, _ in LR_RANGE.values()), float("inf")
    else:
        family, fam_evs = fam[0], [fam[1]]
        low, high = LR_RANGE[family]
    # a schedule's end: the rate the run trained at, and how long, came before these lines
    # ...unless even its top lies FAR_BELOW the range (Adam's, with no family named: the common
    # default): no schedule is that low while half the run is still to come
    floor = LR_RANGE[family][0] if fam is not None else LR_RANGE["adam"][0]
    far_below = value * FAR_BELOW <= floor * (1 + 1e-9)
    tail = (_decaying_tail(lr) or _late_by_its_count(run, lr)) and (not far_below or _share_shown(lr) < FAR_BELOW_SPAN)
    moved = relative_change(loss.values)
    loss_ev = Evidence(f"loss moved {moved * 100:.1f}% over the run, {change_said(loss.values)}", loss.artifact,
                       loss.span_locator(0, len(loss) - 1))
    # a few reports of a rate rising at each is a warm-up under way (its top is yet to come; a rise over a whole
    # curve is a warm-up longer than the run, itself too low), and a loss of exactly 0 at every report scores
    # nothing: neither shows a rate too low to move the loss
    warming = lr is not None and RISING_REPORTS <= len(lr) <= CURVE_POINTS and bool(np.all(np.diff(lr.values) > 0))
    scored = bool(np.any(loss.values != 0))
    # (relative_change reads under 4 finite values as 0: two reports, 3.52 then 0, did not "move 0%")
    measured = int(np.isfinite(loss.values).sum()) >= MOVE_POINTS
    if value < low and not tail and abs(moved) < STUCK_MOVE and (onset is None or _noise_only(loss.values)) \
            and not warming and scored and measured:
        # 30x, up to 10x the range's floor; never a target still below the range it names
        target = min(value * 30, low * 10) if value * 30 >= low else low * 10
        patch, cfg_ev, _ = _config_lr_patch(run, value, target)
        return [Finding(code="lr_too_low",
                        issue=f"Learning rate {fmt(value)} is below the useful range for {family} (from "
                              f"~{fmt(low)}); the loss moved only {abs(moved) * 100:.1f}%",
                        severity="high",
                        confidence=0.8,
                        evidence=[lr_ev, *fam_evs, loss_ev] + cfg_ev,
                        fix=f"Raise the learning rate to ~{fmt(target)} for {family} (a "
                            "short LR range test finds the edge)",
                        expected_impact="the loss falls within a few hundred steps",
                        patch=patch,
                        analyzer=NAME,
                        quick_fix=f"Raise the LR to {fmt(target)}")]
    decayed = (_decayed_away(lr, loss, low, family, fam_evs)
               if value >= low and onset is None and not tail else None)
    if decayed is not None:
        return [decayed]
    adaptive = fam is None or family in ADAPTIVE
    if value >= low and adaptive and not tail and (short := _short_budget(run, lr, loss, fam, peak, onset)):
        return [short]
    if value >= FAR_ABOVE * high and onset is None and _from_the_start(lr, value) \
            and _moved_while_high(lr, loss, FAR_ABOVE * high) < STUCK_MOVE:
        return [_pinned(run, family, fam_evs, value, lr_ev, high, loss_ev, _spread(loss.values))]
    if value >= FAR_ABOVE * high and onset is None and (thrown := _thrown_back(lr, loss, FAR_ABOVE * high)):
        return [_far_above(run, family, fam_evs, value, lr_ev, high, thrown,
                           "the loss keeps being thrown back above where training started", 0.8,
                           "the loss settles instead of jumping back to where it started", _explained_by(value, high))]
    if value >= FAR_ABOVE * high and onset is None and (stuck := _stalled_while_high(lr, loss, FAR_ABOVE * high)):
        return [_far_above(run, family, fam_evs, value, lr_ev, high, stuck,
                           "the loss stopped improving while the rate stayed there and bounces around a level it "
                           "cannot get under", 0.65, "the loss falls below the level it bounces around now", ())]
    shown = value >= FAR_ABOVE * high or (given_back >= GIVEN_BACK and not (
        lr is not None and len(lr) >= 2 and onset is not None and _restart_bump(lr, loss, onset)))
    if value > high and onset is not None and shown:
        patch, cfg_ev, _ = _config_lr_patch(run, value, high / 2)
        warm = run.config_value(*WARMUP_KEYS)
        return [Finding(code="lr_too_high",
                        issue=f"Learning rate {fmt(value)} is above the usual range for {family} (up to "
                              f"~{fmt(high)})" + ("" if warm else " with no warm-up") + f"; the loss {how} "
                              f"at {loss.step_kind} {fmt_step(onset)}",
                        severity="critical",
                        confidence=0.8,
                        evidence=[lr_ev, *fam_evs] + cfg_ev,
                        fix=f"Lower the learning rate to ~{fmt(high / 2)} for {family} and warm it up "
                            "over the first 1-5% of steps",
                        expected_impact="the loss keeps falling past the onset",
                        patch=patch,
                        analyzer=NAME,
                        onset_step=onset,
                        quick_fix=f"Lower the LR to {fmt(high / 2)} with warm-up",
                        rules_out=_explained_by(value, high))]
    return []


def _while_at_or_above(lr, loss, far: float) -> np.ndarray:
    """Which of the loss's reports came while the logged rate (the last logged at or before each) was
    at or above `far`; every report where no usable series is logged (the config's rate, from the
    first step)."""
    if lr is not None and len(lr) >= 2 and np.isfinite(lr.values).all():
        at = np.searchsorted(lr.steps, loss.steps, side="right") - 1
        return np.asarray((at >= 0) & (lr.values[np.clip(at, 0, None)] >= far))
    return np.ones(len(loss.values), dtype=bool)


def _far_above(run: Run, family: str, fam_evs: list[Evidence], value: float, lr_ev: Evidence, high: float,
               seen: tuple[Evidence, float], what: str, confidence: float, impact: str,
               rules_out: tuple[str, ...]) -> Finding:
    """lr_too_high for a rate `value` far above its range, with `seen` (the loss's evidence and the
    step it dates the failure from) saying `what` the loss did under it."""
    patch, cfg_ev, _ = _config_lr_patch(run, value, high / 2)
    return Finding(code="lr_too_high",
                   issue=f"Learning rate {fmt(value)} is {value / high:.0f}x the top of the usual range for "
                         f"{family} (~{fmt(high)}); {what}",
                   severity="high", confidence=confidence, evidence=[lr_ev, *fam_evs, seen[0]] + cfg_ev,
                   fix=f"Lower the learning rate to ~{fmt(high / 2)} for {family}", patch=patch,
                   expected_impact=impact, analyzer=NAME, onset_step=seen[1],
                   quick_fix=f"Lower the LR to {fmt(high / 2)}", rules_out=rules_out)


def _thrown_back(lr, loss, far: float) -> tuple[Evidence, float] | None:
    """A rate far above its range that keeps throwing the loss back above its first value, after
    the first tenth of the run (the first descent), at THROWN_BACK reports or more while the rate
    was at or above `far`: the weights are knocked out of what they learned, again and again, with
    no divergence to date. A bad batch does this too, once in a while; under a rate in its range
    (the loss analyzer reads those as spikes). The evidence cites the highest, and the step of the
    first."""
    v = loss.values
    high = _while_at_or_above(lr, loss, far)
    high[: max(3, len(v) // 10)] = False
    above = high & np.isfinite(v) & (v > v[0])
    if int(above.sum()) < THROWN_BACK:
        return None
    hits = np.flatnonzero(above)
    i = int(hits[np.argmax(v[hits])])
    return (Evidence(f"loss back above its first value ({fmt(float(v[0]))}) at {len(hits)} reports while the LR "
                     f"was at or above {fmt(far)}, up to {fmt(float(v[i]))} at {loss.step_kind} "
                     f"{fmt_step(loss.steps[i])}", loss.artifact, loss.locator(i)), float(loss.steps[hits[0]]))


def _stalled_while_high(lr, loss, far: float) -> tuple[Evidence, float] | None:
    """A rate at or above `far` that the loss stopped improving under: over the stretch the rate
    stayed that high (the whole run when only the config gives it), the loss's level in its last
    fifth is no more than STUCK_MOVE under its level in its second fifth, and it bounces batch to
    batch by HOVER_SPREAD of that level or more. Each step overshoots the minimum the model could
    reach, so the loss hovers around a level instead of going under it. A large rate that the model
    tolerates (BatchNorm under SGD) keeps the loss falling, and a quiet plateau is a model that has
    converged or a data bug, not this. The step is the first report under that rate (a warm-up
    below it, while the loss still fell, is no part of the failure)."""
    v = loss.values
    idx = np.flatnonzero(_while_at_or_above(lr, loss, far) & np.isfinite(v))
    if len(idx) < STALL_POINTS:
        return None
    fifth = len(idx) // 5
    second, last = v[idx[fifth:2 * fifth]], v[idx[-fifth:]]
    level = float(np.median(second))
    if level <= 0 or float(np.median(last)) < (1 - STUCK_MOVE) * level or _spread(v[idx]) < HOVER_SPREAD:
        return None
    i, j = int(idx[fifth]), int(idx[-1])
    return (Evidence(f"loss at a median {fmt(level)} early in the {len(idx)} reports with the rate at or above "
                     f"{fmt(far)}, and {fmt(float(np.median(last)))} at their end, bouncing by "
                     f"{_spread(v[idx]):.0%} of its level batch to batch",
                     loss.artifact, loss.span_locator(i, j)), float(loss.steps[idx[0]]))


def _share_shown(lr) -> float:
    """The share of the run (by step) that the logged rates span."""
    return float(lr.steps[-1] - lr.steps[0]) / max(float(lr.steps[-1]), 1.0)


def _late_by_its_count(run: Run, lr) -> bool:
    """The log's own count of the run's steps (LLaMA-Factory's `"current_steps": 3200, "total_steps": 3235`) puts
    every logged rate past LATE_START of the run, and the rates that print non-zero fall: a schedule's end,
    whatever order rounding to 0 printed it in."""
    total = run.metrics.get("total_steps")
    if lr is None or not len(lr) or lr.step_kind != "step" or total is None or not len(total):
        return False
    t = float(total.values[-1])
    v = _printed_rates(lr)
    # ...a schedule still falling there (or rounding its rate to 0): a rate held flat that late is a rate, judged
    falling = _never_rise(v) and (v[-1] < v[0] or bool((lr.values == 0).any()))
    return bool(np.isfinite(t) and t > 0 and lr.steps[0] > LATE_START * t and lr.steps[-1] <= t and falling)


def _decaying_tail(lr) -> bool:
    """Only the tail of a run, its rate falling at every logged value: the end of a schedule (a cosine
    or linear decay to ~0). The peak the run trained at, and the steps it spent there, lie before the
    first line, so a rate that looks too low here says nothing of the run (a rate held low is judged)."""
    if lr is None or len(lr) < 2 or lr.step_kind != "step" or not np.isfinite(lr.values).all():
        return False
    return bool(lr.steps[0] > LATE_START * lr.steps[-1] and _never_rise(_printed_rates(lr))
                and lr.values[-1] < lr.values[0])


def _printed_rates(lr) -> np.ndarray:
    """The rates printed non-zero. A rate printed as 0 (`learning_rate: 0.000000`, six decimals of a 1e-9) is a
    tiny one rounded: it may sit anywhere in a fall, so the others are the ones that must fall."""
    return lr.values[lr.values > 0]


def _never_rise(v: np.ndarray) -> bool:
    return len(v) >= 1 and bool(np.all(np.diff(v) <= 0))


def _moved_while_high(lr, loss, far: float) -> float:
    """How much the loss fell while the rate was still `far` above range: a schedule that later
    brings the rate down lets the loss fall then, which says nothing of the steps before it."""
    if lr is None or len(lr) < 2 or not np.isfinite(lr.values).all() or lr.values[-1] >= far:
        return _fell(loss.values)
    cut = float(lr.steps[int(np.argmax(lr.values < far))])
    j = index_at_or_after(loss, cut)
    return _fell(loss.values[:j] if j is not None and j >= 10 else loss.values)


def _fell(values: np.ndarray) -> float:
    """How much the loss fell from where the model started: a rate far too high throws the first
    steps' loss above the start, so the start is the lower of the first values and the first tenth."""
    v = values[np.isfinite(values)]
    if len(v) < 4:
        return 0.0
    k = max(1, len(v) // 10)
    start = min(float(np.median(v[:3])), float(v[:k].mean()))
    return (start - float(v[-k:].mean())) / max(abs(start), 1e-12)


def _budget(lr, loss, value: float) -> tuple[float, str] | None:
    """The rates summed over the steps run (how far an adaptive optimizer can move any weight), and
    where it was read: the logged LR weighted by the steps between its values, else the configured
    rate times the loss's last step. None where the series count rows, not optimizer steps."""
    if lr is not None and len(lr) >= 2 and np.isfinite(lr.values).all():
        if lr.step_kind != "step":
            return None
        # the steps before the first logged value ran too, at about that rate
        gaps = np.diff(lr.steps, prepend=min(0.0, float(lr.steps[0]) - 1))
        return float(np.sum(lr.values * np.maximum(gaps, 0))), lr.span_locator(0, len(lr) - 1)
    if loss.step_kind != "step":
        return None
    return value * float(loss.steps[-1] + 1), loss.span_locator(0, len(loss) - 1)


def _fine_tune(run: Run) -> bool:
    """What says the run fine-tunes pretrained weights, where something does: a Hugging Face Trainer's state (its
    runs start from a checkpoint far more often than from scratch), a LoRA/PEFT setting, a base model named in the
    config. There the rates-summed argument (`BUDGET_FLOOR`, a weight's travel against its init scale) does not
    hold: the weights start where the task needs little travel, and a LoRA adapter starts at zero."""
    return any(a.format == "hf_trainer_state" for a in run.artifacts) or run.config_value(*FINE_TUNE_KEYS) is not None


def _short_budget(run: Run, lr, loss, fam, peak, onset) -> Finding | None:
    """LR too low for the steps it was given: a rate inside an adaptive family's nominal range whose
    sum over the run (BUDGET_FLOOR) cannot carry any weight off its init, and a loss that did not
    move. With the optimizer not named, only a rate also under SGD's range: too low whichever it is."""
    value, lr_ev = peak
    moved = relative_change(loss.values)
    quiet = onset is None or _noise_only(loss.values)
    if len(loss) < CURVE_POINTS or abs(moved) >= STUCK_MOVE or not quiet:
        return None
    if fam is None and value >= LR_RANGE["sgd"][0]:
        return None
    got = _budget(lr, loss, value)
    if got is None or got[0] >= BUDGET_FLOOR:
        return None
    budget, where = got
    if _fine_tune(run) and rank_trend(loss.values) <= FALLS_IN_ORDER:
        return None     # pretrained weights need not travel: a fine-tune whose loss falls in order is learning
    family = fam[0] if fam else "an adaptive optimizer (or SGD)"
    ceiling = LR_RANGE[fam[0]][1] / 2 if fam else LR_RANGE["adam"][1] / 2
    new = min(value * 0.3 / max(budget, 1e-12), ceiling)
    patch, cfg_ev, _ = _config_lr_patch(run, value, new)
    art = lr.artifact if lr is not None and len(lr) else loss.artifact
    sums = Evidence(f"the rates summed over the run come to {fmt(budget)}: no weight can have moved "
                    "farther than that (an adaptive step is about the rate), under the init scale of any "
                    "layer", art, where)
    loss_ev = Evidence(f"loss moved {abs(moved) * 100:.1f}% over the run ({fmt(float(loss.values[0]))} -> "
                       f"{fmt(float(loss.values[-1]))})", loss.artifact, loss.span_locator(0, len(loss) - 1))
    return Finding(code="lr_too_low",
                   issue=f"Learning rate {fmt(value)} is too low for the {fmt_step(float(loss.steps[-1]))} "
                         f"steps it was given ({family}): the rates sum to {fmt(budget)} over the run, "
                         f"and the loss moved only {abs(moved) * 100:.1f}%",
                   severity="high",
                   confidence=0.75,
                   evidence=[lr_ev] + ([fam[1]] if fam else []) + [sums, loss_ev] + cfg_ev,
                   fix=f"Raise the learning rate to ~{fmt(new)} (or train for far more steps); a short LR "
                       "range test finds the edge",
                   expected_impact="the loss falls within a few hundred steps",
                   patch=patch,
                   analyzer=NAME,
                   quick_fix=f"Raise the LR to {fmt(new)}")


def _explained_by(value: float, high: float) -> tuple[str, ...]:
    """An LR `FAR_ABOVE` its range explains gradients that blow up and the NaN they end in."""
    return ("exploding_gradients", "numerical_instability") if value >= FAR_ABOVE * high else ()


def _learned_before(values: np.ndarray, j: int) -> float:
    """How far the loss had fallen by index j, as a share of its start (means over a twentieth)."""
    k = max(1, len(values) // 20)
    start, at = values[:k], values[max(0, j - k + 1):j + 1]
    start, at = start[np.isfinite(start)], at[np.isfinite(at)]
    if not len(start) or not len(at):
        return 0.0
    return float((start.mean() - at.mean()) / max(abs(start.mean()), 1e-12))


def _spread(values: np.ndarray) -> float:
    """The loss's batch-to-batch spread over its level (HOVER_SPREAD), on the last four fifths."""
    v = values[np.isfinite(values)]
    late = v[len(v) // 5:]
    if len(late) < 10:
        return 0.0
    level = float(np.median(late))
    return 1.4826 * float(np.median(np.abs(late - level))) / max(abs(level), 1e-12)


def _warmup_matters(run: Run, lr: float) -> bool:
    """A warm-up guards an LR near the edge of what the optimizer tolerates while the early curvature is
    high: within WARMUP_DECADE of the top of its family's range. Far below that, no warm-up explains an
    early blow-up (the model or the loss does). Without a known family, any LR from 1e-3."""
    fam = optimizer_family(run)
    return lr >= (LR_RANGE[fam[0]][1] / WARMUP_DECADE if fam else 1e-3)


def _from_the_start(lr, value: float) -> bool:
    """The peak LR was already set at the first logged step (no schedule raised it later); with no
    logged LR, the config's value is the one the run started with."""
    return lr is None or not len(lr) or float(lr.values[0]) >= 0.99 * value


def _pinned(run: Run, family: str, fam_evs: list[Evidence], value: float, lr_ev: Evidence, high: float,
            loss_ev: Evidence, spread: float) -> Finding:
    """LR too high vs a data bug, for a loss that never fell (no divergence to date): an LR
    FAR_ABOVE its optimizer's range from the first step throws the weights around by more than the
    problem allows (Adam and RMSprop move every weight by ~lr a step), so every step overshoots and
    the loss stays where it started, at chance for a classifier. The rate alone explains the stall,
    so it leads a data-bug reading of the same loss, which stays listed. Where the loss's batch-to-
    batch spread is wide (HOVER_SPREAD), it is weights thrown around, not a model guessing the
    label prior (~1-2%): that rules the data bug out."""
    patch, cfg_ev, _ = _config_lr_patch(run, value, high / 2)
    evidence = [lr_ev, *fam_evs, loss_ev]
    if spread >= HOVER_SPREAD:
        evidence.append(Evidence(f"the loss hovers with a {spread:.0%} spread around its level, batch to "
                                 "batch: weights thrown around, not a model guessing the label prior (~1-2%)",
                                 loss_ev.artifact, loss_ev.locator))
    return Finding(code="lr_too_high",
                   issue=f"Learning rate {fmt(value)} is {value / high:.0f}x the top of {family}'s usual "
                         f"range (~{fmt(high)}) from the first step, and the loss never fell: every step "
                         "overshoots",
                   severity="critical",
                   confidence=0.8,
                   evidence=evidence + cfg_ev,
                   fix=f"Lower the learning rate to ~{fmt(high / 2)} for {family} (an SGD-range rate left in "
                       "after switching optimizer?) and warm it up over the first 1-5% of steps",
                   expected_impact="the loss leaves its starting level within the first few hundred steps",
                   patch=patch,
                   analyzer=NAME,
                   quick_fix=f"Lower the LR to {fmt(high / 2)}",
                   rules_out=("data_pipeline_bug",) if spread >= HOVER_SPREAD else ())


def _decayed_away(lr, loss, low: float, family: str, fam_evs: list[Evidence]) -> Finding | None:
    """A rate that started inside its optimizer's range but fell below it early and stayed there:
    the peak looks right, yet most steps ran at ~0, and the loss stopped moving when the rate fell.
    Not when the loss had already done most of its falling before the rate left its range: then the
    schedule (a StepLR, a ReduceLROnPlateau cutting on a plateau) follows a run that converged, and
    the flat loss after it is the convergence, not its cause. Not for a loss gone non-finite (the
    caller skips a run with an onset). (A healthy decay reaches its floor at the end of the run, or
    stays inside the range.)"""
    if lr is None or len(lr) < 10 or not np.isfinite(lr.values).all():
        return None
    below = lr.values < low
    if below.all() or not below[-1]:
        return None
    i = int(len(below) - np.argmin(below[::-1]))       # first index of the last stretch below range
    if i > DECAYED_BY * len(below):
        return None
    j = index_at_or_after(loss, float(lr.steps[i]))
    if j is None or len(loss) - j < 10 or not np.isfinite(loss.values[j:]).all():
        return None
    after = abs(relative_change(loss.values[j:]))
    if after >= STILL_AFTER or _learned_before(loss.values, j) >= LEARNED_BEFORE:
        return None
    fell_at = f"{lr.step_kind} {fmt_step(float(lr.steps[i]))}"
    first, fallen, last = (fmt(float(lr.values[k])) for k in (0, i, -1))
    schedule = Evidence(f"lr {first} at the start, {fallen} by {fell_at}, {last} at the end", lr.artifact,
                        lr.span_locator(0, len(lr) - 1))
    still = Evidence(f"loss moved {after * 100:.1f}% after the rate fell below range", loss.artifact,
                     loss.span_locator(j, len(loss) - 1))
    return Finding(code="lr_too_low",
                   issue=f"The learning rate fell below the useful range for {family} (from ~{fmt(low)}) at "
                         f"{fell_at} and stayed there: {(len(below) - i) / len(below):.0%} of the run "
                         "trained at ~0, and the loss stopped moving",
                   severity="high",
                   confidence=0.8,
                   evidence=[schedule, *fam_evs, still],
                   fix="If a per-epoch scheduler is stepped every batch, step it once per epoch (or give its "
                       "step size in steps) so the rate decays over the whole run; otherwise raise the "
                       "schedule's floor (eta_min / min_lr) to keep the rate in range",
                   expected_impact="the loss keeps falling past the first few hundred steps",
                   analyzer=NAME,
                   onset_step=float(lr.steps[i]),
                   quick_fix="Keep the LR schedule in range (step it per epoch)")


def _creep(lr, loss, onset: float, how: str) -> Finding | None:
    """An LR that rose gradually (no step of 2x) by CREEP_FACTOR or more between the loss's best and
    its onset, over at least CREEP_SPAN of the run: the schedule kept raising it until the loss gave way."""
    pre = (loss.steps <= onset) & np.isfinite(loss.values)
    if pre.sum() < 3:
        return None
    best = int(np.flatnonzero(pre)[np.argmin(loss.values[pre])])
    a, b = index_at_or_after(lr, float(loss.steps[best])), index_at_or_after(lr, onset)
    if a is None or b is None or b - a < 2:
        return None
    span = lr.values[a: b + 1]
    before, after = float(span[0]), float(span[-1])
    steps_span = float(lr.steps[-1] - lr.steps[0]) or 1.0
    rose_enough = before > 0 and after >= CREEP_FACTOR * before
    long_enough = float(lr.steps[b] - lr.steps[a]) >= CREEP_SPAN * steps_span
    # gradual: no jump on the way, and no fall beyond rounding
    gradual = not np.any(span[1:] >= JUMP * span[:-1]) and not np.any(span[1:] < 0.99 * span[:-1])
    if not (np.isfinite(span).all() and rose_enough and long_enough and gradual):
        return None
    k, factor = lr.step_kind, after / before
    start, end = f"{k} {fmt_step(lr.steps[a])}", f"{k} {fmt_step(lr.steps[b])}"
    best_loss = fmt(float(loss.values[best]))
    rose = (f"lr rose {factor:.0f}x gradually, from {fmt(before)} at {start} (the loss's best, {best_loss}) "
            f"to {fmt(after)} at {end}")
    onset_line = loss.locator(index_at_or_after(loss, onset) or len(loss) - 1)
    ev = [Evidence(rose, lr.artifact, lr.span_locator(a, b)),
          Evidence(f"loss {how} at {k} {fmt_step(onset)}", loss.artifact, onset_line)]
    return Finding(code="lr_too_high",
                   issue=f"Learning rate kept rising ({fmt(before)} -> {fmt(after)}, {factor:.0f}x, "
                         f"with no jump) until the loss {how} at {k} {fmt_step(onset)}",
                   severity="critical", confidence=0.9, evidence=ev,
                   fix="Stop the schedule from raising the rate (an exponential factor above 1, "
                       f"a warm-up that never ends): hold it at or below ~{fmt(before)} from {start} on",
                   expected_impact="the loss keeps falling past the onset", analyzer=NAME,
                   onset_step=float(lr.steps[a]), quick_fix=f"Hold the LR at or below {fmt(before)}")


def analyze(run: Run) -> list[Finding]:
    lr = run.metrics.get("lr")
    out: list[Finding] = []
    onset, how, given_back = _onset(run)
    loss = train_loss(run)
    if lr is not None and len(lr) >= 2:
        v = lr.values
        finite = np.isfinite(v)
        if finite.all() and np.all(v == 0):
            ev = [Evidence(f"lr = 0 over {len(v)} values", lr.artifact, lr.span_locator(0, len(lr) - 1))]
            set_to = run.config_value(*LR_KEYS)
            if set_to and isinstance(set_to.value, (int, float)) and set_to.value > 0:
                ev.append(set_to.evidence(f"{set_to.key} = {set_to.value} in the config: the "
                                          "schedule multiplies it to 0"))
                warm = run.config_value(*WARMUP_KEYS)
                if warm:
                    ev.append(warm.evidence(f"{warm.key} = {warm.value}: a warm-up factor "
                                            f"such as step // {warm.value} (integer division) "
                                            f"stays 0 for {warm.value} steps"))
            return [Finding(code="no_parameter_updates",
                            issue="Learning rate is 0 at every logged step",
                            severity="critical",
                            confidence=0.9,
                            evidence=ev,
                            fix="Set a non-zero learning rate "
                                "(check the scheduler's first value and any lr multiplier)",
                            analyzer=NAME,
                            quick_fix="Set lr > 0")]
        ratio = _ratios(v)
        ramp_end = int(np.argmax(v)) if v[0] < 0.2 * np.nanmax(v) else 0
        # a warm-up ramp rises in small steps from near zero; a jump is a large multiplicative step, to
        # a rate above any the run trained at before (a warm restart goes back to one it learned under)
        restarts = set(_restarts(v).tolist())
        # (inside the ramp, a step from 0, or one that leaves the rate under a fifth of its peak, is the ramp's
        # start, however large its ratio: `0 -> 3.3e-5` on the way to 1e-3)
        jumps = [i for i in range(1, len(v)) if ratio[i] >= JUMP and i not in restarts
                 and not (i <= ramp_end and v[i - 1] < 0.2 * np.nanmax(v)
                          and (ratio[i] < 4 or v[i - 1] <= 0 or v[i] < 0.2 * np.nanmax(v)))]
        if jumps and onset is not None:
            span = float(lr.steps[-1] - lr.steps[0]) or 1.0
            related = [i for i in jumps
                       if lr.steps[i] <= onset + JUMP_LAG * span and onset - lr.steps[i] <= JUMP_LEAD * span]
            if related:
                i = max(related, key=lambda j: ratio[j])
                before, after = float(v[i - 1]), float(v[i])
                patch, cfg_ev, key = _config_lr_patch(run, after, min(after, 3 * before))
                ev = [Evidence(f"lr jumped {ratio[i]:.0f}x from {fmt(before)} to {fmt(after)} "
                               f"at {lr.step_kind} {fmt_step(lr.steps[i])}",
                               lr.artifact, lr.locator(i))]
                if loss is not None:
                    j = index_at_or_after(loss, onset)
                    if j is not None:
                        after_onset = loss.values[j:]
                        peak = j + int(np.argmax(np.where(np.isfinite(after_onset), after_onset, np.inf)))
                        ev.append(Evidence(f"loss {how} from {loss.step_kind} {fmt_step(loss.steps[j])}, "
                                           f"{fmt_step(loss.steps[j] - lr.steps[i])} steps after the jump: "
                                           f"{fmt(float(loss.values[j]))} -> {fmt(float(loss.values[peak]))} "
                                           f"at {loss.step_kind} {fmt_step(loss.steps[peak])}", loss.artifact,
                                           loss.span_locator(j, peak)))
                        k = max(0, j - 1)
                        # strictly before: the jump's own line is after
                        while k > 0 and loss.steps[k] >= lr.steps[i]:
                            k -= 1
                        ev.append(Evidence(f"loss was {fmt(float(loss.values[k]))} before the jump",
                                           loss.artifact, loss.locator(k)))
                fix = (f"Lower the learning rate after {lr.step_kind} {fmt_step(lr.steps[i])} from "
                       f"{fmt(after)} to {fmt(min(after, 3 * before))} (at most ~3x the previous phase), or "
                       "ramp it over a few hundred steps instead of switching at once")
                out.append(Finding(code="lr_too_high", issue="Learning rate raised "
                                   f"{ratio[i]:.0f}x to {fmt(after)} at {lr.step_kind} "
                                   f"{fmt_step(lr.steps[i])}; the loss {how} right after",
                                   severity="critical", confidence=0.92, evidence=ev + cfg_ev,
                                   fix=fix, expected_impact="the loss keeps falling through the transition",
                                   patch=patch, analyzer=NAME, onset_step=float(lr.steps[i]),
                                   quick_fix=f"Cap the LR after the switch at {fmt(min(after, 3 * before))}"))
                return out
        if onset is not None and loss is not None and (creep := _creep(lr, loss, onset, how)) is not None:
            return out + [creep]
        no_warmup = ramp_end == 0 and run.config_value(*WARMUP_KEYS) is None
        if onset is not None and no_warmup and loss is not None:
            first = float(loss.steps[0])
            last = float(loss.steps[-1])
            early = onset - first <= 0.1 * max(last - first, 1.0)
            learned_first = np.isfinite(loss.values[:3]).all() and onset > first
            pre_onset = loss.values[: index_at_or_after(loss, onset) or 1]
            pre_onset = pre_onset[np.isfinite(pre_onset)]
            # the smoothed level, not one lucky batch: on a noisy curve the lowest point sits far
            # under where the loss was, and a tail at the old level would read as a kept rise
            best_before = (float(rolling_median(pre_onset, max(5, len(loss) // 40)).min()) if len(pre_onset)
                           else np.inf)
            kept = _lasting(loss.values, best_before, index_at_or_after(loss, onset) or 0)
            if early and learned_first and kept and _warmup_matters(run, float(v[0])):
                out.append(Finding(code="lr_too_high",
                                   issue=f"Loss {how} at {loss.step_kind} {fmt_step(onset)}, "
                                         f"early, with the full learning rate {fmt(float(v[0]))} "
                                         "from the first step (no warm-up)",
                                   severity="high",
                                   confidence=0.7,
                                   evidence=[Evidence(f"lr {fmt(float(v[0]))} at the first logged step",
                                                      lr.artifact, lr.locator(0))],
                                   fix="Warm the learning rate up linearly over the first 1-5% of steps",
                                   analyzer=NAME,
                                   onset_step=onset,
                                   quick_fix="Add LR warm-up"))
    return out + (_out_of_range(run, lr, onset, how, given_back) if loss is not None else _set_out_of_range(run))


def _set_out_of_range(run: Run) -> list[Finding]:
    """Settings and no loss to weigh them by (a pasted config, a launch command, an argparse dump): an LR
    SETTINGS_FAR times the top of the optimizer's range (a large batch's linear scaling takes SGD to 0.4 or
    more), or FAR_BELOW its floor, named beside it. Nothing shows what it
    did, so it leads without confidence: the first suspect, and the loss per step is what would settle it."""
    fam, peak = optimizer_family(run), peak_lr(run)
    if fam is None or peak is None or peak[0] <= 0:
        return []
    (value, lr_ev), (family, fam_ev) = peak, fam
    low, high = LR_RANGE[family]
    if value >= SETTINGS_FAR * high:
        patch, cfg_ev, _ = _config_lr_patch(run, value, high / 2)
        return [Finding(code="lr_too_high", issue=f"Learning rate {fmt(value)} is {value / high:.0f}x the top of "
                        f"{family}'s usual range (~{fmt(high)}); the paste shows no loss to confirm what it did",
                        severity="medium", confidence=0.5, evidence=[lr_ev, fam_ev] + cfg_ev,
                        fix=f"Lower the learning rate to ~{fmt(high / 2)} for {family}; the loss per step would "
                            "show whether this rate is what failed (a climb or NaN within the first steps)",
                        patch=patch, analyzer=NAME, quick_fix=f"Lower the LR to {fmt(high / 2)}")]
    if value * FAR_BELOW <= low:
        patch, cfg_ev, _ = _config_lr_patch(run, value, low * 10)
        return [Finding(code="lr_too_low", issue=f"Learning rate {fmt(value)} is under {family}'s usual range "
                        f"(from ~{fmt(low)}); the paste shows no loss to confirm it barely moved",
                        severity="medium", confidence=0.45, evidence=[lr_ev, fam_ev] + cfg_ev,
                        fix=f"Raise the learning rate to ~{fmt(low * 10)} for {family}", patch=patch, analyzer=NAME,
                        quick_fix=f"Raise the LR to {fmt(low * 10)}")]
    return []
