"""The loss/grad-norm/LR figure with each problem's onset marked (matplotlib, headless).

A long series is drawn as its min/max envelope with the median through it (`BUCKETS` buckets, so a
million steps draw as fast as two thousand, and a spike or the first NaN still shows); a loss that
spans decades gets a log axis; where values turn NaN/Inf is marked; a series that never changes is
a note under the figure, not a panel.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.metrics import MetricTable, Series, fmt, fmt_step  # noqa: E402

_PANELS = (("loss", ("train_loss", "val_loss")), ("grad norm", ("grad_norm",)), ("learning rate", ("lr",)))
BUCKETS = 2000


def envelope(s: Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x, median, low, high) of the series in at most `BUCKETS` buckets (each point its own bucket
    when the series is short). Non-finite values are left out of the statistics."""
    n = len(s)
    b = max(1, -(-n // BUCKETS))
    m = -(-n // b)
    v = np.where(np.isfinite(s.values), s.values, np.nan)
    v = np.pad(v, (0, m * b - n), constant_values=np.nan).reshape(m, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)        # an all-NaN bucket is a gap
        return s.steps[::b], np.nanmedian(v, axis=1), np.nanmin(v, axis=1), np.nanmax(v, axis=1)


def _constant(series: list[Series]) -> str | None:
    """'lr 3.00e-04 throughout' when every series of a panel holds one value."""
    notes = []
    for s in series:
        finite = s.values[np.isfinite(s.values)]
        if not len(finite) or finite.min() != finite.max() or len(finite) < len(s):
            return None
        notes.append(f"{s.name} {fmt(float(finite[0]))} throughout")
    return "; ".join(notes)


def plot_title(diagnosis) -> str:
    """'run 42 — lr_too_high: Learning rate raised 40x …', redacted like every other output."""
    from bot.redact import clean
    top = diagnosis.root_causes[0] if diagnosis.root_causes else None
    cause = f"{top.code}: {top.issue}" if top else diagnosis.status.replace("_", " ")
    text = clean(f"run {diagnosis.run['id']} — {cause}")
    return text if len(text) <= 110 else text[:107] + "..."


def render_plot(metrics: MetricTable, root_causes: list, path: str | Path, *, title: str | None = None) -> Path | None:
    """Writes the PNG and returns its path, or None when the run has nothing to plot."""
    panels, notes = [], []
    for name, names in _PANELS:
        series = [s for n in names if (s := metrics.get(n)) is not None and len(s)]
        if not series:
            continue
        note = _constant(series) if name != "loss" else None
        if note:
            notes.append(note)
        else:
            panels.append((name, series))
    if not panels:
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 1.2 + 2.6 * len(panels)), sharex=True, squeeze=False)
    onsets = [c for c in root_causes if getattr(c, "onset_step", None) is not None and c.code != "healthy"
              and c.severity in ("critical", "high", "medium")]       # a note is no onset to point at
    for ax, (name, series) in zip(axes[:, 0], panels):
        for s in series:
            x, mid, lo, hi = envelope(s)
            line, = ax.plot(x, mid, label=s.name + (" (median, min-max band)" if len(x) < len(s) else ""), linewidth=1)
            if len(x) < len(s):
                ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.25, linewidth=0)
            bad = np.flatnonzero(~np.isfinite(s.values))
            if len(bad):
                at = s.steps[bad[0]]
                word = "NaN" if np.isnan(s.values[bad[0]]) else "Inf"
                ax.axvline(at, color="black", linestyle=":", linewidth=1)
                ax.annotate(f"{s.name} {word} from {s.step_kind} {fmt_step(at)}", (at, 0.05),
                            xycoords=("data", "axes fraction"), xytext=(-4, 0), textcoords="offset points",
                            ha="right", fontsize=8, bbox={"boxstyle": "round", "fc": "white", "ec": "0.6"})
        _scale(ax, series)
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
        x0, x1 = float(series[0].steps[0]), float(series[0].steps[-1])
        for k, c in enumerate(onsets):
            ax.axvline(c.onset_step, color="red", linestyle="--", linewidth=0.9)
            if ax is axes[0, 0]:      # the label on the side of the line with room for it
                right = x1 > x0 and (c.onset_step - x0) / (x1 - x0) > 0.6
                ax.annotate(f"{c.code} from {fmt_step(c.onset_step)}", (c.onset_step, 0.95 - 0.12 * k),
                            xycoords=("data", "axes fraction"), xytext=(-4 if right else 4, 0),
                            textcoords="offset points", va="top", ha="right" if right else "left", fontsize=8,
                            color="red", bbox={"boxstyle": "round", "fc": "white", "ec": "red", "alpha": 0.9})
        ax.legend(loc="upper right" if not onsets else "lower left", fontsize=8)
    axes[-1, 0].set_xlabel(panels[0][1][0].step_kind)
    if title:
        fig.suptitle(title, fontsize=10)
    if notes:
        fig.text(0.01, 0.005, "Constant: " + "; ".join(notes), fontsize=8, va="bottom")
    fig.tight_layout(rect=(0, 0.03 if notes else 0, 1, 1))
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _scale(ax, series: list[Series]) -> None:
    """A log axis for a quantity that spans two decades or more (symlog when it reaches zero)."""
    finite = np.concatenate([s.values[np.isfinite(s.values)] for s in series])
    if not len(finite):
        return
    lo, hi = float(finite.min()), float(finite.max())
    if lo > 0 and hi / lo > 100:
        ax.set_yscale("log")
    elif lo <= 0 < hi:
        positive = finite[finite > 0]
        if len(positive) and hi / float(np.percentile(positive, 5)) > 100:
            ax.set_yscale("symlog", linthresh=float(np.percentile(positive, 5)))
