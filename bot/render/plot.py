"""The loss/grad-norm/LR figure with each problem's onset marked (matplotlib, headless)."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.metrics import MetricTable  # noqa: E402

_PANELS = (("loss", ("train_loss", "val_loss")), ("grad norm", ("grad_norm",)), ("learning rate", ("lr",)))


def render_plot(metrics: MetricTable, root_causes: list, path: str | Path) -> Path | None:
    """Writes the PNG and returns its path, or None when the run has nothing to plot."""
    panels = [(title, [metrics.get(n) for n in names if metrics.get(n) is not None]) for title, names in _PANELS]
    panels = [(t, s) for t, s in panels if s]
    if not panels:
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.6 * len(panels)), sharex=True, squeeze=False)
    for ax, (title, series) in zip(axes[:, 0], panels):
        for s in series:
            ax.plot(s.steps, s.values, label=s.name, linewidth=1)
        finite = [v for s in series for v in s.values[np.isfinite(s.values)]]
        if title != "loss" and finite and min(finite) > 0 and max(finite) / min(finite) > 100:
            ax.set_yscale("log")
        ax.set_ylabel(title)
        ax.grid(alpha=0.3)
        for c in root_causes:
            if getattr(c, "onset_step", None) is not None and c.code != "healthy":
                ax.axvline(c.onset_step, color="red", linestyle="--", linewidth=0.9)
                if title == panels[0][0]:
                    ax.annotate(c.code, (c.onset_step, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                                va="top", ha="right", fontsize=8, color="red")
        ax.legend(loc="best", fontsize=8)
    axes[-1, 0].set_xlabel(panels[0][1][0].step_kind)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
