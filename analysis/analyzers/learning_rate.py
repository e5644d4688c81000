"""The learning rate: a jump that precedes a divergence, a missing warm-up, lr = 0, an lr too low
to move the loss.

Thresholds: jump = the LR multiplied by 2x or more between consecutive logged values outside a
warm-up ramp, with the loss diverging or turning non-finite within the following 25% of the run;
too low = under 1e-6 with the loss moving less than 5%.
"""
from __future__ import annotations

import re

import numpy as np

from analysis.analyzers.common import LR_RANGE, index_at_or_after, optimizer_family, train_loss
from analysis.metrics import fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.patches import format_value, replace_in_config
from analysis.run import Run
from analysis.signals import divergence, first_nonfinite, relative_change

NAME = "learning_rate"
LR_KEYS = ("lr", "learning_rate", "base_lr", "max_lr", "peak_lr", "lr_max")
FAR_ABOVE = 3.0       # an LR this many times its optimizer's upper bound is the cause of what blows up
NOISE_RISE = 1.5      # a loss under 1.5x its start has not diverged, whatever its noise
WARMUP_KEYS = ("warmup_steps", "warmup", "warmup_iters", "warmup_ratio", "num_warmup_steps", "warmup_epochs")


def _onset(run: Run) -> tuple[float | None, str]:
    """Step where the loss went wrong (divergence onset or first non-finite) and how."""
    s = train_loss(run)
    if s is None:
        return None, ""
    bad = first_nonfinite(s.values)
    d = divergence(s.values)
    candidates = []
    if d is not None:
        candidates.append((float(s.steps[d.onset]), "diverged"))
    if bad is not None:
        candidates.append((float(s.steps[bad]), "became non-finite"))
    return min(candidates) if candidates else (None, "")


def _lasting(values: np.ndarray, best: float) -> bool:
    """A rise the run kept: the loss over its last tenth stays above the best before the rise (or
    turns non-finite). An early bump the run later undid entirely did no lasting harm, so no
    missing warm-up is read from it."""
    tail = values[-max(3, len(values) // 10):]
    return not np.isfinite(tail).all() or float(np.median(tail)) > best


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


def _lr_value(run: Run, lr) -> tuple[float, Evidence] | None:
    """The run's peak LR: from the logged series, else from the config."""
    if lr is not None and len(lr) and np.isfinite(lr.values).any():
        i = int(np.nanargmax(lr.values))
        return float(lr.values[i]), Evidence(f"peak lr {fmt(float(lr.values[i]))}", lr.artifact, lr.locator(i))
    hit = run.config_value(*LR_KEYS)
    if hit and isinstance(hit[2], (int, float)) and not isinstance(hit[2], bool):
        cfg, key, value = hit
        return float(value), Evidence(f"{key} = {value}", cfg.artifact, f"line {cfg.lines.get(key, 1)}")
    return None


def _noise_only(values: np.ndarray) -> bool:
    """A "divergence" an LR below its optimizer's range cannot have caused: the loss stays finite
    and within NOISE_RISE of where it started (batch noise around a model that barely moves)."""
    start = float(np.median(values[: max(3, len(values) // 10)]))
    return bool(np.isfinite(values).all() and values.max() <= NOISE_RISE * start)


def _out_of_range(run: Run, lr, onset: float | None, how: str) -> list[Finding]:
    """An LR outside the useful range of the run's optimizer family, with the loss showing it."""
    fam = optimizer_family(run)
    peak = _lr_value(run, lr)
    loss = train_loss(run)
    if fam is None or peak is None or loss is None or peak[0] <= 0:
        return []
    (family, fam_ev), (value, lr_ev) = fam, peak
    low, high = LR_RANGE[family]
    moved = relative_change(loss.values)
    loss_ev = Evidence(f"loss moved {moved * 100:.1f}% over the run ({fmt(float(loss.values[0]))} -> "
                       f"{fmt(float(loss.values[-1]))})", loss.artifact, loss.span_locator(0, len(loss) - 1))
    if value < low and abs(moved) < 0.1 and (onset is None or _noise_only(loss.values)):
        patch, cfg_ev, _ = _config_lr_patch(run, value, min(value * 30, low * 10))
        return [Finding("lr_too_low", f"Learning rate {fmt(value)} is below the useful range for {family} (from "
                        f"~{fmt(low)}); the loss moved only {abs(moved) * 100:.1f}%", "high", 0.8,
                        [lr_ev, fam_ev, loss_ev] + cfg_ev,
                        fix=f"Raise the learning rate to ~{fmt(min(value * 30, low * 10))} for {family} (a short LR "
                            "range test finds the edge)", expected_impact="the loss falls within a few hundred steps",
                        patch=patch, analyzer=NAME, quick_fix=f"Raise the LR to {fmt(min(value * 30, low * 10))}")]
    if value > high and onset is not None:
        patch, cfg_ev, _ = _config_lr_patch(run, value, high / 2)
        warm = run.config_value(*WARMUP_KEYS)
        return [Finding("lr_too_high", f"Learning rate {fmt(value)} is above the usual range for {family} (up to "
                        f"~{fmt(high)})" + ("" if warm else " with no warm-up") + f"; the loss {how} at "
                        f"{loss.step_kind} {fmt_step(onset)}", "critical", 0.8, [lr_ev, fam_ev] + cfg_ev,
                        fix=f"Lower the learning rate to ~{fmt(high / 2)} for {family} and warm it up over the first "
                            "1-5% of steps", expected_impact="the loss keeps falling past the onset", patch=patch,
                        analyzer=NAME, onset_step=onset, quick_fix=f"Lower the LR to {fmt(high / 2)} with warm-up",
                        # an LR this far out explains gradients that blow up and the NaN they end in
                        rules_out=("exploding_gradients", "numerical_instability") if value >= FAR_ABOVE * high
                        else ())]
    return []


def analyze(run: Run) -> list[Finding]:
    lr = run.metrics.get("lr")
    out: list[Finding] = []
    onset, how = _onset(run)
    loss = train_loss(run)
    if lr is not None and len(lr) >= 2:
        v = lr.values
        finite = np.isfinite(v)
        if finite.all() and np.all(v == 0):
            ev = [Evidence(f"lr = 0 over {len(v)} values", lr.artifact, lr.span_locator(0, len(lr) - 1))]
            set_to = run.config_value(*LR_KEYS)
            if set_to and isinstance(set_to[2], (int, float)) and set_to[2] > 0:
                cfg, key, value = set_to
                ev.append(Evidence(f"{key} = {value} in the config: the schedule multiplies it to 0", cfg.artifact,
                                   f"line {cfg.lines.get(key, 1)}"))
                warm = run.config_value(*WARMUP_KEYS)
                if warm:
                    ev.append(Evidence(f"{warm[1]} = {warm[2]}: a warm-up factor such as step // {warm[2]} (integer "
                                       f"division) stays 0 for {warm[2]} steps", warm[0].artifact,
                                       f"line {warm[0].lines.get(warm[1], 1)}"))
            return [Finding("no_parameter_updates", "Learning rate is 0 at every logged step", "critical", 0.9, ev,
                            fix="Set a non-zero learning rate "
                                "(check the scheduler's first value and any lr multiplier)",
                            analyzer=NAME, quick_fix="Set lr > 0")]
        ratio = np.ones(len(v))
        ratio[1:] = v[1:] / np.maximum(v[:-1], 1e-30)
        ramp_end = int(np.argmax(v)) if v[0] < 0.2 * np.nanmax(v) else 0
        # a warm-up ramp rises in small steps from near zero; a jump is a large multiplicative step
        jumps = [i for i in range(1, len(v)) if ratio[i] >= 2.0
                 and not (i <= ramp_end and v[i - 1] < 0.2 * np.nanmax(v) and ratio[i] < 4)]
        if jumps and onset is not None:
            span = float(lr.steps[-1] - lr.steps[0]) or 1.0
            related = [i for i in jumps if lr.steps[i] <= onset + 0.02 * span and onset - lr.steps[i] <= 0.25 * span]
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
                        peak = j + int(np.argmax(np.where(np.isfinite(loss.values[j:]), loss.values[j:], np.inf)))
                        ev.append(Evidence(f"loss {how} from {loss.step_kind} {fmt_step(loss.steps[j])}, "
                                           f"{fmt_step(loss.steps[j] - lr.steps[i])} steps after the jump: "
                                           f"{fmt(float(loss.values[j]))} -> {fmt(float(loss.values[peak]))} at "
                                           f"{loss.step_kind} {fmt_step(loss.steps[peak])}", loss.artifact,
                                           loss.span_locator(j, peak)))
                        k = max(0, j - 1)
                        # strictly before: the jump's own line is after
                        while k > 0 and loss.steps[k] >= lr.steps[i]:
                            k -= 1
                        ev.append(Evidence(f"loss was {fmt(float(loss.values[k]))} before the jump",
                                           loss.artifact, loss.locator(k)))
                fix = (f"Lower the learning rate after {lr.step_kind} {fmt_step(lr.steps[i])} from {fmt(after)} to "
                       f"{fmt(min(after, 3 * before))} (at most ~3x the previous phase), or ramp it over a few "
                       "hundred steps instead of switching at once")
                out.append(Finding("lr_too_high", f"Learning rate raised {ratio[i]:.0f}x to {fmt(after)} at "
                                   f"{lr.step_kind} {fmt_step(lr.steps[i])}; the loss {how} right after",
                                   "critical", 0.92, ev + cfg_ev,
                                   fix=fix, expected_impact="the loss keeps falling through the transition",
                                   patch=patch, analyzer=NAME, onset_step=float(lr.steps[i]),
                                   quick_fix=f"Cap the LR after the switch at {fmt(min(after, 3 * before))}"))
                return out
        if onset is not None and ramp_end == 0 and run.config_value(*WARMUP_KEYS) is None and loss is not None:
            first = float(loss.steps[0])
            last = float(loss.steps[-1])
            early = onset - first <= 0.1 * max(last - first, 1.0)
            learned_first = np.isfinite(loss.values[:3]).all() and onset > first
            pre_onset = loss.values[: index_at_or_after(loss, onset) or 1]
            kept = _lasting(loss.values, float(np.nanmin(pre_onset)) if np.isfinite(pre_onset).any() else np.inf)
            if early and learned_first and kept and float(v[0]) >= 1e-3:
                out.append(Finding("lr_too_high", f"Loss {how} at {loss.step_kind} {fmt_step(onset)}, early, with the "
                                   f"full learning rate {fmt(float(v[0]))} from the first step (no warm-up)",
                                   "high", 0.7,
                                   [Evidence(f"lr {fmt(float(v[0]))} at the first logged step",
                                             lr.artifact, lr.locator(0))],
                                   fix="Warm the learning rate up linearly over the first 1-5% of steps", analyzer=NAME,
                                   onset_step=onset, quick_fix="Add LR warm-up"))
    return out + _out_of_range(run, lr, onset, how)
