"""Slack through slack_sdk: the only code that talks to Slack's Web API. One client setup (sync for
workers, async for bolt at the web front), the placeholder claimed once and posted, the reply
written over it, files uploaded into the thread, attachments downloaded with the bot token.

Exactly one reply per request: whoever claims the placeholder in the store (the web front right
after the ack, or a worker whose web front died) posts it; every answer is an update of it.
"""
from __future__ import annotations

import asyncio
import time
import urllib.request
from pathlib import Path, PurePosixPath

from bot.redact import slack_escape
from bot.render.slack import message
from bot.settings import Settings
from bot.store import Request, Store

PLACEHOLDER_STALE_S = 20.0      # a claim older than this without a posted placeholder: its owner died
PLACEHOLDER_POLL_S = 0.2
RATE_LIMIT_RETRIES = 3


class NotInChannel(Exception):
    """mltd may not post in this channel: a slash command works in any channel, chat.postMessage
    only where mltd was invited."""


def _setup(client, handler):
    client.retry_handlers.append(handler(max_retry_count=RATE_LIMIT_RETRIES))   # honours Retry-After
    return client


def client(settings: Settings):
    from slack_sdk import WebClient
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    return _setup(WebClient(token=settings.slack_bot_token, base_url=_base_url(settings)), RateLimitErrorRetryHandler)


def async_client(settings: Settings):
    from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
    from slack_sdk.web.async_client import AsyncWebClient

    return _setup(AsyncWebClient(token=settings.slack_bot_token, base_url=_base_url(settings)),
                  AsyncRateLimitErrorRetryHandler)


def _base_url(settings: Settings) -> str:
    return settings.slack_api_url.rstrip("/") + "/"


def placeholder(req: Request) -> dict:
    """chat.postMessage arguments of a request's placeholder."""
    run = req.params.get("run")
    text = f"Looking at run {slack_escape(run)}…" if run else "Looking at it…"
    if cmp := req.params.get("compare"):
        text = f"Comparing run {slack_escape(cmp['a']['run'])} with run {slack_escape(cmp['b']['run'])}…"
    return {"channel": req.channel, "thread_ts": req.thread_ts, "text": text, "blocks": message(text),
            "unfurl_links": False, "unfurl_media": False}


class SlackPort:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._web = self._async_web = None
        self.replies = 0                # answers written (placeholder updates), for the bench and logs

    @property
    def web(self):
        if self._web is None:
            self._web = client(self.settings)
        return self._web

    @property
    def async_web(self):
        """The async client: bolt's, and the web front's placeholder posts (no thread held per post)."""
        if self._async_web is None:
            self._async_web = async_client(self.settings)
        return self._async_web

    def claim_placeholder(self, store: Store, key: str) -> Request | None:
        """The request, when this caller is to post its placeholder: none is posted yet and nobody
        else's claim is live."""
        req = store.get(key)
        if req is None or req.reply_ts is not None or not store.claim_placeholder(key, PLACEHOLDER_STALE_S):
            return None
        return req

    def post_placeholder(self, store: Store, key: str) -> bool:
        """Claim the placeholder and post it; False when it is posted already or claimed by another."""
        from slack_sdk.errors import SlackApiError

        req = self.claim_placeholder(store, key)
        if req is None:
            return False
        try:
            posted = self.web.chat_postMessage(**placeholder(req))
        except SlackApiError as exc:
            if exc.response.get("error") in ("not_in_channel", "channel_not_found"):
                raise NotInChannel(req.channel) from None
            raise
        store.set(key, reply_ts=posted["ts"])
        return True

    async def post_placeholder_async(self, store: Store, key: str) -> None:
        """`post_placeholder` for the web front's event loop, right after the ack."""
        req = await asyncio.to_thread(self.claim_placeholder, store, key)
        if req is not None:
            r = await self.async_web.chat_postMessage(**placeholder(req))
            await asyncio.to_thread(store.set, key, reply_ts=r["ts"])

    def ensure_placeholder(self, store: Store, req: Request) -> Request:
        """The request with its placeholder posted, by us or by the web front (waited for; its
        claim goes stale if it died)."""
        while req.reply_ts is None:
            if not self.post_placeholder(store, req.key):
                time.sleep(PLACEHOLDER_POLL_S)
            req = store.get(req.key) or req
        return req

    def update(self, req: Request, blocks: list[dict], text: str) -> None:
        self.web.chat_update(channel=req.channel, ts=req.reply_ts, blocks=blocks, text=text, parse="none")
        self.replies += 1

    def say(self, store: Store, req: Request, text: str) -> None:
        """Plain words over the placeholder: an answer that is no diagnosis (a fetch problem, a failure)."""
        req = self.ensure_placeholder(store, store.get(req.key) or req)
        self.update(req, message(slack_escape(text)), slack_escape(text))

    def upload_text(self, req: Request, content: str, filename: str, title: str) -> None:
        self.web.files_upload_v2(channel=req.channel, thread_ts=req.thread_ts or req.reply_ts, filename=filename,
                                 content=content, title=title)

    def upload_file(self, req: Request, path: Path, title: str) -> None:
        self.web.files_upload_v2(channel=req.channel, thread_ts=req.thread_ts or req.reply_ts, file=str(path),
                                 filename=path.name, title=title)

    def respond(self, response_url: str, text: str) -> None:
        """An ephemeral answer through a slash command's response_url (30 minutes, 5 uses)."""
        from slack_sdk.webhook import WebhookClient

        WebhookClient(response_url).send(text=slack_escape(text), response_type="ephemeral")

    def post_in_thread(self, channel: str, thread_ts: str, text: str) -> str:
        """Plain words as a new reply in a thread (a fix check in the thread of the earlier
        diagnosis); the message's ts."""
        return self.web.chat_postMessage(channel=channel, thread_ts=thread_ts, text=slack_escape(text)[:3000],
                                         blocks=message(slack_escape(text)), unfurl_links=False,
                                         unfurl_media=False)["ts"]

    def post_message(self, channel: str, blocks: list[dict], text: str, thread_ts: str | None = None) -> str:
        """A new message (in a thread when `thread_ts`); its ts."""
        return self.web.chat_postMessage(channel=channel, thread_ts=thread_ts, blocks=blocks, text=text,
                                         unfurl_links=False, unfurl_media=False)["ts"]

    def update_message(self, channel: str, ts: str, blocks: list[dict], text: str) -> None:
        self.web.chat_update(channel=channel, ts=ts, blocks=blocks, text=text, parse="none")

    def alert(self, channel: str, text: str) -> None:
        self.web.chat_postMessage(channel=channel, text=text, unfurl_links=False)

    def download(self, files: list[dict], dest: Path) -> list[str]:
        """The files attached to a message, with the bot token, under the per-file cap; notes for
        what was skipped."""
        notes = []
        cap = self.settings.max_file_bytes
        dest.mkdir(parents=True, exist_ok=True)
        for f in files:
            url = f.get("url_private_download") or f.get("url_private")
            name = PurePosixPath(f.get("name") or f.get("id") or "file").name
            if not url or not name or name in (".", ".."):
                continue
            if int(f.get("size") or 0) > cap:
                notes.append(f"skipped attachment {name}: over the per-file cap")
                continue
            req = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.settings.slack_bot_token}"})
            written = 0
            with urllib.request.urlopen(req, timeout=30) as resp, open(dest / name, "wb") as out:
                while chunk := resp.read(1 << 20):
                    written += len(chunk)
                    if written > cap:                       # the size Slack reported can be wrong
                        break
                    out.write(chunk)
            if written > cap:
                (dest / name).unlink()
                notes.append(f"skipped attachment {name}: over the per-file cap")
        return notes
