"""A run that trains well: a loss that falls steadily (with the grad norm's range beside it), else a
GAN in balance (`adversarial`), else an accuracy or mAP that rises report after report. A verdict
of health, so `diagnose` consults it only when no critical, high or medium cause showed and the
run neither crashed nor lost an analyzer; it is not in `ANALYZERS`."""
from __future__ import annotations

import math

import numpy as np

from analysis.analyzers import adversarial
from analysis.analyzers.common import late_window, reward_rose, rewarded, steady_swing, thirds, train_loss
from analysis.analyzers.crashes import stopped_from_outside
from analysis.metrics import clip, fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.run import Run
from analysis.signals import change_said, rank_trend, relative_change, rolling_median, step_noise

NAME = "healthy"
HEALTHY_POINTS = 3          # a falling loss over three reports already says the run learns
LOSS_FELL = 0.02            # the loss must fall by more than 2% of its start to count as falling
# Where a paste holds no loss: the metrics whose rise says the run learns, in the order tried
IMPROVING = ("val_acc", "train_acc", "map", "val_map", "map50", "mAP")
METRIC_ROSE = 1.02          # its last report above 1.02x its first...
RISING_SHARE = 0.5          # ...with at least half of the steps between reports not going down
# A late window of a long run: at least STEADY_POINTS reports, whose last third is not above the first by STEADY_RISE
STEADY_POINTS, STEADY_RISE, STEADY_MAX = 5, 0.05, math.log(1000)
# A fall is one past the noise: the first reports (up to FIRST_REPORTS) above the rest's median by NOISE_Z sigmas
FIRST_REPORTS, NOISE_Z = 5, 3.0
NOISE_POINTS = 8            # second differences of fewer reports mostly measure the curve's own bend
CLIMB_REPORTS, CLIMB_SHARE, CLIMB_RISE = 3, 0.75, 0.1   # a climb back from the lowest: 3+ reports, 3 in 4 up, 10%
WITHIN_NOISE = 0.5          # healthy, without confidence: no fault, and no fall to show the run learns


def _fell_past_noise(v: np.ndarray) -> bool:
    """Whether the loss fell by more than its report-to-report noise: its first third above its last third, or its
    first reports (up to FIRST_REPORTS) above the median of the rest (a warm restart late in the run), by NOISE_Z
    times the noise of such means; or a rank trend NOISE_Z standard errors below 0 (a slow fall under heavy batch
    noise); or a fall at every report. The noise is read from second differences, which a falling trend leaves
    near 0. Under NOISE_POINTS reports there are too few of them to read it, and any fall counts (four epochs at
    1.244, 1.107, 1.057, 1.093). A long loss wandering at one level reads as no fall though its last report is
    the lowest."""
    v = v[np.isfinite(v)]
    if len(v) < NOISE_POINTS or bool((np.diff(v) < 0).all()) or rank_trend(v) * math.sqrt(len(v) - 1) <= -NOISE_Z:
        return True
    noise = step_noise(v)
    third = len(v) // 3
    if float(v[:third].mean() - v[-third:].mean()) > NOISE_Z * noise * math.sqrt(2 / third):
        return True
    k = max(1, min(FIRST_REPORTS, len(v) // 10))
    return float(v[:k].mean() - np.median(v[k:])) > NOISE_Z * noise / math.sqrt(k)


def _climbed_back(s) -> Finding | None:
    """A loss that fell, then climbed back at CLIMB_SHARE of its last CLIMB_REPORTS or more reports to CLIMB_RISE
    above its lowest (both read on a rolling median of 3, so one low report is no lowest), past NOISE_Z times its
    report-to-report noise: no steady fall, though too little for the loss analyzer to call a divergence. No fault
    shown, and no verdict of health either."""
    v = s.values
    if not np.isfinite(v).all() or len(v) < CLIMB_REPORTS + 2:
        return None
    sm = rolling_median(v, 3)
    b = int(np.argmin(sm))
    tail = np.diff(sm[b:])
    if len(tail) < CLIMB_REPORTS or (tail > 0).mean() < CLIMB_SHARE or sm[b] <= 0:
        return None
    rise = float(np.median(v[-max(2, len(tail) // 3):]) - sm[b])
    if rise < CLIMB_RISE * sm[b] or rise < NOISE_Z * step_noise(v):
        return None
    ev = Evidence(f"loss fell to {fmt(float(sm[b]))} (rolling median of 3) at {s.step_kind} {fmt_step(s.steps[b])}, "
                  f"then rose at {int((tail > 0).sum())} of the {len(tail)} reports after it, to {fmt(float(v[-1]))}",
                  s.artifact, s.span_locator(b, len(s) - 1))
    return Finding(code="healthy", severity="info", confidence=WITHIN_NOISE, analyzer=NAME,
                   issue=f"No fault shown, but no steady fall either: over its last {len(tail)} reports the loss "
                         f"climbed back to {rise / sm[b]:.0%} above its lowest, not yet long or far enough to call a "
                         "divergence",
                   evidence=[ev],
                   fix="Watch the next reports: if the loss keeps rising, halve the learning rate from where it "
                       "turned; share the LR schedule and the validation loss to tell")


def _within_noise(s) -> Finding:
    """No fault shown, and no fall either: the loss moves within its own noise over these reports."""
    v = s.values
    held = (f"loss between {fmt(float(v.min()))} and {fmt(float(v.max()))} (median {fmt(float(np.median(v)))}) over "
            f"{s.step_kinds} {fmt_step(s.steps[0])}-{fmt_step(s.steps[-1])}: no fall clear of its noise")
    return Finding(code="healthy", severity="info", confidence=WITHIN_NOISE, analyzer=NAME,
                   issue="No fault shown, but no clear fall either: over these reports the loss moves within about its "
                         "own noise, so they cannot tell a run that learns from one that stalled",
                   evidence=[Evidence(held, s.artifact, s.span_locator(0, len(s) - 1))],
                   fix="Nothing to fix from these lines; if the run misbehaves, share the log from its start (the "
                       "curve that led here) with the LR schedule")


def _improving_metric(run: Run) -> Finding | None:
    """Healthy where a paste holds no loss but an accuracy or mAP that rises report after report."""
    for name in IMPROVING:
        s = run.metrics.get(name)
        if s is None or len(s) < HEALTHY_POINTS or not np.isfinite(s.values).all():
            continue
        v = s.values
        if v[-1] > v[0] * METRIC_ROSE and (np.diff(v) >= 0).mean() >= RISING_SHARE:
            rose = f"{name} rose from {fmt(float(v[0]))} to {fmt(float(v[-1]))}"
            return Finding(
                code="healthy", severity="info", confidence=0.7, analyzer=NAME,
                issue=f"The run looks healthy: {rose}, with no divergence, NaN, crash or "
                      "warning that points to a fault",
                evidence=[Evidence(f"{rose} over {s.step_kinds} "
                                   f"{fmt_step(s.steps[0])}-{fmt_step(s.steps[-1])}",
                                   s.artifact, s.span_locator(0, len(s) - 1))],
                fix="Nothing to fix; keep training")
    return None


def _steady_late_window(s) -> list[Finding]:
    """Healthy where the log is a late window of a long run (common.late_window: iterations 5786-5800 of a
    Megatron run) whose loss is finite and holds its level below ln(1000): where a long run has got to, which
    is no fault (the other analyzers found none). A loss held higher is a model at chance over a vocabulary
    (ln 50257 = 10.8), not one that learned."""
    v = s.values
    if not late_window(s) or len(v) < STEADY_POINTS or not np.isfinite(v).all() or float(v.min()) <= 0:
        return []
    k = max(1, len(v) // 3)
    first, last = float(np.median(v[:k])), float(np.median(v[-k:]))
    if last > first * (1 + STEADY_RISE) or float(np.std(v)) == 0.0 or float(np.median(v)) >= STEADY_MAX:
        return []
    held = (f"loss held at about {fmt(float(np.median(v)))} (between {fmt(float(v.min()))} and "
            f"{fmt(float(v.max()))}) over {s.step_kinds} {fmt_step(s.steps[0])}-{fmt_step(s.steps[-1])}")
    return [Finding(code="healthy", severity="info", confidence=0.7, analyzer=NAME,
                    issue="The run looks healthy: this late window of it holds its loss steady, with no "
                          "divergence, NaN, crash or warning that points to a fault",
                    evidence=[Evidence(held, s.artifact, s.span_locator(0, len(s) - 1))],
                    fix="Nothing to fix; if the loss should still be falling this late, share the log from the "
                        "start of the run (the curve that led here) and the LR schedule")]


def analyze(run: Run) -> list[Finding]:
    found = _analyze(run)
    stop = stopped_from_outside(run)
    if stop is not None and found:
        f = found[0]
        f.issue += "; it was then stopped from outside"
        f.evidence.append(Evidence(f"{clip(stop.text.strip(), 120)}: the launcher itself was sent the signal (a "
                                   "scheduler's time limit, a preemption, a kill, a closed terminal) and stopped "
                                   "the ranks; no rank failed", stop.artifact, stop.locator))
    nil = _accuracy_at_zero(run) if found else None
    if nil is not None:
        f = found[0]
        f.issue += (f"; {nil.name} is 0 at every report, which no learning model scores: the metric does not fit "
                    "the output")
        f.evidence.append(Evidence(f"{nil.name} is 0 at every one of {len(nil)} reports while the loss falls",
                                   nil.artifact, nil.span_locator(0, len(nil) - 1)))
        f.fix = ("Score the task with a metric that fits its output: binary_accuracy for one sigmoid unit (Keras reads "
                 "'acc' as categorical accuracy on some output shapes), no accuracy at all for a regression")
    return found


def _accuracy_at_zero(run: Run):
    """The validation accuracy, where it and the training accuracy are both exactly 0 at every one of HEALTHY_POINTS
    reports or more: beside a falling loss, Keras' `acc` computed on the wrong shape (StellarGraph's link prediction
    under TF 2.2), not a model that learns nothing. A training accuracy alone at 0 may be a sequence's exact match,
    which lags its loss by thousands of steps: no note there."""
    accs = [run.metrics.get("train_acc"), run.metrics.get("val_acc")]
    if all(a is not None and len(a) >= HEALTHY_POINTS and bool(np.all(a.values == 0)) for a in accs):
        return accs[1]
    return None


def _reward_rose(reward) -> list[Finding]:
    """An RL run is healthy where its reward rose (common.reward_rose): its loss, a value or policy loss, says
    nothing either way."""
    first, last = thirds(reward.values[np.isfinite(reward.values)])
    rose = f"{reward.name} rose from {fmt(first)} to {fmt(last)} (medians of the first and last thirds)"
    return [Finding(code="healthy", severity="info", confidence=0.8, analyzer=NAME,
                    issue=f"The run looks healthy: the {reward.name} rose, with no NaN, crash or warning that points "
                          "to a fault",
                    evidence=[Evidence(f"{rose} over {reward.step_kinds} {fmt_step(reward.steps[0])}-"
                                       f"{fmt_step(reward.steps[-1])}", reward.artifact,
                                       reward.span_locator(0, len(reward) - 1))],
                    fix="Nothing to fix; keep training")]


def _analyze(run: Run) -> list[Finding]:
    if rewarded(run) is not None:           # an RL run: its reward says, not its loss
        reward = reward_rose(run)
        return _reward_rose(reward) if reward is not None else []
    s = train_loss(run)
    if s is None:
        metric = _improving_metric(run)
        return adversarial.analyze(run) or ([metric] if metric else [])
    if len(s) < HEALTHY_POINTS or steady_swing(run, s) is not None:
        return []               # (a loss swinging by most of its level: the loss analyzer's reading)
    change = relative_change(s.values)
    if change <= LOSS_FELL:
        return _steady_late_window(s)
    if not _fell_past_noise(s.values):
        return _steady_late_window(s) or [_within_noise(s)]
    back = _climbed_back(s)
    if back is not None:
        return [back]
    fell = f"loss fell {change * 100:.0f}% {change_said(s.values)}"
    evidence = [Evidence(f"{fell} over {s.step_kinds} {fmt_step(s.steps[0])}-{fmt_step(s.steps[-1])}",
                         s.artifact, s.span_locator(0, len(s) - 1))]
    g = run.metrics.get("grad_norm")
    if g is not None and len(g):
        evidence.append(Evidence(f"grad_norm stayed between {fmt(float(g.values.min()))} and "
                                 f"{fmt(float(g.values.max()))}", g.artifact, g.span_locator(0, len(g) - 1)))
    return [Finding(code="healthy", severity="info", confidence=0.85, evidence=evidence, analyzer=NAME,
                    issue="The run looks healthy: the loss falls steadily, with no divergence, NaN, crash or "
                          "warning that points to a fault",
                    fix="Nothing to fix; keep training")]
