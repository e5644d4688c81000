"""Prometheus metrics. Request counts and ack latency come from this process; job counts by
status and feedback counts by verdict come from the store at scrape time, so they cover every
worker on every machine."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

REGISTRY = CollectorRegistry()
REQUESTS = Counter("mltd_http_requests", "HTTP requests by route and status code", ["route", "code"], registry=REGISTRY)
ACK_SECONDS = Histogram("mltd_ack_seconds", "time from receiving an event to answering it", ["route"],
                        buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 3), registry=REGISTRY)
EVENTS = Counter("mltd_events", "events by outcome (queued, duplicate, ignored, refused)", ["source", "outcome"],
                 registry=REGISTRY)


class StoreCollector:
    def __init__(self, store) -> None:
        self.store = store

    def collect(self):
        if self.store is None:
            return
        g = GaugeMetricFamily("mltd_jobs", "requests by status (queued, running, done, failed)", labels=["status"])
        counts = self.store.counts()
        for status in ("queued", "running", "done", "failed"):
            g.add_metric([status], counts.get(status, 0))
        yield g
        f = CounterMetricFamily("mltd_feedback", "verdicts on diagnoses, new or changed (up, down, wrong_cause)",
                                labels=["verdict"])
        given = self.store.feedback_counts()
        for verdict in ("up", "down", "wrong_cause"):
            f.add_metric([verdict], given.get(verdict, 0))
        yield f


_COLLECTOR = StoreCollector(None)
REGISTRY.register(_COLLECTOR)


def watch_store(store) -> None:
    _COLLECTOR.store = store
