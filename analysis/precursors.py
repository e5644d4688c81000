"""Precursors: what an engineer watching a live run flags before the post-mortem's evidence is
conclusive. Each rule is fed a run's points one step at a time, keeps O(1) state (a few numbers or
one fixed-size block), and says at most once per cause: "early: <cause> likely", as a Finding at
`EARLY_CONFIDENCE` (below the post-mortem's CONFIDENT) whose evidence names the step and value.

The rules, with their thresholds as the constants below:

- `config_lr_far_above_range` (pre-flight, at the first point): an LR set in the config (a schedule's
  stages included) at `PREFLIGHT_LR_FACTOR`x or more the top of its optimizer's usual range (not 2x:
  SGD at 0.2-0.4 with BatchNorm, a one-cycle peak at 2x, are sound recipes; a config alone must be
  far out to speak before any metric).
- `grad_norm_runaway`: the gradient norm rose at `RUNAWAY_RISES` consecutive points, by
  `RUNAWAY_GROWTH`x or more over them, to a new high `RUNAWAY_NEW_HIGH`x the largest before the rise:
  geometric growth, not one large batch.
- `huge_start`: the loss or the gradient norm is `LARGE_AT_START` or more at its first report and
  rose at each of the next `HUGE_START_RISES`: a blow-up from step 1 (sudden in the metrics, it
  leaves a few steps before the post-mortem is sure).
- `nonfinite_gradient`: the gradient norm is Inf/NaN at `NONFINITE_GRAD_STREAK` consecutive points
  while the loss is still finite (one such step is a loss scaler doing its job; a streak is not).
  Under a declared dynamic loss scaler (fp16 or an initial scale in the config, a GradScaler in the
  code), `SCALER_HALVINGS` in a row at the start: from a high initial scale, its first halvings skip
  that many; once a norm was finite, the streak is `NONFINITE_GRAD_STREAK` again.
- `loss_scale_collapse`: a mixed-precision loss scale fell to 1/`LOSS_SCALE_FALL` of its peak:
  the scaler keeps skipping overflowing steps instead of settling (a healthy one halves a few times
  at the start, then holds or grows).
- `loss_trend_up`: the loss's level (the median of the last `TREND_LEVEL` medians of blocks of
  `TREND_BLOCK` points), after it had fallen by `TREND_FELL` of its first value and by more than
  its noise allows (below), with a quarter of `TREND_SCATTER` jumps seen, sits more than
  `TREND_NOISE` times its noise (the median jump between consecutive block medians over the last
  `TREND_SCATTER` blocks) above its best (the lowest median of `TREND_BEST` block medians) for
  `TREND_RISING` blocks in a row, and has given back
  `TREND_GIVEN_BACK` of the progress made: a sustained climb, not a spike or a lucky batch.
- `lr_rising_loss_stalled`: the logged LR has risen to `CREEP_LR_RISE`x what it was when the loss's
  level was last at its best, without falling since, while the loss has made no new best for
  `CREEP_STALL_BLOCKS` blocks; and the rise is accelerating (the LR grew by more over the last
  `CREEP_STALL_BLOCKS` blocks than over as many before: a schedule multiplying it, not a linear
  warm-up, which adds the same amount every block).

A sudden fault (an LR switched at step N, a batch of zeros dividing by its std) shows nothing
before it happens; no rule here pretends otherwise.
"""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping

from analysis.analyzers.common import GIVEN_BACK, LR_RANGE, SCALER_HALVINGS, loss_scaler, optimizer_family
from analysis.analyzers.gradients import LARGE_AT_START
from analysis.metrics import fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.run import ConfigHit, Run

EARLY_CONFIDENCE = 0.6
EARLY_SEVERITY = "high"
PREFLIGHT_LR_FACTOR = 5.0
RUNAWAY_RISES = 5
RUNAWAY_GROWTH = 2.0
RUNAWAY_NEW_HIGH = 1.5
STEP_SHARE = 0.45          # of a runaway's rise (log scale), the most one step may carry...
DATA_JUMP = 3.0            # ...where the loss jumped this many times over at that same step
NONFINITE_GRAD_STREAK = 3
HUGE_START_RISES = 2
LOSS_SCALE_FALL = 2.0 ** SCALER_HALVINGS
TREND_BLOCK = 16
TREND_LEVEL = 3
TREND_BEST = 8
TREND_SCATTER = 32
TREND_FELL = 0.2
TREND_RISING = 2
TREND_NOISE = 6.0
TREND_GIVEN_BACK = GIVEN_BACK
CREEP_LR_RISE = 2.0
CREEP_STALL_BLOCKS = 4

LOSS, GRAD_NORM, LR = "train_loss", "grad_norm", "lr"
LOSS_SCALE_NAMES = ("loss_scale", "grad_scale", "scaler_scale", "amp_scale")
LR_KEY_ENDINGS = ("lr", "learning_rate", "base_lr", "max_lr", "peak_lr")
WARMUP_KEYS = ("warmup_steps", "warmup", "warmup_iters", "warmup_ratio", "num_warmup_steps", "warmup_epochs")
NAME = "precursors"


def _median(xs) -> float:
    """The median of a few numbers (sorting a short list beats numpy's per-call cost here)."""
    s = sorted(xs)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


def _early(code: str, issue: str, evidence: list[Evidence], fix: str, step: float | None) -> Finding:
    return Finding(code=code,
                   issue=f"Early warning: {issue}",
                   severity=EARLY_SEVERITY,
                   confidence=EARLY_CONFIDENCE,
                   evidence=evidence,
                   fix=fix,
                   analyzer=NAME,
                   onset_step=step)


def _config_lrs(run: Run):
    """(config, key, value) for every positive LR a config sets, list items (a schedule's stages) included."""
    def walk(cfg, key, value):
        if isinstance(value, list):
            for item in value:
                yield from walk(cfg, key, item)
        elif isinstance(value, dict):
            for k, v in value.items():
                yield from walk(cfg, f"{key}.{k}", v)
        elif (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
              and key.rsplit(".", 1)[-1].lower() in LR_KEY_ENDINGS):
            yield cfg, key, float(value)
    for cfg in run.configs:
        for key, value in cfg.values.items():
            yield from walk(cfg, key, value)


def config_lr_far_above_range(run: Run, step: float) -> Finding | None:
    fam = optimizer_family(run)
    if fam is None:
        return None
    (family, fam_ev), high = fam, LR_RANGE[fam[0]][1]
    hits = [h for h in _config_lrs(run) if h[2] >= PREFLIGHT_LR_FACTOR * high]
    if not hits:
        return None
    cfg, key, value = max(hits, key=lambda h: h[2])
    warm = run.config_value(*WARMUP_KEYS)
    ev = [ConfigHit(cfg, key, value).evidence(f"{key} = {fmt(value)} is {value / high:.0f}x the top of {family}'s "
                                              f"usual range (~{fmt(high)})"), fam_ev]
    return _early("lr_too_high", f"the config sets lr {fmt(value)} for {family}, far above its usual range"
                  + ("" if warm else ", with no warm-up") + f"; a divergence is likely (before {fmt_step(step)})",
                  ev, f"Lower the learning rate to ~{fmt(high / 2)} for {family}, "
                      "or warm it up over the first 1-5% of steps",
                  step)


class _GradRunaway:
    """A rise that is mostly one jump (more than `STEP_SHARE` of it, on a log scale) made at the step
    the loss itself jumped `DATA_JUMP`x at once is a step change of the data (a curriculum stage, a
    harder shard), which the loss and the post-mortem read, not a runaway: geometric growth, or the
    steady growth of gradients never cleared, compounds over its steps while the loss follows."""

    __slots__ = ("prev", "prev_loss", "rises", "start", "high_before", "high", "jump", "data_jump")

    def __init__(self) -> None:
        self.prev = math.nan
        self.rises = 0
        self.start = math.nan          # the value the current rise started from
        self.high_before = math.nan    # the largest value before the current rise
        self.high = -math.inf          # the largest value so far
        self.jump = 1.0                # the largest one-step factor within the current rise
        self.prev_loss = math.nan
        self.data_jump = False         # ...made at a step where the loss jumped DATA_JUMP x at once

    def feed(self, step: float, g: float, artifact: str, loss: float | None = None) -> Finding | None:
        prev_loss, self.prev_loss = self.prev_loss, loss if loss is not None else math.nan
        if not math.isfinite(g):
            self.rises = 0
            return None
        if g > self.prev:
            if self.rises == 0:
                self.start, self.high_before, self.jump = self.prev, max(self.high, self.prev), 1.0
            self.rises += 1
            ratio = g / self.prev if self.prev > 0 else math.inf
            if ratio > self.jump:
                self.jump = ratio
                self.data_jump = (loss is not None and math.isfinite(loss) and prev_loss > 0
                                  and loss >= DATA_JUMP * prev_loss)
        else:
            self.rises = 0
        self.prev, self.high = g, max(self.high, g)
        # a rise from a zero gradient norm (nothing flowing yet) has no growth factor to speak of
        if (self.rises >= RUNAWAY_RISES and self.start > 0 and g >= RUNAWAY_GROWTH * self.start
                and g >= RUNAWAY_NEW_HIGH * self.high_before
                and not (self.data_jump and math.log(self.jump) > STEP_SHARE * math.log(g / self.start))):
            ev = [Evidence(f"grad_norm rose {self.rises} points in a row, {fmt(self.start)} -> {fmt(g)} "
                           f"({g / self.start:.1f}x), a new high, at step {fmt_step(step)}",
                           artifact, f"step {fmt_step(step)}")]
            return _early("exploding_gradients", f"the gradient norm is growing geometrically (step {fmt_step(step)}, "
                          f"{fmt(g)}); it will overflow if this goes on", ev,
                          "Clip gradients (max_grad_norm 1.0) and check the input/target scale and the LR", step)
        return None


class _HugeStart:
    """A series whose first report is LARGE_AT_START or more (before any update a fresh model's loss
    is about ln K or 1, its gradient norm far smaller) and that rose at each of the next
    HUGE_START_RISES reports: the blow-up began at step 1 (a loss summed over the batch, raw targets
    or inputs, an init too wide). Only the first reports are kept."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: list[float] = []

    def feed(self, name: str, step: float, v: float, artifact: str) -> Finding | None:
        vs = self.values
        if len(vs) > HUGE_START_RISES:
            return None
        vs.append(v)
        if len(vs) <= HUGE_START_RISES or not all(map(math.isfinite, vs)) or vs[0] < LARGE_AT_START \
                or not all(b > a for a, b in zip(vs, vs[1:])):
            return None
        ev = [Evidence(f"{name} {fmt(vs[0])} at its first report, then {', '.join(fmt(x) for x in vs[1:])} "
                       f"(step {fmt_step(step)}): that large before any update, and rising",
                       artifact, f"step {fmt_step(step)}")]
        return _early("exploding_gradients", f"{name} started at {fmt(vs[0])} and rose at each report since "
                      f"(step {fmt_step(step)}); the blow-up began at the first step", ev,
                      "Clip gradients and check the loss's scale (a sum over the batch, an accumulation "
                      "not divided, raw targets or inputs) and the initialisation", step)


class _TrendUp:
    """The loss's level = the median of the last `TREND_LEVEL` block medians (blocks of `TREND_BLOCK`
    points); its noise = the median jump between consecutive block medians over the last
    `TREND_SCATTER` blocks; its best = the lowest median of `TREND_BEST` consecutive block medians.
    A lucky block or a lucky stretch sets neither the best nor the noise."""

    __slots__ = ("block", "n", "medians", "jumps", "first", "best", "above", "long", "low", "since_low", "blocks")

    def __init__(self) -> None:
        self.block = [0.0] * TREND_BLOCK
        self.n = 0
        self.medians: deque[float] = deque(maxlen=TREND_LEVEL)
        self.jumps: deque[float] = deque(maxlen=TREND_SCATTER)
        self.first = math.nan          # the first level
        self.best = math.inf           # the lowest long level (the median of the last TREND_BEST block medians)
        self.long: deque[float] = deque(maxlen=TREND_BEST)
        self.above = 0                 # consecutive levels above the best by more than the noise
        self.low = math.inf            # the lowest level so far (median of TREND_LEVEL block medians) ...
        self.since_low = 0             # ... and the blocks since it was reached
        self.blocks = 0                # blocks completed

    def feed(self, step: float, v: float, artifact: str) -> Finding | None:
        if not math.isfinite(v):
            return None
        self.block[self.n] = v
        self.n += 1
        if self.n < TREND_BLOCK:
            return None
        self.n = 0
        self.blocks += 1
        med = _median(self.block)
        if self.medians:
            self.jumps.append(abs(med - self.medians[-1]))
        self.medians.append(med)
        self.long.append(med)
        if len(self.long) == TREND_BEST:
            self.best = min(self.best, _median(self.long))
        if len(self.medians) < TREND_LEVEL:
            return None
        level = _median(self.medians)
        if math.isnan(self.first):
            self.first = level
        if level < self.low:
            self.low, self.since_low = level, 0
        else:
            self.since_low += 1
        if math.isinf(self.best):
            return None
        noise = _median(self.jumps)
        fell = self.first - self.best
        self.above = self.above + 1 if level - self.best > TREND_NOISE * noise else 0
        if (self.above >= TREND_RISING and len(self.jumps) >= TREND_SCATTER // 4
                and fell >= max(TREND_FELL * abs(self.first), TREND_NOISE * noise)
                and level - self.best >= TREND_GIVEN_BACK * fell):
            ev = [Evidence(f"loss level (median of the last {TREND_LEVEL * TREND_BLOCK} points) {fmt(level)} at step "
                           f"{fmt_step(step)}, above its best of {fmt(self.best)} by more than {TREND_NOISE:g}x its "
                           f"noise ({fmt(noise)}) for {self.above} blocks; it had fallen from {fmt(self.first)}",
                           artifact, f"step {fmt_step(step)}")]
            return _early("lr_too_high", f"the loss has been climbing since it bottomed out (step {fmt_step(step)}, "
                          f"level {fmt(level)}); a divergence is starting", ev,
                          "Lower the learning rate (or stop and resume from the best checkpoint with a lower one)",
                          step)
        return None


class _LrCreep:
    """The LR at each block boundary of the loss (the last 2 x CREEP_STALL_BLOCKS + 1 of them), the LR
    when the loss's level was last at its lowest, and whether it has fallen since."""

    __slots__ = ("at_low", "fell", "prev", "marks", "blocks")

    def __init__(self) -> None:
        self.at_low = math.nan
        self.fell = False
        self.prev = math.nan
        self.marks: deque[float] = deque(maxlen=2 * CREEP_STALL_BLOCKS + 1)
        self.blocks = 0

    def feed(self, step: float, lr: float, trend: _TrendUp, artifact: str) -> Finding | None:
        if not math.isfinite(lr) or lr <= 0:
            return None
        if lr < self.prev * 0.999:
            self.fell = True
        self.prev = lr
        if trend.blocks == self.blocks:          # judged once per block of the loss
            return None
        self.blocks = trend.blocks
        self.marks.append(lr)
        if trend.since_low == 0 and math.isfinite(trend.low):
            self.at_low, self.fell = lr, False
            return None
        if (self.fell or not math.isfinite(self.at_low) or trend.since_low < CREEP_STALL_BLOCKS
                or lr < CREEP_LR_RISE * self.at_low or len(self.marks) < 2 * CREEP_STALL_BLOCKS + 1):
            return None
        m = self.marks
        if m[-1] - m[CREEP_STALL_BLOCKS] <= m[CREEP_STALL_BLOCKS] - m[0]:     # not accelerating: a linear ramp
            return None
        ev = [Evidence(f"lr {fmt(lr)} at step {fmt_step(step)}, {lr / self.at_low:.1f}x the {fmt(self.at_low)} it was "
                       f"when the loss was last at its best ({fmt(trend.low)}), and still rising faster; no new best "
                       f"for {trend.since_low * TREND_BLOCK} points", artifact, f"step {fmt_step(step)}")]
        return _early("lr_too_high", f"the learning rate keeps rising ({lr / self.at_low:.1f}x since the loss stopped "
                      f"improving, step {fmt_step(step)}); a divergence is likely", ev,
                      "Check the LR schedule (an exponential or step factor above 1?) and hold the rate where the loss "
                      "was still improving", step)


class Precursors:
    """The rules above over one live run; `append` returns the early findings that fired at this step."""

    def __init__(self, context: Run, artifact: str) -> None:
        self.context, self.artifact = context, artifact
        self.fired: dict[str, Finding] = {}       # by code: at most one early finding per cause
        self._started = False
        self._grad = _GradRunaway()
        self._huge = {LOSS: _HugeStart(), GRAD_NORM: _HugeStart()}
        self._trend = _TrendUp()
        self._creep = _LrCreep()
        self._bad_grads = 0
        # under a dynamic loss scaler, the first norms, non-finite, are its skipped steps until it has
        # halved its scale as far as the loss-scale rule allows; once one is finite, a streak is a streak
        self._scaler = loss_scaler(context)
        self._finite_seen = False
        self._scale_peak = 0.0

    def append(self, step: float, values: Mapping[str, float]) -> list[Finding]:
        out: list[Finding | None] = []
        if not self._started:
            self._started = True
            out.append(config_lr_far_above_range(self.context, step))
        loss, g = values.get(LOSS), values.get(GRAD_NORM)
        for name, start in self._huge.items():
            if (v := values.get(name)) is not None:
                out.append(start.feed(name, step, v, self.artifact))
        if g is not None:
            out.append(self._grad.feed(step, g, self.artifact, loss))
            finite_loss = loss is not None and math.isfinite(loss)
            self._bad_grads = self._bad_grads + 1 if not math.isfinite(g) and finite_loss else 0
            self._finite_seen = self._finite_seen or math.isfinite(g)
            streak = SCALER_HALVINGS if self._scaler and not self._finite_seen else NONFINITE_GRAD_STREAK
            if self._bad_grads == streak and loss is not None:     # a streak needs a finite loss
                out.append(_early("numerical_instability",
                                  f"grad_norm is {fmt(g)} for {self._bad_grads} steps in a row while the loss is "
                                  f"finite ({fmt(loss)}); the weights are about to go non-finite",
                                  [Evidence(f"grad_norm {fmt(g)} at step {fmt_step(step)}, loss {fmt(loss)}",
                                            self.artifact, f"step {fmt_step(step)}")],
                                  "Skip non-finite steps (a loss scaler or the watch's guard) and find the "
                                  "overflowing op", step))
        if loss is not None:
            out.append(self._trend.feed(step, loss, self.artifact))
        lr = values.get(LR)
        if lr is not None:
            out.append(self._creep.feed(step, lr, self._trend, self.artifact))
        for name in LOSS_SCALE_NAMES:
            scale = values.get(name)
            if scale is None or not math.isfinite(scale):
                continue
            self._scale_peak = max(self._scale_peak, scale)
            if scale <= self._scale_peak / LOSS_SCALE_FALL:
                below = f"{self._scale_peak / scale:.0f}x below its peak" if scale > 0 else "underflowed to 0"
                out.append(_early("numerical_instability",
                                  f"the loss scale fell to {fmt(scale)} from {fmt(self._scale_peak)} "
                                  f"(step {fmt_step(step)}): the scaler keeps skipping overflowing steps",
                                  [Evidence(f"{name} {fmt(scale)} at step {fmt_step(step)}, {below}",
                                            self.artifact, f"step {fmt_step(step)}")],
                                  "Find the op that overflows in half precision (bf16, or keep it in fp32)", step))
        new = []
        for f in out:
            if f is not None and f.code not in self.fired:
                self.fired[f.code] = f
                new.append(f)
        return new
