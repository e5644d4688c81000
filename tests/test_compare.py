"""`compare`: two real tiny CPU runs of the same MLP and seed, one whose curriculum raises the LR 40x
at step 211 (the injected fault) and one that keeps it, and a run whose loop lacks
`optimizer.zero_grad()` against the same run with it; the engine, its renderers and `mltd compare`."""
import json
import re
import shutil

import numpy as np
import pytest

from analysis.compare import Parting, compare, diff_code, implicates, part
from analysis.diagnose import diagnose
from analysis.ingest import load_run
from analysis.metrics import Series
from analysis.model import CODES
from bot.render.compare import render_compare_json, render_compare_markdown, render_compare_slack, render_compare_text
from handlers.cli import main
from tests.compare_runs import FAKE_KEY, FAULT_STEP, cached_pair, cached_pairs

LR_KEY = "curriculum.stages.1.lr"


@pytest.fixture(scope="module")
def pair():
    return cached_pair()


@pytest.fixture(scope="module")
def result(pair):
    a, b = pair
    diagnosis, run_a = diagnose(a)
    return compare(run_a, load_run(b), diagnosis)


def test_the_curves_part_where_the_fault_starts(result):
    first = result.first_parting
    assert first is not None and first.metric == "lr" and first.step == FAULT_STEP
    loss = next(p for p in result.partings if p.metric == "train_loss")
    # the LR set at step 211 changes the loss from the next step on; the runs were identical before
    assert FAULT_STEP < loss.step <= FAULT_STEP + 3 and loss.noise == 0
    assert loss.b < 0.05 and "train.log" in loss.artifact


def test_the_lr_key_explains_the_failure_and_says_why(result):
    assert result.diagnosis.code == "lr_too_high"
    assert result.status == "explained"
    top = result.explanations[0]
    assert (top.kind, top.subject) == ("config", LR_KEY)
    assert "lr_too_high" in top.why and "40x" in top.why and top.where.startswith("config.yaml line ")
    assert {d.key for d in result.config} == {LR_KEY, "run_name", "tracking.api_key"}
    assert [e.subject for e in result.explanations][-1] == "run_name"       # it only names the run
    lr = next(d for d in result.config if d.key == LR_KEY)
    assert (lr.a, lr.b, lr.ratio) == ("0.8", "0.02", 40.0)
    assert result.code == []                      # both ran the same training code


def test_with_another_seed_the_lr_key_still_explains_it():
    a, b = cached_pairs()["lr_jump_other_seed"]
    diagnosis, run_a = diagnose(a)
    result = compare(run_a, load_run(b), diagnosis)
    assert result.explanations[0].subject == LR_KEY and result.status == "explained"
    seed = next(e for e in result.explanations if e.subject == "seed")
    assert seed.score < result.explanations[0].score - 3
    partings = {p.metric: p.step for p in result.partings}
    # other data and weights: the losses differ from the first step; the LR and the gradients
    # still part where the fault starts
    assert partings["train_loss"] == 1 and partings["lr"] == FAULT_STEP
    assert FAULT_STEP <= partings["grad_norm"] <= FAULT_STEP + 15


def test_the_missing_code_line_explains_the_gradient_blow_up():
    a, b = cached_pairs()["zero_grad"]
    diagnosis, run_a = diagnose(a)
    result = compare(run_a, load_run(b), diagnosis)
    assert diagnosis.root_causes[0].code == "exploding_gradients" and result.config == []
    assert [c.artifact for c in result.code] == ["train.py"]
    assert "\n-        optimizer.zero_grad()\n" in result.code[0].diff and result.code[0].removed == 1
    top = result.explanations[0]
    assert result.status == "explained" and (top.kind, top.subject) == ("code", "train.py")
    assert "optimizer.zero_grad()" in top.why and top.where == "train.py line 15"
    # gradients pile up from the second step on: that is where the curves part
    assert result.first_parting.metric == "grad_norm" and result.first_parting.step == 2
    assert next(p for p in result.partings if p.metric == "train_loss").step == 3


def test_without_a_failure_in_a_no_difference_is_claimed_to_explain_it(pair):
    a, b = pair
    diagnosis, healthy = diagnose(b)
    assert diagnosis.root_causes[0].code == "healthy"
    backwards = compare(healthy, load_run(a), diagnosis)
    assert backwards.status == "unexplained" and backwards.first_parting.step == FAULT_STEP


def test_a_run_against_its_copy_shows_no_difference(pair, tmp_path):
    a, _ = pair
    copy = shutil.copytree(a, tmp_path / "copy")
    same = compare(load_run(a), load_run(copy))
    assert same.status == "no_difference" and same.first_parting is None and not same.config and not same.code
    assert "never part" in " ".join(same.notes)


def test_code_lines_that_differ_come_as_a_bounded_unified_diff(pair, tmp_path):
    a, b = pair
    changed = shutil.copytree(a, tmp_path / "changed")
    src = (changed / "train.py").read_text()
    assert "momentum=0.9)" in src
    (changed / "train.py").write_text(src.replace("momentum=0.9)", "momentum=0.99)") + "\n" * 3 + "x = 1\n" * 400)
    diffs = diff_code(load_run(changed), load_run(b))
    assert len(diffs) == 1 and diffs[0].artifact == "train.py"
    d = diffs[0]
    assert "-    opt = torch.optim.SGD(model.parameters(), lr=cfg[\"schedule\"][0][1], momentum=0.9)" in d.diff
    assert "+    opt = torch.optim.SGD(model.parameters(), lr=cfg[\"schedule\"][0][1], momentum=0.99)" in d.diff
    assert d.truncated and len(d.diff.splitlines()) <= 60 and d.added == 404 and d.removed == 1


def _series(values, name="train_loss"):
    values = np.asarray(values, dtype=float)
    return Series(name, "train.log", np.arange(1, len(values) + 1, dtype=float), values)


def test_differently_seeded_runs_part_only_where_one_leaves_the_others_noise():
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(2)
    base = 2.0 * np.exp(-np.arange(400) / 80) + 0.1
    a = base * np.exp(rng_a.normal(0, 0.2, 400))
    b = base * np.exp(rng_b.normal(0, 0.2, 400))
    calm = part("train_loss", _series(a), _series(b))
    assert isinstance(calm, Parting) and calm.step is None
    a[250:] += np.linspace(0.5, 5, 150)
    parted = part("train_loss", _series(a), _series(b))
    assert parted.step is not None and 251 <= parted.step <= 256


def test_a_long_noisy_run_does_not_part_by_chance():
    n = 1 << 17
    a = np.exp(np.random.default_rng(3).normal(0, 0.3, n))
    b = np.exp(np.random.default_rng(4).normal(0, 0.3, n))
    assert part("train_loss", _series(a), _series(b)).step is None
    a[100_000:] += 2.0
    assert part("train_loss", _series(a), _series(b)).step == 100_001


def test_every_format_names_the_key_and_never_the_secret(result):
    text, md, js = render_compare_text(result), render_compare_markdown(result), render_compare_json(result)
    blocks, fallback = render_compare_slack(result)
    for out in (text, md, js, json.dumps(blocks), fallback):
        assert LR_KEY in out and FAKE_KEY not in out
    assert "211" in text and "| `curriculum.stages.1.lr` | `0.8` | `0.02` |" in md
    assert json.loads(js)["explanations"][0]["subject"] == LR_KEY
    assert len(blocks) <= 50 and all(len(b["text"]["text"]) <= 3000 for b in blocks if "text" in b)


def test_cli_compare_text_and_json(pair, capsys):
    a, b = pair
    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "explained" and doc["explanations"][0]["subject"] == LR_KEY
    assert doc["first_parting"]["step"] == FAULT_STEP and doc["diagnosis"]["code"] == "lr_too_high"
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mltd compare · run run-42 (A) vs run run-41 (B)") and "What explains it: " + LR_KEY in out


def test_cli_compare_bad_input_is_a_clear_error(pair, tmp_path, capsys):
    a, _ = pair
    assert main(["compare", str(a), str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(a), str(tmp_path / "empty")]) == 2
    captured = capsys.readouterr()
    assert "nothing readable" in captured.err and "Traceback" not in captured.err + captured.out


def test_every_cause_says_what_it_implicates():
    table = implicates()
    assert set(table) == set(CODES) - {"healthy"}
    for keys, code, controls in table.values():
        assert re.compile(keys) and re.compile(code) and controls
    assert re.search(table["numerical_instability"][0], "training.fp16", re.I)
    assert not re.search(table["lr_too_high"][0], "optimizer.name", re.I)
