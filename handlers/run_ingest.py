"""The ingest endpoint for live runs' warnings (bot/watch_threads.py does the work):

    POST /v1/runs                    Authorization: Bearer <MLTD_INGEST_TOKEN>
         {"name": "...", "channel": "C..."}   -> 201 {"run_id", "token"} (the token, this once)
    POST /v1/runs/{run_id}/warnings  Authorization: Bearer <run token>
         <the warning the watch posts>        -> 200 {"thread_ts"}

401 for a missing or wrong token (the same for an unknown run), 429 with Retry-After when the
run's bucket is empty, 413 over MLTD_INGEST_MAX_BYTES, 422 for a body that is no warning, 502
when Slack did not take it, 404 while MLTD_INGEST_TOKEN is unset (the endpoint is off).
"""
from __future__ import annotations

import asyncio
import json
import logging
import math

from fastapi import Request as HttpRequest
from fastapi.responses import JSONResponse

from bot import metrics
from bot.settings import Settings
from bot.watch_threads import WarningRejected, WatchThreads, parse_warning

log = logging.getLogger("mltd.ingest")
RUNS, WARNINGS = "/v1/runs", "/v1/runs/{run_id}/warnings"


def _bearer(request: HttpRequest) -> str:
    kind, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if kind.lower() == "bearer" else ""


def _answer(route: str, code: int, payload: dict, headers: dict | None = None) -> JSONResponse:
    metrics.REQUESTS.labels(route, str(code)).inc()
    return JSONResponse(payload, status_code=code, headers=headers)


async def _body(request: HttpRequest, cap: int) -> bytes | None:
    """The body, or None past `cap` bytes (read no further than that, whatever Content-Length says)."""
    if int(request.headers.get("Content-Length") or 0) > cap:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def register(app, settings: Settings, worker) -> WatchThreads:
    threads = WatchThreads(settings, worker.store, worker.slack)

    @app.post(RUNS)
    async def open_run(request: HttpRequest):
        if not threads.enabled:
            return _answer(RUNS, 404, {"error": "the ingest endpoint is off: set MLTD_INGEST_TOKEN"})
        if not threads.admin(_bearer(request)):
            return _answer(RUNS, 401, {"error": "an admin token (MLTD_INGEST_TOKEN) is needed to open a run"})
        body = await _body(request, 4096)
        try:
            fields = json.loads(body or b"{}") if body is not None else None
            if not isinstance(fields, dict):
                raise WarningRejected("the body must be a JSON object: {\"name\": ..., \"channel\": ...}")
            name, channel = fields.get("name"), fields.get("channel")
            if not isinstance(name, (str, type(None))) or not isinstance(channel, (str, type(None))):
                raise WarningRejected("name and channel must be strings")
            run_id, token = await asyncio.to_thread(threads.open_run, name=name, channel=channel)
        except (json.JSONDecodeError, UnicodeDecodeError, WarningRejected) as exc:
            return _answer(RUNS, 422, {"error": str(exc)})
        log.info("watch run opened", extra={"event": "watch_run_opened", "request_id": run_id})
        return _answer(RUNS, 201, {"run_id": run_id, "token": token,
                                   "warnings_url": str(request.url_for("post_warning", run_id=run_id))})

    @app.post(WARNINGS, name="post_warning")
    async def post_warning(run_id: str, request: HttpRequest):
        if not threads.enabled:
            return _answer(WARNINGS, 404, {"error": "the ingest endpoint is off: set MLTD_INGEST_TOKEN"})
        run = await asyncio.to_thread(threads.authorised, run_id, _bearer(request))
        if run is None:
            return _answer(WARNINGS, 401, {"error": "a valid run token for this run is needed"})
        wait = await asyncio.to_thread(threads.wait_s, run.id)
        if wait > 0:
            return _answer(WARNINGS, 429, {"error": f"too many warnings for this run; retry in {math.ceil(wait)} s"},
                           headers={"Retry-After": str(math.ceil(wait))})
        raw = await _body(request, settings.ingest_max_bytes)
        if raw is None:
            return _answer(WARNINGS, 413, {"error": f"a warning may be at most {settings.ingest_max_bytes} bytes"})
        try:
            warning = parse_warning(raw, run.id)
        except WarningRejected as exc:
            return _answer(WARNINGS, 422, {"error": str(exc)})
        try:
            ts = await asyncio.to_thread(threads.post, run, warning)
        except Exception as exc:                 # Slack down or refusing: the client says so on its stderr
            log.warning("watch warning not posted: %s", type(exc).__name__,
                        extra={"event": "watch_post_failed", "request_id": run.id})
            return _answer(WARNINGS, 502, {"error": f"Slack did not take the warning ({type(exc).__name__})"})
        return _answer(WARNINGS, 200, {"thread_ts": ts})

    return threads
