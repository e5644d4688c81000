"""Throughput, reported with its numbers: samples or tokens per second that collapse, data loading
that takes most of each step, and model FLOPs utilisation far below what accelerators give. These
are observations about speed, not root causes of a failed run (the taxonomy has no code for a run
that is merely slow), so they travel in the diagnosis's `performance` (serialised under `engine`), each located."""
from __future__ import annotations

import numpy as np

from analysis.metrics import fmt, fmt_step
from analysis.model import Evidence
from analysis.run import Run


def _window(s, lo: float, hi: float) -> np.ndarray:
    n = len(s)
    v = s.values[int(lo * n): max(int(hi * n), int(lo * n) + 1)]
    return v[np.isfinite(v)]


def observe(run: Run) -> list[Evidence]:
    out: list[Evidence] = []
    tp = run.metrics.get("throughput")
    if tp is not None and len(tp) >= 20:
        early, late = _window(tp, 0.1, 0.3), _window(tp, 0.8, 1.0)
        if len(early) and len(late) and np.median(late) < 0.5 * np.median(early):
            i = int(np.argmax(tp.values < 0.5 * np.median(early)))
            out.append(Evidence(f"throughput fell from {fmt(float(np.median(early)))} to "
                                f"{fmt(float(np.median(late)))} {tp.name} (median), below half from {tp.step_kind} "
                                f"{fmt_step(tp.steps[i])}", tp.artifact, tp.span_locator(i, len(tp) - 1)))
    data, step = run.metrics.get("data_time"), run.metrics.get("step_time")
    if data is not None and step is not None and len(data) >= 5 and len(step) >= 5:
        d, t = float(np.nanmedian(data.values)), float(np.nanmedian(step.values))
        if t > 0 and d / t >= 0.5:
            out.append(Evidence(f"data loading takes {d / t:.0%} of each step (median data_time {fmt(d)} of "
                                f"step_time {fmt(t)}): the input pipeline starves the model; raise num_workers, "
                                "prefetch, or preprocess offline", data.artifact, data.span_locator(0, len(data) - 1)))
    mfu = run.metrics.get("mfu")
    if mfu is not None and len(mfu) >= 5:
        m = float(np.nanmedian(mfu.values))
        pct = m * 100 if m <= 1 else m
        if 0 < pct < 20:
            out.append(Evidence(f"model FLOPs utilisation is {pct:.1f}% (median); well-tuned training reaches "
                                "35-60% on current accelerators: check the batch size, torch.compile, fused kernels "
                                "and data loading", mfu.artifact, mfu.span_locator(0, len(mfu) - 1)))
    return out
