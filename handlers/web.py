"""The FastAPI app: Slack events (bolt, async), health and metrics; the one place that wires the
receivers, the store, the queue and (for `mltd serve`) an in-process worker together."""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from bot import metrics
from bot.mentions import parse
from bot.settings import Settings
from bot.worker import PLACEHOLDER_STALE_S, Worker, placeholder
from handlers import github_webhook

log = logging.getLogger("mltd.web")
REPLAY_WINDOW_S = 300


def verified(settings: Settings, body: bytes, headers) -> bool:
    """Slack's signature over the raw body, and a numeric timestamp inside the replay window:
    anything else is a 401 here, before bolt (which answers 500 to a non-numeric timestamp)."""
    ts = headers.get("X-Slack-Request-Timestamp", "")
    if not ts.isdigit() or abs(time.time() - int(ts)) > REPLAY_WINDOW_S:
        return False
    return SignatureVerifier(settings.slack_signing_secret).is_valid(body, ts, headers.get("X-Slack-Signature", ""))


def create_app(settings: Settings | None = None, *, worker: Worker | None = None, run_worker: bool = False,
               socket_mode: bool = False) -> FastAPI:
    settings = settings or Settings()
    worker = worker or Worker(settings)
    store = worker.store
    metrics.watch_store(store)
    client = AsyncWebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url.rstrip("/") + "/")
    client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=3))   # honours Retry-After
    # the signature is checked once, in the route below, before bolt sees the request
    bolt = AsyncApp(signing_secret=settings.slack_signing_secret, client=client, process_before_response=True,
                    request_verification_enabled=False)
    pending: set[asyncio.Task] = set()

    async def post_placeholder(key: str) -> None:
        req = await asyncio.to_thread(store.get, key)
        if req is None or not await asyncio.to_thread(store.claim_placeholder, key, PLACEHOLDER_STALE_S):
            return
        r = await client.chat_postMessage(**placeholder(req))
        await asyncio.to_thread(store.set, key, reply_ts=r["ts"])

    @bolt.event("app_mention")
    async def on_mention(body, event):
        if event.get("bot_id") or event.get("subtype") == "bot_message":
            metrics.EVENTS.labels("slack", "ignored").inc()
            return
        team, channel = body.get("team_id", ""), event.get("channel", "")
        if (settings.teams and team not in settings.teams) or (settings.channels and channel not in settings.channels):
            metrics.EVENTS.labels("slack", "refused").inc()
            return
        ask = parse(event.get("text", ""))
        key = f"slack:{body.get('event_id') or event.get('client_msg_id') or event['ts']}"
        files = [{k: f.get(k) for k in ("id", "name", "size", "url_private_download", "url_private")}
                 for f in event.get("files", [])]
        created = await asyncio.to_thread(
            store.open, key, "slack", lease_s=settings.lease_s, team=team, channel=channel,
            thread_ts=event.get("thread_ts") or event["ts"], user=event.get("user"), text=event.get("text", ""),
            params={"run": ask.run, "kind": ask.kind, "symptom": ask.symptom, "files": files})
        if not created:                                # Slack's retry of an event we already hold
            metrics.EVENTS.labels("slack", "duplicate").inc()
            return
        await asyncio.to_thread(worker.enqueue, key)   # durable before the ack: a crash now loses nothing
        metrics.EVENTS.labels("slack", "queued").inc()
        log.info("queued: %s", ask.run or "no run named", extra={"event": "queued", "request_id": key})
        task = asyncio.create_task(post_placeholder(key))
        pending.add(task)
        task.add_done_callback(pending.discard)

    handler = AsyncSlackRequestHandler(bolt)
    stop = threading.Event()

    @asynccontextmanager
    async def lifespan(app):
        consumer = socket = None
        if run_worker:
            consumer = start_consumer(worker, settings.workers)
            worker.reaper(stop)
        if socket_mode:                    # events over a websocket: no public URL needed
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            socket = AsyncSocketModeHandler(bolt, settings.slack_app_token)
            await socket.connect_async()
        yield
        stop.set()
        if socket is not None:
            await socket.close_async()
        if consumer is not None:
            consumer.stop(graceful=True)

    app = FastAPI(title="mltd", lifespan=lifespan)

    @app.post("/slack/events")
    async def slack_events(request: Request):
        t = time.perf_counter()
        body = await request.body()
        if not verified(settings, body, request.headers):
            metrics.REQUESTS.labels("/slack/events", "401").inc()
            return JSONResponse({"error": "invalid signature or timestamp"}, status_code=401)
        response = await handler.handle(request)
        metrics.REQUESTS.labels("/slack/events", str(response.status_code)).inc()
        metrics.ACK_SECONDS.labels("/slack/events").observe(time.perf_counter() - t)
        return response

    github_webhook.register(app, settings, worker)

    @app.get("/healthz")
    async def healthz():
        try:
            await asyncio.to_thread(store.counts)
            return {"ok": True}
        except Exception as exc:                       # the database is what a reply needs
            return JSONResponse({"ok": False, "error": type(exc).__name__}, status_code=503)

    @app.get("/metrics")
    async def prometheus():
        return PlainTextResponse(generate_latest(metrics.REGISTRY), media_type=CONTENT_TYPE_LATEST)

    app.state.worker = worker
    app.state.bolt = bolt
    return app


def start_consumer(worker: Worker, workers: int):
    """huey's consumer on background threads of this process (signal handling stays with the
    server), for `mltd serve` without a separate `mltd worker`."""
    from huey.consumer import Consumer

    class InProcessConsumer(Consumer):
        def _set_signal_handlers(self):
            pass

    consumer = InProcessConsumer(worker.huey, workers=workers, worker_type="thread", periodic=False)
    consumer.start()
    return consumer
