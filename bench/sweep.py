"""Sweep the TUNING generators of a code over combinations their families do not list (formats,
architectures, optimizers, schedules, seeds), diagnose each with the real CLI, and tabulate where the
right code lands: first, in the top-3, listed lower, or absent. Only `tuning` families are swept, so
nothing here looks at a measuring run.

    python bench/sweep.py exploding_gradients vanishing_gradients --jobs 2 [--out /tmp/sweep]
    python bench/sweep.py CODES --cross          # every architecture x optimizer on each family's first variant
    python bench/sweep.py CODES --again [--code-from /work/main]   # the same runs, diagnosed again

`--again` re-diagnoses a sweep's runs (with this tree's analyzers, or another checkout's) and counts
how each run's place moved: the before/after of a change to the analyzers, on the same artifacts.

A variant whose generator's `require` check fails (the fault does not show for that combination) is
counted as `no-fault` and not diagnosed."""
from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scenarios import FAMILIES  # noqa: E402
from tests.scenarios.grid import FORMATS, Variant  # noqa: E402

ARCHS = ("mlp", "cnn", "rnn", "lstm", "lm", "regression")
OPTS = ("sgd", "momentum", "adam", "adamw", "rmsprop")
SCHEDS = ("constant", "step", "cosine", "warmup")
SEEDS = (7001, 7002)


def _combos(fam) -> list[Variant]:
    """Every format for each listed variant; plus each other architecture and optimizer the family
    uses, crossed with every schedule, on the first listed variant's size."""
    base = fam.variants
    archs = sorted({v.arch for v in base})
    opts = sorted({v.opt for v in base})
    out = {v.with_(fmt=f) for v in base for f in FORMATS}
    first = base[0]
    for a, o, s in itertools.product(archs, opts, SCHEDS):
        out.add(first.with_(arch=a, opt=o, sched=s, seed=SEEDS[0]))
    for v, seed in itertools.product(base, SEEDS):
        out.add(v.with_(seed=seed))
    listed = set(base)
    return sorted(out - listed, key=repr)


def _where(code: str, dest: str, env: dict | None = None) -> tuple[str, list]:
    """Where `code` lands in the diagnosis of the run at `dest`: first, top3, listed or absent."""
    exe = shutil.which("mltd", path=str(Path(sys.executable).parent)) or "mltd"
    out = subprocess.run([exe, "diagnose", dest, "--format", "json"], capture_output=True, text=True, cwd=ROOT,
                         env=env)
    if out.returncode != 0:
        return "diagnose-error " + out.stderr[-200:], []
    causes = json.loads(out.stdout)["root_causes"]
    codes = [c["code"] for c in causes]
    where = ("first" if codes[:1] == [code] else "top3" if code in codes[:3]
             else "listed" if code in codes else "absent")
    return where, [(c["code"], round(c["confidence"], 2)) for c in causes[:4]]


def _cross(fam) -> list[Variant]:
    """Every architecture and optimizer on the first listed variant (its format, schedule, size)."""
    first = fam.variants[0]
    out = {first.with_(arch=a, opt=o) for a, o in itertools.product(ARCHS, OPTS)}
    return sorted(out - set(fam.variants), key=repr)


def _one(job: tuple) -> dict:
    import torch

    torch.set_num_threads(1)
    fam_name, v, dest = job
    fam = next(f for f in FAMILIES if f.name == fam_name)
    dest = Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    row = {"family": fam_name, "code": fam.code, "variant": v.__dict__, "dest": str(dest)}
    try:
        fam.fn(dest, v)
    except RuntimeError as e:
        if "scenario check failed" in str(e):
            return {**row, "result": "no-fault"}
        return {**row, "result": f"error {e}"[:200]}
    except Exception as e:     # an architecture the generator does not support
        return {**row, "result": f"unsupported {type(e).__name__}"}
    where, codes = _where(fam.code, str(dest))
    return {**row, "result": where, "codes": codes}


def _again(out: Path, code_from: str | None, jobs: int) -> None:
    """Diagnose an earlier sweep's runs again, with this tree's analyzers or with those of another
    checkout (`code_from`, put first on PYTHONPATH), and count how each run's place moved."""
    env = {**os.environ, "PYTHONPATH": code_from} if code_from else None
    before = json.loads((out / "results.json").read_text())
    moved: Counter = Counter()
    runs = [r for r in before if r["result"] in ("first", "top3", "listed", "absent")]
    with ThreadPoolExecutor(jobs) as pool:
        found = list(pool.map(lambda r: _where(r["code"], r["dest"], env), runs))
    for r, (where, codes) in zip(runs, found):
        moved[(r["result"], where)] += 1
        if where != r["result"]:
            v = r["variant"]
            print(f"{r['family']:24} {v['arch']:10} {v['opt']:8} {v['sched']:8} {v['fmt']:9} {v['seed']:5} "
                  f"{r['result']} -> {where} {codes}", flush=True)
    for (a, b), n in sorted(moved.items()):
        print(f"{a:7} -> {b:7} {n}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("codes", nargs="+")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default="/tmp/sweep")
    p.add_argument("--family", action="append", help="only these families")
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--again", action="store_true",
                   help="diagnose the runs of an earlier sweep in --out again (after a change to the analyzers)")
    p.add_argument("--cross", action="store_true", help="every architecture x optimizer instead")
    p.add_argument("--code-from", help="with --again: diagnose with the analyzers of this checkout")
    args = p.parse_args()
    if args.again:
        _again(Path(args.out), args.code_from, args.jobs)
        return
    fams = [f for f in FAMILIES if f.split == "tuning" and f.code in args.codes
            and (not args.family or f.name in args.family)]
    jobs = []
    for fam in fams:
        for v in (_cross(fam) if args.cross else _combos(fam)):
            jobs.append((fam.name, v, f"{args.out}/{fam.name}/{v.arch}_{v.opt}_{v.sched}_{v.fmt}_{v.seed}"))
    if args.limit:
        jobs = jobs[: args.limit]
    print(f"{len(jobs)} variants from {', '.join(f.name for f in fams)}", flush=True)
    results = []
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        for r in pool.map(_one, jobs):
            results.append(r)
            v = r["variant"]
            print(f"{r['family']:24} {v['arch']:10} {v['opt']:8} {v['sched']:8} {v['fmt']:9} {v['seed']:5} "
                  f"{r['result']:9} {r.get('codes', '')}", flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "results.json").write_text(json.dumps(results, indent=1))
    print(Counter(r["result"].split()[0] for r in results))


if __name__ == "__main__":
    main()
