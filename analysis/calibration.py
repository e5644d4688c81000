"""The top cause's confidence, made to mean what it says.

The rules give each cause a raw confidence from the strength of its evidence. How often a raw
level is right on a run of a shape the rules were never fitted to is measured by
bench/calibrate.py (first-sight runs: the rules as they were before some tuning families existed,
on those families; or out-of-suite probes: the current rules on tuning families' variants written
under seeds and formats no rule was tuned on) and stored as knots in analysis/data/calibration.toml;
`calibrated` maps a raw confidence through them, piecewise linearly up to 1. Below the lowest knot
no run was measured (the folders' causes start near 0.7; a pasted excerpt's go lower): a confidence
there is kept, only capped at the lowest knot's calibrated value so that the map stays monotone.

A map holds for the kind of input it was measured on. The probes are run folders; a thin paste (a
few lines of a log or a traceback: no config, no checkpoint, no curve of `SHORT_CURVE` points) is
another kind, on which the rules are right far less often, so it keeps its own knots (`[paste]`,
fitted on first-sight folder runs, the most cautious map measured) until pastes are measured.
"""
from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import numpy as np

from analysis.analyzers.common import SHORT_CURVE
from analysis.run import Run

DATA = Path(__file__).parent / "data" / "calibration.toml"


@cache
def _knots(paste: bool = False) -> list[tuple[float, float]]:
    doc = tomllib.loads(DATA.read_text()) if DATA.exists() else {}
    knots = doc.get("paste", {}).get("knots", []) if paste else doc.get("knots", [])
    return [(float(k[0]), float(k[1])) for k in knots]


def thin_paste(run: Run) -> bool:
    """A few pasted lines, not a run folder: no config, no checkpoint, no curve of SHORT_CURVE points."""
    return (not run.configs and not run.checkpoints
            and all(len(s) < SHORT_CURVE for n in run.metrics.names() if (s := run.metrics.get(n)) is not None))


def through(knots: list[tuple[float, float]], confidence: float) -> float:
    """A raw confidence mapped through (raw, calibrated) knots, to two decimals like every confidence."""
    raw = np.array([k[0] for k in knots] + [1.0])
    cal = np.array([k[1] for k in knots] + [1.0])
    x = min(max(confidence, 0.0), 1.0)
    if x < raw[0]:
        return round(min(x, float(cal[0])), 2)
    return round(float(np.interp(x, raw, cal)), 2)


def calibrated(confidence: float, paste: bool = False) -> float:
    """The measured rate of being right for a raw confidence (two decimals, like every confidence), on
    the kind of input measured: run folders, or thin pastes (`thin_paste`)."""
    return through(_knots(paste), confidence)
