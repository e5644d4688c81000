"""The specialist agent on the logs people paste (tests/wild/): each case through `mltd diagnose --agent`,
scored as bench/wild.py scores, beside the analyzers alone on the same cases.

    ANTHROPIC_API_KEY=... python bench/wild_agent.py --split measure    # the model you configure (MLTD_AGENT_MODEL)
    python bench/wild_agent.py --replay tests/wild/agent_reads.json [--read second]   # recorded answers, no model

Live, every case goes to the configured model: this is the figure that says whether mltd with its agent
meets issue 14's floors (about 600 calls a half; the cost is printed). For a run that long:

    ... --save /tmp/agent.jsonl      # one line per case as it ends (codes, severities, cost; no text); run the
                                     # same command again to resume: a case the model answered is reused (an
                                     # answer dropped by the checks too: that is the agent's result), a case
                                     # it never answered (the API down, overloaded) is run again
    ... --max-usd 20                 # start no more cases once the agent has cost this much
    ... --sample 100                 # a fixed random sample of each half (seed 0) for a first, cheap look

Replay serves each recorded `submit_diagnosis` answer from the Messages API stand-in
(tests/fakes/anthropic_api.py) as the model's one turn, so the real agent path (the SDK, the schema check, the
evidence check, the merge with the analyzers' causes, the status rule) makes the reply that is scored. Only
counts are printed, never a case.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import defaultdict
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.wild import WILD, diagnose, judge  # noqa: E402
from bot.settings import Settings  # noqa: E402


def replayed(case: Path, answer: dict) -> dict:
    """The case diagnosed with `answer` as the model's only turn."""
    from tests.fakes.anthropic_api import KEY, AnthropicStandIn, tool_use

    api = AnthropicStandIn([[tool_use("submit_diagnosis", answer)]])
    try:
        return diagnose(case, {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url, "MLTD_AGENT_RETRIES": "0"})
    finally:
        api.close()


def _agent_info(doc: dict) -> dict:
    return (doc.get("engine") or {}).get("agent") or {}


def fell_back(doc: dict) -> bool:
    """The agent unavailable, or its answer dropped (schema, no evidence that checks out): the analyzers' stands
    (the JSON document keeps that one-line note under `engine`)."""
    note = (doc.get("engine") or {}).get("agent_note") or ""
    return "Analyzers only" in note or str(doc.get("status", "")).startswith("exit")


def slim(doc: dict) -> dict:
    """What judge() and report() read of a diagnosis, and nothing of the case's text."""
    engine = doc.get("engine") or {}
    return {"status": doc.get("status"), "engine": {k: engine[k] for k in ("agent", "agent_note") if k in engine},
            "root_causes": [{k: c.get(k) for k in ("code", "severity", "analyzer")}
                            for c in doc.get("root_causes", [])]}


def positive(text: str) -> int:
    if int(text) < 1:
        raise argparse.ArgumentTypeError("a sample of at least 1 case")
    return int(text)


def sampled(todo: list, n: int | None) -> list:
    """`n` cases of each group (a half live, a read's sample in replay), the same ones every time (seed 0);
    all of them without `n`."""
    if n is None:
        return todo
    groups: dict[str, list] = defaultdict(list)
    for item in sorted(todo, key=lambda t: (t[0], t[1]["id"])):
        groups[item[0]].append(item)
    return [it for items in groups.values() for it in random.Random(0).sample(items, min(n, len(items)))]


def report(groups: dict[str, list[tuple[dict, dict, dict]]], live: bool) -> None:
    """Per group: the analyzers' and the agent's top-1, top-3 and false alarms, and what the agent path did
    (the cost only when a model answered: the stand-in's token counts are made up)."""
    print(f"{'sample':26} {'cases':>5}   analyzers: top-1       top-3        FA    agent: top-1       top-3        FA"
          "   agent led  fell back  ev. removed" + ("  cost $" if live else ""))

    def figures(rows: list[dict]) -> str:
        t1, t3 = sum(r["top1"] for r in rows), sum(r["top3"] for r in rows)
        return f"{t1:4} ({t1 / n:.2f})  {t3:4} ({t3 / n:.2f})  {sum(r['false_alarm'] for r in rows):3}"

    for name, items in sorted(groups.items()):
        n = len(items)
        a = [judge(lab, doc) for lab, doc, _ in items]
        g = [judge(lab, doc) for lab, _, doc in items]
        led = sum(bool(d.get("root_causes")) and d["root_causes"][0].get("analyzer") == "agent" for _, _, d in items)
        removed = sum(_agent_info(d).get("evidence_removed", 0) for _, _, d in items)
        fell = sum(fell_back(d) for _, _, d in items)
        cost = sum(_agent_info(d).get("cost_usd", 0.0) for _, _, d in items)
        print(f"{name:26} {n:5}   {figures(a)}   {figures(g)}   {led:9} {fell:10} {removed:12}"
              + (f"  {cost:.2f}" if live else ""))
        print(f"{'':26} right for the agent only / the analyzers only: "
              f"{sum(x['top1'] and not y['top1'] for x, y in zip(g, a))} / "
              f"{sum(y['top1'] and not x['top1'] for x, y in zip(g, a))}")


def unanswered(doc: dict) -> bool:
    """The model never answered (the API down, overloaded, unreachable) or the command crashed: worth running
    again. An answer that was dropped (no evidence that checks out, invalid twice) is the agent's own result."""
    error = _agent_info(doc).get("error")
    return str(doc.get("status", "")).startswith("exit") or (error is not None and error != "Invalid")


def resumed(save: Path | None, reader: str, wanted: set) -> tuple[dict, float]:
    """The cases a saved run already holds for this reader (model, or replay file) and whose model answered,
    and what every saved case cost (those to be run again included)."""
    kept, spent = {}, 0.0
    if not save or not save.exists():
        return kept, spent
    for line in save.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:              # a line torn by a kill mid-write: that case runs again
            print(f"skipping an unreadable line of {save}", file=sys.stderr)
            continue
        if row.get("reader") != reader:
            continue
        spent += _agent_info(row["agent"]).get("cost_usd", 0.0)
        if (row["group"], row["id"]) in wanted and not unanswered(row["agent"]):
            kept[(row["group"], row["id"])] = row
    return kept, spent


def run_all(todo: list, one, jobs: int, cap: float | None, spent: float, record) -> int:
    """Each case through `one`, `jobs` at a time, a new one started as a slot frees and the spend is under
    `cap`; `record` takes each result and returns its cost. The number of cases run."""
    cases, pending, done = iter(todo), set(), 0
    with ThreadPoolExecutor(jobs) as pool:
        while True:
            while len(pending) < jobs and (cap is None or spent < cap) and (item := next(cases, None)):
                pending.add(pool.submit(one, item))
            if not pending:
                return done
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                spent += record(*f.result())
                done += 1
                if done % 50 == 0 or done == len(todo):
                    print(f"[{done}/{len(todo)}]" + (f" ${spent:.2f}" if spent else ""), file=sys.stderr, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--replay", type=Path, help="recorded answers (tests/wild/agent_reads.json) instead of a model")
    p.add_argument("--read", help="only the recorded answers of these reads (e.g. second, or second,third: reads "
                                   "of disjoint cases are also scored together per half)")
    p.add_argument("--split", choices=("tune", "measure", "both"), default="measure")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--save", type=Path, help="one line per case as it ends; rerun to resume (see above)")
    p.add_argument("--max-usd", type=float, help="start no more cases once the agent has cost this much")
    p.add_argument("--sample", type=positive, help="a fixed random sample of this many cases of each group")
    args = p.parse_args()
    labels = {lab["id"]: lab for lab in json.loads((WILD / "labels.json").read_text())}
    if args.replay:
        if args.max_usd is not None:
            p.error("--max-usd is for a live run (the stand-in's token counts are made up)")
        chosen = set(args.read.split(",")) if args.read else None
        reads = [r for r in json.loads(args.replay.read_text())["reads"] if chosen is None or r.get("read") in chosen]
        todo = [(":".join(x for x in (r.get("read"), r.get("sample", labels[r["id"]]["split"])) if x),
                 labels[r["id"]], r["answer"]) for r in reads]
        reader = f"replay of {args.replay.name}"
    else:
        if not os.environ.get("ANTHROPIC_API_KEY") and os.environ.get("MLTD_AGENT_PROVIDER") != "bedrock":
            sys.exit("no model configured: set ANTHROPIC_API_KEY (or MLTD_AGENT_PROVIDER=bedrock), or use --replay")
        halves = ("tune", "measure") if args.split == "both" else (args.split,)
        todo = [(lab["split"], lab, None) for lab in labels.values() if lab["split"] in halves]
        settings = Settings()
        reader = f"{settings.agent_provider} {settings.agent_model}"
    todo = sampled(todo, args.sample)

    def one(item):
        group, lab, answer = item
        case = WILD / "cases" / lab["id"]
        return group, lab, diagnose(case), (replayed(case, answer) if answer is not None else diagnose(case, {}))

    groups: dict[str, list] = defaultdict(list)
    kept, spent = resumed(args.save, reader, {(g, lab["id"]) for g, lab, _ in todo})
    spent = 0.0 if args.replay else spent   # the stand-in's token counts are made up
    for row in kept.values():
        groups[row["group"]].append((labels[row["id"]], row["plain"], row["agent"]))
    todo = [t for t in todo if (t[0], t[1]["id"]) not in kept]
    if kept:
        print(f"reusing {len(kept)} of {len(kept) + len(todo)} cases from {args.save}", file=sys.stderr)
    out = args.save.open("a") if args.save else None
    if out and out.tell() and not args.save.read_bytes().endswith(b"\n"):
        out.write("\n")                # after a torn line, not onto it

    def record(group, lab, plain, agent) -> float:
        plain, agent = slim(plain), slim(agent)
        groups[group].append((lab, plain, agent))
        if out:
            row = {"reader": reader, "group": group, "id": lab["id"], "plain": plain, "agent": agent}
            out.write(json.dumps(row) + "\n")
            out.flush()
        return _agent_info(agent).get("cost_usd", 0.0) if not args.replay else 0.0

    ran = run_all(todo, one, args.jobs, args.max_usd, spent, record)
    if out:
        out.close()
    if ran < len(todo):
        print(f"partial: stopped by --max-usd with {len(todo) - ran} of {len(todo) + len(kept)} cases not run; "
              "these figures are of the cases that ran")
    # a read's samples of one half, together: that half's figure
    halves: dict[tuple[str, str], list] = defaultdict(list)
    for group, items in groups.items():
        read = group.rsplit(":", 1)[0] if ":" in group else ""
        for it in items:
            halves[(read, it[0]["split"])].append((group, it))
    for (read, split), pairs in halves.items():
        if len({g for g, _ in pairs}) > 1:
            groups[f"{read}:{split} (all)" if read else f"{split} (all)"] = [it for _, it in pairs]
    # several reads of disjoint cases of a half (a later read of the cases added since): that half, read once each
    for split in {s for _, s in halves}:
        parts = {r: [it for _, it in pairs] for (r, s), pairs in halves.items() if s == split}
        ids = [it[0]["id"] for items in parts.values() for it in items]
        if len(parts) > 1 and len(ids) == len(set(ids)):
            groups[f"{'+'.join(sorted(parts))}:{split} (all)"] = [it for items in parts.values() for it in items]
    report(groups, live=not args.replay)
    if any("measure" in g for g in groups):
        print("the measuring half is the figure; never tune on it")


if __name__ == "__main__":
    main()
