"""A stand-in for the Slack Web API on loopback: the real slack_sdk talks to it through
MLTD_SLACK_API_URL. It answers the methods mltd uses with Slack's response shapes, records every
call (with the answer given, under `_response`), serves attached files to a bearer token, and can
answer 429 with Retry-After on demand.
It opens modals (views.open, with Slack's limits on a view checked), refuses to post in channels
mltd was not invited to (`not_member`), and receives what is sent to a slash command's
response_url (`response_url(...)`, recorded in `responses`)."""
from __future__ import annotations

import itertools
import json
import threading
from urllib.parse import parse_qs, urlparse

from tests.fakes.loopback import LoopbackServer, QuietHandler

TOKEN = "xoxb-test-token"


class SlackStandIn(LoopbackServer):
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.files: dict[str, bytes] = {}            # served under /files/<name>
        self.uploads: dict[str, bytes] = {}
        self.not_member: set[str] = set()           # channels where chat.postMessage answers not_in_channel
        self.responses: list[tuple[str, dict]] = []  # (response_url id, JSON body) sent to response_urls
        self._throttle = 0
        self._retry_after = 1
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._start(self._handler())
        self.api_url = self.url + "/api/"

    def throttle(self, n: int, retry_after: int = 1) -> None:
        """The next `n` API calls get 429 with Retry-After."""
        self._throttle, self._retry_after = n, retry_after

    def called(self, method: str) -> list[dict]:
        with self._lock:
            return [params for m, params in self.calls if m == method]

    def response_url(self, name: str) -> str:
        """A slash command's response_url, served here (hooks.slack.com/commands/... in Slack)."""
        return f"{self.url}/commands/{name}"

    def responded(self, name: str) -> list[dict]:
        with self._lock:
            return [body for n, body in self.responses if n == name]

    def _view(self, params: dict) -> dict:
        """views.open: a modal within Slack's limits (title 24 characters, 100 blocks, 100 options
        of 75 characters, private_metadata 3,000), answered with the view as Slack stores it."""
        view = params.get("view")
        view = json.loads(view) if isinstance(view, str) else view
        if not params.get("trigger_id"):
            return {"ok": False, "error": "invalid_arguments"}
        if params["trigger_id"].startswith("expired"):
            return {"ok": False, "error": "expired_trigger_id"}
        options = [o for b in view.get("blocks", []) for o in (b.get("element") or {}).get("options", [])]
        if (view.get("type") != "modal" or len(view.get("title", {}).get("text", "")) > 24
                or not 0 < len(view.get("blocks", [])) <= 100 or len(view.get("private_metadata", "")) > 3000
                or any(len(o["text"]["text"]) > 75 for o in options)
                or any(len(b.get("element", {}).get("options", [])) > 100 for b in view["blocks"])):
            return {"ok": False, "error": "invalid_arguments"}
        vid = f"V{next(self._ids):08d}"
        return {"ok": True, "view": {**view, "id": vid, "team_id": "T1", "state": {"values": {}},
                                     "hash": f"{vid}.hash", "app_id": "A1", "bot_id": "BBOT"}}

    def _answer(self, method: str, params: dict) -> dict:
        if method == "auth.test":
            return {"ok": True, "url": "https://test.slack.com/", "team": "test", "user": "mltd", "team_id": "T1",
                    "user_id": "UBOT", "bot_id": "BBOT", "is_enterprise_install": False}
        if method == "chat.postMessage" and params.get("channel") in self.not_member:
            return {"ok": False, "error": "not_in_channel"}
        if method == "views.open":
            return self._view(params)
        if method == "chat.postMessage":
            ts = f"1700000000.{next(self._ts):06d}"
            return {"ok": True, "channel": params.get("channel"), "ts": ts,
                    "message": {"type": "message", "text": params.get("text"), "ts": ts, "bot_id": "BBOT",
                                "thread_ts": params.get("thread_ts")}}
        if method == "chat.update":
            return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts"), "text": params.get("text")}
        if method == "reactions.add":
            return {"ok": True}
        if method == "conversations.replies":
            return {"ok": True, "messages": [], "has_more": False}
        if method == "files.getUploadURLExternal":
            fid = f"F{next(self._ids):08d}"
            return {"ok": True, "upload_url": f"{self.url}/upload/{fid}", "file_id": fid}
        if method == "files.completeUploadExternal":
            files = params.get("files")
            files = json.loads(files) if isinstance(files, str) else files
            shared = [{"id": f["id"], "title": f.get("title"), "name": f.get("title")} for f in files]
            return {"ok": True, "files": shared}
        return {"ok": False, "error": "unknown_method"}

    def _handler(self):
        stand_in = self

        class Handler(QuietHandler):
            def do_GET(self):
                path = urlparse(self.path).path
                if path.startswith("/files/") and self.headers.get("Authorization") == f"Bearer {TOKEN}":
                    data = stand_in.files.get(path[len("/files/"):])
                    if data is not None:
                        return self._send(200, raw=data)
                self._send(404, raw=b"not found", ctype="text/plain")

            def do_POST(self):
                path = urlparse(self.path).path
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if path.startswith("/commands/"):
                    with stand_in._lock:
                        stand_in.responses.append((path[len("/commands/"):], json.loads(raw or b"{}")))
                    return self._send(200, raw=b"ok", ctype="text/plain")
                if path.startswith("/upload/"):
                    stand_in.uploads[path[len("/upload/"):]] = raw
                    return self._send(200, raw=f"OK - {len(raw)}".encode(), ctype="text/plain")
                method = path[len("/api/"):]
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    params = json.loads(raw or b"{}")
                else:
                    params = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                with stand_in._lock:
                    if stand_in._throttle > 0:
                        stand_in._throttle -= 1
                        stand_in.calls.append(("429:" + method, params))
                        return self._send(429, {"ok": False, "error": "ratelimited"},
                                          headers={"Retry-After": str(stand_in._retry_after)})
                auth = self.headers.get("Authorization", "") or f"Bearer {params.get('token', '')}"
                answer = stand_in._answer(method, params) if auth == f"Bearer {TOKEN}" else \
                    {"ok": False, "error": "invalid_auth"}
                with stand_in._lock:
                    stand_in.calls.append((method, {**params, "_response": answer}))
                self._send(200, answer)

        return Handler
