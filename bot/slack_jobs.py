"""A Slack request, start to finish: the placeholder, the run (attached files, pasted text, or the
run named in the mention), the reply through the pipeline written over the placeholder, the full
report when the reply is cut short, and the plot once."""
from __future__ import annotations

from pathlib import Path

from analysis.errors import MltdError
from bot import pipeline
from bot.fetch import FetchError, fetch, resolve, save_pasted
from bot.render import render_markdown
from bot.render.slack import render
from bot.settings import Settings
from bot.slack_port import SlackPort
from bot.store import Request, Store

NO_RUN = "Which run? Mention me with `run 42` or an `s3://bucket/prefix/` location, or attach the training log."
FAILED = "Sorry, I hit an internal error while diagnosing this ({error}). It is logged under request `{key}`."


def process(req: Request, tmp: Path, *, store: Store, slack: SlackPort, settings: Settings) -> dict:
    """Answer the request in its thread; what the store keeps of the answer."""
    req = slack.ensure_placeholder(store, req)
    try:
        path, source, notes = _gather(req, tmp, slack, settings)
    except MltdError as exc:                     # the run could not be had: say why, in the thread
        slack.say(store, req, str(exc))
        return {"status": "not_fetched", "error": str(exc)}
    symptom = req.params.get("symptom")
    out = pipeline.reply(path, render, symptoms=[symptom] if symptom else [], source=source,
                         run_id=req.params.get("run") or None, notes=notes, budget=settings.budget(),
                         agent_settings=settings)
    blocks, text, complete = out.body
    slack.update(req, blocks, text)
    if not complete:
        slack.upload_text(req, render_markdown(out.replied), "mltd-report.md", "mltd report")
    if not req.plot_posted:                         # drawn after the answer is up: the answer comes first
        png, _ = pipeline.draw(out.diagnosis, out.run, tmp / "mltd-plot.png")
        if png is not None:
            slack.upload_file(req, png, "loss, gradient norm and LR")
            store.set(req.key, plot_posted=True)
    return out.summary()


def fail(req: Request, exc: Exception, *, store: Store, slack: SlackPort, settings: Settings) -> None:
    """The reply of a request whose last try failed."""
    slack.say(store, req, FAILED.format(error=type(exc).__name__, key=req.key))


def _gather(req: Request, tmp: Path, slack: SlackPort, settings: Settings) -> tuple[Path, str, list[str]]:
    """The run's folder: attached files and pasted text, else the referenced run."""
    p = req.params
    notes: list[str] = []
    attached = tmp / "attached"
    if p.get("files"):
        notes += slack.download(p["files"], attached)
    save_pasted(req.text or "", attached)
    if attached.exists() and any(attached.iterdir()):
        return attached, "slack message", notes
    if not p.get("run"):
        raise FetchError(NO_RUN)
    got = fetch(resolve(p["run"], p.get("kind"), settings), tmp / "run", settings)
    return got.path, got.source, notes + got.notes
