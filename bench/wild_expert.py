"""How far is mltd from what the pasted text alone supports? An expert's blind reads of sampled wild cases
(tests/wild/expert_reads.json: the text only, no thread, id or label) scored beside `mltd diagnose` on the
same cases, per sample.

    python bench/wild_expert.py

Prints, per sample (two of the measuring half, one of the tuning half): top-1 and top-3 of the expert and of
mltd, and how often each is right where the other is not. Scored as bench/wild.py scores: `alt_codes` count as
right, and for a case the thread called healthy, no cause at all is right. Only counts are printed, never a
case: the measuring half stays unread.
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.wild import WILD, diagnose  # noqa: E402


def right(codes: list[str], label: dict, k: int) -> bool:
    if label["code"] == "healthy" and (not codes or codes[0] == "healthy"):
        return True
    return bool({label["code"], *label.get("alt_codes", [])} & set(codes[:k]))


def main() -> None:
    labels = {lab["id"]: lab for lab in json.loads((WILD / "labels.json").read_text())}
    reads = json.loads((WILD / "expert_reads.json").read_text())["reads"]
    def codes(case_id: str) -> list[str]:
        return [c["code"] for c in diagnose(WILD / "cases" / case_id).get("root_causes", [])]

    with ThreadPoolExecutor(2) as pool:
        ids = [r["id"] for r in reads]
        got = dict(zip(ids, pool.map(codes, ids)))
    by: dict[str, list[tuple[list[str], list[str], dict]]] = defaultdict(list)
    for r in reads:
        by[r["sample"]].append((r["codes"], got[r["id"]], labels[r["id"]]))
    for sample, rows in sorted(by.items()):
        n = len(rows)
        e1 = sum(right(e, lab, 1) for e, _, lab in rows)
        m1 = sum(right(m, lab, 1) for _, m, lab in rows)
        e3 = sum(right(e, lab, 3) for e, _, lab in rows)
        m3 = sum(right(m, lab, 3) for _, m, lab in rows)
        only_e = sum(right(e, lab, 1) and not right(m, lab, 1) for e, m, lab in rows)
        only_m = sum(right(m, lab, 1) and not right(e, lab, 1) for e, m, lab in rows)
        print(f"{sample:10} {n:3} cases  expert top-1 {e1}/{n} ({e1 / n:.2f}) top-3 {e3 / n:.2f}   "
              f"mltd top-1 {m1}/{n} ({m1 / n:.2f}) top-3 {m3 / n:.2f}   expert only {only_e}, mltd only {only_m}")


if __name__ == "__main__":
    main()
