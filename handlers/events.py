"""What an edge makes of an event, before any I/O: a request to record and enqueue, or the reason
it is ignored. Each receiver has a pure `parse(...)` that returns one of these."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot import metrics


@dataclass(frozen=True)
class Request:
    key: str                               # the same event delivered twice has the same key
    fields: dict = field(default_factory=dict)   # the store's columns: params, and Slack's thread


@dataclass(frozen=True)
class Ignored:
    reason: str
    outcome: str = "ignored"               # the events counter's label; "refused" for a place mltd may not answer


async def accept(source: str, req: Request, *, store, worker, lease_s: float) -> bool:
    """Record the request and enqueue it (durable before the ack: a crash now loses nothing);
    False for a retry or redelivery of one already held."""
    created = await asyncio.to_thread(store.open, req.key, source, lease_s=lease_s, **req.fields)
    if created:
        await asyncio.to_thread(worker.enqueue, req.key)
    metrics.EVENTS.labels(source, "queued" if created else "duplicate").inc()
    return created
