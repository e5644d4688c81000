"""What a service test needs: the Slack stand-in, moto's S3 server on loopback with a bucket, and
signed Slack events. Everything binds 127.0.0.1 on an ephemeral port."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
import uuid
from pathlib import Path

SECRET = "test-signing-secret"


def wait_for(pred, timeout: float = 60.0):
    """pred()'s first truthy value, polled every 50 ms."""
    end = time.time() + timeout
    while time.time() < end:
        got = pred()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def signed(body: dict | str, secret: str = SECRET, ts: str | None = None,
           retry: int | None = None) -> tuple[bytes, dict]:
    raw = (body if isinstance(body, str) else json.dumps(body)).encode()
    ts = ts if ts is not None else str(int(time.time()))
    sig = "v0=" + hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + raw, hashlib.sha256).hexdigest()
    headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig, "Content-Type": "application/json"}
    if retry is not None:
        headers.update({"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"})
    return raw, headers


def mention(text: str, *, channel: str = "C1", team: str = "T1", event_id: str | None = None, ts: str | None = None,
            thread_ts: str | None = None, files: list | None = None) -> dict:
    ts = ts or f"{time.time():.6f}"
    event = {"type": "app_mention", "user": "U1", "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    if thread_ts:
        event["thread_ts"] = thread_ts
    if files:
        event["files"] = files
    return {"token": "legacy", "team_id": team, "api_app_id": "A1", "event": event, "type": "event_callback",
            "event_id": event_id or f"Ev{uuid.uuid4().hex[:12].upper()}", "event_time": int(time.time()),
            "authorizations": [{"team_id": team, "user_id": "UBOT", "is_bot": True}]}


class S3:
    """moto in server mode, reached through boto3 like any S3-compatible store; `requests` logs
    every request it served (a test asserts a run is not fetched twice)."""

    def __init__(self, bucket: str = "ml-runs") -> None:
        from moto.server import ThreadedMotoServer

        os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
        os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        self.requests: list[tuple[str, str, str]] = []     # (method, path, query) of every request served
        wsgi = self.server._server
        app = wsgi.app

        def logged(environ, start_response):
            self.requests.append((environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""),
                                  environ.get("QUERY_STRING", "")))
            return app(environ, start_response)

        wsgi.app = logged
        host, port = self.server.get_host_and_port()
        self.url = f"http://{host}:{port}"
        self.bucket = bucket
        self.client().create_bucket(Bucket=bucket)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.url, region_name="us-east-1")

    def upload(self, folder: Path, prefix: str) -> int:
        n = 0
        for f in sorted(folder.rglob("*")):
            if f.is_file() and not f.name.startswith("."):
                key = f"{prefix.rstrip('/')}/{f.relative_to(folder).as_posix()}"
                self.client().upload_file(str(f), self.bucket, key)
                n += 1
        return n

    def gets(self, prefix: str) -> int:
        """Object downloads (GETs of a key) under `prefix` so far."""
        path = f"/{self.bucket}/{prefix.strip('/')}/"
        return sum(1 for m, p, _ in self.requests if m == "GET" and p.startswith(path))

    def lists(self) -> int:
        """Listings of the bucket so far."""
        bucket = f"/{self.bucket}"
        return sum(1 for m, p, q in self.requests if m == "GET" and p.rstrip("/") == bucket and "list-type" in q)

    def close(self) -> None:
        self.server.stop()


def env(slack_api_url: str, s3_url: str, tmp: Path, **extra) -> dict[str, str]:
    """The service's environment for a test: everything local, SQLite unless told otherwise."""
    out = {"SLACK_BOT_TOKEN": "xoxb-test-token", "SLACK_SIGNING_SECRET": SECRET, "MLTD_SLACK_API_URL": slack_api_url,
           "AWS_ENDPOINT_URL": s3_url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1", "MLTD_ALLOWED_BUCKETS": "ml-runs", "MLTD_RUN_URI": "s3://ml-runs/runs/{run}/",
           "MLTD_DATABASE_URL": f"sqlite:///{tmp / 'state.db'}", "MLTD_QUEUE_URL": f"sqlite:///{tmp / 'queue.db'}",
           "MLTD_QUEUE_NAME": f"mltd-{uuid.uuid4().hex[:8]}", "MLTD_REAP_EVERY_S": "1", "MLTD_WORKERS": "2",
           "MLTD_RUN_CACHE_DIR": str(tmp / "run-cache")}
    out.update(extra)
    return out


def signed_form(fields: dict[str, str], secret: str = SECRET, ts: str | None = None) -> tuple[bytes, dict]:
    """A form-encoded request signed like Slack signs slash commands and interactions (v0 over the
    raw body, which for an interaction is `payload=` and the URL-encoded JSON)."""
    from urllib.parse import urlencode

    raw, headers = signed(urlencode(fields), secret=secret, ts=ts)
    return raw, {**headers, "Content-Type": "application/x-www-form-urlencoded"}


def click(action_id: str, value: str, *, team: str = "T1", channel: str = "C1", user: str = "U2",
          message_ts: str = "1700000000.000001", trigger_id: str | None = None, response_url: str = "") -> dict:
    """A block_actions payload: someone pressed a button in one of mltd's messages."""
    return {"type": "block_actions", "user": {"id": user, "username": "ada", "name": "ada", "team_id": team},
            "api_app_id": "A1", "token": "legacy", "trigger_id": trigger_id or f"{uuid.uuid4().int % 10**13}.1.abc",
            "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False},
            "team": {"id": team, "domain": "test"}, "enterprise": None, "is_enterprise_install": False,
            "channel": {"id": channel, "name": "ml-runs"}, "state": {"values": {}},
            "message": {"type": "message", "ts": message_ts, "bot_id": "BBOT", "text": "mltd: ..."},
            "response_url": response_url,             # hooks.slack.com/actions/... in Slack; a stand-in's in a test
            "actions": [{"action_id": action_id, "block_id": "mltd_feedback", "value": value, "type": "button",
                         "text": {"type": "plain_text", "text": "x", "emoji": True},
                         "action_ts": f"{time.time():.6f}"}]}


def submission(view: dict, values: dict, *, team: str = "T1", user: str = "U2") -> dict:
    """A view_submission payload of a modal Slack opened (`view`, as views.open answered it), with
    the inputs' `values` ({block_id: {action_id: value}}) as the user left them."""
    return {"type": "view_submission", "team": {"id": team, "domain": "test"},
            "user": {"id": user, "username": "ada", "name": "ada", "team_id": team}, "api_app_id": "A1",
            "token": "legacy", "trigger_id": f"{uuid.uuid4().int % 10**13}.2.def", "response_urls": [],
            "is_enterprise_install": False, "view": {**view, "state": {"values": values}}}
