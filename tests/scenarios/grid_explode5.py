"""Explosions made by the initialisation, seen from the loss alone: a residual stack with no
normalisation (grid_explode's mechanism) in runs that log no gradient norm (a Lightning CSV, a text
log, a Trainer's state), so that what says "the model was already exploding before any update"
without a gradient norm (a cross-entropy at the first report far above what any fresh classifier
gives, ln K) is fit on more than the families that log one.

Each checks at generation time, on the gradient norms it computes but does not log, that its fault
shows, whatever the seed. (A deep plain ReLU net at twice He's std blew up for 5 seeds of 9 under
momentum SGD: left out.)"""
from __future__ import annotations

import math
from pathlib import Path

import torch

from tests.scenarios import training
from tests.scenarios.grid import Family, Knobs, Variant, dataset, optimizer, write
from tests.scenarios.grid_explode import RESIDUAL, RESIDUAL_LR, ResidualStack, _fit
from tests.scenarios.grid_explode4 import _unlogged_blow_up

V = Variant


def residual_unlogged(dest: Path, v: Variant) -> None:
    """A deep residual stack with no normalisation, its blocks initialised a little wide: the
    stream doubles every few blocks, and the run blows up under a small constant SGD rate."""
    depth, gain = RESIDUAL[v.arch]
    training.seed_all(v.seed)
    x, y, loss_fn, classes = dataset(v, 1024)
    model = ResidualStack(x.shape[-1], v.width, classes or 1, depth)
    with torch.no_grad():
        for block in model.blocks:
            block.weight.normal_(0.0, gain / math.sqrt(block.weight[0].numel()))
    lr = RESIDUAL_LR[v.opt]
    rows = _fit(v, model, optimizer(v.opt, model.parameters(), lr), x, y, loss_fn, lr)
    k = Knobs(lr=lr, extra_config={"model": {"arch": f"residual_{v.arch}", "blocks": depth, "hidden": v.width,
                                             "norm": None}, "init": {"block_gain": gain}})
    write(dest, v.with_(depth=depth), k, _unlogged_blow_up(rows, "residual stack"), None,
          code=(ResidualStack, residual_unlogged, _fit))


FAMILIES = [
    Family("residual_unlogged", residual_unlogged, "exploding_gradients", "tuning", (
        V("mlp", "momentum", fmt="lightning", seed=9511), V("mlp", "momentum", fmt="pipe", seed=9512),
        V("mlp", "momentum", fmt="hf", seed=9513, width=48))),
]
