"""Diagnosis accuracy on the scenario suite (tests/scenarios): real tiny CPU training runs, one
injected fault each, plus healthy runs.

    python bench/accuracy.py            # builds missing scenarios (cached), then diagnoses each
    python bench/accuracy.py --jobs 2

Each run goes through the real command, `mltd diagnose RUN --format json`, in its own process.
Prints top-1 and top-3 accuracy, the false-alarm rate on healthy runs, evidence coverage, the
median time per run, a confusion table and calibration by confidence band, then the floors.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scenarios import SCENARIOS, cache_all  # noqa: E402

BANDS = [(0.0, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)]


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    t = time.perf_counter()
    folders = cache_all()
    print(f"scenarios: {len(folders)} (built or found in the cache in {time.perf_counter() - t:.0f}s)")
    with ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(folders, pool.map(diagnose, folders.values())))

    top1 = top3 = 0
    healthy_runs = false_alarms = 0
    causes = causes_located = 0
    times, confusion, bands = [], defaultdict(Counter), defaultdict(lambda: [0, 0])
    misses = []
    for name, (doc, dt) in results.items():
        expected = SCENARIOS[name][1]
        codes = [c["code"] for c in doc["root_causes"]]
        got = codes[0] if codes else "(none)"
        top1 += got == expected
        top3 += expected in codes[:3]
        confusion[expected][got] += 1
        times.append(dt)
        if got != expected:
            misses.append(f"  {name}: expected {expected}, got " + ", ".join(
                f"{c['code']} {c['confidence']:.2f}" for c in doc["root_causes"][:3]))
        if expected == "healthy":
            healthy_runs += 1
            false_alarms += any(c["severity"] in ("critical", "high") for c in doc["root_causes"]) or got != "healthy"
        for c in doc["root_causes"]:
            causes += 1
            causes_located += located(doc, c)
        if doc["root_causes"]:
            conf = doc["root_causes"][0]["confidence"]
            band = next(b for b in BANDS if b[0] <= conf < b[1])
            bands[band][0] += 1
            bands[band][1] += got == expected

    n = len(results)
    print(f"top-1 accuracy:        {top1 / n:.3f}  ({top1}/{n})")
    print(f"top-3 accuracy:        {top3 / n:.3f}  ({top3}/{n})")
    print(f"false alarms (healthy): {false_alarms}/{healthy_runs}")
    print(f"evidence coverage:     {causes_located / max(causes, 1):.3f}  ({causes_located}/{causes} root causes "
          "with every evidence item naming an artifact and a locator)")
    print(f"median time per run:   {statistics.median(times):.2f}s (the whole `mltd diagnose` process)")
    print("\nconfusion (expected -> top-1):")
    for expected in sorted(confusion):
        row = ", ".join(f"{code} {k}" for code, k in confusion[expected].most_common())
        print(f"  {expected:24s} {row}")
    print("\ncalibration (top-1 confidence band: runs, right):")
    for band in BANDS:
        k, right = bands.get(band, [0, 0])
        if k:
            print(f"  [{band[0]:.1f}, {min(band[1], 1.0):.1f}{']' if band[1] > 1 else ')'}  {k:3d} runs, "
                  f"{right / k:.0%} right (mean confidence should be near this)")
    if misses:
        print("\nmisses:")
        print("\n".join(misses))
    ok = top1 / n >= 0.90 and top3 / n >= 0.97 and false_alarms == 0 and causes_located == causes
    print(f"\nfloors (top-1 >= 0.90, top-3 >= 0.97, no false alarm, all evidence located): {'ok' if ok else 'NOT MET'}")


if __name__ == "__main__":
    main()
