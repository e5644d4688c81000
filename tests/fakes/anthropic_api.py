"""A stand-in for Anthropic's Messages API on loopback (`POST /v1/messages`, the real request and
response shapes, no streaming), and Bedrock's `/model/{id}/invoke` with a SigV4 signature. It
plays a scripted conversation: each item is the assistant's content blocks, or an (HTTP status,
error type) pair; it records every request it received. The key is accepted as `x-api-key` or
`Authorization: Bearer`."""
from __future__ import annotations

import itertools
import json
import re
from urllib.parse import unquote

from tests.fakes.loopback import LoopbackServer, QuietHandler

KEY = "sk-ant-test-key-000000000000000000000000"


def tool_use(name: str, args: dict, n: int = 0) -> dict:
    return {"type": "tool_use", "id": f"toolu_{name}_{n}", "name": name, "input": args}


def text(t: str) -> dict:
    return {"type": "text", "text": t}


class AnthropicStandIn(LoopbackServer):
    def __init__(self, script: list) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._ids = itertools.count(1)
        self._start(self._handler())

    def _handler(self):
        api = self

        class Handler(QuietHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                path = self.path.split("?")[0]
                bedrock = re.fullmatch(r"/model/([^/]+)/invoke", path)
                bearer = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if bedrock:                  # Bedrock: the model in the path, SigV4 instead of a key
                    if not self.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256"):
                        return self._send(403, {"message": "missing SigV4 signature"})
                    body["model"] = unquote(bedrock.group(1))
                elif path != "/v1/messages":
                    error = {"type": "not_found_error", "message": self.path}
                    return self._send(404, {"type": "error", "error": error})
                elif KEY not in (self.headers.get("x-api-key"), bearer):
                    error = {"type": "authentication_error", "message": "bad key"}
                    return self._send(401, {"type": "error", "error": error})
                api.requests.append(body)
                api.headers.append(dict(self.headers))
                item = api.script.pop(0) if api.script else [text("(script exhausted)")]
                if isinstance(item, tuple):
                    status, kind = item
                    return self._send(status, {"type": "error", "error": {"type": kind, "message": kind}},
                                      headers={"retry-after": "0"})
                tools = any(b.get("type") == "tool_use" for b in item)
                self._send(200, {"id": f"msg_{next(api._ids)}", "type": "message", "role": "assistant",
                                 "model": body["model"], "content": item,
                                 "stop_reason": "tool_use" if tools else "end_turn",
                                 "stop_sequence": None,
                                 "usage": {"input_tokens": 1200, "output_tokens": 150,
                                           "cache_creation_input_tokens": 900,
                                           "cache_read_input_tokens": 0 if len(api.requests) == 1 else 900}})

        return Handler
