"""The FastAPI app: Slack events, interactions and the slash command, GitHub webhooks, live runs'
warnings, health and metrics; the one place that wires the receivers, the store, the queue and (for
`mltd serve`) an in-process worker together."""
from __future__ import annotations

import asyncio
import threading
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot import metrics
from bot.settings import Settings
from bot.worker import Worker
from handlers import github_webhook, run_ingest, slack_commands, slack_events, slack_interactions


def create_app(settings: Settings | None = None, *, worker: Worker | None = None, run_worker: bool = False,
               socket_mode: bool = False) -> FastAPI:
    settings = settings or Settings()
    worker = worker or Worker(settings)
    store = worker.store
    metrics.watch_store(store)
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
    bolt = slack_events.register(app, settings, worker)
    slack_interactions.register(app, bolt, settings, worker)
    slack_commands.register(app, bolt, settings, worker)
    github_webhook.register(app, settings, worker)
    run_ingest.register(app, settings, worker)

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
