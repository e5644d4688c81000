"""Gradient norms: geometric growth (exploding), isolated spikes, all-zero norms, and per-layer
norms that vanish toward the input. Where no gradient norm is logged, an explosion read from the loss
(geometric growth from step 1 under a constant LR inside its optimizer's range).

Thresholds: exploding = growth by 100x or more, rising on 60% of smoothed steps (signals.py);
vanishing = the first layer's median norm under `VANISHED` (1e-2) of the last layer's, shrinking
layer after layer toward the input (on `SHRINKING` (60%) of the steps between consecutive layers).
"""
from __future__ import annotations

import math
import re

import numpy as np

from analysis.analyzers.common import (
    LR_RANGE,
    index_at_or_after,
    index_at_or_before,
    optimizer_family,
    peak_lr,
    point,
    train_loss,
)
from analysis.analyzers.loss import ACCUMULATION_KEYS
from analysis.analyzers.weights import (
    ACTIVATION_ELEMENTS,
    CONV_SIDE,
    MIN_SAMPLES,
    _conv_chain,
    _conv_same,
    _loss_flat,
    _mlp_chain,
    _module_order,
    forward_spread,
    kernel_area,
)
from analysis.ingest.checkpoints import second_moments
from analysis.metrics import fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.patches import format_value, insert_code_before, set_config_value
from analysis.run import ConfigHit, Run
from analysis.signals import Growth, first_nonfinite, geometric_growth, spikes

NAME = "gradients"
# growth leaving its floor within this share of the logged steps starts "from step 1"
FROM_THE_START = 0.1
SHORT_RUNUP = 3           # finite points enough for growth that ends in Inf/NaN within the first 8 steps
CONSTANT_LR = 1.01        # an LR whose max/min up to the blow-up stays under this ratio never changed
# A gradient norm this large at the first logged step was computed before any update: the model, its
# initialisation and the loss made it, not the LR (a mean-reduced loss on a sane init gives O(1)).
LARGE_AT_START = 100.0
BURST = 100.0             # ...and that rises this many times over within the first FROM_THE_START of the run
ONE_JUMP = 0.45           # a rise with more than this share of it (log scale) in one step is a jump, not growth
EXPLODED_LOSS = 10.0     # a loss rising at every step to Inf/NaN by this factor or more blew up
FACTOR_IN_WORDS = 1e4     # a rise past this reads as orders of magnitude, not as a factor of many digits
# A norm logged every few steps can hold fewer than SHORT_RUNUP finite points before its Inf/NaN; its last
# one at HUGE_NORM or more (four orders above the O(1) of a mean-reduced loss) is the blow-up already under way.
HUGE_NORM = 1e4
# A loss LARGE_AT_START whose growth starts after the first FROM_THE_START of the run, under an LR never above
# its range (it fell first, then turned): the loss's scale and the rate share the blame; listed at LATE_ONSET.
LATE_ONSET = 0.65
PENALTY_KEYS = ("l2", "l2_reg", "l2_weight", "l2_lambda", "lambda_l2", "l2_penalty", "weight_decay", "wd")
LR_KEYS = ("lr", "learning_rate", "base_lr")
CLIP_KEYS = ("max_grad_norm", "grad_clip", "clip_grad_norm", "gradient_clip_val", "clip_grad",
             "grad_clip_norm", "clip_norm")
VANISHED = 1e-2           # the first layer's norm under this share of the last layer's has vanished
SHRINKING = 0.6           # ...shrinking at this share of the steps from one layer to the next
CLIP_OFF_ABOVE = 100      # a clipping threshold above this never clips a healthy run's gradients
BACKPROP_SAMPLES = 1024   # standard-normal inputs pushed through a checkpoint to read its gradient profile
# a saturating stack this deep (weight layers) whose loss never moved is a vanishing-gradient suspect,
# listed at UNPROFILED when no layer profile can confirm it
SUSPECT_DEPTH, UNPROFILED = 3, 0.45
PEAK_REACHED = 0.9        # a growth's end: its first point at 90% of its peak (a plateau wanders ~5%)
CONV_SAMPLES = 64         # ...through a convolution stack (each a CONV_SIDE x CONV_SIDE image)
# A plain stack whose last hidden layer's output varies with the input under this share of its first's has
# lost the input's signal on the way (a healthy He/Xavier init keeps it within ~10x); over at least
# FADE_LAYERS hidden layers, shrinking layer after layer (SHRINKING of the steps): not one dead layer.
FADED, FADE_LAYERS = 1e-3, 3
FAR_UNDER_INIT = 0.3      # RMS x sqrt(fan-in) under this: far under He's (1.41) or Xavier's (~1)


def clipping_patch(run: Run, max_norm: float = 1.0) -> tuple[str | None, list[Evidence]]:
    """A patch that turns on gradient clipping, and evidence that it is off."""
    hit = run.config_value(*CLIP_KEYS)
    if hit is not None:
        value = hit.value
        unset = value in (None, 0, 0.0, False, "null", "None")
        if unset or (isinstance(value, (int, float)) and value > CLIP_OFF_ABOVE):
            off = hit.evidence(f"{hit.key} = {value}: clipping is off")
            return set_config_value(hit.config, hit.key, max_norm), [off]
        return None, []
    for code in run.code:
        if code.uses("clip_grad_norm_", "clip_grad_value_"):
            return None, []
    for code in run.code:
        steps = code.calls.get("step") or []
        opt_steps = [ln for ln in steps
                     if "optim" in code.text.splitlines()[ln - 1] or "opt." in code.text.splitlines()[ln - 1]]
        if opt_steps:
            clip = f"torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm={format_value(max_norm)})"
            patch = insert_code_before(code, opt_steps[0], clip)
            return patch, [Evidence("no clip_grad_norm_ before optimizer.step()",
                                    code.artifact, f"line {opt_steps[0]}")]
    return None, []


def analyze(run: Run) -> list[Finding]:
    out: list[Finding] = []
    g = run.metrics.get("grad_norm")
    if g is not None and len(g) >= 4:
        v = g.values
        finite = v[np.isfinite(v)]
        if len(finite) >= 4 and np.all(finite == 0):
            # a throughput of 0 at every step is no step that ran: a logger printing 0 for what it does not
            # compute (NeMo Automodel's sequence-classification recipe: `grad_norm 0.0000 | ... | tps 0.00`)
            speed = run.metrics.get("throughput")
            unmeasured = speed is not None and len(speed) >= 4 and not np.any(speed.values)
            out.append(Finding(code="no_parameter_updates",
                               issue="Gradient norm is 0 at every logged step" + (
                                   ", but so is the throughput, which no step that ran can be: the logger may "
                                   "print 0 for values it does not compute" if unmeasured else ""),
                               severity="medium" if unmeasured else "critical",
                               confidence=0.45 if unmeasured else 0.85,
                               evidence=[point(g, 0, "grad_norm"), point(g, len(g) - 1, "grad_norm")]
                               + ([point(speed, 0, "throughput")] if unmeasured and speed is not None else []),
                               fix="The loss does not depend on any trainable parameter: check "
                                   "requires_grad, detach()/no_grad around the forward pass, and which "
                                   "parameters the optimizer holds",
                               analyzer=NAME,
                               quick_fix="Check requires_grad and the optimizer's parameters"))
            return out
        growth = geometric_growth(v)
        nf = first_nonfinite(v)
        if growth is None and nf is not None and nf < 8:
            # Inf/NaN within a few steps: a short run-up, rising step after step, is the whole story
            growth = geometric_growth(v, min_points=SHORT_RUNUP) or _overflow_from_the_start(v, nf)
        if growth is None:
            growth = _burst_from_the_start(g)
        if growth is None and nf is not None:
            growth = _huge_before_overflow(v, nf)
        if growth is None:
            growth = _survived(run, g)
        if growth is not None and not _runaway(run, g, growth):
            growth = None
        if growth is not None:
            idx = np.flatnonzero(np.isfinite(v))
            a, b = int(idx[growth.start]), int(idx[growth.end])
            healthy = float(np.median(v[np.isfinite(v)][: max(3, a)]))
            # one point already blown up says nothing of the level before: clip at the usual 1.0
            clip_at = float(f"{max(2 * healthy, 1e-3):.1g}") if b > a else 1.0
            patch, clip_ev = clipping_patch(run, clip_at)
            # cite where the growth reached its peak, not its last point (a diverged run's log can print 0
            # between huge values) nor the top of a noisy plateau after it: the first point at PEAK_REACHED
            seg = np.where(np.isfinite(v[a:b + 1]), v[a:b + 1], -np.inf)
            top = a + int(np.argmax(seg >= PEAK_REACHED * seg.max()))
            rise = rise_in_words(float(v[a]), float(v[top]))
            ev = [_rise_evidence(g, a, top, b, rise)]
            if nf is not None:
                ev.append(point(g, nf, "grad_norm"))
            scale = _summed_loss(run) or _penalty_overshoots(run) or _unscaled_targets(run)
            fix = (f"Clip the gradient norm at {fmt(clip_at)} (about twice its {fmt(healthy)} before the "
                   "growth) and lower the learning rate; check for a missing normalisation layer") if b > a else (
                "Clip the gradient norm at 1.0 and log it at every step; check the loss's scale, the "
                "initialisation and for a missing normalisation layer")
            if scale is not None:
                ev.append(scale[0])
                fix = scale[1] + "; then " + fix[0].lower() + fix[1:]
            calm = [e for e in (_calm_lr(run, g, a, b), _large_before_any_update(run, g)) if e is not None]
            if calm:
                ev += calm
            if calm and scale is None:       # raw targets or a summed loss are the more specific fix
                fix = ("Check the architecture and the initialisation (a missing "
                       "normalisation layer, an init too wide for the depth, gradients never "
                       "cleared): the LR is not the cause; " + fix[0].lower() + fix[1:])
            issue = (f"Gradient norm grew geometrically{' (' + rise + ')' if rise else ''} from {g.step_kind} "
                     f"{fmt_step(g.steps[a])} to {fmt_step(g.steps[top])}") if b > a else (
                f"Gradient norm already {fmt(float(v[a]))} at {g.step_kind} {fmt_step(g.steps[a])}, then "
                "Inf/NaN at the next logged point" + (": a blow-up between two sparse logged points"
                                                      if a + 1 < len(g) and g.steps[a + 1] - g.steps[a] > 1 else ""))
            out.append(Finding(code="exploding_gradients",
                               issue=issue,
                               severity="critical",
                               confidence=0.8,
                               evidence=ev + clip_ev,
                               fix=fix,
                               expected_impact="grad_norm stays bounded and the loss stays finite",
                               patch=patch,
                               analyzer=NAME,
                               onset_step=float(g.steps[a]),
                               end_step=float(g.steps[top]),
                               quick_fix=f"Clip gradients at {fmt(clip_at)}",
                               rules_out=("lr_too_high",) if calm else ()))
        else:
            sp = spikes(v, z=8.0)
            if sp:
                i = max(sp, key=lambda j: float(v[j]))
                med = float(np.nanmedian(v))
                out.append(Finding(
                    code="loss_spikes", issue=f"Gradient-norm spike of {fmt(float(v[i]))} "
                    f"({float(v[i]) / max(med, 1e-12):.0f}x the median) "
                    f"at {g.step_kind} {fmt_step(g.steps[i])}", severity="low", confidence=0.5,
                    evidence=[point(g, i, "grad_norm spike"),
                     Evidence(f"median grad_norm {fmt(med)}", g.artifact, g.span_locator(0, len(g) - 1))],
                    fix="Clip gradients (max_grad_norm 1.0) and "
                        "inspect the batch of that step", analyzer=NAME,
                    onset_step=float(g.steps[i]), quick_fix="Enable gradient clipping"))
    if g is None:
        out += _loss_explosion(run)
    out += _vanishing(run)
    return out


def _rise_evidence(g, a: int, top: int, b: int, rise: str) -> Evidence:
    """The growth from its start to its peak, or, where the norm's only finite point before the
    Inf/NaN is its start (logged every few steps), that point and the gap to the next."""
    if top > a:
        return Evidence(f"grad_norm rose{' ' + rise if rise else ''} from {fmt(float(g.values[a]))} at "
                        f"{g.step_kind} {fmt_step(g.steps[a])} to {fmt(float(g.values[top]))} at "
                        f"{g.step_kind} {fmt_step(g.steps[top])}", g.artifact, g.span_locator(a, b))
    gap = float(g.steps[a + 1] - g.steps[a]) if a + 1 < len(g) else 0.0
    between = (f" (logged every {fmt_step(gap)} {g.step_kinds}: the run-up fell between two logged points)"
               if gap > 1 else "")
    return Evidence(f"grad_norm {fmt(float(g.values[a]))} at {g.step_kind} {fmt_step(g.steps[a])}, its last "
                    f"finite value, {fmt(float(g.values[a]) / HUGE_NORM)}x past {fmt(HUGE_NORM)}{between}",
                    g.artifact, g.locator(a))


def _huge_before_overflow(v: np.ndarray, nf: int) -> Growth | None:
    """A norm logged every few steps: fewer than SHORT_RUNUP finite points before an Inf/NaN that
    stays to the end, the last of them HUGE_NORM or more. No run-up can be read between so few
    points, but a norm four orders above a mean-reduced loss's O(1), followed by the overflow at the
    next logged point, is the blow-up caught mid-way (an arithmetic NaN comes out of calm norms).
    Not an overflow the run comes back from (a loss scaler skipping a step)."""
    finite = v[:nf]
    if not 1 <= len(finite) < SHORT_RUNUP or not np.isfinite(finite).all() or np.isfinite(v[nf:]).any():
        return None
    if finite[-1] < HUGE_NORM:
        return None
    # the blow-up is caught at that last point: a point before it says where the norm was, not where it turned
    return Growth(nf - 1, nf - 1, float(finite[-1] / max(finite[0], 1e-12)), 1.0)


def _rising_to_overflow(v: np.ndarray, nf: int) -> Growth | None:
    """Too few finite points for a run-up: values rising at every step from the first to an Inf/NaN
    that stays to the end, by EXPLODED_LOSS or more, are a blow-up seen from its first point."""
    finite = v[:nf]
    if len(finite) < 2 or not np.isfinite(finite).all() or finite[0] <= 0 or np.isfinite(v[nf:]).any():
        return None
    if not (np.diff(finite) > 0).all() or finite[-1] < EXPLODED_LOSS * finite[0]:
        return None
    return Growth(0, nf - 1, float(finite[-1] / finite[0]), 1.0)


def _loss_explosion(run: Run) -> list[Finding]:
    """Exploding gradients read from the loss, when no gradient norm is logged: a loss that grows
    geometrically from the first steps (or rises at every step to an Inf/NaN that stays) under an
    LR constant and inside its optimizer's range grows because each step's update is larger than
    the last -- the gradients -- not because of the LR (an LR above its range is left to the LR's
    own reading). The LR is ruled out; the NaN, if any, is where it ended. A loss whose scale the
    code or config explains (summed, raw targets) overflowing within a few steps is read the same
    way, rising at every step or not, and so is one already LARGE_AT_START at the first report: it
    was huge before the first update. A loss LARGE_AT_START that bursts BURST-fold within the first
    steps and comes back later (a schedule's decay pulled the rate under what the overshooting term
    tolerates) blew up all the same. Growth that starts later, under an LR never above its range,
    from a loss whose scale was wrong from step 1 (LARGE_AT_START, or a term the config shows
    overshooting): with the term in the config it is read as confidently as growth from step 1;
    without it the warm-up or schedule that preceded the turn is as likely a cause, so it is listed
    at LATE_ONSET and the LR is not ruled out."""
    loss = train_loss(run)
    if loss is None or len(loss) < 4:
        return []
    v = loss.values
    nf = first_nonfinite(v)
    growth = geometric_growth(v)
    scale = _summed_loss(run) or _penalty_overshoots(run) or _unscaled_targets(run)
    if growth is None and nf is not None and nf < 8:
        huge = scale or _large_first_loss(loss)
        growth = _rising_to_overflow(v, nf) or (_overflow_of(v, nf) if huge else None)
    if growth is None:
        growth = _burst_from_the_start(loss)
    if growth is None:
        return []
    idx = np.flatnonzero(np.isfinite(v))
    a, b = int(idx[growth.start]), int(idx[growth.end])
    calm = _calm_lr(run, loss, a, b)
    late = calm is None and (scale is not None or _large_first_loss(loss))
    if late:
        calm = _calm_lr(run, loss, a, b, from_start=False)
    if calm is None:
        return []
    # a late onset is the rate's doing as much as the loss's, unless the config shows the term that overshoots
    sure = not late or scale is not None
    top = a + int(np.argmax(np.where(np.isfinite(v[a:b + 1]), v[a:b + 1], -np.inf)))
    rise = rise_in_words(float(v[a]), float(v[top]))
    ev = [Evidence(f"loss rose{' ' + rise if rise else ''} from {fmt(float(v[a]))} at {loss.step_kind} "
                   f"{fmt_step(loss.steps[a])} to {fmt(float(v[top]))} at {loss.step_kind} "
                   f"{fmt_step(loss.steps[top])}, step after step", loss.artifact, loss.span_locator(a, b))]
    if nf is not None:
        ev.append(point(loss, nf, "loss"))
    fix = ("Log the gradient norm and clip it (max_grad_norm 1.0); check the architecture, the "
           "initialisation and the loss's scale (a recurrent weight above 1, a term weighted far too "
           "high): the LR is not the cause")
    if scale is not None:
        ev.append(scale[0])
        fix = scale[1] + "; then " + fix[0].lower() + fix[1:]
    elif _large_first_loss(loss):
        ev.append(Evidence(f"loss {fmt(float(v[0]))} at {loss.step_kind} {fmt_step(loss.steps[0])}, "
                           "before any update: the model, its initialisation or the loss's scale made it "
                           "that large, not the LR", loss.artifact, loss.locator(0)))
    patch, clip_ev = clipping_patch(run, 1.0)
    return [Finding(code="exploding_gradients",
                    issue=f"Loss grew geometrically{' (' + rise + ')' if rise else ''} from "
                          f"{loss.step_kind} {fmt_step(loss.steps[a])} under an LR never above its range: the updates "
                          "(the gradients) grow step after step",
                    severity="critical", confidence=0.8 if sure else LATE_ONSET, evidence=ev + [calm] + clip_ev,
                    fix=fix, expected_impact="the loss falls instead of growing and stays finite",
                    patch=patch, analyzer=NAME, onset_step=float(loss.steps[a]),
                    quick_fix="Clip gradients at 1.0", rules_out=("lr_too_high",) if sure else ())]


def rise_in_words(start: float, peak: float) -> str:
    """The rise from `start` to `peak` (the two values the evidence cites) as a reader can check it: a
    factor while it is a few digits, orders of magnitude past FACTOR_IN_WORDS, nothing when the start is
    not a level to measure from (0, or not finite) or the rise is under 2x (no factor worth saying)."""
    if not (math.isfinite(start) and math.isfinite(peak)) or start <= 0 or peak < 2 * start:
        return ""
    r = peak / start
    return f"{r:,.0f}x" if r < FACTOR_IN_WORDS else f"{math.log10(r):.0f} orders of magnitude"


def _large_first_loss(loss) -> bool:
    """A loss already LARGE_AT_START at step 1, before any update: a fresh classifier scores about
    ln K (under 12 for 100k classes), a regression on standardised targets about 1; hundreds say the
    model's outputs or the loss's scale were far off from the start, whatever the LR."""
    first = float(loss.values[0])
    numbered = loss.step_kind == "step" and loss.steps[0] <= 1     # an excerpt's index says no such thing
    return numbered and math.isfinite(first) and first >= LARGE_AT_START


def _overflow_of(v: np.ndarray, nf: int) -> Growth | None:
    """The finite values before an Inf/NaN that stays to the end, reaching EXPLODED_LOSS times the
    first or more: the blow-up from its first point to its peak, whatever the steps between."""
    finite = v[:nf]
    if len(finite) < 2 or not np.isfinite(finite).all() or finite[0] <= 0 or np.isfinite(v[nf:]).any():
        return None
    top = int(np.argmax(finite))
    if finite[top] < EXPLODED_LOSS * finite[0]:
        return None
    return Growth(0, top, float(finite[top] / finite[0]), 1.0)


def _overflow_from_the_start(v: np.ndarray, nf: int) -> Growth | None:
    """Too few finite points for a run-up: a norm already LARGE_AT_START at the first step, rising to
    the overflow a few steps later, is the same blow-up seen from its first point. Not an overflow
    the run comes back from: an Inf followed by finite norms is a loss scaler skipping a step
    (mixed precision), which it does by design."""
    finite = v[:nf]
    rising = len(finite) >= 2 and np.isfinite(finite).all() and finite[-1] > finite[0]
    if not rising or finite[0] < LARGE_AT_START or np.isfinite(v[nf:]).any():
        return None
    return Growth(0, nf - 1, float(finite[-1] / finite[0]), 1.0)


def _burst_from_the_start(g) -> Growth | None:
    """A blow-up the run survived: a norm (or a loss) already LARGE_AT_START before any update that rises by
    BURST or more within the first FROM_THE_START of the run. Geometric growth is read up to the end
    of the series, and a run whose overshooting steps land where the gradients are smaller falls
    back into noisy, huge values instead of ending in Inf/NaN; the burst is the same explosion."""
    v = g.values
    numbered = g.step_kind == "step" and g.steps[0] <= 1      # an excerpt's index says nothing of updates
    if len(v) < 10 or not numbered or not (math.isfinite(float(v[0])) and v[0] >= LARGE_AT_START):
        return None
    idx = np.flatnonzero(np.isfinite(v))
    window = idx[: max(4, int(FROM_THE_START * len(v)))]
    top = int(np.argmax(v[window]))
    if top < 2 or v[window[top]] < BURST * v[0]:
        return None
    return Growth(0, top, float(v[window[top]] / v[0]), 1.0)


def _survived(run: Run, g) -> Growth | None:
    """An explosion the run came back from: the norm grew BURST-fold or more step after step, then
    turned back down (a penalty that shrank the weights it blew up, a schedule that took the rate
    down). Only as the gradients' story where the rise is gradual (no one step carries ONE_JUMP of
    it on a log scale: one outlier batch is the data's) and the LR stayed inside its optimizer's
    range up to the peak (one above it overshoots, which is the LR analyzer's reading). The loss
    rising with it is checked by the caller (`_runaway`)."""
    growth = geometric_growth(g.values, min_factor=BURST, to_peak=True)
    if growth is None:
        return None
    v = g.values
    lv = np.log10(v[np.isfinite(v) & (v > 0)][growth.start: growth.end + 1])
    rise = float(lv[-1] - lv[0])
    if rise <= 0 or float(np.diff(lv).max()) > ONE_JUMP * rise:
        return None
    idx = np.flatnonzero(np.isfinite(v))
    if _calm_lr(run, g, int(idx[growth.start]), int(idx[growth.end]), from_start=False) is None:
        return None
    return growth


def _large_before_any_update(run: Run, g) -> Evidence | None:
    """Exploding gradients vs LR too high: the first logged gradient norm comes before the first
    optimizer step, so when it is already LARGE_AT_START the LR cannot have made it; the model, its
    initialisation or the loss's scale did. Only where the log numbers its steps (a pasted excerpt
    counts its lines from 0 wherever it was cut), and not under an LR above its optimizer's range,
    which stays a reading of its own."""
    first = float(g.values[0])
    if not (math.isfinite(first) and first >= LARGE_AT_START and g.step_kind == "step" and g.steps[0] <= 1):
        return None
    fam = optimizer_family(run)
    if fam and (peak := peak_lr(run)) is not None and peak[0] > LR_RANGE[fam[0]][1]:
        return None
    return Evidence(f"grad_norm {fmt(first)} at {g.step_kind} {fmt_step(g.steps[0])}, before any update: the "
                    "model, its initialisation or the loss's scale made it that large, not the LR",
                    g.artifact, g.locator(0))


def _calm_lr(run: Run, g, a: int, b: int, from_start: bool = True) -> Evidence | None:
    """Exploding gradients vs LR too high: growth from the first steps under an LR that never went
    above its optimizer's useful range up to the blow-up (constant, or a warm-up or a decay that
    stays under the range's top) points at the architecture, the initialisation or the loss's
    scale, not the LR. (An LR raised by a jump is the learning-rate analyzer's reading, and the
    ranking lets a jump lead whatever this says.) The evidence that says so, else None. Without
    `from_start`, growth at any onset: the caller weighs a late one itself."""
    span = float(g.steps[-1] - g.steps[0]) or 1.0
    if from_start and float(g.steps[a] - g.steps[0]) > FROM_THE_START * span:
        return None
    fam = optimizer_family(run)
    if fam is None:
        return None
    lr = run.metrics.get("lr")
    if lr is not None and len(lr):
        # a warm-up's first rate of 0 (before any update) is no level the run trained at
        upto = lr.values[(lr.steps <= g.steps[b]) & np.isfinite(lr.values) & (lr.values > 0)]
        if not len(upto):
            return None
        end = index_at_or_before(lr, float(g.steps[b])) or 0
        least, most = float(upto.min()), float(upto.max())
        artifact, where = lr.artifact, lr.span_locator(0, end)
    else:
        hit = run.config_value(*LR_KEYS)
        if hit is None or hit.number is None:
            return None
        least = most = hit.number
        artifact, where = hit.config.artifact, hit.locator
    low, high = LR_RANGE[fam[0]]
    constant = most <= CONSTANT_LR * least
    if most > high:          # under the range's floor, a rate is no rival for a blow-up either
        return None
    level = (f"lr constant at {fmt(least)}" if constant
             else f"lr between {fmt(least)} and {fmt(most)} (its schedule)")
    where_in = "inside" if constant and least >= low else "never above"
    grew = "from step 1" if from_start else "from where they turned"
    return Evidence(f"{level} from the first step to the blow-up, {where_in} {fam[0]}'s usual range "
                    f"({fmt(low)}-{fmt(high)}): the gradients grew {grew} under a calm LR",
                    artifact, where)


def _unscaled_targets(run: Run) -> tuple[Evidence, str] | None:
    """A squared-error loss that starts in the thousands: regression targets on their raw scale."""
    loss = train_loss(run)
    if loss is None or not len(loss) or not np.isfinite(loss.values[0]) or loss.values[0] < 1e3:
        return None
    mse = any(isinstance(v, str) and re.search(r"\b(mse|l2|squared)", v, re.I)
              for c in run.configs for v in c.values.values())
    mse = mse or any(code.uses("mse_loss", "MSELoss") for code in run.code)
    if not mse:
        return None
    v0 = float(loss.values[0])
    return (Evidence(f"squared-error loss {fmt(v0)} at the first step: errors of ~{fmt(v0 ** 0.5)}, so the "
                     "targets are on their raw scale", loss.artifact, loss.locator(0)),
            "Standardise the regression targets (subtract their mean, divide by their std) "
            "so the loss starts near 1")


_SUM_REDUCTION = re.compile(r"""reduction\s*=\s*["']sum["']""")
_UNTRAINED_SUM = re.compile(r"\+=|\.item\(\)")
_SCALED = re.compile(r"/|\*|\.div\(|\.mul\(")


def _summed_loss(run: Run) -> tuple[Evidence, str] | None:
    """A loss summed where a mean was meant, read in the code or the config: `reduction="sum"` (the
    gradient is the batch size times the mean's), or gradient accumulation whose micro-batch losses
    reach backward() undivided (each step applies the accumulation count times the mean gradient)."""
    for code in run.code:
        for n, line in enumerate(code.text.splitlines(), start=1):
            m = _SUM_REDUCTION.search(line)
            # not an evaluation's sum (`test_loss += F.nll_loss(..., reduction='sum').item()`), nor
            # one divided on its line (`... reduction='sum') / x.size(0)`)
            if m and not line.lstrip().startswith("#") and not _UNTRAINED_SUM.search(line) \
                    and "/" not in line[m.end():]:
                said = Evidence(f"{line.strip()}: the loss is summed over the batch, not averaged",
                                code.artifact, f"line {n}")
                return said, "Average the loss over the batch (reduction=\"mean\")"
    hit = run.config_value("reduction")
    if hit is not None and str(hit.value).lower() == "sum":
        return (hit.evidence(f"{hit.key} = sum: the loss is summed over the batch, not averaged"),
                "Average the loss over the batch (reduction: mean)")
    acc = run.config_value(*ACCUMULATION_KEYS)
    if acc is None or acc.number is None or acc.number <= 1:
        return None
    for code in run.code:
        for n in code.calls.get("backward", []):
            receiver, _, args = code.line(n).strip().partition(".backward(")
            name = receiver.split("(")[-1].strip()
            # `accelerator.backward(loss)`, `engine.backward(loss)` divide by the accumulation count
            # themselves: only a tensor's own `loss.backward()` is read
            on_object = bool(args) and args[0] != ")" and not re.match(r"\s*\w+\s*=", args)
            divided = bool(_SCALED.search(receiver)) or any(
                re.match(rf"\s*{re.escape(name)}\s*(/=|\*=|=.*(/|\*|\.div\(|\.mul\())", line)
                for line in code.text.splitlines())
            if name.isidentifier() and not divided and not on_object:
                return (acc.evidence(f"{acc.key} = {acc.value}, and {code.line(n).strip()} (line {n}) "
                                     f"backpropagates each micro-batch's loss undivided: each step applies "
                                     f"{acc.value}x the mean gradient"),
                        f"Divide each micro-batch's loss by {acc.value} before backward()")
    return None


def _penalty_overshoots(run: Run) -> tuple[Evidence, str] | None:
    """An L2 penalty or a weight decay, read in the config, whose own step under SGD moves every
    weight past zero by more than it started: `loss + l2 * sum(w**2)` scales each weight by
    (1 - 2 x lr x l2) a step, past -1 once lr x l2 > 1; a coupled weight decay by (1 - lr x wd),
    past -1 once lr x wd > 2. The weights, and the gradients with them, then grow geometrically
    whatever the task's loss does (a usual coefficient of 1e-5-1e-1 under a rate of at most 0.1
    gives a product far under 1). Only under SGD: an adaptive optimizer normalises the penalty's
    gradient with the rest, and AdamW's decoupled decay only shrinks. A momentum mu the config
    states moves the limit: heavy-ball momentum stays stable up to (1 + mu) times it, Nesterov's
    only up to (1 + mu) / (1 + 2 mu) times it (the stability of either on a quadratic)."""
    hit = run.config_value(*PENALTY_KEYS)
    peak = peak_lr(run)
    fam = optimizer_family(run)
    if hit is None or hit.number is None or peak is None or fam is None or fam[0] != "sgd":
        return None
    limit = (2.0 if hit.key.rsplit(".", 1)[-1].lower() in ("weight_decay", "wd") else 1.0) * _momentum_scale(run)
    product = hit.number * peak[0]
    if product <= limit:
        return None
    return (hit.evidence(f"{hit.key} = {fmt(hit.number)} under SGD with a peak lr of {fmt(peak[0])}: the product "
                         f"{fmt(product)} is over {fmt(limit)}, so the penalty alone moves each weight past zero "
                         "by more than it started, and the weights grow at every step"),
            f"Set {hit.key} to its intended scale (1e-5 to 1e-2; {fmt(hit.number)} looks like a typo)")


def _momentum_scale(run: Run) -> float:
    """How far the config's momentum moves an SGD penalty's overshoot limit (1 without one)."""
    m = run.config_value("momentum")
    mu = m.number if m is not None and m.number is not None and 0 <= m.number < 1 else 0.0
    nesterov = run.config_value("nesterov")
    return (1 + mu) / (1 + 2 * mu) if nesterov is not None and nesterov.value is True else 1 + mu


def _runaway(run: Run, g, growth) -> bool:
    """Growth is only a fault if it ends in Inf/NaN or the loss got worse over it: gradients also
    grow by orders of magnitude early in healthy training, while the loss falls."""
    if first_nonfinite(g.values) is not None:
        return True
    loss = train_loss(run)
    if loss is None:
        return growth.factor >= 1e4
    i = index_at_or_after(loss, float(g.steps[growth.start]))
    j = index_at_or_before(loss, float(g.steps[growth.end]))
    if i is None or j is None or j <= i:
        return False
    a = loss.values[i]
    # the worst loss over the last quarter of the growth, not its last point: a loss that
    # overflows to huge values prints 0 now and then between them
    b = float(np.max(loss.values[i + 3 * (j - i) // 4: j + 1]))
    start = float(np.nanmedian(loss.values[: max(3, len(loss) // 10)]))
    return not np.isfinite(b) or (b > 1.1 * a and b - a > 0.05 * abs(start))


def _layer_magnitudes(run: Run) -> tuple[list[tuple[str, float, Evidence]], str] | None:
    """Per layer, nearest the input first: a gradient magnitude and where it was read. From
    per-layer grad-norm series (median over the run), else from Adam's second moments in the
    latest checkpoint that carries optimizer state (sqrt of mean exp_avg_sq: a running RMS of the
    gradient)."""
    layers = run.metrics.layer_series("grad_norm")
    if len(layers) >= 3:       # logging order follows module order
        names = list(layers)
        if names == sorted(names):
            # listed by name, as a file store lists its metrics (MLflow): no logging order survives,
            # and `10.weight` sorts before `2.weight`; numbers compared as numbers restore the depth
            names.sort(key=_module_order)
        return [(n, float(np.nanmedian(layers[n].values)),
                 Evidence(f"median grad norm of {n}: {fmt(float(np.nanmedian(layers[n].values)))}",
                          layers[n].artifact, layers[n].span_locator(0, len(layers[n]) - 1)))
                for n in names], "median grad norm"
    for ckpt in sorted(run.loaded_checkpoints(), key=lambda c: -(c.step or 0)):
        moments = [(n, v) for n, v in (second_moments(ckpt) or []) if n.endswith("weight")]
        if len(moments) >= 3:
            readings = [(n, v, Evidence(f"Adam second moment of {n}: sqrt(mean exp_avg_sq) = {fmt(v)}",
                                        ckpt.artifact, f"optimizer state of {n}")) for n, v in moments]
            return readings, "gradient RMS (Adam state)"
    return _backpropagated(run)


def _backpropagated(run: Run) -> tuple[list[tuple[str, float, Evidence]], str] | None:
    """Per layer, the gradient norm of a plain saturating MLP's or CNN's checkpoint, computed:
    standard-normal inputs forward through its own weights and the activation its config or code
    names, a unit random signal at the output backward. Each layer multiplies the signal by W and
    f'(z) (sigmoid' <= 1/4): what reaches the first layer is what training gave it. A format that
    logs no per-layer norms (a Trainer's log, a Lightning CSV) leaves this the only profile. None
    unless the checkpoint is a plain MLP or a stack of convolutions of at least three layers and a
    saturating activation is named."""
    named = _saturating(run)
    if named is None:
        return None
    f, df = ((lambda z: 0.5 * (1 + np.tanh(z / 2)), lambda a: a * (1 - a)) if "sigmoid" in named.text.lower()
             else (np.tanh, lambda a: 1 - a * a))
    for ckpt in sorted(run.loaded_checkpoints(), key=lambda c: -(c.step or 0)):
        chain, profile = _mlp_chain(ckpt), _mlp_profile
        if len(chain) < 3:
            chain, profile = _conv_chain(ckpt), _conv_profile
        if len(chain) < 3 or not all(np.isfinite(w).all() for _, w, _ in chain):
            continue
        norms = profile(chain, f, df)
        if norms is None:
            continue
        activation = named.text.split(":")[0]
        readings = [(name, m, Evidence(f"gradient norm of {name} backpropagated through the checkpoint with "
                                       f"{activation}: {fmt(m)}", ckpt.artifact, f"tensor {name}.weight"))
                    for (name, _, _), m in zip(chain, norms)]
        return readings, "gradient norm computed from the checkpoint"
    return None


def _mlp_profile(chain, f, df) -> list[float] | None:
    """Per layer of a plain MLP, the weight gradient's norm for a unit random signal at the output.
    Every layer's activations are kept for the backward pass: bounded as the dead-unit probe is
    (None when too few samples would fit)."""
    widths = chain[0][1].shape[1] + sum(w.shape[0] for _, w, _ in chain)
    samples = min(BACKPROP_SAMPLES, ACTIVATION_ELEMENTS // widths)
    if samples < MIN_SAMPLES:
        return None
    g = np.random.default_rng(0)
    acts = [g.standard_normal((samples, chain[0][1].shape[1]), dtype=np.float32)]
    for i, (_, w, b) in enumerate(chain):
        z = acts[-1] @ w.T + (0.0 if b is None else b)
        acts.append(z if i == len(chain) - 1 else f(z))
    delta = g.standard_normal(acts[-1].shape, dtype=np.float32) / np.sqrt(acts[-1].shape[1])
    norms = []
    for i in range(len(chain) - 1, -1, -1):
        norms.append(float(np.linalg.norm(delta.T @ acts[i])) / samples)
        if i:
            delta = (delta @ chain[i][1]) * df(acts[i])
    return norms[::-1]


def _conv_profile(chain, f, df) -> list[float] | None:
    """Per convolution of a plain stack (each followed by the activation), the weight gradient's
    norm for a unit random signal at the last one's output, on CONV_SIDE x CONV_SIDE inputs: the
    backward pass of a same-padded convolution is the same convolution with the kernel flipped and
    its channels swapped."""
    planes = (chain[0][1].shape[1] + sum(w.shape[0] for _, w, _ in chain)) * CONV_SIDE * CONV_SIDE
    if CONV_SAMPLES * planes > ACTIVATION_ELEMENTS:      # the activations kept for the backward pass
        return None
    g = np.random.default_rng(0)
    acts = [g.standard_normal((CONV_SAMPLES, chain[0][1].shape[1], CONV_SIDE, CONV_SIDE))]
    for _, w, b in chain:
        acts.append(f(_conv_same(acts[-1], w.astype(np.float64), b)))
    delta = g.standard_normal(acts[-1].shape) / np.sqrt(acts[-1][0].size) * df(acts[-1])
    norms = []
    for i in range(len(chain) - 1, -1, -1):
        w = chain[i][1].astype(np.float64)
        kh, kw = w.shape[2:]
        xp = np.pad(acts[i], ((0, 0), (0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2)))
        windows = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
        win = windows[:, :, :CONV_SIDE, :CONV_SIDE]
        grad = np.einsum("nohw,nchwij->ocij", delta, win, optimize=True)
        norms.append(float(np.linalg.norm(grad)) / CONV_SAMPLES)
        if i:
            delta = _conv_same(delta, w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3), None) * df(acts[i])
    return norms[::-1]


def _depth_step(name: str) -> str:
    """The block a parameter belongs to, one step of depth: up to its first numeric index
    (`cells.0.rec.weight` -> `cells.0`, `features.3.weight` -> `features.3`), else its module
    (`rnn.weight_hh_l0` -> `rnn`). A recurrent cell's input and state weights, or a block's
    sub-layers, sit at the same depth: their magnitudes are not a profile across layers."""
    parts = name.split(".")
    for i, p in enumerate(parts):
        if p.isdigit():
            return ".".join(parts[: i + 1])
    return ".".join(parts[:-1]) or name


def _by_depth(layers: list[tuple[str, float, Evidence]]) -> list[tuple[str, float, Evidence]]:
    """One magnitude per depth step, in first-seen order: the largest in the block (what reaches it)."""
    out: dict[str, tuple[str, float, Evidence]] = {}
    for name, m, ev in layers:
        key = _depth_step(name)
        if key not in out or m > out[key][1]:
            out[key] = (name, m, ev)
    return list(out.values())


def _unprofiled_saturating_stall(run: Run) -> list[Finding]:
    """No layer profile to read (no per-layer norms logged, no Adam state, a checkpoint that is no
    plain MLP or convolution stack, such as a recurrent net logged by a Trainer): a stack of
    saturating units at least SUSPECT_DEPTH deep whose loss never moved is listed as vanishing
    gradients, at a low confidence, as the rival that a per-layer profile would confirm or refute.
    Each sigmoid/tanh layer (and time step) multiplies the backward signal by f' <= 1 (1/4 for a
    sigmoid), so such a stack that learns nothing is where vanishing gradients are expected."""
    named = _saturating(run)
    loss = train_loss(run)
    if named is None or loss is None or not _loss_flat(run):
        return []
    latest = max(run.loaded_checkpoints(), key=lambda c: (c.step or -1, c.artifact), default=None)
    if latest is None:
        return []
    steps = {_depth_step(t.name) for t in latest.tensors if t.name.endswith("weight") and len(t.shape) >= 2}
    if len(steps) < SUSPECT_DEPTH:
        return []
    depth = Evidence(f"{len(steps)} weight layers in the checkpoint", latest.artifact,
                     f"tensor {sorted(steps, key=_module_order)[0]}")
    return [Finding(code="vanishing_gradients",
                    issue=f"Possibly vanishing gradients: {len(steps)} layers of saturating units and a loss "
                          "that never moved, with no per-layer gradient norms to confirm it",
                    severity="medium",
                    confidence=UNPROFILED,
                    evidence=[named, depth, point(loss, 0, "loss"), point(loss, len(loss) - 1, "loss")],
                    fix="Log per-layer gradient norms to confirm; then add normalisation or residual "
                        "connections, or use ReLU/GELU instead of saturating activations",
                    analyzer=NAME,
                    expected_impact="the first layers' gradient norms come within ~10x of the last's and "
                                    "the loss leaves its plateau",
                    quick_fix="Log per-layer gradient norms")]


def _vanishing(run: Run) -> list[Finding]:
    """Vanishing gradients from the layer profile (logged, Adam's state, or backpropagated through a
    saturating checkpoint), and from the forward signal fading through the checkpoint's layers. A
    fade explains units that never fire (no input reaches them), so it rules out dead ReLUs."""
    found = _layer_magnitudes(run)
    fade = _faded_signal(run)
    out = _profile_vanishing(run, *found) if found is not None else []
    if fade is not None and (out or not _contradicts(found)):
        evidence, ratio, too_small = fade
        if not out:
            out = [Finding(code="vanishing_gradients",
                           issue=f"The input's signal fades {ratio}x through the checkpoint's layers, and "
                                 "the gradient reaching the first layers with it",
                           severity="high", confidence=0.8, evidence=[], fix=VANISHING_FIX, analyzer=NAME,
                           expected_impact=VANISHING_IMPACT, quick_fix="Initialise at He/Xavier scale")]
        out[0].evidence += evidence
        out[0].confidence = round(max(out[0].confidence, 0.8), 2)
        out[0].rules_out = ("dead_relu",)
        if too_small:
            out[0].fix = "Initialise the weights at He/Xavier scale (gain 1); " + VANISHING_FIX[0].lower() \
                + VANISHING_FIX[1:]
        return out
    return out if found is not None else _unprofiled_saturating_stall(run)


def _contradicts(found) -> bool:
    """A layer profile whose first layer's gradient is within VANISHED of its last's: nothing vanished
    there, whatever the checkpoint's forward pass says (a first layer a text log printed as 0 is no such
    reading)."""
    if found is None:
        return False
    layers = _by_depth(found[0])
    layers = layers if len(layers) >= 3 else found[0]
    return layers[0][1] >= VANISHED * layers[-1][1] > 0


VANISHING_FIX = ("Add normalisation (LayerNorm/BatchNorm) or residual connections, use ReLU/GELU instead of "
                 "saturating activations, and a He/Xavier initialisation")
VANISHING_IMPACT = ("the first layers' gradient norms come within ~10x of the last's and the loss leaves its "
                    "plateau")


def _profile_vanishing(run: Run, layers: list[tuple[str, float, Evidence]], what: str) -> list[Finding]:
    grouped = _by_depth(layers)
    layers = grouped if len(grouped) >= 3 else layers
    first, last = layers[0], layers[-1]
    if last[1] <= 0 or first[1] >= VANISHED * last[1]:
        return []
    mags = np.array([m for _, m, _ in layers])
    # norms a text log printed as 0 (rounded under its precision), nearest the input, lie below every
    # printed layer and say nothing of the shape: the shrinking must show in the layers it printed
    shown = mags[int(np.argmax(mags > 0)):]
    rising = np.diff(np.log10(np.maximum(shown if len(shown) >= 3 else mags, 1e-30)))
    if (rising > 0).mean() < SHRINKING:       # the magnitudes must shrink layer after layer toward the input
        return []
    ev = [first[2], last[2]]
    conf = 0.75
    saturating = _saturating(run)
    if saturating is not None:
        ev.append(saturating)
        conf += 0.1
    return [Finding(code="vanishing_gradients",
                    issue=f"Gradients vanish toward the input: {what} of {first[0]} {fmt(first[1])} vs "
                          f"{last[0]} {fmt(last[1])} ("
                          + (f"{fmt(last[1] / first[1])}x smaller" if first[1] > 0 else "rounded to 0 by the "
                             "log,") + f" across {len(layers)} layers)",
                    severity="high",
                    confidence=conf,
                    evidence=ev,
                    fix=VANISHING_FIX,
                    analyzer=NAME,
                    expected_impact=VANISHING_IMPACT,
                    quick_fix="Add residual connections or normalisation")]


def _activation(run: Run):
    """The activation the config or code names, as a numpy function (ReLU unless a saturating one)."""
    named = _saturating(run)
    if named is None:
        return lambda z: np.maximum(z, 0.0)
    return (lambda z: 0.5 * (1 + np.tanh(z / 2))) if "sigmoid" in named.text.lower() else np.tanh


def _faded_signal(run: Run) -> tuple[list[Evidence], str, bool] | None:
    """Standard-normal inputs pushed through the latest checkpoint that is a plain MLP or convolution
    stack: when each hidden layer's output depends on the input less than the one before, down to
    FADED of the first's, the signal dies out on the way, and the backward signal to the first
    layers (a product of the same weights) with it. Evidence of the fade, and of the weights' scale
    against a He/Xavier init (RMS x sqrt(fan-in) near 1) at the layer furthest under it; the fade in
    words; whether that scale is far under an init's (FAR_UNDER_INIT)."""
    f = _activation(run)
    for ckpt in sorted(run.loaded_checkpoints(), key=lambda c: -(c.step or 0)):
        chain, conv = _mlp_chain(ckpt), False
        if len(chain) <= FADE_LAYERS:
            chain, conv = _conv_chain(ckpt), True
        if len(chain) - (0 if conv else 1) < FADE_LAYERS or not all(
                np.isfinite(t).all() for _, w, b in chain for t in (w, b) if t is not None):
            continue
        # a conv's windows hold kernel-area values per channel: bound by the real kernel, not 3x3
        window = CONV_SIDE * CONV_SIDE * kernel_area(chain) if conv else 1
        widest = max(w.shape[0] for _, w, _ in chain) * window
        samples = CONV_SAMPLES if conv else min(BACKPROP_SAMPLES, ACTIVATION_ELEMENTS // widest)
        if samples * widest > ACTIVATION_ELEMENTS or samples < (CONV_SAMPLES if conv else MIN_SAMPLES):
            continue
        spreads = np.array(forward_spread(chain, samples, conv, f))
        steps = np.diff(np.log10(np.maximum(spreads, 1e-300)))
        if (spreads <= 0).any() or spreads[-1] >= FADED * spreads[0] or (steps < 0).mean() < SHRINKING:
            return None        # a layer at exactly 0 is off for every input (dead units), not a fade
        hidden = chain if conv else chain[:-1]
        first, last = hidden[0][0], hidden[-1][0]
        fade = Evidence(f"{first}: {fmt(float(spreads[0]))}; {last}: {fmt(float(spreads[-1]))}, "
                        f"{fmt(float(spreads[0] / spreads[-1]))}x less, shrinking layer after layer (std of "
                        f"each layer's output across {samples} standard-normal inputs through the "
                        "checkpoint)",
                        ckpt.artifact, f"tensor {last}.weight")
        scales = [(float(np.sqrt(np.mean(w.astype(np.float64) ** 2) * w[0].size)), n) for n, w, _ in chain]
        low, name = min(scales)
        word = "far under" if low < FAR_UNDER_INIT else "near"
        scale = Evidence(f"{name}.weight: RMS x sqrt(fan-in) = {fmt(low)}, {word} a He/Xavier init's ~1",
                         ckpt.artifact, f"tensor {name}.weight")
        return [fade, scale], fmt(float(spreads[0] / spreads[-1])), low < FAR_UNDER_INIT
    return None


_SATURATING = re.compile(r"\b(sigmoid|tanh|Sigmoid|Tanh)\b")


_AT_OUTPUT = re.compile(r"(?i)loss|cross_entropy|bce|criterion|pred|prob|logit")


def _saturating(run: Run) -> Evidence | None:
    """Where the config or code uses a saturating activation (its gradient is <= 0.25 or <= 1)."""
    for cfg in run.configs:
        for key, value in cfg.values.items():
            if isinstance(value, str) and _SATURATING.search(value):
                return ConfigHit(cfg, key, value).evidence(f"{key} = {value}: a saturating activation")
    for code in run.code:
        for n, line in enumerate(code.text.splitlines(), start=1):
            # a sigmoid in the loss or on the predictions is the output's, not a hidden layer's
            if _SATURATING.search(line) and not line.lstrip().startswith("#") and not _AT_OUTPUT.search(line):
                return Evidence(f"{line.strip()}: a saturating activation", code.artifact, f"line {n}")
    return None
