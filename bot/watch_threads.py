"""Warnings from live runs, through the service: a thread per run in Slack, updated as things change.

A team's admin opens a run (`open_run`) and gets its run token once; the training process (the
watch's `ServiceNotifier`) posts each warning with it. Only the token's SHA-256 is stored: the
token is 32 random bytes, so a hash is all a check needs and a leaked database holds no token.
Each run has a token bucket (`take_watch_token` in the store) so a runaway loop cannot flood a
channel. A warning is untrusted input: `parse_warning` keeps only the diagnosis document's fields,
typed and capped, refuses a code or severity outside the taxonomy (422: see analysis/live_warning.py),
and the renderers redact and escape every string before it is posted.

The first warning of a run becomes a new message in the run's channel (the thread's top); each
later one is a reply in that thread, and the top message is rewritten to the latest headline.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
import uuid

from analysis.live_warning import LiveWarning
from analysis.model import CODES, SEVERITIES
from bot.redact import slack_escape
from bot.render.slack import render as render_slack
from bot.render.watch import headline
from bot.settings import Settings
from bot.slack_port import SlackPort
from bot.store import Store, WatchRun

TOKEN_PREFIX = "mltdrun"
RUN_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
MAX_CAUSES, MAX_EVIDENCE, MAX_LIST, MAX_TEXT = 12, 12, 20, 4000
POST_LOCK_TTL_S = 30.0


class WarningRejected(ValueError):
    """A warning the service will not post; the message says what to change (answered with 422)."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def run_of_token(token: str) -> str | None:
    """The run id a run token names (`mltdrun.<run id>.<secret>`), or None for anything else."""
    parts = token.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == TOKEN_PREFIX and RUN_ID.match(parts[1]) else None


# --- the warning document, as far as the service trusts it ---------------------------------------------

def _text(value, what: str, *, optional: bool = False, cap: int = MAX_TEXT) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise WarningRejected(f"{what} must be a string")
    return value[:cap]


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise WarningRejected(f"{what} must be a finite number")
    return float(value)


def _strings(value, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WarningRejected(f"{what} must be a list of strings")
    return [str(_text(v, what, cap=200)) for v in value[:MAX_LIST]]


def _one_of(value, allowed: tuple[str, ...], what: str) -> str:
    text = _text(value, what, cap=60)
    if text not in allowed:
        raise WarningRejected(f"{what} {text!r} is not one of the taxonomy's: {', '.join(allowed)}")
    return text


def _cause(c) -> dict:
    if not isinstance(c, dict):
        raise WarningRejected("each root cause must be an object")
    evidence = c.get("evidence") or []
    if not isinstance(evidence, list) or not all(isinstance(e, dict) for e in evidence):
        raise WarningRejected("a root cause's evidence must be a list of objects")
    return {
        "code": _one_of(c.get("code"), CODES, "root_causes[].code"),
        "issue": _text(c.get("issue"), "root_causes[].issue"),
        "severity": _one_of(c.get("severity", "info"), SEVERITIES, "root_causes[].severity"),
        "confidence": min(1.0, max(0.0, _number(c.get("confidence", 0.0), "root_causes[].confidence"))),
        "evidence": [{"text": _text(e.get("text"), "evidence[].text"),
                      "artifact": _text(e.get("artifact", ""), "evidence[].artifact", cap=300),
                      "locator": _text(e.get("locator", ""), "evidence[].locator", cap=300)}
                     for e in evidence[:MAX_EVIDENCE]],
        "fix": _text(c.get("fix"), "root_causes[].fix", optional=True),
        "expected_impact": _text(c.get("expected_impact"), "root_causes[].expected_impact", optional=True),
        "patch": _text(c.get("patch"), "root_causes[].patch", optional=True),
        "early": bool(c.get("early", False)),
    }


def parse_warning(raw: bytes, run_id: str) -> LiveWarning:
    """The warning the watch posts (handlers/watch: the diagnosis document plus `watch`), rebuilt
    from the fields the renderers read, each typed and capped; the run id is the service's own."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WarningRejected(f"the body is not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("watch"), dict):
        raise WarningRejected("the body must be a warning: a diagnosis document with a `watch` object")
    causes = doc.get("root_causes")
    if not isinstance(causes, list):
        raise WarningRejected("root_causes must be a list")
    w = doc["watch"]
    update = w.get("update", 0)
    if isinstance(update, bool) or not isinstance(update, int) or update < 0:
        raise WarningRejected("watch.update must be a non-negative integer")
    return LiveWarning.from_dict({
        "status": _text(doc.get("status", "needs_more_data"), "status", cap=40),
        "run": {"id": run_id, "source": "live run", "artifacts": []},
        "symptoms": [],
        "root_causes": [_cause(c) for c in causes[:MAX_CAUSES]],
        "quick_fixes": _strings(doc.get("quick_fixes"), "quick_fixes"),
        "missing_artifacts": [],
        "questions": [],
        "engine": {},
        "watch": {"step": _number(w.get("step"), "watch.step"), "update": update,
                  "alarms": _strings(w.get("alarms"), "watch.alarms"), "early": _strings(w.get("early"), "watch.early"),
                  "confirmed": _strings(w.get("confirmed"), "watch.confirmed"),
                  "action": _text(w.get("action"), "watch.action", optional=True),
                  "checkpoint": _text(w.get("checkpoint"), "watch.checkpoint", optional=True, cap=300)},
    })


def render_warning(warning: LiveWarning, *, posted: int = 0) -> tuple[list[dict], str]:
    """(blocks, fallback text) of a warning: its headline above the diagnosis's blocks."""
    blocks, fallback, _ = render_slack(warning.diagnosis)
    head = slack_escape(headline(warning))[:2900]
    if posted:
        head += f"\n_{posted} update(s) in the thread_"
    return [{"type": "section", "text": {"type": "mrkdwn", "text": head}}] + blocks, f"{head}\n{fallback}"[:3000]


# --- the service's side ---------------------------------------------------------------------------------

class WatchThreads:
    def __init__(self, settings: Settings, store: Store, port: SlackPort) -> None:
        self.settings, self.store, self.port = settings, store, port

    @property
    def enabled(self) -> bool:
        return bool(self.settings.ingest_admin_token)

    def admin(self, token: str) -> bool:
        return self.enabled and hmac.compare_digest(token.encode(), self.settings.ingest_admin_token.encode())

    def open_run(self, *, name: str | None, channel: str | None, team: str | None = None) -> tuple[str, str]:
        """(run id, run token): the token is shown this once and stored hashed."""
        channel = channel or self.settings.watch_channel
        if not channel:
            raise WarningRejected("no channel: name one, or set MLTD_WATCH_CHANNEL")
        if self.settings.channels and channel not in self.settings.channels:
            raise WarningRejected(f"channel {channel} is not one of MLTD_SLACK_CHANNELS")
        run_id = uuid.uuid4().hex
        token = f"{TOKEN_PREFIX}.{run_id}.{secrets.token_urlsafe(32)}"
        self.store.open_watch_run(run_id, token_hash(token), channel=channel, burst=self.settings.ingest_burst,
                                  name=(name or "")[:200] or None, team=team)
        return run_id, token

    def authorised(self, run_id: str, token: str) -> WatchRun | None:
        """The run, when `token` is its run token; None for a wrong token and an unknown run alike."""
        if run_of_token(token) != run_id:
            return None
        run = self.store.watch_run(run_id)
        return run if run is not None and hmac.compare_digest(run.token_hash, token_hash(token)) else None

    def wait_s(self, run_id: str) -> float:
        """0 when the run may post now (a token taken from its bucket), else the seconds to wait."""
        return self.store.take_watch_token(run_id, self.settings.ingest_rate_per_min / 60.0, self.settings.ingest_burst)

    def post(self, run: WatchRun, warning: LiveWarning) -> str:
        """Posts a parsed warning into the run's thread, opening the thread with the first; returns
        the thread's ts. One poster per run at a time, so a run never gets two top messages."""
        owner = uuid.uuid4().hex
        if not self.store.lock(f"watch:{run.id}", owner, POST_LOCK_TTL_S):
            raise TimeoutError(f"run {run.id}: another warning is still being posted")
        try:
            current = self.store.watch_run(run.id) or run
            blocks, text = render_warning(warning)
            if current.thread_ts is None:
                ts = self.port.post_message(current.channel, blocks, text)
                self.store.set_watch_run(run.id, thread_ts=ts, warnings=1)
                return ts
            self.port.post_message(current.channel, blocks, text, thread_ts=current.thread_ts)
            top_blocks, top_text = render_warning(warning, posted=current.warnings)
            self.port.update_message(current.channel, current.thread_ts, top_blocks, top_text)
            self.store.set_watch_run(run.id, warnings=current.warnings + 1)
            return current.thread_ts
        finally:
            self.store.release(f"watch:{run.id}", owner)
