"""`mltd diagnose` end to end, on real tiny CPU training runs with one fault each: every run of the
tuning set (the hand-written scenarios and the tuning families), asserted one by one."""
import json
import re
import subprocess
import sys

import pytest

from handlers.cli import main
from tests.scenarios import TUNING

KEYS = ["status", "run", "symptoms", "root_causes", "quick_fixes", "missing_artifacts", "questions",
        "tell_apart", "analysis_artifacts", "engine"]


def run_json(path, *extra, capsys=None):
    code = main(["diagnose", str(path), "--format", "json", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.mark.parametrize("name", sorted(TUNING))
def test_top_cause_and_located_evidence(name, scenario, capsys):
    code, doc = run_json(scenario(name), capsys=capsys)
    assert code == 0
    assert list(doc) == KEYS
    top = doc["root_causes"][0]
    assert top["code"] == TUNING[name][1], doc["root_causes"]
    artifacts = {a["path"] for a in doc["run"]["artifacts"]}
    for cause in doc["root_causes"]:
        assert cause["evidence"], cause
        for ev in cause["evidence"]:
            assert ev["artifact"] in artifacts and ev["locator"], ev
        if cause["issue"].startswith("Gradient norm grew"):     # the headline's steps are the evidence's
            first, last = re.findall(r"from \w+ ([\d,.k]+) to ([\d,.k]+)$", cause["issue"])[0]
            assert re.search(rf"at \w+ {re.escape(first)} to .* at \w+ {re.escape(last)}$",
                             cause["evidence"][0]["text"]), cause
    if top["code"] == "healthy":
        assert doc["status"] == "no_failure_found"
        assert not [c for c in doc["root_causes"] if c["severity"] in ("critical", "high")]
    else:        # confident means complete; below 0.8 the reply asks for what would settle it
        assert doc["status"] == ("diagnosis_complete" if top["confidence"] >= 0.8 else "needs_more_data")


def test_lr_jump_names_step_line_and_patch(scenario, capsys):
    run = scenario("lr_jump_mlp")
    _, doc = run_json(run, capsys=capsys)
    top = doc["root_causes"][0]
    jump = top["evidence"][0]
    assert "0.02 to 0.8" in jump["text"] and jump["artifact"] == "train.log"
    line = int(jump["locator"].split()[1])
    assert "lr=0.8" in (run / "train.log").read_text().splitlines()[line - 1]
    assert "-    lr: 0.8\n+    lr: 0.06" in top["patch"]
    assert top["patch"].startswith("--- a/config.yaml\n+++ b/config.yaml\n")


def test_fp16_nan_is_not_called_exploding_gradients(scenario, capsys):
    _, doc = run_json(scenario("half_overflow"), capsys=capsys)
    codes = [c["code"] for c in doc["root_causes"]]
    assert codes[0] == "numerical_instability" and "exploding_gradients" not in codes
    texts = " ".join(e["text"] for e in doc["root_causes"][0]["evidence"])
    assert "fp16 = true" in texts and ".half()" in texts
    assert '-  "fp16": true' in doc["root_causes"][0]["patch"]


def test_embedding_heavy_lm_quotes_its_samples(scenario, capsys):
    _, doc = run_json(scenario("embedding_lm"), capsys=capsys)
    top = doc["root_causes"][0]
    assert top["code"] == "architecture_imbalance"
    share = int(top["issue"].split("hold ")[1].split("%")[0])
    assert 70 <= share <= 90
    assert any(e["artifact"] == "samples.txt" for e in top["evidence"])


def test_oom_reports_the_numbers(scenario, capsys):
    _, doc = run_json(scenario("host_oom"), capsys=capsys)
    top = doc["root_causes"][0]
    assert "35184372088832" in top["evidence"][0]["text"] or "tried to allocate" in top["issue"]
    assert any("eval_logits_buffer" in e["text"] for e in top["evidence"])


def test_symptoms_and_markdown_and_plot(scenario, tmp_path, capsys):
    png = tmp_path / "loss.png"
    code = main(["diagnose", str(scenario("lr_jump_mlp")), "--format", "markdown", "--plot", str(png),
                 "--symptom", "loss diverged at epoch 7"])
    out = capsys.readouterr().out
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.startswith("### mltd: Diagnosis complete")
    assert "| 1 | Learning rate raised 40x" in out and "```diff" in out and "<details>" in out
    code, doc = run_json(scenario("lr_jump_mlp"), "--symptom", "diverged", capsys=capsys)
    assert doc["symptoms"] == ["diverged"]


def test_text_report_is_plain_when_not_a_tty(scenario):
    out = subprocess.run([sys.executable, "-m", "handlers.cli", "diagnose", str(scenario("host_oom"))],
                         capture_output=True, text=True, check=True).stdout
    assert "out_of_memory" in out and "\x1b[" not in out
