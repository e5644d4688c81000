"""Canonical metric names (`train/loss`, `loss`, `training_loss` -> `train_loss`), from a data file."""
from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, str], list[tuple[re.Pattern[str], str]]]:
    data = tomllib.loads(resources.files("analysis").joinpath("data/metric_names.toml").read_text())
    aliases = {raw: canon for canon, raws in data["aliases"].items() for raw in raws}
    rules = [(re.compile(pattern), template) for pattern, template in data["rules"]["ordered"]]
    return aliases, rules


def normalise(raw: str) -> str:
    # a possessive names the set: LightGBM's `valid_0's auc` is `valid_0_auc`, `training's l2` is `training_l2`
    return raw.strip().strip("'\"").strip().lower().replace("'s ", " ").replace("-", "_").replace(" ", "_")


@lru_cache(maxsize=4096)
def canonical(raw: str) -> str:
    """The canonical name of a raw metric name; unknown names keep their normalised form."""
    name = normalise(raw)
    aliases, rules = _table()
    if name in aliases:
        return aliases[name]
    for pattern, template in rules:
        m = pattern.match(name)
        if m:
            out = template.replace("{1}", m.group(1)) if m.groups() else template
            return aliases.get(out, out)
    return name


STEP_COLUMNS = ("step", "global_step", "_step", "iter", "iteration", "trainer/global_step", "it", "steps",
                "num_updates", "current_steps",      # (LLaMA-Factory's trainer_log.jsonl: `"current_steps": 3200`)
                "time/total_timesteps")              # (Stable-Baselines3's progress.csv: environment steps)
# In a line of text `Steps: 3` is a count of steps (Time-Series-Library's `Epoch: 5, Steps: 3`), not a position.
TEXT_STEP_KEYS = tuple(k for k in STEP_COLUMNS if k != "steps")

@lru_cache(maxsize=1)
def sections() -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """Words that open a section of a line (`valid` -> `val`), and per section what a training
    name becomes in it (`train_loss` -> `val_loss`; a name without an entry is none there)."""
    data = tomllib.loads(resources.files("analysis").joinpath("data/metric_names.toml").read_text())["sections"]
    names = data.pop("names")
    return {w: section for section, words in data.items() for w in words}, names


@lru_cache(maxsize=1)
def table_columns() -> dict[str, str]:
    """Names that are a metric only as a column of a printed table (YOLO's `total`, `obj`)."""
    data = tomllib.loads(resources.files("analysis").joinpath("data/metric_names.toml").read_text())
    return {raw: canon for canon, raws in data["table_columns"].items() for raw in raws}


@lru_cache(maxsize=1)
def known_names() -> frozenset[str]:
    """The canonical names the alias table defines."""
    return frozenset(_table()[0].values())


@lru_cache(maxsize=1)
def gan_players() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names a GAN's discriminator loss and generator loss go by, each in the order to try."""
    data = tomllib.loads(resources.files("analysis").joinpath("data/metric_names.toml").read_text())["gan_players"]
    return tuple(data["discriminator"]), tuple(data["generator"])
