"""The measuring families once in grid_system.py (see tests/scenarios/__init__.py): never read one by one,
never tuned on; bench/accuracy.py measures them."""
from __future__ import annotations

import traceback
import warnings
from pathlib import Path

import torch
from torch import nn

from tests.scenarios.grid import (BASE_LR, Family, Knobs, Variant, dataset, require, train,
                                  write)
from tests.scenarios.system_runs import resident_bytes
from tests.scenarios.grid_system import V, _loader, _ranks, _shows


def within_class_spread(dest: Path, v: Variant) -> None:
    """A regulariser on the spread of the logits within each class of the batch; batches of 6 often
    hold a class once, and torch.var over one row has no degrees of freedom."""
    def loss(logits, y):
        spread = sum(logits[y == c].var(0).mean() for c in y.unique())
        return nn.functional.cross_entropy(logits, y) + 0.05 * spread

    k = Knobs(loss=loss, extra_config={"loss": {"within_class_var_weight": 0.05}})
    vv = v.with_(batch=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, rows, _ = train(vv, k, dest)
    first = next(w for w in caught if "degrees of freedom" in str(w.message))
    tail = warnings.formatwarning(first.message, first.category, first.filename, first.lineno, "")
    write(dest, vv, k, rows, model, tail=tail)
    _shows(dest, "degrees of freedom is <= 0")
    require(any(r["loss"] != r["loss"] for r in rows), "no NaN loss")


def graph_kept_per_step(dest: Path, v: Variant) -> None:
    """Every step's loss is kept with its graph (a running list for a plot); the process grows
    until an allocation of the next batch's activations fails."""
    kept = []
    fail_at = v.steps - 10

    def rows(s, xb, yb):
        if s == fail_at:
            torch.empty(2 ** 21, 2 ** 21)      # the next allocation no longer fits
        return xb, yb

    def loss(out, y):
        value = base_loss(out, y)
        kept.append((value, resident_bytes()))
        return value

    _, _, base_loss, _ = dataset(v, 64)
    k = Knobs(loss=loss, rows=rows)
    tail = ""
    try:
        train(v, k, dest)
    except RuntimeError:
        tail = traceback.format_exc()
    rows_ = [{"step": i + 1, "loss": float(x.detach()), "lr": BASE_LR[v.opt], "rss_mb": round(rss / 2 ** 20, 2)}
             for i, (x, rss) in enumerate(kept)]
    write(dest, v, k, rows_, None, tail=tail)
    _shows(dest, "can't allocate memory")


def rank_disagrees(dest: Path, v: Variant) -> None:
    """The last rank raises in its data, or reduces a tensor of another shape."""
    _ranks(dest, "raise" if v.seed % 2 else "mismatch", 2 + (v.seed // 2) % 2, 8 + v.seed % 25)


def worker_input_error(dest: Path, v: Variant) -> None:
    _loader(dest, v, "open" if v.seed % 2 else "shape", 200 + 29 * (v.seed % 9), 1 + (v.seed // 2) % 2)


FAMILIES = [
    Family("within_class_spread", within_class_spread, "zero_variance", "measuring", (
        V("mlp", "adam", fmt="pipe", seed=305), V("cnn", "adamw", fmt="csv", seed=306),
        V("mlp", "momentum", "cosine", fmt="lightning", seed=307), V("mlp", "rmsprop", fmt="mlflow", seed=308))),
    Family("graph_kept", graph_kept_per_step, "out_of_memory", "measuring", (
        V("mlp", "adam", fmt="csv", seed=315), V("regression", "momentum", fmt="kv", seed=316),
        V("cnn", "adamw", fmt="lightning", seed=317), V("lm", "adam", fmt="mlflow", seed=318))),
    Family("rank_disagrees", rank_disagrees, "distributed_failure", "measuring",
           tuple(V("linear", "sgd", fmt="ranklogs", seed=seed) for seed in range(325, 329))),
    Family("worker_input_error", worker_input_error, "dataloader_failure", "measuring", (
        V("mlp", "adam", fmt="pipe", seed=335), V("mlp", "rmsprop", fmt="lightning", seed=336),
        V("mlp", "adamw", fmt="mlflow", seed=337), V("mlp", "momentum", fmt="tb", seed=338))),
]
