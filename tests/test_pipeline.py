"""The one pipeline: the engine's diagnosis, the agent's review (a stand-in Messages API), the
status rule applied to whatever leads, and the renderer of the caller's choosing."""
import json

import pytest

from analysis import diagnose
from analysis.diagnose import CONFIDENT
from bot import pipeline
from bot.render import render_json
from bot.settings import Settings
from tests.fakes.anthropic_api import KEY, AnthropicStandIn, tool_use


def _reviewed(scenario, monkeypatch, confidence):
    root = scenario("lr_jump_mlp")
    line = next(i for i, t in enumerate((root / "train.log").read_text().splitlines(), 1) if "lr=0.8" in t)
    api = AnthropicStandIn([[tool_use("submit_diagnosis", {"root_causes": [{
        "code": "lr_too_high", "issue": "Stage 2 of the curriculum sets a 40x higher LR", "severity": "critical",
        "confidence": confidence, "fix": "Set stage 2's lr to 0.06",
        "evidence": [{"text": "lr=0.8", "artifact": "train.log", "locator": f"line {line}"}]}]})]])
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    try:
        return pipeline.reply(root, render_json, agent_settings=Settings(ANTHROPIC_API_KEY=KEY, MLTD_AGENT_RETRIES=0))
    finally:
        api.close()


@pytest.mark.parametrize("confidence, status", [(CONFIDENT, "diagnosis_complete"),
                                                (round(CONFIDENT - 0.05, 2), "needs_more_data")])
def test_the_agents_causes_earn_their_own_status(scenario, monkeypatch, confidence, status):
    out = _reviewed(scenario, monkeypatch, confidence)
    assert out.diagnosis.status == "diagnosis_complete"               # what the analyzers alone concluded
    assert out.replied.root_causes[0].analyzer == "agent" and out.replied.status == status
    assert json.loads(out.body)["status"] == status                    # the renderer saw the reviewed diagnosis
    assert out.summary()["status"] == status and out.summary()["agent"]["turns"] == 1


def test_without_the_agent_the_engines_diagnosis_is_rendered_with_the_fetch_notes(scenario, tmp_path):
    root = scenario("lr_jump_mlp")
    engine, _ = diagnose(root)
    out = pipeline.reply(root, render_json, notes=["skipped big.ckpt (9 GB, over the per-file cap)"],
                         plot=tmp_path / "plot.png")
    doc = json.loads(out.body)
    assert doc["status"] == engine.status and doc["root_causes"][0]["code"] == engine.root_causes[0].code
    assert doc["engine"]["agent"] is None and "agent_note" not in doc["engine"]
    assert doc["questions"][-1] == "skipped big.ckpt (9 GB, over the per-file cap)"
    assert out.plot == tmp_path / "plot.png" and out.plot.stat().st_size > 0
    assert doc["analysis_artifacts"]["loss_visualization"] == str(tmp_path / "plot.png")
