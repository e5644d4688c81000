"""A contact sheet of the plot of every scenario run, to look at them as a person would.

    python bench/plots.py [--out /tmp/mltd-plots]     # writes one PNG per scenario and contact-sheet.png

Nothing is written into the repository.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis import diagnose  # noqa: E402
from bot.render.plot import plot_title, render_plot  # noqa: E402
from tests.scenarios import ALL, cache_all  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path("/tmp/mltd-plots"))
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, folder in sorted(cache_all().items()):
        diagnosis, run = diagnose(folder)
        png = render_plot(run.metrics, diagnosis.root_causes, args.out / f"{name}.png", title=plot_title(diagnosis))
        print(f"{name:28} {ALL[name][1]:22} {'plot' if png else 'nothing to plot'}")
        if png:
            written.append((name, png))
    cols = 5
    rows = math.ceil(len(written) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 5, rows * 3.6), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (name, png) in zip(axes.flat, written):
        ax.imshow(plt.imread(png))
        ax.set_title(name, fontsize=9)
    fig.tight_layout()
    sheet = args.out / "contact-sheet.png"
    fig.savefig(sheet, dpi=80)
    print(f"wrote {sheet}")


if __name__ == "__main__":
    main()
