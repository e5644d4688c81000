"""Shape detection on one metric series: onset of divergence, first non-finite value, isolated
spikes, geometric growth, flatness. Pure numpy; thresholds are arguments with documented defaults."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from analysis.metrics import fmt

EXACT_WIDTH = 64            # windows up to this wide are computed exactly
BLOCKS_PER_WINDOW = 32      # a wider window is computed over medians of blocks, 32 blocks a window
_CHUNK = 1 << 21            # window x points materialised at once (16 MB of float64)


def rolling_median(x: np.ndarray, window: int) -> np.ndarray:
    """The centred rolling median, in time and memory linear in len(x) whatever the window. A window
    wider than `EXACT_WIDTH` smooths at its own scale: the median of blocks of window/32 points,
    then the exact rolling median of those (32 blocks a window), spread back over the points. What
    the blocks lose is detail narrower than window/32, which a median that wide removes anyway."""
    if window <= 1 or len(x) < 3:
        return x.copy()
    w = min(window, len(x))
    if w <= EXACT_WIDTH:
        return _rolling_median_exact(x, w)
    b = w // BLOCKS_PER_WINDOW
    m = -(-len(x) // b)
    blocks = np.median(np.pad(x, (0, m * b - len(x)), mode="edge").reshape(m, b), axis=1)
    return np.repeat(_rolling_median_exact(blocks, max(1, min(BLOCKS_PER_WINDOW, m))), b)[: len(x)]


def _rolling_median_exact(x: np.ndarray, w: int) -> np.ndarray:
    if w <= 1:
        return x.copy()
    pad = w // 2
    view = np.lib.stride_tricks.sliding_window_view(np.pad(x, (pad, w - 1 - pad), mode="edge"), w)
    rows = max(1, _CHUNK // w)
    return np.concatenate([np.median(view[i: i + rows], axis=1) for i in range(0, len(view), rows)])


def first_nonfinite(values: np.ndarray) -> int | None:
    bad = np.flatnonzero(~np.isfinite(values))
    return int(bad[0]) if len(bad) else None


@dataclass
class Divergence:
    best: int          # index of the best (lowest smoothed) value before the rise
    onset: int         # first index where the rise is established
    peak: int          # highest value after the onset
    rise: float        # relative rise of the smoothed curve from best to peak
    undone: float      # share of the progress (start - best) that the rise took back
    level: float = 0.0  # the smoothed best value the rise is measured from


LOW_NOISE_POINTS = 9      # the low part's noise is read from this many points or more
DEEP_DESCENT = 5.0        # ...after a descent this many times the whole curve's noise


def wide_residuals(v: np.ndarray) -> np.ndarray:
    """How far each point sits from a wide rolling median: minibatch noise, not the trend (1.4826 x
    their median is the noise's robust scale)."""
    return np.abs(v - rolling_median(v, max(9, len(v) // 10)))


def step_noise(v: np.ndarray) -> float:
    """The report-to-report noise of a curve, robust to its trend: second differences leave a straight or
    gently bending trend near 0 and a white noise of scale s at sqrt(6) s (their median, so a warm restart's
    rare jumps do not count). 0 with fewer than 3 finite values."""
    v = v[np.isfinite(v)]
    return float(np.median(np.abs(np.diff(v, 2)))) / 0.6745 / np.sqrt(6) if len(v) >= 3 else 0.0


def divergence(values: np.ndarray, *, min_points: int = 12, min_rise: float = 0.15,
               sustain: int = 3, min_drop: float = 0.05) -> Divergence | None:
    """A loss that first falls (by `min_drop` of its start, and by three times its batch noise) and
    then rises by `min_rise` above its best smoothed value, staying up for `sustain` smoothed points.
    Values past the first non-finite one are ignored (that is the NaN analyzer's concern)."""
    end = first_nonfinite(values)
    v = values[:end] if end is not None else values
    if len(v) < min_points:
        return None
    sm = rolling_median(v, max(5, len(v) // 40))
    running_min = np.minimum.accumulate(sm)
    start = sm[: max(3, len(sm) // 20)].mean()
    scale = max(abs(start - running_min[-1]), 1e-12)
    # minibatch noise, measured against a wide median: a rise must clear three times it. After a descent
    # far deeper than that noise, also over the low part (from where the curve first came halfway
    # down), whichever is larger: the quiet steep descent would set the bar for the noisy level below
    resid = wide_residuals(v)
    noise = 1.4826 * float(np.median(resid))
    low = int(np.argmax(running_min <= (start + running_min[-1]) / 2))
    if len(v) - low >= LOW_NOISE_POINTS and start - running_min[-1] > DEEP_DESCENT * noise:
        noise = max(noise, 1.4826 * float(np.median(resid[low:])))
    above = sm > running_min + np.maximum(np.maximum(min_rise * np.abs(running_min), 0.5 * scale * min_rise), 3 * noise)
    held = np.flatnonzero(np.convolve(above, np.ones(sustain, dtype=int), mode="valid") == sustain)
    if not len(held):
        return None
    i = int(held[0])         # the first point from which the rise holds for `sustain` points
    best = int(np.argmin(sm[: i + 1]))
    if start - sm[best] < max(min_drop * abs(start), 3 * noise):
        # it never learned: not a divergence after a good start. A dip inside the batch noise is no
        # descent either (a loss pinned at chance and thrown around by a huge LR dips and rises by chance)
        return None
    # onset: the first point after the best where the curve leaves its floor for good
    floor = sm[best] + 0.25 * (sm[i] - sm[best])
    onset = best + int(np.argmax(sm[best: i + 1] > floor))
    peak = i + int(np.argmax(np.where(np.isfinite(v[i:]), v[i:], -np.inf)))
    if end is None and sm[-1] < sm[best] - 3 * noise:
        return None          # it came back under its best and ended there: a bump the run recovered from (a warm-up's)
    rise = float((sm[peak] - sm[best]) / max(abs(sm[best]), 1e-12))
    undone = float((sm[peak] - sm[best]) / max(start - sm[best], 1e-12))
    return Divergence(best, onset, peak, rise, undone, float(sm[best]))


ORDER_TRIALS = 1000         # random orderings an order check tries (a fixed seed: the same answer on every machine)
ORDER_POINTS = 200          # ...on curves up to this many points: a longer one's shape is no chance ordering
NOISE_RISE = 5.0            # a rise of 5x a curve's report-to-report noise (step_noise) or more is no chance ordering


def order_share(values: np.ndarray, shows: Callable[[np.ndarray], bool], rise: float, past: float = 1.0) -> float:
    """The share of random orderings of these same values that `shows` a shape too. A shape that many
    orderings of the same numbers show (a fall, then a rise, in 20 reports of a noisy minibatch loss) is
    their spread, not their order: batch noise could make it. 0.0 where the shape's `rise` stands NOISE_RISE
    times the curve's own report-to-report noise or more (a smooth curve, a staircase, repeated values: no
    reshuffle of them is the same curve), and for a curve longer than ORDER_POINTS. Stops once more than
    `past` of the orderings tried show it (the share of those tried, then)."""
    if len(values) > ORDER_POINTS or rise >= NOISE_RISE * step_noise(values):
        return 0.0
    rng = np.random.default_rng(0)
    hits = 0
    for tried in range(1, ORDER_TRIALS + 1):
        hits += bool(shows(rng.permutation(values)))
        if hits > past * ORDER_TRIALS:
            return hits / tried
    return hits / ORDER_TRIALS


def spikes(values: np.ndarray, *, z: float = 6.0, window: int = 21, recover: int = 5,
           min_ratio: float = 1.5) -> list[int]:
    """Indices of isolated spikes: a point more than `z` robust deviations and `min_ratio` times
    above the rolling median whose neighbourhood returns to the median within `recover` points.
    A spike must also rise by 5% of the starting level and undo a quarter of the progress made
    by then, so that the heavy-tailed noise of small batches is not a spike: a bad batch throws
    the loss back toward (or past) where training started. The first 5% of points (the steep
    early descent) are not searched."""
    finite = np.isfinite(values)
    if finite.sum() < window:
        return []
    v = np.where(finite, values, np.nan)
    v = np.where(np.isnan(v), np.nanmedian(v), v)
    med = rolling_median(v, window)
    resid = v - med
    mad = np.median(np.abs(resid)) * 1.4826 + 1e-12
    level = float(np.median(v[: max(3, len(v) // 10)]))
    big = ((resid > z * mad) & (v > min_ratio * np.abs(med)) & (resid > 0.05 * abs(level))
           & (resid > 0.25 * (level - med)))
    hits = np.flatnonzero(big)
    out: list[int] = []
    for i in hits:
        if i < max(3, len(v) // 20):
            continue
        # back down at a reported value: a NaN after it (filled with the median above) is no recovery
        after = np.where(finite[i + 1: i + 1 + recover], resid[i + 1: i + 1 + recover], np.inf)
        if len(after) and (after < 0.5 * resid[i]).any() and (not out or i - out[-1] > 1):
            out.append(int(i))
    return out


@dataclass
class Growth:
    start: int
    end: int
    factor: float        # end value / start value (smoothed)
    monotone: float      # fraction of smoothed steps that rise


def geometric_growth(values: np.ndarray, *, min_factor: float = 100.0, min_points: int = 8,
                     to_peak: bool = False) -> Growth | None:
    """Growth by `min_factor` or more, mostly monotone on a log scale, ending at the last finite
    value (or the series end): the signature of gradients exploding. With `to_peak`, ending at the
    smoothed peak instead: an explosion the run came back from (the weights it blew up shrank back,
    a schedule took the rate down) is the same growth up to where it turned."""
    end = first_nonfinite(values)
    v = values[:end] if end is not None else values
    v = v[np.isfinite(v) & (v > 0)]     # a norm printed as 0.000 is rounding, not a value
    if len(v) < min_points:
        return None
    lv = np.log10(v)
    sm = rolling_median(lv, max(3, len(v) // 30))
    hi = int(np.argmax(sm)) if to_peak else len(sm) - 1
    lo = int(np.argmin(sm[: hi + 1]))
    factor = float(10 ** (sm[hi] - sm[lo]))
    if factor < min_factor or hi - lo < min_points // 2:
        return None
    early = float(np.median(lv[: max(3, (hi if to_peak else len(lv)) // 5)]))
    if sm[hi] < early + 1.0:       # it must end well above where training started, not just recover
        return None
    seg = np.diff(sm[lo: hi + 1])
    monotone = float((seg >= 0).mean()) if len(seg) else 0.0
    if monotone < 0.6:
        return None
    # reported from where the curve leaves its floor (a tenth of the rise, on the log scale): on a
    # long flat stretch the lowest point is anywhere in the noise, far before the growth
    start = lo + int(np.argmax(sm[lo: hi + 1] > sm[lo] + 0.1 * (sm[hi] - sm[lo]))) - 1
    start = max(lo, start)
    return Growth(start, hi, float(10 ** (sm[hi] - sm[start])), monotone)


def relative_change(values: np.ndarray) -> float:
    """(first tenth mean - last tenth mean) / |first tenth mean|: how much a loss fell."""
    v = values[np.isfinite(values)]
    if len(v) < 4:
        return 0.0
    k = max(1, len(v) // 10)
    a, b = v[:k].mean(), v[-k:].mean()
    return float((a - b) / max(abs(a), 1e-12))


SWING_POINTS, SWING_SHARE, SWING_OVER_FALL, SWING_BACK, SWING_HELD = 40, 0.6, 3.0, 3.0, 0.5


def swings(values: np.ndarray) -> tuple[float, float] | None:
    """(low, high) of a loss that swings up and down by most of its own level and does not settle: over the later
    half of SWING_POINTS reports or more, a rolling median of 5 (which evens out one batch's noise, not a swing
    held for several reports) spans SWING_SHARE of the median or more, and SWING_OVER_FALL times what the loss fell
    from its first tenth to its last, and travels SWING_BACK times that span up and down (a fall or a jump that
    falls again travels it once), each report near the one before (a lag-1 autocorrelation of SWING_HELD or more: a
    swing held over reports, not small batches' noise, which a median of 5 evens out only in part). None for a
    curve that falls through its noise, however noisy."""
    v = values[np.isfinite(values)]
    if len(v) < SWING_POINTS:
        return None
    sm = rolling_median(v, 5)[len(v) // 2:]
    low, high, level = float(sm.min()), float(sm.max()), float(np.median(v))
    k = max(1, len(v) // 10)
    fell = abs(float(v[:k].mean() - v[-k:].mean()))
    if level <= 0 or high - low < SWING_SHARE * level or high - low < SWING_OVER_FALL * fell \
            or float(np.abs(np.diff(sm)).sum()) < SWING_BACK * (high - low):
        return None
    half = v[len(v) // 2:] - float(np.mean(v[len(v) // 2:]))
    if float(np.dot(half[1:], half[:-1])) < SWING_HELD * float(np.dot(half, half)):
        return None
    return low, high


def change_said(values: np.ndarray) -> str:
    """relative_change's ends, said so that the percentage beside them follows from them: the first and last
    values where a tenth is one report, else the means of the first and last tenths."""
    v = values[np.isfinite(values)]
    k = max(1, len(v) // 10)
    if k == 1 or len(v) < 4:
        return f"from {fmt(float(v[0]))} to {fmt(float(v[-1]))}" if len(v) else ""
    return (f"from {fmt(float(v[:k].mean()))} to {fmt(float(v[-k:].mean()))} (the means of the first and last "
            f"{k} reports)")


def rank_trend(values: np.ndarray) -> float:
    """Spearman's rank correlation of the finite values with their order: -1 where each is below the one
    before, 0 for no trend (or fewer than 3 values, or all equal)."""
    v = values[np.isfinite(values)]
    if len(v) < 3:
        return 0.0
    r = np.argsort(np.argsort(v, kind="stable"), kind="stable").astype(float)
    return float(np.corrcoef(r, np.arange(len(v), dtype=float))[0, 1]) if r.std() > 0 else 0.0
