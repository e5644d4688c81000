"""Logging for the service: every record is redacted before any handler sees it, so a secret in a
log line, an exception message or a URL never reaches a log file."""
from __future__ import annotations

import logging

from bot.redact import redact


class Redacting(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = ()
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def setup(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(Redacting())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
