"""The request store and the queue, on SQLite and on this machine's real PostgreSQL and Redis."""
import json
import pickle
import threading
import time
import uuid

import pytest

from bot.queue import JSONSerializer, make_huey
from bot.store import Store

PG = "postgresql://postgres@127.0.0.1:5432/test"
PREFIX = f"test:{uuid.uuid4().hex[:8]}:"    # this run's keys: PostgreSQL is shared with other runs and the bench


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'state.db'}" if request.param == "sqlite" else PG)
    yield s
    s.delete(PREFIX)                         # only this run's rows: another run may be mid-test


def key():
    return f"{PREFIX}{uuid.uuid4().hex}"


def test_a_request_is_opened_once(store):
    k = key()
    assert store.open(k, "slack", lease_s=30, channel="C1", params={"run": "42"})
    assert not store.open(k, "slack", lease_s=30, channel="C1", params={"run": "42"})      # a retry
    assert store.get(k).params == {"run": "42"}


def test_one_owner_at_a_time(store):
    k = key()
    store.open(k, "slack", lease_s=30)
    won = []
    threads = [threading.Thread(target=lambda i=i: won.append(store.lease(k, f"w{i}", 30))) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    owners = [r for r in won if r is not None]
    assert len(owners) == 1 and owners[0].attempts == 1
    assert not store.finish(k, "someone-else", "done")
    assert store.lease(k, "late", 30) is None                  # the lease still runs


def test_expired_leases_go_back_on_the_queue(store):
    k = key()
    store.open(k, "slack", lease_s=30)
    assert store.lease(k, "dies", 0.01) is not None
    time.sleep(0.05)
    assert k in store.requeue_expired(30)
    again = store.lease(k, "rescuer", 30)
    assert again is not None and again.attempts == 2
    assert store.finish(k, "rescuer", "done", result={"top": "lr_too_high"})
    assert store.get(k).status == "done" and k not in store.requeue_expired(30)


def test_placeholder_is_claimed_once(store):
    k = key()
    store.open(k, "slack", lease_s=30)
    assert store.claim_placeholder(k, 20) and not store.claim_placeholder(k, 20)
    time.sleep(0.05)
    assert store.claim_placeholder(k, 0.01)                    # whoever claimed it died


@pytest.mark.parametrize("url", ["sqlite", "redis://127.0.0.1:6379/0"])
def test_queue_messages_are_json(url, tmp_path):
    huey = make_huey(f"sqlite:///{tmp_path / 'q.db'}" if url == "sqlite" else url, f"test-{uuid.uuid4().hex[:8]}")
    task = huey.task(name="run_request")(lambda k: k)
    task("slack:Ev1")
    raw = huey.storage.dequeue()
    doc = json.loads(raw)
    assert doc["__message__"][1].endswith("run_request") and doc["__message__"][6] == ["slack:Ev1"]
    message = huey.serializer.deserialize(raw)
    assert message.args == ("slack:Ev1",)
    with pytest.raises(ValueError):                            # a pickle on the queue is refused, never loaded
        JSONSerializer().deserialize(pickle.dumps({"x": 1}))
    with pytest.raises(TypeError):
        JSONSerializer().serialize(object())
    huey.storage.flush_queue()


def test_hopeless_requests_are_closed_not_requeued(store):
    k = key()
    store.open(k, "slack", lease_s=30)
    for i in range(2):                       # attempts 1 and 2 die: back on the queue
        assert store.lease(k, f"w{i}", 0.001) is not None
        time.sleep(0.01)
        assert k in store.requeue_expired(30, max_attempts=3)
    assert store.get(k).status == "queued"
    store.lease(k, "w3", 0.001)              # attempt 3 dies too: closed
    time.sleep(0.01)
    assert k not in store.requeue_expired(30, max_attempts=3) and store.get(k).status == "failed"


def test_feedback_is_kept_once_per_person_and_counted(store, request):
    k = key()
    store.open(k, "slack", lease_s=30)
    before = store.feedback_counts()
    assert store.record_feedback(k, "slack:T1:U1", "up", source="slack")
    assert not store.record_feedback(k, "slack:T1:U1", "up", source="slack")                    # a retry
    assert store.record_feedback(k, "slack:T1:U1", "wrong_cause", source="slack", code="overfitting", reason="val rose")
    assert not store.record_feedback(k, "slack:T1:U1", "wrong_cause", source="slack", code="overfitting",
                                     reason="val rose")
    assert store.record_feedback(k, "slack:T1:U1", "wrong_cause", source="slack", code="overfitting")  # reason dropped
    won = []

    def vote() -> None:
        won.append(store.record_feedback(k, "github:bob", "down", source="github"))

    threads = [threading.Thread(target=vote) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert won.count(True) == 1                                 # eight deliveries of one reaction: one verdict
    assert [(f["user"], f["verdict"], f["code"], f["reason"]) for f in store.feedback(k)] == [
        ("slack:T1:U1", "wrong_cause", "overfitting", None), ("github:bob", "down", None, None)]
    assert [f["user"] for f in store.feedback(verdict="wrong_cause") if f["request_key"] == k] == ["slack:T1:U1"]
    after = store.feedback_counts()
    delta = {v: after.get(v, 0) - before.get(v, 0) for v in ("up", "down", "wrong_cause")}
    if request.node.callspec.params["store"] == "sqlite":      # PostgreSQL's counts are shared with other runs
        assert delta == {"up": 1, "down": 1, "wrong_cause": 2}
    else:
        assert delta["up"] >= 1 and delta["down"] >= 1 and delta["wrong_cause"] >= 2


def test_the_diagnosis_on_show_is_the_last_one_posted(store):
    first, second, target = key(), key(), f"gh:{PREFIX}acme/train#7"
    assert store.on_show(target) is None
    store.show(target, first)
    assert store.on_show(target)[0] == first
    store.show(target, second)
    request_key, since = store.on_show(target)
    assert request_key == second and abs(since - time.time()) < 60
