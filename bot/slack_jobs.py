"""A Slack request, start to finish: the placeholder, the run (attached files, pasted text, or the
run named in the mention), the reply through the pipeline written over the placeholder, the full
report when the reply is cut short, and the plot once.

A thread remembers its run: after a diagnosis the store keeps, per channel and thread, the run, its
cache key and the diagnosis. A later mention in that thread that names no other run is a
follow-up about it, answered from the cached run (`_follow_up`); a diagnosis of a new version of
a run another thread diagnosed tells that thread whether its cause is gone (`_tell_earlier`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import MltdError
from bot import compare_jobs, followup, pipeline
from bot.fetch import Fetched, FetchError, brings_a_log, fetch, resolve, save_pasted
from bot.redact import slack_escape
from bot.render import render_markdown
from bot.render.slack import message, prefaced, render, with_feedback
from bot.run_cache import RunCache, key_of
from bot.settings import Settings
from bot.slack_port import NotInChannel, SlackPort
from bot.store import Request, Store, Thread

NO_RUN = "Which run? Mention me with `run 42` or an `s3://bucket/prefix/` location, or attach the training log."
NOT_IN_CHANNEL = ("I can't post in this channel: invite me with `/invite @mltd` (or ask in a channel I'm in) and run "
                  "the command again.")
FAILED = "Sorry, I hit an internal error while diagnosing this ({error}). It is logged under request `{key}`."
GONE = ("I no longer have the files of this thread's run (my copy of them expired) and it came from an attachment: "
        "attach them again, or name the run.")
UNCHANGED = ("{run}'s files are the same ones I diagnosed in this thread (nothing under {uri} changed). "
             "Once the new run has written its files there, ask me again.")
NO_URI = ("This thread's run came from attached files: attach the new run's files, or name where it lives, and "
          "I'll check whether the earlier cause is gone.")


WAIT_FOR_DIAGNOSIS_S = 120.0
WAIT_POLL_S = 0.25


def thread_key(channel: str | None, thread_ts: str | None) -> str:
    return f"slack:{channel}:{thread_ts}"


@dataclass
class Gathered:
    got: Fetched
    uri: str | None           # where a named run lives (None for attachments and pasted text)
    cache_key: str | None


def process(req: Request, tmp: Path, *, store: Store, slack: SlackPort, settings: Settings) -> dict:
    """Answer the request in its thread; what the store keeps of the answer."""
    if req.params.get("compare"):
        return compare_jobs.slack(req, tmp, store=store, slack=slack, settings=settings)
    try:
        req = slack.ensure_placeholder(store, req)
    except NotInChannel:
        if not req.params.get("response_url"):
            raise
        slack.respond(req.params["response_url"], NOT_IN_CHANNEL)      # a slash command from a channel mltd is not in
        return {"status": "not_in_channel"}
    cache = RunCache(settings)
    earlier = _earlier(req, store)
    if is_follow_up(req, earlier):
        assert earlier is not None
        return _follow_up(req, earlier, tmp, cache, store=store, slack=slack, settings=settings)
    try:
        g = gather(req, tmp, slack, settings, cache)
    except MltdError as exc:                     # the run could not be had: say why, in the thread
        slack.say(store, req, str(exc))
        return {"status": "not_fetched", "error": str(exc)}
    symptom = req.params.get("symptom")
    out = pipeline.reply(g.got.path, render, symptoms=[symptom] if symptom else [], source=g.got.source,
                         run_id=req.params.get("run") or None, notes=g.got.notes, budget=settings.budget(),
                         agent_settings=settings)
    blocks, text, complete = out.body
    preface = _tell_earlier(req, g, out, store=store, slack=slack)
    if preface:
        blocks, text = prefaced(preface, blocks, text)
    slack.update(req, with_feedback(blocks, req.key), text)
    _remember(req, g, out, store)
    if not complete:
        slack.upload_text(req, render_markdown(out.replied), "mltd-report.md", "mltd report")
    if not req.plot_posted:                         # drawn after the answer is up: the answer comes first
        png, _ = pipeline.draw(out.diagnosis, out.run, tmp / "mltd-plot.png")
        if png is not None:
            slack.upload_file(req, png, "loss, gradient norm and LR")
            store.set(req.key, plot_posted=True)
    return out.summary() | ({"fix_check": preface} if preface else {})


def fail(req: Request, exc: Exception, *, store: Store, slack: SlackPort, settings: Settings) -> None:
    """The reply of a request whose last try failed."""
    slack.say(store, req, FAILED.format(error=type(exc).__name__, key=req.key))


def _earlier(req: Request, store: Store) -> Thread | None:
    """What the thread is about; a question asked while the thread's first diagnosis is still
    being worked on waits for it (bounded), instead of asking "which run?"."""
    key = thread_key(req.channel, req.thread_ts)
    earlier = store.thread(key)
    p = req.params
    if earlier is not None or p.get("run") or p.get("files") or not req.channel or not req.thread_ts:
        return earlier
    end = time.monotonic() + WAIT_FOR_DIAGNOSIS_S
    while time.monotonic() < end and store.pending_in_thread(req.channel, req.thread_ts, req.key):
        time.sleep(WAIT_POLL_S)
        if (earlier := store.thread(key)) is not None:
            return earlier
    return store.thread(key)


def is_follow_up(req: Request, earlier: Thread | None) -> bool:
    """A mention in a thread mltd answered with a diagnosis, that names no other run and brings
    no run of its own (files, a pasted log)."""
    p = req.params
    return (earlier is not None and earlier.diagnosis is not None and not p.get("run") and not p.get("files")
            and not brings_a_log(req.text or ""))


def _remember(req: Request, g: Gathered, out: pipeline.Reply, store: Store) -> None:
    store.remember(thread_key(req.channel, req.thread_ts), "slack", request_key=req.key,
                   run=req.params.get("run") or g.got.source, run_uri=g.uri, cache_key=g.cache_key,
                   diagnosis=pipeline.remembered(out), signature=pipeline.signature(out))


def _tell_earlier(req: Request, g: Gathered, out: pipeline.Reply, *, store: Store, slack: SlackPort) -> str | None:
    """When the newest thread that diagnosed this run (by its location) saw other files, tell it
    whether its cause is gone: in this reply when it is this thread, else as a reply there. Once
    per thread and new run, whoever gets there first."""
    if not g.uri or not g.cache_key:
        return None
    here = thread_key(req.channel, req.thread_ts)
    for t in store.threads_about(g.uri, "slack", limit=1):
        if t.cache_key == g.cache_key or not t.diagnosis or not store.claim_check(t.thread, g.cache_key):
            continue
        checked = pipeline.fix_check(t.diagnosis, t.signature, out, f"the new run {req.params.get('run') or g.uri}")
        if checked is None:
            continue
        if t.thread == here:
            return checked.text
        _, channel, thread_ts = t.thread.split(":", 2)
        slack.post_in_thread(channel, thread_ts, checked.text)
    return None


def _follow_up(req: Request, earlier: Thread, tmp: Path, cache: RunCache, *, store: Store, slack: SlackPort,
               settings: Settings) -> dict:
    """Answer a question about the thread's run from its cached copy; "is it fixed?" looks for a
    new run at the same location."""
    question = req.params.get("symptom") or ""
    assert earlier.diagnosis is not None
    if followup.asks_fix(question):
        return _check_fix(req, earlier, tmp, cache, store=store, slack=slack, settings=settings)
    got = cache.get(earlier.cache_key)
    refetched = got is None
    if got is None:
        if not earlier.run_uri:
            slack.say(store, req, GONE)
            return {"status": "follow_up_gone"}
        try:
            got = fetch(earlier.run_uri, tmp / "run", settings)
        except FetchError as exc:
            slack.say(store, req, str(exc))
            return {"status": "not_fetched", "error": str(exc)}
    ans = pipeline.follow_up(got.path, question, earlier.diagnosis, source=got.source, run_id=earlier.run,
                             budget=settings.budget(), agent_settings=settings)
    slack.say(store, req, ans.text)
    return {"status": "follow_up", "by": ans.by, "thread_run": earlier.run, "refetched": refetched,
            "agent": ans.agent}


def _check_fix(req: Request, earlier: Thread, tmp: Path, cache: RunCache, *, store: Store, slack: SlackPort,
               settings: Settings) -> dict:
    """"Is it fixed?": the run's location listed again; new files are diagnosed and held against
    the thread's earlier diagnosis."""
    assert earlier.diagnosis is not None
    if not earlier.run_uri:
        slack.say(store, req, NO_URI)
        return {"status": "fix_check_no_uri"}
    try:
        got = fetch(earlier.run_uri, tmp / "run", settings,
                    cached=lambda fp: cache.get(key_of("s3", earlier.run_uri or "", fp)))
    except FetchError as exc:
        slack.say(store, req, str(exc))
        return {"status": "not_fetched", "error": str(exc)}
    g = _cached(got, earlier.run_uri, tmp, cache)
    if g.cache_key is not None and g.cache_key == earlier.cache_key:
        slack.say(store, req, UNCHANGED.format(run=earlier.run, uri=earlier.run_uri))
        return {"status": "fix_check_unchanged"}
    out = pipeline.reply(g.got.path, render, source=g.got.source, run_id=earlier.run, notes=g.got.notes,
                         budget=settings.budget(), agent_settings=settings)
    checked = pipeline.fix_check(earlier.diagnosis, earlier.signature, out, f"the new run {earlier.run}")
    if g.cache_key:
        store.claim_check(thread_key(req.channel, req.thread_ts), g.cache_key)
    blocks, fallback, _ = out.body
    if checked is not None and checked.fixed:           # a fixed run says so in one line
        blocks, fallback = message(slack_escape(checked.text)), slack_escape(checked.text)
    elif checked is not None:
        blocks, fallback = prefaced(checked.text, blocks, fallback)
    slack.update(req, with_feedback(blocks, req.key), fallback)
    _remember(req, g, out, store)
    return out.summary() | {"fix_check": checked.text if checked else None}


def _cached(got: Fetched, uri: str, tmp: Path, cache: RunCache) -> Gathered:
    """A run fetched from S3 into the cache (or found there already): its cache key names its content."""
    if not uri.startswith("s3://") or not got.fingerprint:
        return Gathered(got, uri, None)                # a local folder stays where it is
    key = key_of("s3", uri, got.fingerprint)
    if got.path.is_relative_to(tmp):
        got = cache.put(key, got)
    return Gathered(got, uri, key)


def gather(req: Request, tmp: Path, slack: SlackPort, settings: Settings, cache: RunCache) -> Gathered:
    """The run's folder: attached files and pasted text, else the referenced run."""
    p = req.params
    notes: list[str] = []
    attached = tmp / "attached"
    if p.get("files"):
        notes += slack.download(p["files"], attached)
    save_pasted(req.text or "", attached)
    if attached.exists() and any(attached.iterdir()):
        key = key_of("slack-files", req.key)
        got = cache.put(key, Fetched(attached, "slack message", notes))
        if got.path == attached:                       # not cached: keep the request working
            return Gathered(got, None, None)
        return Gathered(got, None, key)
    if not p.get("run"):
        raise FetchError(NO_RUN)
    uri = resolve(p["run"], p.get("kind"), settings)
    got = fetch(uri, tmp / "run", settings, cached=lambda fp: cache.get(key_of("s3", uri, fp)))
    return _cached(got, uri, tmp, cache)

