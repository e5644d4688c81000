"""A Slack incoming webhook on loopback: records each JSON body it is sent, answers `ok` as Slack does."""
from __future__ import annotations

import json

from tests.fakes.loopback import LoopbackServer, QuietHandler


class FakeSlackWebhook(LoopbackServer):
    def __init__(self, status: int = 200) -> None:
        self.bodies: list[dict] = []
        self.status = status
        fake = self

        class Handler(QuietHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fake.bodies.append(json.loads(body))
                self._send(fake.status, raw=b"ok" if fake.status == 200 else b"no_service", ctype="text/plain")

        self._start(Handler)
