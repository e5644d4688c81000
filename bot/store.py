"""The source of truth for requests: one row per request, keyed by where it came from
(`slack:{event_id}`), with its status, attempts, lease, reply target and result.

The queue only carries keys. Every transition is one conditional UPDATE, so two workers (or a
worker and the reaper) can never both own a request: whoever's UPDATE matched owns it until its
lease runs out. SQLite by default, PostgreSQL for several machines (`MLTD_DATABASE_URL`).
"""
from __future__ import annotations

import json
import math
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

from analysis.model import Diagnosis

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

# One verdict per person per diagnosis (a retried or repeated click changes nothing): 👍/👎 from a
# Slack button or a GitHub reaction, or a corrected code with the reason from "Wrong cause…".
feedback = Table(
    "mltd_feedback", metadata,
    Column("key", String(400), primary_key=True),            # "{request_key}|{user}"
    Column("request_key", String(200), nullable=False, index=True),
    Column("source", String(20), nullable=False),            # slack | github
    Column("user", String(100), nullable=False),
    Column("verdict", String(20), nullable=False),           # up | down | wrong_cause
    Column("code", String(50)),                              # the real cause, for wrong_cause
    Column("reason", Text),
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

# A thread remembers its run (issue 18): per Slack thread (`slack:{channel}:{thread_ts}`) or pull
# request (`gh:{repo}#{number}`), the run it is about, the fetched artifacts' cache key and the
# last diagnosis. A table of its own, so that columns other features add to requests stay apart.
threads = Table(
    "mltd_threads", metadata,
    Column("thread", String(200), primary_key=True),
    Column("source", String(20), nullable=False),
    Column("request_key", String(200)),              # the request whose diagnosis this is
    Column("run", String(500)),                      # as asked: a run name, an s3:// URI, a GitHub run id
    Column("run_uri", String(1000), index=True),     # where it was fetched from: "same name" matches on it
    Column("workflow", String(300)),                 # GitHub: the workflow's path; a new attempt matches on it
    Column("cache_key", String(200)),                # bot/run_cache.py entry of the fetched artifacts
    Column("diagnosis", JSON),                       # the last diagnosis document replied in the thread
    Column("signature", JSON),                       # its top cause's located fact (analysis/signature.py)
    Column("checked", String(200)),                  # the cache key of the last later run checked against it
    Column("created", Float, nullable=False),
    Column("updated", Float, nullable=False),
)

# How many verdicts were given (new or changed), by verdict: `mltd_feedback_total` at scrape time,
# the same on every machine whichever process recorded them.
feedback_counts = Table(
    "mltd_feedback_counts", metadata,
    Column("verdict", String(20), primary_key=True),
    Column("n", Integer, nullable=False),
)

# Where a diagnosis is on show for reactions to reach it: the sticky comment of a pull request
# (`gh:{repo}#{number}`) names the request that last wrote it, and since when.
shown = Table(
    "mltd_shown", metadata,
    Column("target", String(300), primary_key=True),
    Column("request_key", String(200), nullable=False),
    Column("since", Float, nullable=False),
)

locks = Table(
    "mltd_locks", metadata,
    Column("name", String(200), primary_key=True),
    Column("owner", String(100), nullable=False),
    Column("until", Float, nullable=False),
)


@dataclass
class Thread:
    thread: str
    source: str
    request_key: str | None
    run: str | None
    run_uri: str | None
    workflow: str | None
    cache_key: str | None
    diagnosis: Diagnosis | None      # stored as its JSON document, read back typed
    signature: dict | None
    checked: str | None
    updated: float


def _thread(row) -> Thread:
    values = {f: row[f] for f in Thread.__dataclass_fields__}
    if values["diagnosis"] is not None:
        values["diagnosis"] = Diagnosis.from_dict(values["diagnosis"])
    return Thread(**values)


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


def _same(column, value):
    return func.coalesce(column, "") == (value or "")          # NULL-safe, in SQLite and PostgreSQL alike


def _bump(c, verdict: str) -> None:
    bump = update(feedback_counts).where(feedback_counts.c.verdict == verdict).values(n=feedback_counts.c.n + 1)
    if c.execute(bump).rowcount == 0:
        try:
            with c.begin_nested():
                c.execute(insert(feedback_counts).values(verdict=verdict, n=1))
        except IntegrityError:                      # the first of its kind, counted by another worker just now
            c.execute(bump)


def _json(obj):
    """A JSON value PostgreSQL accepts: tuples as lists, NaN and Inf as None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json(v) for v in obj]
    return obj


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
            c.execute(feedback.delete().where(feedback.c.request_key.startswith(prefix)))
            c.execute(shown.delete().where(shown.c.request_key.startswith(prefix)))
            c.execute(watch_runs.delete().where(watch_runs.c.id.startswith(prefix)))

    def record_feedback(self, request_key: str, user: str, verdict: str, *, source: str, code: str | None = None,
                        reason: str | None = None) -> bool:
        """Keep a person's verdict on a diagnosis and count it; False when it was already recorded
        as it is (a retry, a second click), which counts nothing."""
        now = time.time()
        key = f"{request_key}|{user}"
        values = {"verdict": verdict, "code": code, "reason": reason}
        same = (feedback.c.verdict == verdict) & _same(feedback.c.code, code) & _same(feedback.c.reason, reason)
        with self.engine.begin() as c:
            try:
                with c.begin_nested():
                    c.execute(insert(feedback).values(key=key, request_key=request_key, source=source, user=user,
                                                      created=now, updated=now, **values))
            except IntegrityError:
                if c.execute(update(feedback).where(feedback.c.key == key, ~same)
                             .values(updated=now, **values)).rowcount == 0:
                    return False
            _bump(c, verdict)
        return True

    def feedback_counts(self) -> dict[str, int]:
        with self.engine.connect() as c:
            return {v: n for v, n in c.execute(select(feedback_counts.c.verdict, feedback_counts.c.n)).all()}

    def feedback(self, request_key: str | None = None, *, verdict: str | None = None) -> list[dict]:
        """Verdicts, oldest first: on one diagnosis, or of one kind, or all."""
        q = select(feedback).order_by(feedback.c.created)
        if request_key is not None:
            q = q.where(feedback.c.request_key == request_key)
        if verdict is not None:
            q = q.where(feedback.c.verdict == verdict)
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(q).mappings()]

    def show(self, target: str, request_key: str) -> None:
        """`request_key`'s diagnosis is now the one on show at `target`."""
        now = time.time()
        with self.engine.begin() as c:
            if c.execute(update(shown).where(shown.c.target == target)
                         .values(request_key=request_key, since=now)).rowcount == 0:
                try:
                    with c.begin_nested():
                        c.execute(insert(shown).values(target=target, request_key=request_key, since=now))
                except IntegrityError:                 # written by another worker a moment ago
                    c.execute(update(shown).where(shown.c.target == target).values(request_key=request_key, since=now))

    def on_show(self, target: str) -> tuple[str, float] | None:
        """The request whose diagnosis is on show at `target`, and since when."""
        with self.engine.connect() as c:
            row = c.execute(select(shown.c.request_key, shown.c.since).where(shown.c.target == target)).first()
        return (row[0], row[1]) if row else None

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

    # --- threads: what a thread or pull request is about ----------------------------------------

    def remember(self, thread: str, source: str, **values) -> None:
        """Record (or replace) what `thread` is about after a diagnosis replied in it."""
        now = time.time()
        if isinstance(values.get("diagnosis"), Diagnosis):     # the store is the JSON edge of thread memory
            values["diagnosis"] = values["diagnosis"].to_dict()
        values = {k: _json(v) if k in ("diagnosis", "signature") else v for k, v in values.items()}
        with self.engine.begin() as c:
            done = c.execute(update(threads).where(threads.c.thread == thread)
                             .values(source=source, updated=now, **values)).rowcount
            if not done:
                try:
                    with c.begin_nested():
                        c.execute(insert(threads).values(thread=thread, source=source, created=now, updated=now,
                                                         **values))
                except IntegrityError:          # remembered by another worker meanwhile: ours is newer
                    c.execute(update(threads).where(threads.c.thread == thread)
                              .values(source=source, updated=now, **values))

    def thread(self, thread: str) -> Thread | None:
        with self.engine.connect() as c:
            row = c.execute(select(threads).where(threads.c.thread == thread)).mappings().first()
        return _thread(row) if row else None

    def threads_about(self, run_uri: str, source: str, limit: int = 5) -> list[Thread]:
        """The threads most recently diagnosed about the run at `run_uri`, newest first."""
        with self.engine.connect() as c:
            rows = c.execute(select(threads).where(threads.c.run_uri == run_uri, threads.c.source == source)
                             .order_by(threads.c.updated.desc()).limit(limit)).mappings().all()
        return [_thread(r) for r in rows]

    def pending_in_thread(self, channel: str, thread_ts: str, but: str) -> bool:
        """Another request of this Slack thread is still queued or running (a diagnosis the
        request `but` may be a follow-up to)."""
        with self.engine.connect() as c:
            row = c.execute(select(requests.c.key).where(
                requests.c.channel == channel, requests.c.thread_ts == thread_ts, requests.c.key != but,
                requests.c.status.in_(("queued", "running"))).limit(1)).first()
        return row is not None

    def claim_check(self, thread: str, cache_key: str) -> bool:
        """The right to tell `thread` whether the run cached under `cache_key` fixed its cause:
        once per later run, whoever asks first."""
        with self.engine.begin() as c:
            r = c.execute(update(threads).where(
                threads.c.thread == thread, threads.c.cache_key != cache_key,
                threads.c.checked.is_(None) | (threads.c.checked != cache_key),
            ).values(checked=cache_key))
        return r.rowcount == 1
