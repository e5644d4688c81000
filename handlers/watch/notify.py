"""Where an early warning goes: a Slack incoming webhook, a local file, or stdout.

Each is one small class with `post(warning)`; `from_env` picks one from `MLTD_WATCH_WEBHOOK`
(an https URL) or `MLTD_WATCH_FILE` (a path), else stdout. Every rendering goes through the same
redacting renderers as a diagnosis, so no secret in a log is ever posted. Plain HTTP with the
standard library: the core install has no service SDK.
"""
from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Protocol, TextIO

from analysis.model import Diagnosis
from bot.redact import clean, slack_escape
from bot.render.jsondoc import render_document
from bot.render.slack import render as render_slack
from bot.render.text import render_text

WEBHOOK_ENV, FILE_ENV = "MLTD_WATCH_WEBHOOK", "MLTD_WATCH_FILE"
WEBHOOK_TIMEOUT_S = 10


class WatchNotifyError(RuntimeError):
    """A warning could not be delivered (said once on stderr; training goes on)."""


def headline(doc: dict) -> str:
    w = doc["watch"]
    top = doc["root_causes"][0] if doc["root_causes"] else None
    what = f"{top['code']}: {top['issue']}" if top else "see below"
    first = "early warning" if w["update"] == 0 else f"update {w['update']}"
    line = f"mltd watch · run {doc['run']['id']} · {first} at step {w['step']:g} · {what}"
    if top and top.get("early"):
        line += f" (early: confidence {top['confidence']:g}, the evidence is not conclusive yet)"
    if w.get("confirmed"):
        line += f"\nconfirmed by the post-mortem's analyzers: {', '.join(w['confirmed'])}"
    if w.get("action"):
        line += f"\nguard: {w['action']}"
    return clean(line)


class Notifier(Protocol):
    def post(self, doc: dict) -> None: ...


class StreamNotifier:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def post(self, doc: dict) -> None:
        out = self.stream or sys.stdout
        out.write(headline(doc) + "\n" + render_text(Diagnosis.from_dict(doc)) + "\n")
        out.flush()


class FileNotifier:
    """Appends each warning as one JSON line (the diagnosis document plus its `watch` fields)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def post(self, doc: dict) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(render_document(doc).replace("\n", " ") + "\n")


class WebhookNotifier:
    """A Slack incoming webhook: the diagnosis's Slack blocks under a headline. A webhook has no
    threads, so each update is a new message that names the update."""

    def __init__(self, url: str) -> None:
        if not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
            raise ValueError(f"{WEBHOOK_ENV} must be an https:// URL")
        self.url = url

    def post(self, doc: dict) -> None:
        blocks, fallback, _ = render_slack(Diagnosis.from_dict(doc))
        head = slack_escape(headline(doc))[:3000]
        body = {"text": f"{head}\n{fallback}"[:3000],
                "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": head}}] + blocks}
        req = urllib.request.Request(self.url, json.dumps(body).encode(), {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=WEBHOOK_TIMEOUT_S) as resp:
                resp.read()
        except OSError as exc:
            raise WatchNotifyError(f"the webhook did not take the warning: {exc}") from exc


def from_env() -> Notifier:
    if url := os.environ.get(WEBHOOK_ENV):
        return WebhookNotifier(url)
    if path := os.environ.get(FILE_ENV):
        return FileNotifier(path)
    return StreamNotifier()
