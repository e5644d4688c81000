"""The specialist agent on the logs people paste (tests/wild/): each case through `mltd diagnose --agent`,
scored as bench/wild.py scores, beside the analyzers alone on the same cases.

    ANTHROPIC_API_KEY=... python bench/wild_agent.py --split measure    # the model you configure (MLTD_AGENT_MODEL)
    python bench/wild_agent.py --replay tests/wild/agent_reads.json     # recorded answers, no model needed

Live, every case goes to the configured model: this is the figure that says whether mltd with its agent
meets issue 14's floors (about 600 calls a half; the cost is printed). Replay serves each recorded
`submit_diagnosis` answer from the Messages API stand-in (tests/fakes/anthropic_api.py) as the model's one
turn, so the real agent path (the SDK, the schema check, the evidence check, the merge with the
analyzers' causes, the status rule) makes the reply that is scored. Only counts are printed, never a case.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.wild import WILD, diagnose, judge  # noqa: E402


def with_agent(case: Path, env: dict[str, str]) -> dict:
    p = subprocess.run([sys.executable, "-m", "handlers.cli", "diagnose", str(case), "--agent", "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env})
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"status": f"exit {p.returncode}", "root_causes": []}


def replayed(case: Path, answer: dict) -> dict:
    """The case diagnosed with `answer` as the model's only turn."""
    from tests.fakes.anthropic_api import KEY, AnthropicStandIn, tool_use

    api = AnthropicStandIn([[tool_use("submit_diagnosis", answer)]])
    try:
        return with_agent(case, {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url, "MLTD_AGENT_RETRIES": "0"})
    finally:
        api.close()


def _agent_info(doc: dict) -> dict:
    return (doc.get("engine") or {}).get("agent") or {}


def report(groups: dict[str, list[tuple[dict, dict, dict]]]) -> None:
    """Per group: the analyzers' and the agent's top-1, top-3 and false alarms, and what the agent path did."""
    print(f"{'sample':16} {'cases':>5}  {'analyzers top-1':>16} {'top-3':>6} {'FA':>3}   {'agent top-1':>12} "
          f"{'top-3':>6} {'FA':>3}   agent led  ev. removed  cost $")
    for name, items in sorted(groups.items()):
        n = len(items)
        a = [judge(lab, doc) for lab, doc, _ in items]
        g = [judge(lab, doc) for lab, _, doc in items]
        led = sum(bool(d.get("root_causes")) and d["root_causes"][0].get("analyzer") == "agent" for _, _, d in items)
        removed = sum(_agent_info(d).get("evidence_removed", 0) for _, _, d in items)
        cost = sum(_agent_info(d).get("cost_usd", 0.0) for _, _, d in items)
        t1a, t1g = sum(r["top1"] for r in a), sum(r["top1"] for r in g)
        print(f"{name:16} {n:5}  {t1a:4} ({t1a / n:.2f})      {sum(r['top3'] for r in a) / n:6.2f} "
              f"{sum(r['false_alarm'] for r in a):3}   {t1g:4} ({t1g / n:.2f}) {sum(r['top3'] for r in g) / n:6.2f} "
              f"{sum(r['false_alarm'] for r in g):3}   {led:9} {removed:12}  {cost:.2f}")
        print(f"{'':16} right for the agent only / the analyzers only: "
              f"{sum(x['top1'] and not y['top1'] for x, y in zip(g, a))} / "
              f"{sum(y['top1'] and not x['top1'] for x, y in zip(g, a))}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--replay", type=Path, help="recorded answers (tests/wild/agent_reads.json) instead of a model")
    p.add_argument("--split", choices=("tune", "measure", "both"), default="measure")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    labels = {lab["id"]: lab for lab in json.loads((WILD / "labels.json").read_text())}
    if args.replay:
        reads = json.loads(args.replay.read_text())["reads"]
        todo = [(":".join(x for x in (r.get("read"), r.get("sample", labels[r["id"]]["split"])) if x),
                 labels[r["id"]], r["answer"]) for r in reads]
    else:
        if not os.environ.get("ANTHROPIC_API_KEY") and os.environ.get("MLTD_AGENT_PROVIDER") != "bedrock":
            sys.exit("no model configured: set ANTHROPIC_API_KEY (or MLTD_AGENT_PROVIDER=bedrock), or use --replay")
        halves = ("tune", "measure") if args.split == "both" else (args.split,)
        todo = [(lab["split"], lab, None) for lab in labels.values() if lab["split"] in halves]

    def one(item):
        group, lab, answer = item
        case = WILD / "cases" / lab["id"]
        return group, lab, diagnose(case), (replayed(case, answer) if answer is not None else with_agent(case, {}))

    groups: dict[str, list] = defaultdict(list)
    with ThreadPoolExecutor(args.jobs) as pool:
        for group, lab, plain, agent in pool.map(one, todo):
            groups[group].append((lab, plain, agent))
    report(groups)
    if any("measure" in g for g in groups):
        print("the measuring half is the figure; never tune on it")


if __name__ == "__main__":
    main()
