"""The Slack path end to end: signed events into the FastAPI app (bolt), the durable request, the
huey worker, artifacts from S3 (moto), and the real slack_sdk talking to the Slack stand-in."""
import time

import pytest
from fastapi.testclient import TestClient

from bot.settings import Settings
from bot.store import Store
from handlers.web import create_app
from tests.fakes.service import S3, env, mention, signed, wait_for


@pytest.fixture(scope="module")
def s3(scenario):
    s = S3()
    s.upload(scenario("lr_jump_mlp"), "runs/42")
    yield s
    s.close()


@pytest.fixture
def service(slack, s3, tmp_path, monkeypatch):
    def start(**extra):
        for k, v in env(slack.api_url, s3.url, tmp_path, **extra).items():
            monkeypatch.setenv(k, v)
        return TestClient(create_app(Settings(), run_worker=True))
    return start


def post(client, body, **kw):
    raw, headers = signed(body, **kw)
    return client.post("/slack/events", content=raw, headers=headers)


def placeholders(slack, thread_ts):
    return [p for p in slack.called("chat.postMessage") if p.get("thread_ts") == thread_ts]


def answers(slack, thread_ts, needle=""):
    """chat.update calls on this thread's placeholder whose blocks or text contain `needle`."""
    ts = {p["_response"]["ts"] for p in placeholders(slack, thread_ts)}
    return [u for u in slack.called("chat.update") if u.get("ts") in ts
            and (needle in str(u.get("blocks")) or needle in u.get("text", ""))]


def events(client, outcome: str) -> float:
    """The service's Slack events counter for `outcome`, as /metrics reports it."""
    line = f'mltd_events_total{{outcome="{outcome}",source="slack"}} '
    return next((float(x[len(line):]) for x in client.get("/metrics").text.splitlines() if x.startswith(line)), 0.0)


def test_bad_signatures_and_timestamps_get_401(service):
    with service() as client:
        body = mention("<@UBOT> run 42")
        raw, headers = signed(body)
        forged = client.post("/slack/events", content=raw, headers={**headers, "X-Slack-Signature": "v0=00"})
        assert forged.status_code == 401
        assert post(client, body, ts=str(int(time.time()) - 600)).status_code == 401          # replayed
        assert post(client, body, ts="soon").status_code == 401                               # non-numeric
        assert client.post("/slack/events", content=raw).status_code == 401                   # unsigned
        ok = post(client, {"type": "url_verification", "challenge": "abc", "token": "x"})
        assert ok.status_code == 200 and ok.json()["challenge"] == "abc"


def test_mention_gets_one_reply_in_its_thread(service, slack):
    with service() as client:
        body = mention("<@UBOT> why did run 42 diverge at epoch 7?", thread_ts="1699999999.000001")
        assert post(client, body).status_code == 200
        thread = "1699999999.000001"
        update = wait_for(lambda: answers(slack, thread, "lr_too_high"))
        assert len(placeholders(slack, thread)) == 1 and "Looking at run 42" in placeholders(slack, thread)[0]["text"]
        assert update[0]["parse"] == "none" and update[0]["text"].startswith("mltd: Diagnosis complete")
        blocks = str(update[0]["blocks"])
        assert "0.02 to 0.8" in blocks and "config.yaml" in blocks
        wait_for(lambda: [c for c in slack.called("files.completeUploadExternal") if c.get("thread_ts") == thread])
        duplicates = events(client, "duplicate")
        assert post(client, body, retry=1).status_code == 200                     # Slack's retry: nothing more
        assert events(client, "duplicate") == duplicates + 1                      # known before the ack
        store = Store(client.app.state.worker.settings.database_url)
        assert sum(store.counts().values()) == 1 and store.get(f"slack:{body['event_id']}").attempts == 1
        assert len(placeholders(slack, thread)) == 1 and len(answers(slack, thread)) == 1
        assert len([c for c in slack.called("files.completeUploadExternal") if c.get("thread_ts") == thread]) == 1


@pytest.mark.parametrize("text, expected", [
    ("<@UBOT> what happened to run nope-7?", "There are no files under s3://ml-runs/runs/nope-7/"),
    ("<@UBOT> look at s3://private-bucket/runs/1/", "not allowed to read bucket `private-bucket`"),
    ("<@UBOT> why is it slow", "Which run?"),
])
def test_requests_that_cannot_be_served_get_a_clear_reply(service, slack, text, expected):
    with service() as client:
        body = mention(text)
        post(client, body)
        wait_for(lambda: answers(slack, body["event"]["ts"], expected))


def test_s3_outage_is_named_in_the_reply(service, slack):
    with service(AWS_ENDPOINT_URL="http://127.0.0.1:9", MLTD_JOB_RETRIES="0") as client:
        body = mention("<@UBOT> run 42 looks stuck")
        post(client, body)
        wait_for(lambda: answers(slack, body["event"]["ts"], "could not reach S3"), 60)


def test_log_text_cannot_ping_and_secrets_never_leave(service, slack):
    pasted = ("<@UBOT> it died:\n```Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
              "    step()\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB "
              "<!channel> key AKIAABCDEFGHIJKLMNOP\n```")
    with service() as client:
        body = mention(pasted)
        post(client, body)
        update = wait_for(lambda: answers(slack, body["event"]["ts"], "out_of_memory"))
        blocks = str(update[0]["blocks"])
        assert "&lt;!channel&gt;" in blocks and "<!channel>" not in blocks
        assert "AKIAABCDEFGHIJKLMNOP" not in blocks and "[aws-key]" in blocks


def test_rate_limits_are_honoured(service, slack):
    with service() as client:
        body = mention("<@UBOT> run 42 please")
        throttled = len([c for c, _ in slack.calls if c.startswith("429:")])
        slack.throttle(2, retry_after=1)
        post(client, body)
        wait_for(lambda: answers(slack, body["event"]["ts"], "lr_too_high"))
        assert len([c for c, _ in slack.calls if c.startswith("429:")]) == throttled + 2
        assert len(placeholders(slack, body["event"]["ts"])) == 1


def test_channel_allow_list(service, slack):
    with service(MLTD_SLACK_CHANNELS="C1") as client:
        body = mention("<@UBOT> run 42", channel="C2")
        refused = events(client, "refused")
        assert post(client, body).status_code == 200
        assert events(client, "refused") == refused + 1                           # decided before the ack
        assert Store(client.app.state.worker.settings.database_url).get(f"slack:{body['event_id']}") is None
        assert not [p for p in slack.called("chat.postMessage") if p.get("channel") == "C2"]


def test_health_and_metrics(service):
    with service() as client:
        assert client.get("/healthz").json() == {"ok": True}
        post(client, mention("<@UBOT> run 42"))
        text = client.get("/metrics").text
        assert 'mltd_events_total{outcome="queued",source="slack"}' in text and "mltd_jobs{" in text


def test_a_worker_that_dies_mid_job_still_leads_to_one_answer(slack, s3, tmp_path, monkeypatch):
    """PostgreSQL state, a Redis queue, two `mltd worker` processes: the first is frozen
    (SIGSTOP) while it holds the job, the second's reaper takes the job over once the lease runs out."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    e = env(slack.api_url, s3.url, tmp_path, MLTD_DATABASE_URL="postgresql://postgres@127.0.0.1:5432/test",
            MLTD_QUEUE_URL="redis://127.0.0.1:6379/0", MLTD_LEASE_S="3", MLTD_REAP_EVERY_S="1", MLTD_WORKERS="1")
    for k, v in e.items():
        monkeypatch.setenv(k, v)
    root = Path(__file__).resolve().parents[1]
    store = Store(e["MLTD_DATABASE_URL"])

    def worker():
        return subprocess.Popen([sys.executable, "-m", "handlers.cli", "worker"], cwd=root, env={**os.environ, **e},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    with TestClient(create_app(Settings(), run_worker=False)) as client:
        for _ in range(3):                   # the first worker may finish before it can be frozen: try again
            body = mention("<@UBOT> why did run 42 blow up")
            key = f"slack:{body['event_id']}"
            post(client, body)
            first = worker()
            try:
                wait_for(lambda: (store.get(key).status in ("running", "done")), 60)
                if store.get(key).status == "done":
                    continue
                os.killpg(first.pid, signal.SIGSTOP)         # the consumer and its worker processes
                if store.get(key).status == "done":
                    continue
                second = worker()
                try:
                    wait_for(lambda: store.get(key).status == "done", 60)
                finally:
                    os.killpg(second.pid, signal.SIGTERM)
                    second.wait(10)
                break
            finally:
                os.killpg(first.pid, signal.SIGKILL)
                first.wait(10)
        else:
            pytest.skip("the first worker finished every time before it could be frozen")
        req = store.get(key)
        assert req.attempts >= 2 and req.result["top"] == "lr_too_high"
        assert len(placeholders(slack, body["event"]["ts"])) == 1
        assert answers(slack, body["event"]["ts"], "lr_too_high")


def test_a_log_attached_to_the_mention_is_diagnosed(service, slack, scenario):
    """The stand-in serves the file only to the bot token, as Slack does."""
    slack.files["train.log"] = (scenario("lr_jump_mlp") / "train.log").read_bytes()
    files = [{"id": "F1", "name": "train.log", "size": len(slack.files["train.log"]),
              "url_private_download": f"{slack.url}/files/train.log"}]
    with service() as client:
        body = mention("<@UBOT> this one diverged", files=files)
        post(client, body)
        update = wait_for(lambda: answers(slack, body["event"]["ts"], "lr_too_high"))
        assert "train.log" in str(update[0]["blocks"])


def test_cli_reads_the_same_stores(s3, tmp_path, monkeypatch, capsys):
    import json

    from handlers.cli import main

    for k, v in env("http://127.0.0.1:9/api/", s3.url, tmp_path).items():
        monkeypatch.setenv(k, v)
    assert main(["diagnose", "run", "42", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["source"] == "s3://ml-runs/runs/42/" and doc["root_causes"][0]["code"] == "lr_too_high"
    assert main(["diagnose", "s3://elsewhere/x/"]) == 2
    assert "not allowed to read bucket `elsewhere`" in capsys.readouterr().err


def test_the_agents_verified_answer_reaches_the_thread(service, slack, scenario):
    from tests.fakes.anthropic_api import KEY, AnthropicStandIn, tool_use

    lines = (scenario("lr_jump_mlp") / "train.log").read_text().splitlines()
    n = next(i for i, line in enumerate(lines, 1) if "lr=0.8" in line)
    api = AnthropicStandIn([[tool_use("submit_diagnosis", {"root_causes": [{
        "code": "lr_too_high", "issue": "Stage 2 of the curriculum sets lr 0.8, 40x stage 1", "severity": "critical",
        "confidence": 0.95, "fix": "Set stage 2's lr to 0.06",
        "evidence": [{"text": "lr=0.8", "artifact": "train.log", "locator": f"line {n}"}]}]})]])
    try:
        with service(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=api.url) as client:
            body = mention("<@UBOT> why did run 42 diverge")
            post(client, body)
            update = wait_for(lambda: answers(slack, body["event"]["ts"], "40x stage 1"))
            assert "agent is off" not in str(update[0]["blocks"])
            req = Store(client.app.state.worker.settings.database_url).get(f"slack:{body['event_id']}")
            wait_for(lambda: Store(client.app.state.worker.settings.database_url).get(req.key).status == "done")
            done = Store(client.app.state.worker.settings.database_url).get(req.key)
            assert done.result["agent"]["cost_usd"] > 0 and done.result["agent"]["turns"] == 1
    finally:
        api.close()


def test_json_logs_follow_a_request_from_event_to_reply(service, slack):
    import io
    import json
    import logging

    from bot.logs import JsonFormatter, Redacting

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(Redacting())
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        with service() as client:
            body = mention("<@UBOT> run 42 token=xoxb-1234-5678-abcdefgh")
            post(client, body)
            key = f"slack:{body['event_id']}"
            wait_for(lambda: '"event": "answered"' in stream.getvalue() and key in stream.getvalue())
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    events = {(r["logger"], r.get("event")) for r in lines if r["request_id"] == key}
    assert {("mltd.web", "queued"), ("mltd.worker", "leased"), ("mltd.worker", "answered")} <= events
    assert "xoxb-1234" not in stream.getvalue()
