"""`POST /slack/events` (or Socket Mode): verify, parse, record, enqueue, ack, then post the
placeholder; well within Slack's 3 s. bolt routes the event; `parse` decides what it asks."""
from __future__ import annotations

import asyncio
import logging
import time

from fastapi import Request as HttpRequest
from fastapi.responses import JSONResponse
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.signature import SignatureVerifier

from bot import metrics
from bot.mentions import parse as parse_mention
from bot.mentions import parse_compare
from bot.settings import Settings
from handlers.events import Ignored, Request, accept

log = logging.getLogger("mltd.web")
REPLAY_WINDOW_S = 300
PLACEHOLDER_DEFER_S = 1.0       # under a burst a placeholder waits at most this long for the acks to pass
PLACEHOLDERS_AT_ONCE = 2
ROUTE = "/slack/events"
FILE_FIELDS = ("id", "name", "size", "url_private_download", "url_private")


def verified(settings: Settings, body: bytes, headers) -> bool:
    """Slack's signature over the raw body, and a numeric timestamp inside the replay window:
    anything else is a 401 here, before bolt (which answers 500 to a non-numeric timestamp)."""
    ts = headers.get("X-Slack-Request-Timestamp", "")
    if not ts.isdigit() or abs(time.time() - int(ts)) > REPLAY_WINDOW_S:
        return False
    return SignatureVerifier(settings.slack_signing_secret).is_valid(body, ts, headers.get("X-Slack-Signature", ""))


def parse(body: dict, settings: Settings) -> Request | Ignored:
    """An `app_mention` event callback: the request it makes, or why it is ignored."""
    event = body.get("event") or {}
    if event.get("bot_id") or event.get("subtype") == "bot_message":
        return Ignored("from a bot")
    team, channel = body.get("team_id", ""), event.get("channel", "")
    if settings.teams and team not in settings.teams:
        return Ignored(f"workspace {team} is not allowed", "refused")
    if settings.channels and channel not in settings.channels:
        return Ignored(f"channel {channel} is not allowed", "refused")
    ask = parse_mention(event.get("text", ""))
    files = [{k: f.get(k) for k in FILE_FIELDS} for f in event.get("files", [])]
    params = {"run": ask.run, "kind": ask.kind, "symptom": ask.symptom, "files": files}
    if cmp := parse_compare(event.get("text", "")):      # "compare run 42 with run 41": two runs, one reply
        params.update(cmp.params())
    return Request(f"slack:{body.get('event_id') or event.get('client_msg_id') or event['ts']}", {
        "team": team, "channel": channel, "thread_ts": event.get("thread_ts") or event["ts"], "user": event.get("user"),
        "text": event.get("text", ""), "params": params})


class AcksFirst:
    """Requests being acknowledged, and the placeholder posts that give way to them: a post starts
    when no ack is in flight (or after PLACEHOLDER_DEFER_S), a few at a time, so that under a burst
    the event loop answers Slack before it talks to Slack."""

    def __init__(self) -> None:
        self.acking = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def _on_this_loop(self) -> None:
        """The primitives of the loop serving now: an app served on a second loop (a test client after
        another) gets its own, where the first loop's would raise."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self.idle, self.posting = loop, asyncio.Event(), asyncio.Semaphore(PLACEHOLDERS_AT_ONCE)
            if self.acking == 0:
                self.idle.set()

    def start(self) -> None:
        self._on_this_loop()
        self.acking += 1
        self.idle.clear()

    def done(self) -> None:
        self.acking -= 1
        if self.acking == 0:
            self.idle.set()

    async def after_acks(self, post) -> None:
        """Await `post()` once the acks in flight have passed."""
        self._on_this_loop()
        try:
            await asyncio.wait_for(self.idle.wait(), PLACEHOLDER_DEFER_S)
        except asyncio.TimeoutError:
            pass
        async with self.posting:
            await post()


def register(app, settings: Settings, worker) -> AsyncApp:
    """The events route on `app`; the bolt app it dispatches to (Socket Mode connects it too)."""
    store, port = worker.store, worker.slack
    # the signature is checked once, in the route below, before bolt sees the request
    bolt = AsyncApp(signing_secret=settings.slack_signing_secret, client=port.async_web, process_before_response=True,
                    request_verification_enabled=False)
    pending: set[asyncio.Task] = set()
    acks = AcksFirst()

    @bolt.event("app_mention")
    async def on_mention(body):
        parsed = parse(body, settings)
        if isinstance(parsed, Ignored):
            metrics.EVENTS.labels("slack", parsed.outcome).inc()
            return
        if not await accept("slack", parsed, store=store, worker=worker, lease_s=settings.lease_s):
            return                                     # Slack's retry of an event we already hold
        log.info("queued: %s", parsed.fields["params"]["run"] or "no run named",
                 extra={"event": "queued", "request_id": parsed.key})
        task = asyncio.create_task(acks.after_acks(lambda: port.post_placeholder_async(store, parsed.key)))
        pending.add(task)
        task.add_done_callback(pending.discard)

    serve(app, ROUTE, bolt, settings, acks)
    return bolt


def serve(app, route: str, bolt: AsyncApp, settings: Settings, acks: AcksFirst | None = None) -> None:
    """POST `route`: Slack's signature checked, then bolt dispatches. Events, interactions and the
    slash command each have their URL, and reach the same listeners as over Socket Mode."""
    handler = AsyncSlackRequestHandler(bolt)

    async def endpoint(request: HttpRequest):
        t = time.perf_counter()
        if acks:
            acks.start()
        try:
            body = await request.body()
            if not verified(settings, body, request.headers):
                metrics.REQUESTS.labels(route, "401").inc()
                return JSONResponse({"error": "invalid signature or timestamp"}, status_code=401)
            response = await handler.handle(request)
        finally:
            if acks:
                acks.done()
        metrics.REQUESTS.labels(route, str(response.status_code)).inc()
        metrics.ACK_SECONDS.labels(route).observe(time.perf_counter() - t)
        return response

    app.add_api_route(route, endpoint, methods=["POST"], name=route.strip("/").replace("/", "_"))
