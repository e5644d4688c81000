"""Check tests/wild/labels.json against tests/wild/cases/ and the taxonomy.

Run: python tests/wild/check_labels.py [DIR]   (exits non-zero on the first kind of problem found)

DIR is another folder in the same layout (`mltd feedback export DIR` writes one); its cases may
come from a Slack thread (`slack://TEAM/CHANNEL/TS`) as well as a GitHub thread.
"""
import hashlib
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
SEVERITIES = {"critical", "high", "medium", "low", "info"}
FIELDS = ["id", "source_url", "thread_title", "dialect", "code", "alt_codes",
          "established_by", "evidence_quote", "split"]
TAXONOMY = {"lr_too_high", "lr_too_low", "exploding_gradients", "vanishing_gradients",
            "numerical_instability", "dead_relu", "mode_collapse", "architecture_imbalance",
            "overfitting", "no_parameter_updates", "data_pipeline_bug", "zero_variance",
            "out_of_memory", "loss_spikes", "distributed_failure", "dataloader_failure",
            "healthy"}


def split_of(url):
    """The split rule, fixed before any result was looked at: sha256 of the thread URL, even -> tune."""
    return "tune" if int(hashlib.sha256(url.encode()).hexdigest(), 16) % 2 == 0 else "measure"


SOURCE = re.compile(r"^https://github\.com/[^/]+/[^/]+/(issues|pull)/\d+$")
EXPORTED_SOURCE = re.compile(r"^slack://T[A-Z0-9]+/[CDG][A-Z0-9]+/\d+\.\d+$")


def _submitted(c) -> bool:
    """One root cause as the agent's submit_diagnosis schema has it (bot/agent/verify.py), with evidence."""
    ev = c.get("evidence") if isinstance(c, dict) else None
    return (isinstance(c, dict) and c.get("code") in TAXONOMY and c.get("severity") in SEVERITIES
            and isinstance(c.get("confidence"), (int, float)) and 0 <= c["confidence"] <= 1
            and isinstance(ev, list) and bool(ev)
            and all(isinstance(e, dict) and {"text", "artifact", "locator"} <= set(e) for e in ev))


def main(root=HERE):
    root = pathlib.Path(root)
    labels = json.loads((root / "labels.json").read_text())
    problems = []
    ids = [e["id"] for e in labels]
    if len(ids) != len(set(ids)):
        problems.append("duplicate ids")
    folders = {p.name for p in (root / "cases").iterdir() if p.is_dir()}
    for missing in sorted(set(ids) - folders):
        problems.append(f"{missing}: no folder")
    for extra in sorted(folders - set(ids)):
        problems.append(f"{extra}: folder without a labels entry")
    splits_by_url = {}
    for e in labels:
        for f in FIELDS:
            if f not in e:
                problems.append(f"{e.get('id')}: missing {f}")
        if e.get("code") not in TAXONOMY:
            problems.append(f"{e['id']}: code {e.get('code')!r} not in taxonomy")
        for a in e.get("alt_codes", []):
            if a not in TAXONOMY:
                problems.append(f"{e['id']}: alt code {a!r} not in taxonomy")
        if e.get("split") != split_of(e["source_url"]):
            problems.append(f"{e['id']}: split does not follow the rule")
        splits_by_url.setdefault(e["source_url"], set()).add(e.get("split"))
        if not (SOURCE.match(e["source_url"]) or (root != HERE and EXPORTED_SOURCE.match(e["source_url"]))):
            problems.append(f"{e['id']}: unexpected source_url {e['source_url']}")
        d = root / "cases" / e["id"]
        if d.is_dir():
            files = [p for p in d.iterdir() if p.is_file()]
            if not files:
                problems.append(f"{e['id']}: empty folder")
            for p in files:
                if p.stat().st_size > 200_000:
                    problems.append(f"{p}: over 200 KB")
    for url, s in splits_by_url.items():
        if len(s) > 1:
            problems.append(f"{url}: thread split across halves")
    by_id = {e["id"]: e for e in labels}
    reads = root / "expert_reads.json"      # bench/wild_expert.py's blind reads, where the folder has them
    for r in json.loads(reads.read_text())["reads"] if reads.exists() else []:
        rid, codes = r.get("id"), r.get("codes")
        if rid not in by_id or r.get("split") != by_id[rid]["split"]:
            problems.append(f"expert read {rid}: no such case in that split")
        if not isinstance(codes, list) or not 1 <= len(codes) <= 3 or any(c not in TAXONOMY for c in codes):
            problems.append(f"expert read {rid}: codes {codes} are not 1 to 3 taxonomy codes")
    reads = root / "agent_reads.json"       # bench/wild_agent.py's recorded answers, where the folder has them
    for r in json.loads(reads.read_text())["reads"] if reads.exists() else []:
        rid, causes = r.get("id"), (r.get("answer") or {}).get("root_causes")
        if rid not in by_id or r.get("split") != by_id[rid]["split"]:
            problems.append(f"agent read {rid}: no such case in that split")
        if not isinstance(causes, list) or not 1 <= len(causes) <= 3 or not all(map(_submitted, causes)):
            problems.append(f"agent read {rid}: not 1 to 3 taxonomy causes in the submit_diagnosis shape, "
                            "each with evidence")
    for p in problems:
        print(p)
    print(f"{len(labels)} cases, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
