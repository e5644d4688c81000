"""The worker: lease a request, hand it to its platform's job, and record the outcome.

Exactly one reply per request: the store's lease decides who works on a request; a job that dies
is re-queued by the reaper once its lease runs out, and a retry answers over the same placeholder
or sticky comment instead of posting anew. A request whose last try fails gets a failure reply.
"""
from __future__ import annotations

import logging
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

from bot import github_jobs, logs, slack_jobs
from bot.queue import make_huey
from bot.redact import redact
from bot.settings import Settings
from bot.slack_port import SlackPort
from bot.store import Request, Store

log = logging.getLogger("mltd.worker")
ERROR_MAX = 2000


class Worker:
    def __init__(self, settings: Settings, store: Store | None = None, huey=None) -> None:
        self.settings = settings
        self.store = store or Store(settings.database_url)
        self.huey = huey or make_huey(settings.queue_url, settings.queue_name)
        self.run_request = self.huey.task(retries=settings.job_retries, retry_delay=2, retry_backoff=2,
                                          timeout=settings.job_timeout_s, context=True, name="run_request")(self._run)
        self.slack = SlackPort(settings)

    def enqueue(self, key: str) -> None:
        self.run_request(key)

    def reap(self) -> list[str]:
        """Put requests whose lease ran out back on the queue."""
        keys = self.store.requeue_expired(self.settings.lease_s, max_attempts=self.settings.job_retries + 3)
        for key in keys:
            log.warning("re-queued %s: its lease ran out", key)
            self.enqueue(key)
        return keys

    def reaper(self, stop: threading.Event) -> threading.Thread:
        def loop():
            while not stop.wait(self.settings.reap_every_s):
                try:
                    self.reap()
                except Exception:                      # the next round tries again
                    log.exception("reaper round failed")
        t = threading.Thread(target=loop, name="mltd-reaper", daemon=True)
        t.start()
        return t

    # --- one job --------------------------------------------------------------------------------

    def _run(self, key: str, task=None) -> None:
        logs.request_id.set(key)                       # every log line of this job carries it
        owner = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        req = self.store.lease(key, owner, self.settings.lease_s)
        if req is None:
            return                                     # done already, or someone else holds the lease
        started = time.monotonic()
        log.info("leased (attempt %d)", req.attempts, extra={"event": "leased", "attempt": req.attempts})
        last_try = task is None or not task.retries
        try:
            with tempfile.TemporaryDirectory(prefix="mltd-", dir=self.settings.work_dir or None) as tmp:
                result = self._process(req, Path(tmp), owner)
            self.store.finish(key, owner, "done", result=result)
            log.info("answered", extra={"event": "answered", "seconds": round(time.monotonic() - started, 3)})
        except Exception as exc:
            log.exception("request %s failed (attempt %d)", key, req.attempts)
            if not last_try:
                self.store.set(key, status="queued", lease_until=time.time() + self.settings.lease_s)
                raise                                  # huey retries it after a backoff
            self._fail(req, exc, owner)
            self.store.finish(key, owner, "failed", error=redact(f"{type(exc).__name__}: {exc}")[:ERROR_MAX])

    def _process(self, req: Request, tmp: Path, owner: str) -> dict:
        if req.source == "github":
            return github_jobs.process(req, tmp, owner, store=self.store, slack=self.slack, settings=self.settings)
        return slack_jobs.process(req, tmp, store=self.store, slack=self.slack, settings=self.settings)

    def _fail(self, req: Request, exc: Exception, owner: str) -> None:
        """The failure reply; if the platform is down too, the lease runs out and the reaper tries again."""
        if req.source == "github":
            github_jobs.fail(req, exc, owner, store=self.store, slack=self.slack, settings=self.settings)
        else:
            slack_jobs.fail(req, exc, store=self.store, slack=self.slack, settings=self.settings)
