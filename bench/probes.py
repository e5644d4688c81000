"""Real lines from public threads, one thread each, with the cause the thread settled (tests/probes/lines.jsonl):
each through `mltd diagnose --format json` as the one file of a paste, its top cause against the thread's.

    python bench/probes.py              # right / total per probe round, healthy lines flagged critical or high
    python bench/probes.py --misses     # and every miss

These lines were gathered to find the signatures and harmless messages mltd lacked, and rules were written
from the misses: this is a tuning set, a check that nothing learned from it is lost, not a measure (the
measuring half of tests/wild is). `answered_when_probed` keeps what mltd answered when each was gathered.
A healthy line is right when no cause is named or the top cause is `healthy`.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINES = ROOT / "tests" / "probes" / "lines.jsonl"


def answer(probe: dict) -> list[dict]:
    with tempfile.TemporaryDirectory() as d:
        text = probe["text"] if probe["text"].endswith("\n") else probe["text"] + "\n"
        (Path(d) / probe["name"]).write_text(text)
        for name, more in probe.get("also", {}).items():       # the code a forum asker pasted beside the output
            (Path(d) / name).write_text(more)
        p = subprocess.run([sys.executable, "-m", "handlers.cli", "diagnose", d, "--format", "json"],
                           capture_output=True, text=True, cwd=ROOT)
    try:
        return json.loads(p.stdout).get("root_causes", [])
    except ValueError:
        return []


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--misses", action="store_true", help="list every miss")
    args = p.parse_args()
    probes = [json.loads(line) for line in LINES.read_text().splitlines() if line.strip()]
    with ThreadPoolExecutor(2) as ex:
        causes = list(ex.map(answer, probes))
    right, total, alarms, misses = Counter(), Counter(), 0, []
    for probe, cs in zip(probes, causes):
        top = cs[0]["code"] if cs else None
        healthy = probe["code"] == "healthy"
        ok = top in (None, "healthy") if healthy else top in (probe["code"], *probe.get("alt_codes", ()))
        kind = "healthy" if healthy else "faulty"
        total[kind] += 1
        right[kind] += ok
        serious = [c for c in cs if c["code"] != "healthy" and c["severity"] in ("critical", "high")]
        alarms += healthy and bool(serious)
        if not ok:
            misses.append((probe, [c["code"] for c in cs[:3]]))
    for kind in ("faulty", "healthy"):
        print(f"{kind:8} {right[kind]}/{total[kind]} right")
    print(f"healthy lines with a critical or high cause: {alarms}/{total['healthy']}")
    if args.misses:
        for probe, got in misses:
            print(f"   miss {probe['url']:70} want {probe['code']:22} got {got}")
    print("a tuning set: rules were written from its misses; tests/wild's measuring half is the measure")


if __name__ == "__main__":
    main()
