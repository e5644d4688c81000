"""bench/wild_agent.py live, against the Messages API stand-in: a long run saved case by case (codes, no
text), resumed without asking the model again where it answered, the cases it never answered run again,
and a cost cap that says the figures are partial."""
import json
import os
import subprocess
import sys
from pathlib import Path

from bench.wild import WILD
from bench.wild_agent import sampled
from tests.fakes.anthropic_api import KEY, AnthropicStandIn, tool_use

ROOT = Path(__file__).resolve().parents[1]


def two_tuning_cases() -> list[dict]:
    labels = json.loads((WILD / "labels.json").read_text())
    return [lab for _, lab, _ in sampled([(lab["split"], lab, None) for lab in labels if lab["split"] == "tune"], 2)]


def answer(case: Path, checks_out: bool = True) -> list:
    """A submit_diagnosis whose evidence quotes the case's first line (or words that are nowhere in it)."""
    f = sorted(p for p in case.iterdir() if p.is_file())[0]
    n, line = next((i, x) for i, x in enumerate(f.read_text(errors="replace").splitlines(), 1) if x.strip())
    quote = line.strip()[:120] if checks_out else "zyxw vutsr qponm"
    cause = {"code": "healthy", "issue": "nothing wrong", "severity": "info", "confidence": 0.5,
             "evidence": [{"text": f"`{quote}`", "artifact": f.name, "locator": f"line {n}"}], "fix": "none"}
    return [tool_use("submit_diagnosis", {"root_causes": [cause]})]


def bench(api, *flags):
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url, "MLTD_AGENT_RETRIES": "0"}
    try:
        p = subprocess.run([sys.executable, "bench/wild_agent.py", "--split", "tune", "--sample", "2", "--jobs", "1",
                            *flags], capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    finally:
        api.close()
    row = next(x for x in p.stdout.splitlines() if x.startswith("tune "))
    return p.stdout + p.stderr, row.split()[-4:]          # agent led, fell back, evidence removed, cost


def test_a_live_run_is_saved_resumed_and_capped(tmp_path):
    first, second = (WILD / "cases" / lab["id"] for lab in two_tuning_cases())
    saved = tmp_path / "agent.jsonl"
    # the API overloaded for the first case; for the second an answer whose evidence does not check out
    down = AnthropicStandIn([(529, "overloaded_error"), answer(second, checks_out=False)])
    _, row = bench(down, "--save", str(saved))
    assert row[:3] == ["0", "2", "1"]
    lines = [json.loads(x) for x in saved.read_text().splitlines()]
    assert len(lines) == 2 and all(set(x) == {"reader", "group", "id", "plain", "agent"} for x in lines)
    assert all(set(c) <= {"code", "severity", "analyzer"} for x in lines for c in x["agent"]["root_causes"])
    up = AnthropicStandIn([answer(first)])
    _, row = bench(up, "--save", str(saved))
    # only the case the model never answered is asked again; the dropped answer is the agent's result
    assert len(up.requests) == 1 and row[:2] == ["1", "1"] and float(row[3]) > 0
    with saved.open("a") as f:
        f.write('{"reader": "torn')                       # a kill mid-write
    idle = AnthropicStandIn([])
    out, again = bench(idle, "--save", str(saved))
    assert idle.requests == [] and "reusing 2 of 2 cases" in out and "unreadable line" in out and again == row
    capped = AnthropicStandIn([answer(first), answer(second)])
    out, _ = bench(capped, "--max-usd", "0.000001")
    assert len(capped.requests) == 1 and "partial: stopped by --max-usd with 1 of 2 cases not run" in out


def test_reads_of_disjoint_cases_are_scored_together_per_half(tmp_path):
    """A later read of the cases added since an earlier one: `--read a,b` scores each read, and the half as a
    whole, each case once; reads that share a case are not added up."""
    first, second = two_tuning_cases()

    def read(name, lab):
        return {"id": lab["id"], "split": "tune", "read": name,
                "answer": answer(WILD / "cases" / lab["id"])[0]["input"]}

    def replay(reads, chosen):
        f = tmp_path / "reads.json"
        f.write_text(json.dumps({"about": "test", "reads": reads}))
        p = subprocess.run([sys.executable, "bench/wild_agent.py", "--replay", str(f), "--read", chosen,
                            "--jobs", "1"], capture_output=True, text=True, cwd=ROOT, check=True)
        return {x.split()[0]: int(x.replace("(all)", "").split()[1]) for x in p.stdout.splitlines()
                if x.split() and ":tune" in x.split()[0]}

    rows = replay([read("a", first), read("b", second), read("c", first)], "a,b")
    assert rows == {"a:tune": 1, "b:tune": 1, "a+b:tune": 2}
    rows = replay([read("a", first), read("b", second), read("c", first)], "a,b,c")
    assert "a+b+c:tune" not in rows and rows["c:tune"] == 1
