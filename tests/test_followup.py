"""The pieces of a thread's conversation on their own: what a follow-up asks, the analyzers'
answers over a real scenario run, the signature a later run is held against, the run cache and
the store's thread memory (SQLite and the machine's PostgreSQL)."""
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from analysis.ingest import load_run
from analysis.model import Diagnosis
from analysis.window import around, value_at, window
from bot import followup, pipeline
from bot.fetch import Fetched
from bot.run_cache import RunCache, key_of
from bot.settings import Settings
from bot.store import Store
from handlers.github_webhook import parse as parse_github
from tests import thread_runs

KNOWN = ["train_loss", "grad_norm", "lr", "val_loss"]


@pytest.mark.parametrize("text, kind, extra", [
    ("what about the grad norm around step 600?", "metric", {"metric": "grad_norm", "around": 600}),
    ("loss between step 100 and 2k", "metric", {"metric": "train_loss", "start": 100, "end": 2000}),
    ("grad_norm steps 1,200-1,500", "metric", {"metric": "grad_norm", "start": 1200, "end": 1500}),
    ("the learning rate after step 300", "metric", {"metric": "lr", "start": 300, "end": None}),
    ("why not exploding gradients?", "why_not", {"code": "exploding_gradients"}),
    ("could it be an OOM?", "why_not", {"code": "out_of_memory"}),
    ("show me the config", "config", {}),
    ("what is the warm-up", "config", {}),
    ("which files did you read", "artifacts", {}),
    ("I lowered the LR and re-ran it, is it fixed?", "fix", {}),
    ("what's the weather", "config", {}),
    ("tell me a joke", "other", {}),
])
def test_what_a_follow_up_asks(text, kind, extra):
    q = followup.parse_question(text, KNOWN)
    assert q.kind == kind
    for k, v in extra.items():
        assert getattr(q, k) == v


def test_a_window_reads_the_runs_own_points(scenario):
    s = load_run(scenario("lr_jump_mlp")).metrics.get("train_loss")
    lo, hi = around(s, 250)
    w = window(s, lo, hi)
    inside = (s.steps >= lo) & (s.steps <= hi)
    assert w.points == int(inside.sum()) and w.high.value == float(np.nanmax(s.values[inside]))
    assert w.high.at.startswith("line ") and w.first.step <= 250 <= w.last.step
    assert value_at(s, 299).value == float(s.values[s.steps == 299][0]) and value_at(s, 10_000) is None
    assert window(s, 5000, 6000).points == 0


def test_answers_say_what_they_cannot(scenario):
    out = pipeline.reply(scenario("lr_jump_mlp"), lambda d: "")
    a = pipeline.follow_up(scenario("lr_jump_mlp"), "what was the dropout rate?", pipeline.remembered(out))
    assert a.by == "analyzers" and "No key in this run's config (config.yaml) matches" in a.text
    a = pipeline.follow_up(scenario("lr_jump_mlp"), "tell me a joke", pipeline.remembered(out))
    assert "I can't answer “tell me a joke” from the analyzers alone" in a.text
    a = pipeline.follow_up(scenario("lr_jump_mlp"), "what about the val loss around step 20?", pipeline.remembered(out))
    assert "This run logs no" in a.text or "val_loss" in a.text


def test_the_fix_check_reads_the_same_metric_at_the_same_step(scenario):
    old = pipeline.reply(scenario("lr_jump_mlp"), lambda d: "")
    sig = pipeline.signature(old)
    assert sig["metric"] == "train_loss" and sig["step"] == 299 and sig["value"] > 1000
    fixed = pipeline.reply(thread_runs.cached("fixed", stage2_lr=0.06), lambda d: "")
    got = pipeline.fix_check(pipeline.remembered(old), sig, fixed, "run 42")
    assert got.fixed and got.check["verdict"] == "gone" and got.check["after"] < 0.01 and "\n" not in got.text
    # nothing to fix
    assert pipeline.fix_check(pipeline.remembered(fixed), pipeline.signature(fixed), old, "run 42") is None


def test_the_run_cache_keeps_a_run_for_its_lifetime(tmp_path):
    cache = RunCache(Settings(MLTD_RUN_CACHE_DIR=str(tmp_path / "c"), MLTD_RUN_CACHE_TTL_S=1.0))
    run = tmp_path / "fetched"
    run.mkdir()
    (run / "train.log").write_text("step=1 loss=2\n")
    key = key_of("s3", "s3://b/runs/1/", "fingerprint")
    got = cache.put(key, Fetched(run, "s3://b/runs/1/", ["a note"]))
    assert not run.exists() and (got.path / "train.log").read_text() == "step=1 loss=2\n"
    assert cache.get(key).notes == ["a note"] and cache.get(key_of("s3", "s3://b/runs/1/", "other")) is None
    time.sleep(1.1)
    assert cache.get(key) is None                                           # past its lifetime
    with pytest.raises(ValueError):
        cache.get("../escape")


@pytest.mark.parametrize("url", ["sqlite", "postgresql://postgres@127.0.0.1:5432/test"])
def test_the_store_remembers_a_thread(url, tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}" if url == "sqlite" else url)
    thread = f"slack:C1:h18f-{uuid.uuid4().hex[:8]}"
    uri = f"s3://ml-runs/h18f-{uuid.uuid4().hex[:8]}/"
    assert store.thread(thread) is None
    x, y = (Diagnosis(status=s, run={"id": "42"}, symptoms=[], root_causes=[]) for s in ("x", "y"))
    store.remember(thread, "slack", run="42", run_uri=uri, cache_key="k1", diagnosis=x, signature={"value": None})
    store.remember(thread, "slack", run="42", run_uri=uri, cache_key="k2", diagnosis=y)
    t = store.thread(thread)
    assert (t.cache_key, t.diagnosis, t.signature) == ("k2", y, {"value": None})
    assert [x.thread for x in store.threads_about(uri, "slack")] == [thread]
    assert not store.claim_check(thread, "k2")                 # the run it already is about
    assert store.claim_check(thread, "k3") and not store.claim_check(thread, "k3")   # once per new run


def test_a_comment_starting_with_the_app_is_a_request():
    def payload(body):
        return {"action": "created", "issue": {"number": 7, "pull_request": {}}, "comment": {"id": 1, "body": body},
                "repository": {"full_name": "acme/train"}, "sender": {"login": "alice", "type": "User"}}
    s = Settings(MLTD_GITHUB_APP_SLUG="mltd")
    assert parse_github("issue_comment", "d1", payload("@mltd why not overfitting?"), s).key == "gh:d1"
    assert parse_github("issue_comment", "d2", payload("@MLTD, show me the config"), s).key == "gh:d2"
    assert not hasattr(parse_github("issue_comment", "d3", payload("@mltd-fan nice"), s), "key")
    assert not hasattr(parse_github("issue_comment", "d4", payload("thanks @mltd"), s), "key")


def test_the_cache_key_names_the_content():
    assert key_of("s3", "s3://b/1/", "a") != key_of("s3", "s3://b/1/", "b")
    assert key_of("gh", "acme/train", "501", "1") == key_of("gh", "acme/train", "501", "1")
    assert Path(key_of("gh", "acme/../x", "1")).name == key_of("gh", "acme/../x", "1")
