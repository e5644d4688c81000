"""Where an early warning goes: the mltd service (a Slack thread per run), a Slack incoming
webhook, a local file, or stdout.

Each is one small class with `post(warning)`; `from_env` picks one from `MLTD_SERVICE_URL` with
`MLTD_RUN_TOKEN` (the run token the service issued: POST /v1/runs), else `MLTD_WATCH_WEBHOOK` (an
https URL), else `MLTD_WATCH_FILE` (a path), else stdout. Every rendering goes through the same
redacting renderers as a diagnosis, so no secret in a log is ever posted. Plain HTTP with the
standard library: the core install has no service SDK.
"""
from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Protocol, TextIO

from analysis.live_warning import LiveWarning
from bot.redact import clean_doc, slack_escape
from bot.render.jsondoc import render_document
from bot.render.slack import render as render_slack
from bot.render.text import render_text
from bot.render.watch import headline

WEBHOOK_ENV, FILE_ENV = "MLTD_WATCH_WEBHOOK", "MLTD_WATCH_FILE"
SERVICE_ENV, RUN_TOKEN_ENV = "MLTD_SERVICE_URL", "MLTD_RUN_TOKEN"
WEBHOOK_TIMEOUT_S = 10


class WatchNotifyError(RuntimeError):
    """A warning could not be delivered (said once on stderr; training goes on)."""


class Notifier(Protocol):
    def post(self, warning: LiveWarning) -> None: ...


class StreamNotifier:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def post(self, warning: LiveWarning) -> None:
        out = self.stream or sys.stdout
        out.write(headline(warning) + "\n" + render_text(warning.diagnosis) + "\n")
        out.flush()


class FileNotifier:
    """Appends each warning as one JSON line (the diagnosis document plus its `watch` fields)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def post(self, warning: LiveWarning) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(render_document(warning.to_dict()).replace("\n", " ") + "\n")


class WebhookNotifier:
    """A Slack incoming webhook: the diagnosis's Slack blocks under a headline. A webhook has no
    threads, so each update is a new message that names the update."""

    def __init__(self, url: str) -> None:
        self.url = _local_or_https(url, WEBHOOK_ENV)

    def post(self, warning: LiveWarning) -> None:
        blocks, fallback, _ = render_slack(warning.diagnosis)
        head = slack_escape(headline(warning))[:3000]
        body = {"text": f"{head}\n{fallback}"[:3000],
                "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": head}}] + blocks}
        req = urllib.request.Request(self.url, json.dumps(body).encode(), {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=WEBHOOK_TIMEOUT_S) as resp:
                resp.read()
        except OSError as exc:
            raise WatchNotifyError(f"the webhook did not take the warning: {exc}") from exc


def _local_or_https(url: str, name: str) -> str:
    if not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
        raise ValueError(f"{name} must be an https:// URL")
    return url


class ServiceNotifier:
    """The mltd service's ingest endpoint: the service opens a Slack thread for the run with the
    first warning and replies in it with each update. The token names its run
    (`mltdrun.<run id>.<secret>`); the warning is redacted here too, before it leaves the process."""

    def __init__(self, url: str, token: str) -> None:
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != "mltdrun":
            raise ValueError(f"{RUN_TOKEN_ENV} is not a run token (mltdrun.<run id>.<secret>, from POST /v1/runs)")
        self.url = _local_or_https(url, SERVICE_ENV).rstrip("/") + f"/v1/runs/{parts[1]}/warnings"
        self.token = token

    def post(self, warning: LiveWarning) -> None:
        body = json.dumps(clean_doc(warning.to_dict())).encode()
        req = urllib.request.Request(self.url, body, {"Content-Type": "application/json",
                                                      "Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(req, timeout=WEBHOOK_TIMEOUT_S) as resp:
                resp.read()
        except urllib.error.HTTPError as exc:
            try:
                said = json.loads(exc.read() or b"{}").get("error", "")
            except ValueError:
                said = ""
            wait = f" (retry after {exc.headers.get('Retry-After')} s)" if exc.code == 429 else ""
            raise WatchNotifyError(f"the service did not take the warning: HTTP {exc.code}{wait}"
                                   + (f": {said}" if said else "")) from None
        except OSError as exc:
            raise WatchNotifyError(f"the service could not be reached: {exc}") from exc


def from_env() -> Notifier:
    if url := os.environ.get(SERVICE_ENV):
        token = os.environ.get(RUN_TOKEN_ENV)
        if not token:
            raise ValueError(f"{SERVICE_ENV} is set without {RUN_TOKEN_ENV} (the run token from POST /v1/runs)")
        return ServiceNotifier(url, token)
    if url := os.environ.get(WEBHOOK_ENV):
        return WebhookNotifier(url)
    if path := os.environ.get(FILE_ENV):
        return FileNotifier(path)
    return StreamNotifier()
