"""tests/wild's own checks (check_labels.py) hold for the corpus as committed, and they can fail."""
import json
import shutil

from tests.wild import check_labels


def test_the_wild_corpus_passes_its_checks(capsys):
    assert check_labels.main() == 0, capsys.readouterr().out


def test_an_expert_read_of_a_case_not_in_its_split_or_with_a_made_up_code_is_caught(tmp_path, capsys):
    lab = json.loads((check_labels.HERE / "labels.json").read_text())[0]
    shutil.copytree(check_labels.HERE / "cases" / lab["id"], tmp_path / "cases" / lab["id"])
    (tmp_path / "labels.json").write_text(json.dumps([lab]))
    good = {"id": lab["id"], "split": lab["split"], "sample": "s", "codes": ["healthy"]}
    (tmp_path / "expert_reads.json").write_text(json.dumps({"reads": [good]}))
    assert check_labels.main(tmp_path) == 0
    other = "measure" if lab["split"] == "tune" else "tune"
    for bad in ({**good, "split": other}, {**good, "codes": ["nan_loss"]}, {**good, "codes": []}):
        (tmp_path / "expert_reads.json").write_text(json.dumps({"reads": [bad]}))
        assert check_labels.main(tmp_path) == 1
    assert "expert read" in capsys.readouterr().out


def test_a_recorded_agent_answer_off_its_split_or_without_evidence_is_caught(tmp_path, capsys):
    lab = json.loads((check_labels.HERE / "labels.json").read_text())[0]
    shutil.copytree(check_labels.HERE / "cases" / lab["id"], tmp_path / "cases" / lab["id"])
    (tmp_path / "labels.json").write_text(json.dumps([lab]))
    cause = {"code": "healthy", "severity": "info", "confidence": 0.6,
             "evidence": [{"text": "loss", "artifact": "train.log", "locator": "line 1"}]}
    good = {"id": lab["id"], "split": lab["split"], "answer": {"root_causes": [cause]}}
    (tmp_path / "agent_reads.json").write_text(json.dumps({"reads": [good]}))
    assert check_labels.main(tmp_path) == 0
    other = "measure" if lab["split"] == "tune" else "tune"
    for bad in ({**good, "split": other}, {**good, "answer": {"root_causes": [{**cause, "evidence": []}]}},
                {**good, "answer": {"root_causes": [{**cause, "code": "nan_loss"}]}}, {**good, "answer": {}},
                {**good, "answer": {"root_causes": [{**cause, "severity": "grave"}]}},
                {**good, "answer": {"root_causes": [{**cause, "evidence": [{"text": "loss"}]}]}},
                {**good, "answer": {"root_causes": ["lr_too_high"]}}):
        (tmp_path / "agent_reads.json").write_text(json.dumps({"reads": [bad]}))
        assert check_labels.main(tmp_path) == 1
    assert "agent read" in capsys.readouterr().out


def test_a_diagnosis_that_crashed_is_not_the_quiet_answer_a_healthy_case_wants():
    from bench.wild import judge
    healthy = {"id": "x", "code": "healthy"}
    assert judge(healthy, {"status": "no_failure_found", "root_causes": []})["top1"]
    crashed = judge(healthy, {"status": "exit 1", "root_causes": []})
    assert not crashed["top1"] and not crashed["top3"] and crashed["crashed"]
