"""Accuracy on logs people really pasted in public threads (tests/wild/, see its README): each case
through `mltd diagnose --format json`, the top cause against the cause the thread established.

    python bench/wild.py                 # both halves; the measuring half is the figure
    python bench/wild.py --split tune    # the half that may be tuned on

Prints top-1, top-3, false alarms (a healthy case with a critical or high cause), the faulty cases
that got no cause at all, and the misses, per half. A healthy case is right when its top cause is
`healthy` or when no cause is named at all ("nothing in these artifacts shows a fault" is what the
thread said); the count of those is printed beside the false alarms. `alt_codes` (a cause a careful reader would also
accept) count as right.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WILD = ROOT / "tests" / "wild"


def diagnose(case: Path, agent_env: dict[str, str] | None = None) -> dict:
    """`mltd diagnose --format json` on one case; with `agent_env`, `--agent` under those variables too."""
    flags = ["--agent"] if agent_env is not None else []
    p = subprocess.run([sys.executable, "-m", "handlers.cli", "diagnose", str(case), *flags, "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(agent_env or {})})
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"status": f"exit {p.returncode}", "root_causes": []}


def judge(lab: dict, doc: dict) -> dict:
    """One case's diagnosis against its label."""
    codes = [c["code"] for c in doc.get("root_causes", [])]
    ok = {lab["code"], *lab.get("alt_codes", [])}
    top = codes[0] if codes else None
    serious = [c for c in doc.get("root_causes", [])
               if c["code"] != "healthy" and c["severity"] in ("critical", "high")]
    # for a log the thread called normal, "nothing in these artifacts shows a fault" is the right answer;
    # a command that crashed (no JSON) said nothing, so it is not that answer
    crashed = str(doc.get("status", "")).startswith("exit")
    quiet = lab["code"] == "healthy" and top is None and not crashed
    return {"id": lab["id"], "want": lab["code"], "got": top, "top1": top in ok or quiet,
            "top3": bool(ok & set(codes[:3])) or quiet, "quiet": quiet,
            "false_alarm": lab["code"] == "healthy" and bool(serious), "status": doc.get("status"),
            "crashed": crashed}


def score(labels: list[dict]) -> dict:
    rows = [judge(lab, diagnose(WILD / "cases" / lab["id"])) for lab in labels]
    faulty = [r for r in rows if r["want"] != "healthy"]
    return {"rows": rows, "n": len(rows), "top1": sum(r["top1"] for r in rows), "top3": sum(r["top3"] for r in rows),
            "healthy": sum(r["want"] == "healthy" for r in rows), "false_alarms": sum(r["false_alarm"] for r in rows),
            "quiet": sum(r["quiet"] for r in rows), "no_cause": sum(r["got"] is None for r in faulty),
            "crashed": sum(r["crashed"] for r in rows)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--split", choices=("tune", "measure", "both"), default="both")
    p.add_argument("--misses", action="store_true", help="list every miss (default: the measuring half's count only)")
    args = p.parse_args()
    labels = json.loads((WILD / "labels.json").read_text())
    halves = ("tune", "measure") if args.split == "both" else (args.split,)
    for half in halves:
        s = score([lab for lab in labels if lab["split"] == half])
        n = max(s["n"], 1)
        print(f"{half:8} {s['n']:3} cases  top-1 {s['top1']}/{s['n']} ({s['top1'] / n:.2f})  "
              f"top-3 {s['top3'] / n:.2f}  false alarms {s['false_alarms']}/{s['healthy']} healthy "
              f"({s['quiet']} answered 'no fault')  faulty with no cause {s['no_cause']}"
              + (f"  crashed {s['crashed']}" if s["crashed"] else ""))
        misses = [r for r in s["rows"] if not r["top1"]]
        if half == "tune" or args.misses:
            for r in misses:
                print(f"   miss {r['id']:42} want {r['want']:22} got {r['got']} ({r['status']})")
        else:
            print(f"   {len(misses)} misses (by expected code: {dict(Counter(r['want'] for r in misses))})")
    if "measure" in halves:
        print("the measuring half is the figure; never tune on it")


if __name__ == "__main__":
    main()
