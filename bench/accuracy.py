"""Diagnosis accuracy on the scenario suite (tests/scenarios): real tiny CPU training runs, one
injected fault each, plus healthy runs, split once by generator into a tuning set and a measuring set.

    python bench/accuracy.py            # builds missing scenarios (cached), then diagnoses each
    python bench/accuracy.py --jobs 2
    python bench/accuracy.py --tuning-only    # while tuning: the measuring set is not even diagnosed

Each run goes through the real command, `mltd diagnose RUN --format json`, in its own process.
For both sets: top-1 and top-3, false alarms on healthy runs, evidence coverage. The accuracy is
the measuring set's top-1: the analyzers may be tuned on the tuning set only, so its figure says
how well they fit, not how well they generalise. On the measuring set: a reliability table of the
top cause's confidence and its expected calibration error, and top-1 per code (counts only). The
misses are listed for the tuning set only; a measuring run is never shown one by one.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scenarios import ALL, SPLIT, cache_all  # noqa: E402

BINS = 10              # reliability table: confidence bins of width 0.1
FLOORS = {"top1": 0.95, "top3": 0.99, "ece": 0.05}      # on the measuring set (issue 15)
ALARM = ("critical", "high")


def diagnose(path: Path) -> tuple[dict, float]:
    exe = shutil.which("mltd", path=str(Path(sys.executable).parent)) or "mltd"
    t = time.perf_counter()
    out = subprocess.run([exe, "diagnose", str(path), "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    dt = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"mltd diagnose {path} exited {out.returncode}: {out.stderr[-500:]}")
    return json.loads(out.stdout), dt


def located(doc: dict, cause: dict) -> bool:
    paths = {a["path"] for a in doc["run"]["artifacts"]}
    return bool(cause["evidence"]) and all(e.get("artifact") in paths and e.get("locator") for e in cause["evidence"])


@dataclass
class Outcome:
    name: str
    expected: str
    codes: list[str]
    confidence: float      # of the top cause; 0 when there is none
    right: bool            # top-1 right (for a healthy run: named healthy and nothing critical or high)
    alarm: bool            # on a healthy run: anything critical or high, or a top cause other than healthy
    causes: int
    causes_located: int
    seconds: float
    shown: str


def outcome(name: str, doc: dict, dt: float) -> Outcome:
    expected = ALL[name][1]
    causes = doc["root_causes"]
    codes = [c["code"] for c in causes]
    got = codes[0] if codes else "(none)"
    alarm = expected == "healthy" and (got != "healthy" or any(c["severity"] in ALARM for c in causes))
    return Outcome(name, expected, codes, causes[0]["confidence"] if causes else 0.0,
                   got == expected and not alarm, alarm, len(causes), sum(located(doc, c) for c in causes), dt,
                   ", ".join(f"{c['code']} {c['confidence']:.2f}" for c in causes[:3]) or "(none)")


def figures(label: str, runs: list[Outcome]) -> dict:
    n = len(runs)
    top1 = sum(r.right for r in runs)
    top3 = sum(r.expected in r.codes[:3] for r in runs)
    healthy = [r for r in runs if r.expected == "healthy"]
    alarms = sum(r.alarm for r in healthy)
    causes, located_ = sum(r.causes for r in runs), sum(r.causes_located for r in runs)
    print(f"{label} ({n} runs, {len({r.expected for r in runs}) - 1} codes + healthy)")
    print(f"  top-1:                  {top1 / n:.3f}  ({top1}/{n})")
    print(f"  top-3:                  {top3 / n:.3f}  ({top3}/{n})")
    print(f"  false alarms (healthy): {alarms}/{len(healthy)}")
    print(f"  evidence coverage:      {located_ / max(causes, 1):.3f}  ({located_}/{causes} root causes with every "
          "evidence item naming an artifact and a locator)")
    return {"top1": top1 / n, "top3": top3 / n, "alarms": alarms, "located": located_ == causes}


def reliability(runs: list[Outcome]) -> float:
    """Prints the reliability table of the top cause's confidence; returns the expected calibration
    error: the runs-weighted mean gap between a bin's mean confidence and its accuracy."""
    bins = defaultdict(list)
    for r in runs:
        bins[min(int(r.confidence * BINS), BINS - 1)].append(r)
    print("  reliability (top cause's confidence):")
    print("    bin          runs  mean conf  accuracy  gap")
    ece = 0.0
    for b in sorted(bins):
        rs = bins[b]
        conf = statistics.fmean(r.confidence for r in rs)
        acc = sum(r.right for r in rs) / len(rs)
        ece += len(rs) / len(runs) * abs(conf - acc)
        print(f"    [{b / BINS:.1f}, {(b + 1) / BINS:.1f}{']' if b == BINS - 1 else ')'}  {len(rs):4d}  {conf:9.3f}"
              f"  {acc:8.3f}  {conf - acc:+.3f}")
    print(f"  expected calibration error: {ece:.3f}")
    return ece


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tuning-only", action="store_true", help="diagnose the tuning set only (while tuning)")
    args = ap.parse_args()
    t = time.perf_counter()
    folders = cache_all()
    if args.tuning_only:
        folders = {name: path for name, path in folders.items() if SPLIT[name] == "tuning"}
    print(f"scenarios: {len(folders)} (built or found in the cache in {time.perf_counter() - t:.0f}s)")
    with ThreadPoolExecutor(args.jobs) as pool:
        docs = dict(zip(folders, pool.map(diagnose, folders.values())))
    runs = [outcome(name, doc, dt) for name, (doc, dt) in docs.items()]
    tuning = [r for r in runs if SPLIT[r.name] == "tuning"]
    measuring = [r for r in runs if SPLIT[r.name] == "measuring"]
    median = statistics.median(r.seconds for r in runs)
    print(f"median time per run: {median:.2f}s (the whole `mltd diagnose` process)\n")

    tune = figures("tuning set (the analyzers may be tuned on it: a fit, not the accuracy)", tuning)
    print("  confusion (expected -> top-1):")
    confusion = defaultdict(Counter)
    for r in tuning:
        confusion[r.expected][r.codes[0] if r.codes else "(none)"] += 1
    for expected in sorted(confusion):
        print(f"    {expected:24s} " + ", ".join(f"{code} {k}" for code, k in confusion[expected].most_common()))
    misses = [r for r in tuning if not r.right]
    if misses:
        print("  misses:")
        for r in misses:
            print(f"    {r.name}: expected {r.expected}, got {r.shown}")
    if args.tuning_only:
        return

    print()
    meas = figures("measuring set (never tuned on)", measuring)
    per_code = defaultdict(lambda: [0, 0])
    for r in measuring:
        per_code[r.expected][0] += r.right
        per_code[r.expected][1] += 1
    print("  top-1 per code: " + ", ".join(f"{code} {k}/{n}" for code, (k, n) in sorted(per_code.items())))
    ece = reliability(measuring)

    print(f"\naccuracy (measuring set, top-1): {meas['top1']:.3f}")
    ok = (meas["top1"] >= FLOORS["top1"] and meas["top3"] >= FLOORS["top3"] and meas["alarms"] == 0
          and ece <= FLOORS["ece"] and tune["top1"] == 1.0 and meas["located"] and tune["located"])
    print(f"floors (measuring: top-1 >= {FLOORS['top1']}, top-3 >= {FLOORS['top3']}, no false alarm, "
          f"ECE <= {FLOORS['ece']}; tuning: top-1 = 1.00; all evidence located): {'ok' if ok else 'NOT MET'}")


if __name__ == "__main__":
    main()
