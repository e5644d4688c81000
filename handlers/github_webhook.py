"""`POST /github/webhook`: verify, deduplicate, parse, enqueue; well within GitHub's 10 s."""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re

from fastapi import Request as HttpRequest
from fastapi.responses import JSONResponse

from bot import metrics
from bot.github_port import TRAINING_CONCLUSIONS, is_training
from bot.settings import Settings
from handlers.events import Ignored, Request, accept

log = logging.getLogger("mltd.github")
# `/diagnose compare [RUN_ID | run ID | a run's URL]`; no id: the base branch's last success
_COMPARE = re.compile(r"/diagnose\s+compare\b(?:\s+(?:with\s+|against\s+|to\s+)?"
                      r"(?:run\s*|https?://\S*?/actions/runs/)?#?(\d{1,20})\b)?", re.I)


def signature_ok(secret: str, body: bytes, header: str) -> bool:
    """X-Hub-Signature-256 over the raw body, compared in constant time."""
    if not secret or not header.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


def parse(event: str, delivery: str, payload: dict, settings: Settings) -> Request | Ignored:
    """The request an event makes, or why it is ignored."""
    sender = payload.get("sender") or {}
    if sender.get("type") == "Bot" or str(sender.get("login", "")).endswith("[bot]"):
        return Ignored("from a bot")
    repo = (payload.get("repository") or {}).get("full_name")
    installation = (payload.get("installation") or {}).get("id")
    if event == "issue_comment":
        issue, comment = payload.get("issue") or {}, payload.get("comment") or {}
        if payload.get("action") != "created" or "pull_request" not in issue:
            return Ignored("not a new comment on a pull request")
        text = (comment.get("body") or "").strip()
        if not text.startswith("/diagnose") and not _mentions_app(text, settings.github_app_slug):
            return Ignored("not a /diagnose command")
        params = {"kind": "comment", "repo": repo, "number": issue["number"], "comment_id": comment["id"],
                  "sender": sender.get("login", ""), "text": text[:1000], "installation_id": installation}
        if m := _COMPARE.match(text):
            params["compare"] = {"with": int(m.group(1)) if m.group(1) else None}
        return _request(f"gh:{delivery}", params)
    if event == "workflow_run" and payload.get("action") == "completed":
        run = payload.get("workflow_run") or {}
        if not is_training(run.get("name", ""), run.get("path", ""), settings):
            return Ignored("not a training workflow")
        keep = {k: run.get(k) for k in ("pull_requests", "head_repository", "head_branch", "head_sha", "html_url")}
        keep["pull_requests"] = [{"number": p["number"]} for p in keep["pull_requests"] or []]
        head_owner = ((run.get("head_repository") or {}).get("owner") or {}).get("login")
        keep["head_repository"] = {"owner": {"login": head_owner}}
        base = {"repo": repo, "run_id": run["id"], "payload_run": keep, "installation_id": installation}
        if run.get("conclusion") in TRAINING_CONCLUSIONS:
            return _request(f"gh:run:{run['id']}:{run.get('run_attempt', 1)}", {"kind": "workflow_run", **base})
        if run.get("conclusion") == "success":
            return _request(f"gh:ok:{run['id']}:{run.get('run_attempt', 1)}", {"kind": "resolve", **base})
        return Ignored(f"conclusion {run.get('conclusion')}")
    return Ignored(f"event {event} is not handled")


def _mentions_app(text: str, slug: str) -> bool:
    """A comment that starts with `@<app slug>` (a follow-up, or a request like /diagnose)."""
    return bool(slug) and re.match(rf"@{re.escape(slug)}(?![\w-])", text, re.I) is not None


def _request(key: str, params: dict) -> Request:
    return Request(key, {"params": params})


def _acknowledge(settings: Settings, params: dict) -> None:
    """React with 👀 to a /diagnose from someone allowed to ask (the worker checks again)."""
    from bot import github_port as gp

    try:
        gh = gp.client(settings, params.get("installation_id"))
        repo = gh.get_repo(params["repo"])
        if gp.may_trigger(repo, params["sender"], settings):
            repo.get_issue(params["number"]).get_comment(params["comment_id"]).create_reaction("eyes")
    except Exception:                       # the worker still answers; the reaction is a courtesy
        log.warning("could not react to %s", params.get("comment_id"), exc_info=True)


def register(app, settings: Settings, worker) -> None:
    store = worker.store
    pending: set[asyncio.Task] = set()

    @app.post("/github/webhook")
    async def github_webhook(request: HttpRequest):
        body = await request.body()
        if not signature_ok(settings.github_webhook_secret, body, request.headers.get("X-Hub-Signature-256", "")):
            metrics.REQUESTS.labels("/github/webhook", "401").inc()
            return JSONResponse({"error": "invalid signature"}, status_code=401)
        event = request.headers.get("X-GitHub-Event", "")
        delivery = request.headers.get("X-GitHub-Delivery", "")
        metrics.REQUESTS.labels("/github/webhook", "200").inc()
        if event == "ping":
            return {"ok": True}
        try:
            payload = json.loads(body)
        except ValueError:
            return JSONResponse({"error": "body is not JSON"}, status_code=400)
        parsed = parse(event, delivery, payload, settings)
        if isinstance(parsed, Ignored):
            metrics.EVENTS.labels("github", parsed.outcome).inc()
            return {"ignored": parsed.reason}
        created = await accept("github", parsed, store=store, worker=worker, lease_s=settings.lease_s)
        params = parsed.fields["params"]
        if created and params["kind"] == "comment":    # 👀 at once, after the answer to GitHub
            task = asyncio.create_task(asyncio.to_thread(_acknowledge, settings, params))
            pending.add(task)
            task.add_done_callback(pending.discard)
        log.info("%s %s", event, "queued" if created else "duplicate",
                 extra={"event": "queued", "request_id": parsed.key})
        return {"queued": created}
