"""A sweep of the LR faults over combinations their families have not been tried on: the TUNING
generators of lr_too_low and lr_too_high (never a measuring one), each run on random architectures,
optimizers, schedules, formats and seeds, some with the config removed (the rate only in the log)
or the rate removed from the log (only in the config), each diagnosed by `mltd diagnose`.

    python bench/sweep_lr.py OUT [--per 10] [--seed 15] [--jobs 2]

Prints one line per run (the generator's check can refuse a variant whose fault does not show:
"skip") and, per generator, the misses: top-1 wrong, and whether the right code is listed at all.
A miss worth keeping becomes a `V(...)` of its tuning family."""
from __future__ import annotations

import argparse
import csv
import json
import random
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARCHS = ("mlp", "cnn", "rnn", "lstm", "lm", "regression")
OPTS = ("sgd", "momentum", "adam", "adamw", "rmsprop")
SCHEDS = ("constant", "step", "cosine", "warmup")
LOG_LR_EDITABLE = ("kv", "pipe", "nanogpt", "colon", "jsonl", "csv")
CONFIGS = ("config.yaml", "config.json", "hparams.yaml")


def below(factor: float):
    """The optimizer's usual rate divided by `factor`, kept only where the loss did not learn."""
    from tests.scenarios import grid

    def run(dest: Path, v) -> None:
        k = grid.Knobs(lr=grid.BASE_LR[v.opt] / factor, checkpoints=(v.steps // 2, v.steps))
        model, rows, _ = grid.train(v, k, dest)
        ls = grid.losses(rows)
        n = len(ls) // 10
        grid.require(grid.mean(ls[-n:]) > 0.75 * grid.mean(ls[:n]), "it learned")
        grid.write(dest, v, k, rows, model)
    return run


def generators() -> dict:
    """name -> (writer, code, architectures, optimizers): tuning generators only."""
    from tests.scenarios import grid_differential as d
    from tests.scenarios import grid_explode as e
    from tests.scenarios import grid_optim as o
    from tests.scenarios import grid_stall as s
    return {
        "lr_tiny": (o.lr_ten_thousand_times_small, "lr_too_low", ARCHS, OPTS),
        "lr_below_range": (d.lr_below_its_range, "lr_too_low", ARCHS, OPTS),
        "lr_hundredfold_low": (s.lr_hundreds_below_range, "lr_too_low", ARCHS, OPTS),
        "lr_short_for_steps": (s.lr_short_for_its_steps, "lr_too_low", ARCHS, ("adam", "adamw", "rmsprop")),
        "decay_per_batch": (s.decay_stepped_per_batch, "lr_too_low", ARCHS, OPTS),
        "below_30": (below(30), "lr_too_low", ARCHS, OPTS),
        "below_1000": (below(1000), "lr_too_low", ARCHS, OPTS),
        "lr_raised_midway": (o.lr_raised_midway, "lr_too_high", ARCHS, OPTS),
        "lr_above_range": (d.lr_above_its_range, "lr_too_high", ARCHS, OPTS),
        "lr_pins_chance": (s.lr_pins_at_chance, "lr_too_high", ("mlp", "cnn", "lstm", "rnn", "lm"),
                           ("momentum", "adamw", "rmsprop")),
        "sgd_rate_adaptive": (e.sgd_rate_from_the_start, "lr_too_high", ("mlp", "cnn", "lstm", "lm"),
                              ("adam", "adamw", "rmsprop", "momentum")),
        "warmup_uncapped": (e.warmup_never_capped, "lr_too_high", ("cnn", "regression", "lstm"), OPTS),
    }


def strip_config(run: Path) -> None:
    for p in list(run.rglob("*")):
        if p.is_file() and p.name in CONFIGS:
            p.unlink()
        elif p.is_dir() and p.name == "params":       # MLflow's
            shutil.rmtree(p)


def strip_logged_lr(run: Path) -> None:
    for p in run.rglob("*"):
        if p.name == "train.log":
            p.write_text(re.sub(r"[ |,]*\blr\b\s*[=:]?\s*[-+0-9.eE]+", "", p.read_text()))
        elif p.name == "metrics.jsonl":
            rows = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
            p.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "lr"}) + "\n" for r in rows))
        elif p.name == "metrics.csv":
            with p.open() as f:
                rows = list(csv.DictReader(f))
            keys = [k for k in (rows[0] if rows else {}) if k != "lr"]
            with p.open("w", newline="") as f:
                w = csv.DictWriter(f, keys)
                w.writeheader()
                w.writerows({k: r[k] for k in keys} for r in rows)


def diagnose(run: Path, code: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "handlers.cli", "diagnose", str(run), "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT)
    codes = [c["code"] for c in json.loads(p.stdout).get("root_causes", [])]
    return {"codes": codes, "rank": codes.index(code) + 1 if code in codes else 0}


def one(job: tuple) -> dict:
    import torch

    from tests.scenarios.grid import Variant
    torch.set_num_threads(1)
    out, name, fields, mode = job
    fn, code, _, _ = generators()[name]
    v = Variant(**fields)
    tag = f"{name}__{v.arch}_{v.opt}_{v.sched}_{v.fmt}_{v.seed}__{mode}"
    run = Path(out) / tag
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    try:
        fn(run, v)
    except RuntimeError as e:
        return {"tag": tag, "gen": name, "skip": str(e)[:80]}
    {"config only": strip_logged_lr, "log only": strip_config}.get(mode, lambda _: None)(run)
    return {"tag": tag, "gen": name, **diagnose(run, code)}


def plan(out: str, per: int, seed: int) -> list[tuple]:
    from tests.scenarios import FAMILIES
    from tests.scenarios.grid import FORMATS
    tried = {(f.name, v.arch, v.opt, v.sched, v.fmt) for f in FAMILIES for v in f.variants}
    rng = random.Random(seed)
    jobs = []
    for name, (_, _, archs, opts) in generators().items():
        for k in range(per * 20):
            if sum(j[1] == name for j in jobs) >= per:
                break
            fields = dict(arch=rng.choice(archs), opt=rng.choice(opts), sched=rng.choice(SCHEDS),
                          fmt=rng.choice(FORMATS), seed=rng.randrange(1000, 9999))
            if (name, fields["arch"], fields["opt"], fields["sched"], fields["fmt"]) in tried:
                continue
            mode = ("full", "full", "log only", "config only")[k % 4]
            if mode == "config only" and fields["fmt"] not in LOG_LR_EDITABLE:
                mode = "full"
            jobs.append((out, name, fields, mode))
    return jobs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--per", type=int, default=10, help="variants per generator")
    p.add_argument("--seed", type=int, default=15)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    results = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for r in pool.map(one, plan(args.out, args.per, args.seed)):
            results.append(r)
            print(r["tag"].ljust(72), r.get("skip") or f"rank {r['rank']}  {' '.join(r['codes'][:3])}", flush=True)
    by_gen: dict[str, list] = defaultdict(list)
    for r in results:
        by_gen[r["gen"]].append(r)
    print("\ngenerator              ran  skipped  top-1 misses  not listed")
    for name, rs in by_gen.items():
        ran = [r for r in rs if "skip" not in r]
        print(f"{name:22} {len(ran):4} {len(rs) - len(ran):8} {sum(r['rank'] != 1 for r in ran):13} "
              f"{sum(r['rank'] == 0 for r in ran):11}")


if __name__ == "__main__":
    main()
