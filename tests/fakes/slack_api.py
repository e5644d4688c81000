"""A stand-in for the Slack Web API on loopback: the real slack_sdk talks to it through
MLTD_SLACK_API_URL. It answers the methods mltd uses with Slack's response shapes, records every
call (with the answer given, under `_response`), serves attached files to a bearer token, and can answer 429 with Retry-After on demand."""
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

    def _answer(self, method: str, params: dict) -> dict:
        if method == "auth.test":
            return {"ok": True, "url": "https://test.slack.com/", "team": "test", "user": "mltd", "team_id": "T1",
                    "user_id": "UBOT", "bot_id": "BBOT", "is_enterprise_install": False}
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
            return {"ok": True, "files": [{"id": f["id"], "title": f.get("title"), "name": f.get("title")} for f in files]}
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
