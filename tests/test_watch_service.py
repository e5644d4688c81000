"""A live run's warnings through the service: the real app (uvicorn on loopback) with its ingest
endpoint, the real slack_sdk talking to the Slack stand-in, and the watch's ServiceNotifier (plain
urllib) in a real tiny training. A thread per run, updated; per-run tokens, stored hashed (SQLite
and PostgreSQL); 401, 413, 422 and 429 each with its reason; no secret ever reaches Slack."""
from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
import torch
import uvicorn
from sqlalchemy import select

from analysis.live_warning import LiveWarning
from analysis.model import Diagnosis
from bot.settings import Settings
from bot.store import Store, watch_runs
from bot.watch_threads import token_hash
from handlers.watch import watch
from handlers.watch.notify import ServiceNotifier, WatchNotifyError, from_env
from handlers.web import create_app
from tests.fakes.slack_api import SlackStandIn
from tests.watching import one_thread  # noqa: F401 (an autouse fixture)

ADMIN = "admin-" + uuid.uuid4().hex
CHANNEL = "CWATCH"
AWS_KEY = "AKIA" + "Q7HX2M4PZRW9KTB3"
PG = "postgresql://postgres@127.0.0.1:5432/test"


class Service:
    """create_app served by uvicorn on an ephemeral loopback port, in a thread of this process."""

    def __init__(self, settings: Settings) -> None:
        self.app = create_app(settings)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        end = time.time() + 30
        while not self.server.started:
            assert time.time() < end, "the service did not start"
            time.sleep(0.05)

    def call(self, path: str, body, token: str | None = None, raw: bytes | None = None) -> tuple[int, dict, Any]:
        """(status, JSON answer, headers) of a POST."""
        data = raw if raw is not None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
        try:
            with urllib.request.urlopen(urllib.request.Request(self.url + path, data, headers), timeout=30) as r:
                return r.status, json.loads(r.read()), r.headers
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}"), exc.headers

    def open_run(self, name: str = "tiny") -> tuple[str, str]:
        code, answer, _ = self.call("/v1/runs", {"name": name}, ADMIN)
        assert code == 201, answer
        return answer["run_id"], answer["token"]

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def service(slack, tmp_path, monkeypatch):
    started = []

    def start(**extra) -> Service:
        env = {"SLACK_BOT_TOKEN": "xoxb-test-token", "MLTD_SLACK_API_URL": slack.api_url, "MLTD_INGEST_TOKEN": ADMIN,
               "MLTD_WATCH_CHANNEL": CHANNEL, "MLTD_DATABASE_URL": f"sqlite:///{tmp_path / 'state.db'}",
               "MLTD_QUEUE_URL": f"sqlite:///{tmp_path / 'queue.db'}", "MLTD_QUEUE_NAME": f"q-{uuid.uuid4().hex[:8]}",
               **extra}
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        started.append(Service(Settings()))
        return started[-1]
    yield start
    for s in started:
        s.close()


def thread_of(slack: SlackStandIn, run_id: str, top_ts: str) -> tuple[list[dict], list[dict], list[dict]]:
    """(top messages, replies, updates of the top) the service made for one run's thread."""
    posts = [p for p in slack.called("chat.postMessage") if p.get("channel") == CHANNEL]
    tops = [p for p in posts if not p.get("thread_ts") and p["_response"]["ts"] == top_ts]
    replies = [p for p in posts if p.get("thread_ts") == top_ts]
    updates = [u for u in slack.called("chat.update") if u.get("ts") == top_ts]
    return tops, replies, updates


def _creeping_lr_training(steps: int = 520) -> list[float]:
    """SGD whose LR creeps up 1.2% a step: an early warning (the loss climbing), then the
    post-mortem's confirmation when it diverges. The watch's notifier comes from the environment."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(512, 8, generator=g)
    y = (x[:, :2].sum(1) > 0).long()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    losses = []
    with watch(model, opt, budget=None) as w:
        for step in range(1, steps + 1):
            for group in opt.param_groups:
                group["lr"] = 0.01 * 1.012 ** step
            i = (step * 32) % 512
            loss = torch.nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
            opt.zero_grad()
            loss.backward()
            w.log(loss=loss)
            opt.step()
            losses.append(loss.item())
    return [warning.step for warning in w.watcher.posts]


def test_a_watched_training_gets_one_thread_that_is_updated(service, slack, monkeypatch):
    svc = service()
    run_id, token = svc.open_run("creeping-lr")
    monkeypatch.setenv("MLTD_SERVICE_URL", svc.url)
    monkeypatch.setenv("MLTD_RUN_TOKEN", token)
    assert isinstance(from_env(), ServiceNotifier)
    posted = _creeping_lr_training()
    assert len(posted) >= 2, posted                          # the early warning, then at least one update
    run = svc.app.state.worker.store.watch_run(run_id)
    tops, replies, updates = thread_of(slack, run_id, run.thread_ts)
    assert len(tops) == 1 and "early warning" in tops[0]["text"] and "lr_too_high" in tops[0]["text"]
    assert len(replies) == len(posted) - 1 and len(updates) == len(posted) - 1
    assert "update 1" in replies[0]["text"] and "update" in updates[-1]["text"]
    assert run.warnings == len(posted)
    everything = str(slack.calls)
    assert token not in everything and token.split(".")[2] not in everything and ADMIN not in everything


def test_a_warning_needs_its_own_runs_token(service):
    svc = service()
    run_id, token = svc.open_run("a")
    other_id, other = svc.open_run("b")
    warning = {"root_causes": [], "watch": {"step": 1, "update": 0}}
    path = f"/v1/runs/{run_id}/warnings"
    assert svc.call(path, warning)[0] == 401                                        # no token
    assert svc.call(path, warning, token[:-2] + "xx")[0] == 401                     # wrong secret
    assert svc.call(path, warning, other)[0] == 401                                 # another run's token
    assert svc.call(f"/v1/runs/{uuid.uuid4().hex}/warnings", warning, token)[0] == 401    # unknown run
    assert svc.call(path, warning, ADMIN)[0] == 401                                 # the admin token is no run token
    code, answer, _ = svc.call("/v1/runs", {"name": "c"}, token)                    # a run token opens no run
    assert code == 401 and "admin" in answer["error"]
    assert svc.call(f"/v1/runs/{other_id}/warnings", warning, other)[0] == 200


def test_a_run_that_posts_too_fast_gets_429_with_retry_after(service, monkeypatch):
    svc = service(MLTD_INGEST_BURST="2", MLTD_INGEST_RATE_PER_MIN="1")
    run_id, token = svc.open_run()
    warning = {"root_causes": [], "watch": {"step": 1, "update": 0}}
    codes = [svc.call(f"/v1/runs/{run_id}/warnings", warning, token) for _ in range(3)]
    assert [c[0] for c in codes] == [200, 200, 429]
    assert 1 <= int(codes[2][2]["Retry-After"]) <= 60 and "retry in" in codes[2][1]["error"]
    with pytest.raises(WatchNotifyError, match=r"HTTP 429 \(retry after \d+ s\)"):      # the watch says it on stderr
        ServiceNotifier(svc.url, token).post(LiveWarning(Diagnosis("needs_more_data", {"id": run_id}, [], []), 1, 0))
    other_id, other = svc.open_run()                                    # the limit is per run
    assert svc.call(f"/v1/runs/{other_id}/warnings", warning, other)[0] == 200


def test_bad_bodies_are_refused_with_the_reason(service):
    svc = service(MLTD_INGEST_MAX_BYTES="2000")
    run_id, token = svc.open_run()
    path = f"/v1/runs/{run_id}/warnings"
    big = {"root_causes": [{"code": "x", "issue": "y" * 5000}], "watch": {"step": 1, "update": 0}}
    assert svc.call(path, big, token)[0] == 413
    code, answer, _ = svc.call(path, None, token, raw=b"{not json")
    assert code == 422 and "not JSON" in answer["error"]
    code, answer, _ = svc.call(path, {"root_causes": []}, token)
    assert code == 422 and "watch" in answer["error"]
    code, answer, _ = svc.call(path, {"root_causes": [{"code": 3}], "watch": {"step": 1}}, token)
    assert code == 422 and "root_causes[].code" in answer["error"]
    code, answer, _ = svc.call("/v1/runs", {"channel": 5}, ADMIN)
    assert code == 422


def test_a_cause_outside_the_taxonomy_is_refused_not_dropped(service, slack):
    """A code or severity the service does not know (a watch of another version) is a 422 naming the
    field, before anything reaches Slack; the same warning with a taxonomy code is posted."""
    svc = service()
    run_id, token = svc.open_run()
    path = f"/v1/runs/{run_id}/warnings"
    posted_before = len(slack.called("chat.postMessage"))
    cause = {"code": "lr_way_too_high", "issue": "loss climbing", "severity": "high", "confidence": 0.6}
    warning = {"root_causes": [cause], "watch": {"step": 3, "update": 0}}
    code, answer, _ = svc.call(path, warning, token)
    assert code == 422 and "root_causes[].code 'lr_way_too_high'" in answer["error"]
    code, answer, _ = svc.call(path, {**warning, "root_causes": [{**cause, "code": "lr_too_high", "severity": "dire"}]},
                               token)
    assert code == 422 and "root_causes[].severity 'dire'" in answer["error"]
    assert len(slack.called("chat.postMessage")) == posted_before
    assert svc.call(path, {**warning, "root_causes": [{**cause, "code": "lr_too_high"}]}, token)[0] == 200


def test_the_endpoint_is_off_without_an_admin_token(service):
    svc = service(MLTD_INGEST_TOKEN="")
    code, answer, _ = svc.call("/v1/runs", {"name": "x"}, "anything")
    assert code == 404 and "MLTD_INGEST_TOKEN" in answer["error"]


def test_no_secret_reaches_slack_even_from_a_client_that_does_not_redact(service, slack):
    """The service redacts and escapes what it posts, whatever the client sent."""
    svc = service()
    run_id, token = svc.open_run()
    warning = {"status": "needs_more_data",
               "root_causes": [{"code": "lr_too_high", "issue": f"loss climbing <!channel> key {AWS_KEY}",
                                "severity": "high", "confidence": 0.6, "early": True,
                                "evidence": [{"text": f"AWS_SECRET_ACCESS_KEY={AWS_KEY}xyz", "artifact": "live metrics",
                                              "locator": "step 3"}],
                                "fix": "Lower the LR"}],
               "watch": {"step": 3, "update": 0, "alarms": ["lr_too_high"], "early": ["lr_too_high"]}}
    code, answer, _ = svc.call(f"/v1/runs/{run_id}/warnings", warning, token)
    assert code == 200
    top = next(p for p in slack.called("chat.postMessage") if p["_response"]["ts"] == answer["thread_ts"])
    posted = json.dumps(top)
    assert AWS_KEY not in posted and "<!channel>" not in posted and "&lt;!channel&gt;" in posted
    assert "lr_too_high" in posted and token not in posted


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'state.db'}" if request.param == "sqlite" else PG)
    prefix = f"testw-{uuid.uuid4().hex[:8]}-"
    yield s, prefix
    s.delete(prefix)                            # only this run's rows: PostgreSQL is shared


def test_run_tokens_are_stored_hashed_and_buckets_refill(store):
    s, prefix = store
    run_id = prefix + "r1"
    token = f"mltdrun.{run_id}.{uuid.uuid4().hex}"
    s.open_watch_run(run_id, token_hash(token), channel=CHANNEL, burst=2)
    with s.engine.connect() as c:
        row = c.execute(select(watch_runs).where(watch_runs.c.id == run_id)).mappings().one()
    assert row["token_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert all(token not in str(v) and token.split(".")[2] not in str(v) for v in row.values())
    per_s = 1.0                                 # a token a second
    assert [s.take_watch_token(run_id, per_s, 2) for _ in range(2)] == [0.0, 0.0]
    wait = s.take_watch_token(run_id, per_s, 2)
    assert 0 < wait <= 1.0
    time.sleep(wait + 0.02)
    assert s.take_watch_token(run_id, per_s, 2) == 0.0
