"""The worker: lease a request, make sure its placeholder exists, fetch the run, diagnose it, and
replace the placeholder with the answer (plus the plot, and the full report when it is long).

Exactly one reply per request: the store's lease decides who works on a request; the reply is
always an update of the one placeholder; a job that dies is re-queued by the reaper once its
lease runs out, and a retry updates the same placeholder again instead of posting anew.
"""
from __future__ import annotations

import logging
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

from bot import agent, logs
from bot.fetch import FetchError, fetch, resolve, save_pasted, slack_files
from bot.queue import make_huey
from bot.redact import redact, slack_escape
from bot.render import render_markdown
from bot.render.slack import message, render
from bot.settings import Settings
from bot.store import Request, Store

log = logging.getLogger("mltd.worker")
PLACEHOLDER_STALE_S = 20.0


def slack_client(settings: Settings):
    from slack_sdk import WebClient
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    client = WebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url.rstrip("/") + "/")
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))   # honours Retry-After
    return client


def placeholder(req: Request) -> dict:
    """chat.postMessage arguments of a request's placeholder, posted by the web front or a worker."""
    run = req.params.get("run")
    text = f"Looking at run {slack_escape(run)}…" if run else "Looking at it…"
    return {"channel": req.channel, "thread_ts": req.thread_ts, "text": text, "blocks": message(text),
            "unfurl_links": False, "unfurl_media": False}


class Worker:
    def __init__(self, settings: Settings, store: Store | None = None, huey=None) -> None:
        self.settings = settings
        self.store = store or Store(settings.database_url)
        self.huey = huey or make_huey(settings.queue_url, settings.queue_name)
        self.run_request = self.huey.task(retries=settings.job_retries, retry_delay=2, retry_backoff=2,
                                          timeout=settings.job_timeout_s, context=True, name="run_request")(self._run)
        self._slack = None
        self.replies = 0

    @property
    def slack(self):
        if self._slack is None:
            self._slack = slack_client(self.settings)
        return self._slack

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
            if req.source == "github":
                self.process_github(req, owner)
            else:
                self.process(req, owner)
            log.info("answered", extra={"event": "answered", "seconds": round(time.monotonic() - started, 3)})
        except Exception as exc:
            log.exception("request %s failed (attempt %d)", key, req.attempts)
            if not last_try:
                self.store.set(key, status="queued", lease_until=time.time() + self.settings.lease_s)
                raise                                  # huey retries it after a backoff
            if req.source == "slack":
                self._answer(req, f"Sorry, I hit an internal error while diagnosing this ({type(exc).__name__}). "
                                  f"It is logged under request `{key}`.")
            self.store.finish(key, owner, "failed", error=redact(f"{type(exc).__name__}: {exc}")[:2000])

    def process_github(self, req: Request, owner: str) -> None:
        from bot import github_jobs

        with tempfile.TemporaryDirectory(prefix="mltd-", dir=self.settings.work_dir or None) as tmp:
            result = github_jobs.process(self, req, Path(tmp), owner)
        self.store.finish(req.key, owner, "done", result=result)

    def process(self, req: Request, owner: str) -> None:
        self._ensure_placeholder(req)
        req = self.store.get(req.key) or req
        with tempfile.TemporaryDirectory(prefix="mltd-", dir=self.settings.work_dir or None) as tmp:
            try:
                path, source, notes = self._gather(req, Path(tmp))
            except FetchError as exc:
                self._answer(req, str(exc))
                self.store.finish(req.key, owner, "done", error=str(exc))
                return
            from analysis import diagnose
            from bot.render.plot import plot_title, render_plot

            symptoms = [req.params["symptom"]] if req.params.get("symptom") else []
            diagnosis, run = diagnose(path, symptoms, source=source, run_id=req.params.get("run") or None,
                                       budget=self.settings.budget())
            doc = diagnosis.to_dict()
            doc["questions"] = doc.get("questions", []) + notes
            doc = agent.review(path, run, doc, self.settings)
            blocks, text, complete = render(doc)
            self._update(req, blocks, text)
            if not complete:
                self.slack.files_upload_v2(channel=req.channel, thread_ts=req.thread_ts, filename="mltd-report.md",
                                           content=render_markdown(doc), title="mltd report")
            if not req.plot_posted:
                png = render_plot(run.metrics, diagnosis.root_causes, Path(tmp) / "mltd-plot.png",
                                  title=plot_title(diagnosis))
                if png is not None:
                    self.slack.files_upload_v2(channel=req.channel, thread_ts=req.thread_ts, file=str(png),
                                               filename="mltd-plot.png", title="loss, gradient norm and LR")
                    self.store.set(req.key, plot_posted=True)
        top = doc["root_causes"][0] if doc["root_causes"] else {}
        self.store.finish(req.key, owner, "done", result={"status": doc["status"], "top": top.get("code"),
                                                          "confidence": top.get("confidence"),
                                                          "agent": doc["engine"].get("agent")})

    def _gather(self, req: Request, tmp: Path) -> tuple[Path, str, list[str]]:
        """The run's folder: attached files and pasted text, else the referenced run."""
        p = req.params
        notes: list[str] = []
        attached = tmp / "attached"
        if p.get("files"):
            notes += slack_files(p["files"], attached, self.settings.slack_bot_token, self.settings)
        save_pasted(req.text or "", attached)
        if attached.exists() and any(attached.iterdir()):
            return attached, "slack message", notes
        if not p.get("run"):
            raise FetchError("Which run? Mention me with `run 42` or an `s3://bucket/prefix/` location, or attach "
                             "the training log.")
        uri = resolve(p["run"], p.get("kind"), self.settings)
        got = fetch(uri, tmp / "run", self.settings)
        return got.path, got.source, notes + got.notes

    def _ensure_placeholder(self, req: Request) -> None:
        while req.reply_ts is None:
            if self.store.claim_placeholder(req.key, PLACEHOLDER_STALE_S):
                r = self.slack.chat_postMessage(**placeholder(req))
                self.store.set(req.key, reply_ts=r["ts"])
                return
            time.sleep(0.2)        # the web front is posting it (its claim goes stale if it died)
            req = self.store.get(req.key) or req

    def _answer(self, req: Request, text: str) -> None:
        req = self.store.get(req.key) or req
        if req.reply_ts is None:
            self._ensure_placeholder(req)
            req = self.store.get(req.key) or req
        self._update(req, message(slack_escape(text)), slack_escape(text))

    def _update(self, req: Request, blocks: list[dict], text: str) -> None:
        self.slack.chat_update(channel=req.channel, ts=req.reply_ts, blocks=blocks, text=text, parse="none")
        self.replies += 1
