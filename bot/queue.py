"""The job queue: huey, on SQLite (one machine) or Redis (several), carrying request keys only.

Messages are JSON, never pickle: whoever can write to the queue could otherwise run code in every
worker. huey alone loses a job whose worker dies mid-way, so the store's leases decide who owns a
request and a periodic reaper puts expired ones back on the queue (bot/worker.py).
"""
from __future__ import annotations

import datetime as dt
import json

from huey import RedisHuey, SqliteHuey
from huey.registry import Message
from huey.serializer import Serializer


class JSONSerializer(Serializer):
    """huey's Message as JSON: ids, task name, dates as ISO text, JSON arguments only."""

    def _serialize(self, data) -> bytes:
        return json.dumps(_encode(data), separators=(",", ":")).encode()

    def _deserialize(self, data: bytes):
        return _decode(json.loads(data))


def _encode(obj):
    if isinstance(obj, Message):
        return {"__message__": [_encode(v) for v in obj]}
    if isinstance(obj, dt.datetime):
        return {"__datetime__": obj.isoformat()}
    if isinstance(obj, (list, tuple)):
        return [_encode(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): _encode(v) for k, v in obj.items()}
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise TypeError(f"the queue carries JSON values only, not {type(obj).__name__}")


def _decode(obj):
    if isinstance(obj, dict):
        if "__message__" in obj:
            fields = [_decode(v) for v in obj["__message__"]]
            fields[6] = tuple(fields[6] or ())           # args
            return Message(*fields)
        if "__datetime__" in obj:
            return dt.datetime.fromisoformat(obj["__datetime__"])
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def make_huey(url: str, name: str = "mltd"):
    """`sqlite:///path/queue.db` or `redis://host:port/db`."""
    if url.startswith("redis://") or url.startswith("rediss://"):
        return RedisHuey(name, url=url, serializer=JSONSerializer(), results=False)
    if url.startswith("sqlite:///"):
        return SqliteHuey(name, filename=url[len("sqlite:///"):], serializer=JSONSerializer(), results=False)
    raise ValueError(f"MLTD_QUEUE_URL must be sqlite:///PATH or redis://HOST:PORT/DB, not {url!r}")
