"""The top cause's confidence, made to mean what it says.

The rules give each cause a raw confidence from the strength of its evidence. How often a raw
level is right on a run of a shape the rules were never fitted to is measured by
bench/calibrate.py (first-sight runs: the rules as they were before some tuning families existed,
on those families; or out-of-suite probes: the current rules on tuning families' variants written
under seeds and formats no rule was tuned on) and stored as knots in analysis/data/calibration.toml;
`calibrated` maps a raw confidence through them, piecewise linearly up to 1. Below the lowest knot
no run was measured (the folders' causes start near 0.7; a pasted excerpt's go lower): a confidence
there is kept, only capped at the lowest knot's calibrated value so that the map stays monotone.
"""
from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data" / "calibration.toml"


@cache
def _knots() -> list[tuple[float, float]]:
    knots = tomllib.loads(DATA.read_text()).get("knots", []) if DATA.exists() else []
    return [(float(k[0]), float(k[1])) for k in knots]


def through(knots: list[tuple[float, float]], confidence: float) -> float:
    """A raw confidence mapped through (raw, calibrated) knots, to two decimals like every confidence."""
    raw = np.array([k[0] for k in knots] + [1.0])
    cal = np.array([k[1] for k in knots] + [1.0])
    x = min(max(confidence, 0.0), 1.0)
    if x < raw[0]:
        return round(min(x, float(cal[0])), 2)
    return round(float(np.interp(x, raw, cal)), 2)


def calibrated(confidence: float) -> float:
    """The measured rate of being right for a raw confidence (two decimals, like every confidence)."""
    return through(_knots(), confidence)
