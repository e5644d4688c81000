"""The engine at real scale, in fast tests: the bounded rolling statistics against a naive
reference, memory that grows linearly with the run (not with its square), and exact locations that
survive the thinning of a long series. bench/scale.py measures the floors at 1M steps and 1 GB."""
import json
import subprocess
import sys

import numpy as np
import pytest

from analysis.metrics import MAX_POINTS, SeriesBuilder
from analysis.signals import EXACT_WIDTH, divergence, rolling_median


def naive_rolling_median(x, w):
    pad = w // 2
    xp = np.concatenate([np.full(pad, x[0]), x, np.full(w - 1 - pad, x[-1])])
    return np.array([np.median(xp[i: i + w]) for i in range(len(x))])


@pytest.mark.parametrize("n, w", [(7, 3), (50, 5), (200, 21), (300, 64), (64, 200)])
def test_narrow_windows_are_exact(n, w):
    x = np.random.default_rng(n).normal(size=n)
    assert np.allclose(rolling_median(x, w), naive_rolling_median(x, min(w, n)))


def test_wide_windows_stay_close_to_the_exact_median():
    rng = np.random.default_rng(1)
    x = np.linspace(3, 1, 20_000) + rng.normal(0, 0.1, 20_000)
    w = 2_000
    assert w > EXACT_WIDTH
    gap = np.abs(rolling_median(x, w) - naive_rolling_median(x, w))[w:-w]     # the edges are padded differently
    assert gap.max() < 0.05 and gap.mean() < 0.01     # within half the noise (0.1) everywhere, a tenth on average


def test_a_divergence_is_found_at_the_same_place_at_any_length():
    for n in (2_000, 200_000):
        t = np.arange(n, dtype=float)
        loss = 0.5 + 2.5 * np.exp(-t / (0.1 * n)) + np.random.default_rng(2).normal(0, 0.02, n)
        at = int(0.8 * n)
        loss[at:] += np.minimum(np.exp((t[at:] - at) / (0.01 * n)), 1e3) - 1
        d = divergence(loss)
        assert d is not None and abs(d.onset - at) < 0.02 * n


def _peak_rss_mb(tmp_path, n):
    run = tmp_path / f"run{n}"
    run.mkdir()
    rng = np.random.default_rng(5)
    loss = 0.5 + 2.5 * np.exp(-np.arange(n) / (0.2 * n)) + rng.normal(0, 0.01, n)
    with open(run / "metrics.csv", "w") as f:
        f.write("step,loss,lr,grad_norm\n")
        grad_norms = rng.uniform(0.9, 1.1, n)
        f.writelines(f"{s},{v:.5f},3.0e-04,{g:.4f}\n" for s, v, g in zip(range(1, n + 1), loss, grad_norms))
    probe = ("import resource,subprocess,sys;"
             "p=subprocess.run([sys.executable,'-m','handlers.cli','diagnose',sys.argv[1],'--format','json'],"
             "capture_output=True);assert p.returncode==0,p.stderr;"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, str(run)], capture_output=True, text=True, check=True)
    return int(out.stdout) / 1024


def test_memory_grows_with_the_run_not_its_square(tmp_path):
    small, big = _peak_rss_mb(tmp_path, 20_000), _peak_rss_mb(tmp_path, 200_000)
    # linear growth takes 200k points to well under 3x the 20k run (imports weigh in both); a window
    # that grows with the run costs the square: ~400 MB at 20k points, ~40 GB at 200k
    assert big < 3 * small and big < 400, (small, big)


def test_exact_locations_survive_thinning():
    """Past MAX_POINTS a series keeps one raw point of each pair: the first NaN and an LR jump keep
    the step and line of the raw data, whatever the stride."""
    n = 4 * MAX_POINTS + 123
    rng = np.random.default_rng(3)
    for nan_at, jump_at in [(n - 7_001, 300_001), (n - 2, 77_777), (200_003, 200_004)]:
        loss = rng.normal(1, 0.01, n)
        loss[nan_at:] = np.nan
        lr = np.full(n, 3e-4)
        lr[jump_at:] = 9e-3
        steps = np.arange(1, n + 1, dtype=float)
        lines = np.arange(10, n + 10)
        for values, at in ((loss, nan_at), (lr, jump_at)):
            b = SeriesBuilder("x", "train.log")
            for lo in range(0, n, 50_000):       # in chunks, as the readers feed it
                b.extend(steps[lo: lo + 50_000], values[lo: lo + 50_000], lines[lo: lo + 50_000])
            s = b.build()
            assert s.stride > 1 and len(s) <= 2 * MAX_POINTS
            first = int(np.argmax(~np.isfinite(s.values))) if values is loss else int(np.argmax(s.values > 1e-3))
            assert (s.steps[first], s.lines[first]) == (steps[at], lines[at]), json.dumps([at, float(s.steps[first])])
