"""bench/wild_agent.py live, against the Messages API stand-in: a long run saved case by case, resumed
without repeating the cases whose agent answered, the cases that fell back run again, and a cost cap."""
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


def healthy_answer(case: Path) -> list:
    """A submit_diagnosis whose evidence quotes the case's first line, so that it checks out."""
    f = sorted(p for p in case.iterdir() if p.is_file())[0]
    n, line = next((i, x) for i, x in enumerate(f.read_text(errors="replace").splitlines(), 1) if x.strip())
    cause = {"code": "healthy", "issue": "nothing wrong", "severity": "info", "confidence": 0.5,
             "evidence": [{"text": f"`{line.strip()[:120]}`", "artifact": f.name, "locator": f"line {n}"}],
             "fix": "none"}
    return [tool_use("submit_diagnosis", {"root_causes": [cause]})]


def bench(api, *flags):
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url, "MLTD_AGENT_RETRIES": "0"}
    p = subprocess.run([sys.executable, "bench/wild_agent.py", "--split", "tune", "--sample", "2", "--jobs", "1",
                        *flags], capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    row = next(x for x in p.stdout.splitlines() if x.startswith("tune "))
    return p.stderr, row.split()[-4:]          # agent led, fell back, evidence removed, cost


def test_a_live_run_is_saved_resumed_and_capped(tmp_path):
    cases = two_tuning_cases()
    saved = tmp_path / "agent.jsonl"
    down = AnthropicStandIn([(529, "overloaded_error")] * 2)
    try:
        _, row = bench(down, "--save", str(saved))
    finally:
        down.close()
    assert row[:2] == ["0", "2"] and len(saved.read_text().splitlines()) == 2        # both fell back, both saved
    up = AnthropicStandIn([healthy_answer(WILD / "cases" / lab["id"]) for lab in cases])
    try:
        err, row = bench(up, "--save", str(saved))
    finally:
        up.close()
    assert len(up.requests) == 2 and row[:2] == ["2", "0"] and float(row[3]) > 0    # the fallen-back cases, run again
    idle = AnthropicStandIn([])
    try:
        err, again = bench(idle, "--save", str(saved))
    finally:
        idle.close()
    assert idle.requests == [] and "reusing 2 cases" in err and again == row         # nothing asked twice
    capped = AnthropicStandIn([healthy_answer(WILD / "cases" / lab["id"]) for lab in cases])
    try:
        err, row = bench(capped, "--max-usd", "0.000001")
    finally:
        capped.close()
    assert len(capped.requests) == 1 and "1 cases not run" in err
