"""The source of truth for requests: one row per request, keyed by where it came from
(`slack:{event_id}`), with its status, attempts, lease, reply target and result.

The queue only carries keys. Every transition is one conditional UPDATE, so two workers (or a
worker and the reaper) can never both own a request: whoever's UPDATE matched owns it until its
lease runs out. SQLite by default, PostgreSQL for several machines (`MLTD_DATABASE_URL`).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

metadata = MetaData()
requests = Table(
    "mltd_requests", metadata,
    Column("key", String(200), primary_key=True),
    Column("source", String(20), nullable=False),
    Column("status", String(20), nullable=False, index=True),     # queued | running | done | failed
    Column("attempts", Integer, nullable=False, default=0),
    Column("lease_until", Float, nullable=False, index=True),
    Column("worker", String(100)),
    Column("team", String(50)),
    Column("channel", String(50)),
    Column("thread_ts", String(50)),
    Column("reply_ts", String(50)),                  # the placeholder this request's answer replaces
    Column("placeholder_at", Float),                 # when someone set out to post the placeholder
    Column("plot_posted", Boolean, nullable=False, default=False),
    Column("user", String(50)),
    Column("text", Text),
    Column("params", JSON),                          # run reference, symptoms, attached files
    Column("result", JSON),
    Column("error", Text),
    Column("created", Float, nullable=False),
    Column("updated", Float, nullable=False),
)

# A live run watched through the service: its run token (only the hash is kept), the channel its
# thread goes to, the thread's top message once posted, and its rate limit's token bucket.
watch_runs = Table(
    "mltd_watch_runs", metadata,
    Column("id", String(80), primary_key=True),
    Column("token_hash", String(64), nullable=False),
    Column("name", Text),
    Column("team", String(50)),
    Column("channel", String(50), nullable=False),
    Column("thread_ts", String(50)),                 # the run's top message, once the first warning is posted
    Column("warnings", Integer, nullable=False, default=0),
    Column("bucket", Float, nullable=False),         # tokens left in the rate limit's bucket ...
    Column("bucket_at", Float, nullable=False),      # ... as of this time
    Column("created", Float, nullable=False),
    Column("updated", Float, nullable=False),
)

locks = Table(
    "mltd_locks", metadata,
    Column("name", String(200), primary_key=True),
    Column("owner", String(100), nullable=False),
    Column("until", Float, nullable=False),
)


@dataclass
class Request:
    key: str
    source: str
    status: str
    attempts: int
    channel: str | None
    thread_ts: str | None
    reply_ts: str | None
    placeholder_at: float | None
    plot_posted: bool
    team: str | None
    user: str | None
    text: str | None
    params: dict
    result: dict | None
    error: str | None


@dataclass
class WatchRun:
    id: str
    token_hash: str
    name: str | None
    team: str | None
    channel: str
    thread_ts: str | None
    warnings: int


def _engine_url(url: str) -> str:
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


class Store:
    def __init__(self, url: str) -> None:
        url = _engine_url(url)
        sqlite = url.startswith("sqlite")
        self.engine = create_engine(url, pool_pre_ping=True,
                                    connect_args={"check_same_thread": False, "timeout": 30} if sqlite else {})
        if sqlite:
            @event.listens_for(self.engine, "connect")
            def _wal(conn, _):
                # readers never block the writer; writers wait instead of failing; with WAL, NORMAL
                # sync loses nothing when a process dies (only on power loss)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=30000")
        metadata.create_all(self.engine)
        # a forked worker process must not share the parent's pooled connections
        os.register_at_fork(after_in_child=lambda: self.engine.dispose(close=False))

    def open(self, key: str, source: str, *, lease_s: float, **fields) -> bool:
        """Record a new request; False when the key is already known (a retry or redelivery)."""
        now = time.time()
        try:
            with self.engine.begin() as c:
                c.execute(insert(requests).values(key=key, source=source, status="queued", attempts=0,
                                                  lease_until=now + lease_s, created=now, updated=now,
                                                  plot_posted=False, **fields))
            return True
        except IntegrityError:
            return False

    def get(self, key: str) -> Request | None:
        with self.engine.connect() as c:
            row = c.execute(select(requests).where(requests.c.key == key)).mappings().first()
        if row is None:
            return None
        return Request(**{f: row[f] for f in Request.__dataclass_fields__ if f != "params"},
                       params=row["params"] or {})

    def lease(self, key: str, worker: str, lease_s: float) -> Request | None:
        """Take the request if it is queued, or running on a lease that ran out."""
        now = time.time()
        with self.engine.begin() as c:
            r = c.execute(update(requests).where(
                requests.c.key == key,
                (requests.c.status == "queued") | ((requests.c.status == "running") & (requests.c.lease_until < now)),
            ).values(status="running", worker=worker, lease_until=now + lease_s, attempts=requests.c.attempts + 1,
                     updated=now))
        return self.get(key) if r.rowcount == 1 else None

    def claim_placeholder(self, key: str, stale_s: float) -> bool:
        """The right to post the placeholder: nobody has, or whoever set out to died doing it."""
        now = time.time()
        with self.engine.begin() as c:
            r = c.execute(update(requests).where(
                requests.c.key == key, requests.c.reply_ts.is_(None),
                requests.c.placeholder_at.is_(None) | (requests.c.placeholder_at < now - stale_s),
            ).values(placeholder_at=now, updated=now))
        return r.rowcount == 1

    def set(self, key: str, **values) -> None:
        with self.engine.begin() as c:
            c.execute(update(requests).where(requests.c.key == key).values(updated=time.time(), **values))

    def finish(self, key: str, worker: str, status: str, *,
               result: dict | None = None, error: str | None = None) -> bool:
        """Close the request; False when another worker has taken it over since (lease ran out)."""
        with self.engine.begin() as c:
            r = c.execute(update(requests).where(requests.c.key == key, requests.c.worker == worker,
                                                 requests.c.status == "running")
                          .values(status=status, result=json.loads(json.dumps(result)) if result else None,
                                  error=error, updated=time.time()))
        return r.rowcount == 1

    def requeue_expired(self, grace_s: float, *, max_attempts: int = 5, max_age_s: float = 3600.0) -> list[str]:
        """Keys of requests whose lease ran out (their worker died, or their message was lost):
        they go back to `queued` with a fresh grace period, and the caller enqueues them again.
        One that has used up its attempts, or is older than `max_age_s` (an answer an hour late is
        no answer), is closed as failed instead."""
        now = time.time()
        expired = requests.c.status.in_(("queued", "running")) & (requests.c.lease_until < now)
        hopeless = (requests.c.attempts >= max_attempts) | (requests.c.created < now - max_age_s)
        with self.engine.begin() as c:
            c.execute(update(requests).where(expired & hopeless)
                      .values(status="failed", error="gave up: lease expired too often or too late", updated=now))
            rows = c.execute(update(requests).where(expired).values(status="queued", lease_until=now + grace_s,
                                                                   updated=now).returning(requests.c.key)).all()
        return [r[0] for r in rows]

    def lock(self, name: str, owner: str, ttl_s: float, wait_s: float = 30.0) -> bool:
        """A named lock held until `release` or `ttl_s` (a lock per pull request keeps two workers
        from both creating its comment)."""
        end = time.time() + wait_s
        while True:
            now = time.time()
            with self.engine.begin() as c:
                taken = c.execute(update(locks).where(locks.c.name == name, locks.c.until < now)
                                  .values(owner=owner, until=now + ttl_s)).rowcount == 1
                if not taken:
                    try:
                        with c.begin_nested():
                            c.execute(insert(locks).values(name=name, owner=owner, until=now + ttl_s))
                        taken = True
                    except IntegrityError:
                        taken = False
            if taken:
                return True
            if time.time() > end:
                return False
            time.sleep(0.1)

    def release(self, name: str, owner: str) -> None:
        with self.engine.begin() as c:
            c.execute(locks.delete().where(locks.c.name == name, locks.c.owner == owner))

    def delete(self, prefix: str) -> None:
        with self.engine.begin() as c:
            c.execute(requests.delete().where(requests.c.key.startswith(prefix)))
            c.execute(watch_runs.delete().where(watch_runs.c.id.startswith(prefix)))

    def open_watch_run(self, run_id: str, token_hash: str, *, channel: str, burst: float,
                       name: str | None = None, team: str | None = None) -> None:
        now = time.time()
        with self.engine.begin() as c:
            c.execute(insert(watch_runs).values(id=run_id, token_hash=token_hash, name=name, team=team, channel=channel,
                                                warnings=0, bucket=burst, bucket_at=now, created=now, updated=now))

    def watch_run(self, run_id: str) -> WatchRun | None:
        with self.engine.connect() as c:
            row = c.execute(select(watch_runs).where(watch_runs.c.id == run_id)).mappings().first()
        return None if row is None else WatchRun(**{f: row[f] for f in WatchRun.__dataclass_fields__})

    def set_watch_run(self, run_id: str, **values) -> None:
        with self.engine.begin() as c:
            c.execute(update(watch_runs).where(watch_runs.c.id == run_id).values(updated=time.time(), **values))

    def take_watch_token(self, run_id: str, per_s: float, burst: float) -> float:
        """One token from the run's bucket (refilled at `per_s`, holding at most `burst`): 0.0 when
        taken, else the seconds until one is there. A conditional UPDATE on the bucket's time, so
        several web processes share one limit."""
        while True:
            now = time.time()
            with self.engine.begin() as c:
                row = c.execute(select(watch_runs.c.bucket, watch_runs.c.bucket_at)
                                .where(watch_runs.c.id == run_id)).first()
                if row is None:
                    return 0.0
                tokens = min(burst, row.bucket + max(0.0, now - row.bucket_at) * per_s)
                if tokens < 1.0:
                    return (1.0 - tokens) / per_s
                r = c.execute(update(watch_runs).where(watch_runs.c.id == run_id,
                                                       watch_runs.c.bucket_at == row.bucket_at)
                              .values(bucket=tokens - 1.0, bucket_at=now))
                if r.rowcount == 1:
                    return 0.0

    def counts(self) -> dict[str, int]:
        with self.engine.connect() as c:
            rows = c.execute(select(requests.c.status, func.count()).group_by(requests.c.status)).all()
        return {status: n for status, n in rows}
