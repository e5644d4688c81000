"""An analyzer that raises is never silent: the run is not called healthy, the status says the
analysis is incomplete, and every renderer names the analyzer and its error in one line."""
import json

from analysis.analyzers import loss
from analysis.model import Diagnosis
from bot.render.github import render_github
from bot.render.markdown import render_markdown
from bot.render.slack import render as render_slack
from bot.render.text import render_text
from handlers.cli import main


def _explode(run):
    raise MemoryError("Unable to allocate 43.9 GiB for an array")


def test_a_failed_analyzer_makes_the_analysis_incomplete(scenario, capsys, monkeypatch):
    run = scenario("healthy_noisy_mlp")
    assert main(["diagnose", str(run), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "no_failure_found"    # the same run, whole

    monkeypatch.setattr(loss, "analyze", _explode)
    assert main(["diagnose", str(run), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "incomplete"
    assert not any(c["code"] == "healthy" for c in doc["root_causes"])
    assert doc["engine"]["failed_analyzers"] == [{"analyzer": "loss",
                                                  "error": "MemoryError: Unable to allocate 43.9 GiB for an array"}]
    diagnosis = Diagnosis.from_dict(doc)
    slack = json.dumps(render_slack(diagnosis)[0])
    for out in (render_text(diagnosis), render_markdown(diagnosis), render_github(diagnosis), slack):
        said = [ln for ln in out.splitlines() if "loss analyzer failed" in ln]
        assert len(said) == 1 and "MemoryError" in said[0], out
