"""A GAN that trains well: both players' losses finite and neither winning outright in the second
half. A verdict of health, so `diagnose` consults it (through `healthy`) only when nothing worse
showed; it is not in `ANALYZERS`."""
from __future__ import annotations

import numpy as np

from analysis.metrics import Series, fmt
from analysis.model import Evidence, Finding
from analysis.names import gan_players
from analysis.run import Run

NAME = "adversarial"
MIN_POINTS = 20            # fewer reports than this say nothing about a balance
# In the second half, a discriminator loss with a median under this has won outright...
D_WINS_BELOW = 0.1
# ...and a generator loss with a median over this has lost outright.
G_LOSES_ABOVE = 5.0


def _player(run: Run, names: tuple[str, ...]) -> Series | None:
    return next((s for n in names if (s := run.metrics.get(n))), None)


def analyze(run: Run) -> list[Finding]:
    discriminator, generator = gan_players()
    d, g = _player(run, discriminator), _player(run, generator)
    if d is None or g is None or min(len(d), len(g)) < MIN_POINTS:
        return []
    if not (np.isfinite(d.values).all() and np.isfinite(g.values).all()):
        return []
    dl, gl = d.values[len(d) // 2:], g.values[len(g) // 2:]
    if float(np.median(dl)) < D_WINS_BELOW or float(np.median(gl)) > G_LOSES_ABOVE:
        return []
    evidence = [
        Evidence(f"discriminator loss stayed between {fmt(float(dl.min()))} and {fmt(float(dl.max()))} "
                 "over the second half", d.artifact, d.span_locator(len(d) // 2, len(d) - 1)),
        Evidence(f"generator loss stayed between {fmt(float(gl.min()))} and {fmt(float(gl.max()))}: "
                 "neither player wins outright", g.artifact, g.span_locator(len(g) // 2, len(g) - 1)),
    ]
    return [Finding(code="healthy", severity="info", confidence=0.8, evidence=evidence, analyzer=NAME,
                    issue="The GAN looks healthy: both losses stay finite and "
                          "balanced, and no sign of collapse",
                    fix="Nothing to fix; judge progress by sample quality")]
