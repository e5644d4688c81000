"""Long runs (100k+ steps) whose trouble appears late, or not at all. A tiny two-layer network in
NumPy with its gradients written out by hand keeps 100k steps to seconds on one core; metrics are
logged every 10 steps, so the files hold 10k+ records each, in grid.py's formats."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

from tests.scenarios import training
from tests.scenarios.grid import Family, Knobs, Variant, mean, require, write

V = Variant
LOG_EVERY = 10
DIM, HIDDEN, CLASSES = 16, 32, 4


class TwoLayerNet:
    """ReLU MLP, softmax cross-entropy, SGD with momentum; `half` rounds the hidden layer through
    float16 as a half-precision layer would."""

    def __init__(self, seed: int, half: bool = False) -> None:
        rng = np.random.default_rng(seed)
        self.p = {"fc1.weight": rng.normal(0, DIM ** -0.5, (DIM, HIDDEN)).astype(np.float32),
                  "fc1.bias": np.zeros(HIDDEN, np.float32),
                  "fc2.weight": rng.normal(0, HIDDEN ** -0.5, (HIDDEN, CLASSES)).astype(np.float32),
                  "fc2.bias": np.zeros(CLASSES, np.float32)}
        self.v = {k: np.zeros_like(w) for k, w in self.p.items()}
        self.half = half

    def step(self, x, y, lr: float, momentum: float = 0.9, clip: float | None = None) -> tuple[float, float]:
        p = self.p
        h = np.maximum(x @ p["fc1.weight"] + p["fc1.bias"], 0)
        if self.half:
            with np.errstate(over="ignore"):
                h = h.astype(np.float16).astype(np.float32)
        with np.errstate(invalid="ignore", over="ignore"):
            z = h @ p["fc2.weight"] + p["fc2.bias"]
            z = z - z.max(1, keepdims=True)
            e = np.exp(z)
            prob = e / e.sum(1, keepdims=True)
            n = len(y)
            loss = float(-np.log(prob[np.arange(n), y] + 1e-12).mean())
            g = prob
            g[np.arange(n), y] -= 1
            g /= n
            gh = g @ p["fc2.weight"].T
            gh[h <= 0] = 0
            grads = {"fc1.weight": x.T @ gh, "fc1.bias": gh.sum(0), "fc2.weight": h.T @ g, "fc2.bias": g.sum(0)}
            norm = math.sqrt(sum(float((gr * gr).sum()) for gr in grads.values()))
        scale = min(1.0, clip / (norm + 1e-6)) if clip else 1.0
        for k, gr in grads.items():
            self.v[k] = momentum * self.v[k] + gr * scale
            p[k] -= lr * self.v[k]
        return loss, norm


def run(v: Variant, lr_at, rows_at=None, half: bool = False, clip: float | None = None, noise: float = 0.1):
    """Trains for v.steps; `lr_at(step)` gives the rate, `rows_at(step, x, y)` may rewrite a batch.
    Returns (net, logged rows)."""
    x, y = (t.numpy() for t in training.blobs(8192, DIM, CLASSES, v.seed))
    rng = np.random.default_rng(v.seed)
    flip = rng.random(len(y)) < noise
    y = np.where(flip, rng.integers(0, CLASSES, len(y)), y)
    net = TwoLayerNet(v.seed, half)
    rows = []
    for step in range(1, v.steps + 1):
        idx = rng.integers(0, len(x), v.batch)
        xb, yb = x[idx], y[idx]
        if rows_at:
            xb, yb = rows_at(step, xb, yb, rng)
        lr = lr_at(step)
        loss, norm = net.step(xb, yb, lr, clip=clip)
        if step % LOG_EVERY == 0:
            rows.append({"step": step, "loss": loss, "lr": lr, "grad_norm": norm})
    return net, rows


def _save(dest: Path, v: Variant, net: TwoLayerNet, rows, lr: float, extra: dict, clip=None) -> None:
    k = Knobs(lr=lr, clip=clip, samples=8192, extra_config=extra)
    write(dest, v, k, rows, None, code=(TwoLayerNet, run))
    save_file({name: torch.from_numpy(w.T.copy() if w.ndim == 2 else w.copy()) for name, w in net.p.items()},
              dest / "model.safetensors")


def _losses(rows):
    return [r["loss"] for r in rows]


BASE = 0.02


def stage_raised_late(dest: Path, v: Variant) -> None:
    """A last stage at 90% of the run raises the rate 60-fold."""
    at = int(v.steps * 0.9) // LOG_EVERY * LOG_EVERY
    net, rows = run(v, lambda s: BASE * (60 if s > at else 1))
    ls = _losses(rows)
    i = at // LOG_EVERY
    before = mean(ls[i - 200: i])
    after = [x for x in ls[i:] if math.isfinite(x)]
    require(len(after) < len(ls[i:]) or mean(after[-200:]) > 1.5 * before, "the late raise did not show")
    _save(dest, v, net, rows, BASE, {"stages": [{"from_step": 0, "lr": BASE}, {"from_step": at, "lr": BASE * 60}]})


def _late_steps(v: Variant) -> list[int]:
    return [int(v.steps * f) // LOG_EVERY * LOG_EVERY for f in (0.86, 0.91, 0.96)]


def _spikes_recover(rows, at) -> None:
    ls = _losses(rows)
    for s in at:
        i = s // LOG_EVERY - 1
        before = sorted(ls[i - 21: i - 1])[10]
        require(ls[i] > 3 * before, f"no spike at step {s}")
        require(sorted(ls[i + 50: i + 101])[25] < 1.5 * before, f"no recovery after step {s}")


def other_source_late(dest: Path, v: Variant) -> None:
    """Late in the run, three batches come from a source in other units (x 25); clipping at 1.0."""
    at = _late_steps(v)
    net, rows = run(v, lambda s: BASE, lambda s, x, y, rng: ((rng.standard_normal(x.shape) * 25).astype(np.float32)
                                                               if s in at else x, y), clip=1.0)
    _spikes_recover(rows, at)
    _save(dest, v, net, rows, BASE, {}, clip=1.0)


def cosine_long(dest: Path, v: Variant) -> None:
    net, rows = run(v, lambda s: BASE * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * s / v.steps))))
    ls = _losses(rows)
    require(mean(ls[-500:]) < 0.8 * mean(ls[:20]), "did not learn")
    _save(dest, v, net, rows, BASE, {})


def _long(fmt: str, steps: int, seed: int, sched: str = "constant") -> Variant:
    return V("mlp", "momentum", sched, fmt=fmt, steps=steps, batch=16, seed=seed)


FAMILIES = [
    Family("long_stage_raised", stage_raised_late, "lr_too_high", "tuning",
           (_long("kv", 100_000, 501), _long("jsonl", 110_000, 502))),
    Family("long_other_source", other_source_late, "loss_spikes", "tuning", (_long("csv", 100_000, 503),)),
    Family("long_cosine", cosine_long, "healthy", "tuning", (_long("tb", 100_000, 504, "cosine"),)),
]
