"""Service logs: one JSON object per line, carrying the id of the request it concerns (`slack:…`,
`gh:…`) from the event through the worker to the reply, and redacted before any handler sees it.
`MLTD_LOG_FORMAT=text` gives plain lines for a terminal."""
from __future__ import annotations

import json
import logging
import os
from contextvars import ContextVar

from bot.redact import clean

request_id: ContextVar[str] = ContextVar("request_id", default="")


class Redacting(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = clean(record.getMessage())
        record.args = ()
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = clean(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        record.request_id = getattr(record, "request_id", None) or request_id.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname, "logger": record.name,
               "msg": record.getMessage(), "request_id": getattr(record, "request_id", "") or request_id.get()}
        for key in ("event", "status", "attempt", "seconds"):
            if hasattr(record, key):
                out[key] = getattr(record, key)
        if record.exc_text:
            out["exc"] = record.exc_text
        return json.dumps(out, default=str)


def setup(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler()
    if os.environ.get("MLTD_LOG_FORMAT", "json") == "text":
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"))
    else:
        handler.setFormatter(JsonFormatter())
    handler.addFilter(Redacting())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
