"""A GitHub request, start to finish: who asked (permission asked of the API), which run, its
job logs and artifacts, the reply through the pipeline, and the one sticky comment on each pull
request (or a commit comment, and a Slack alert, for a push without one). A job whose last try
failed says so on the same comment."""
from __future__ import annotations

import logging
import re
from pathlib import Path

from analysis.errors import MltdError
from bot import github_port as gp
from bot import pipeline
from bot.render.github import neutralise, render_github
from bot.settings import Settings
from bot.slack_port import SlackPort
from bot.store import Request, Store

log = logging.getLogger("mltd.github")
_RUN_REF = re.compile(r"(?:actions/runs/|\brun\s*#?\s*)(\d{3,})")
LOCK_TTL_S = 120
FAILED = ("### mltd\nSorry, I hit an internal error while diagnosing {what} ({error}). It is logged under request "
          "`{key}`; comment `/diagnose` to try again.")


def process(req: Request, tmp: Path, owner: str, *, store: Store, slack: SlackPort, settings: Settings) -> dict:
    """Answer the request on its pull requests; what the store keeps of the answer."""
    p = req.params
    gh = gp.client(settings, p.get("installation_id"))
    repo = gh.get_repo(p["repo"])
    me = gp.own_login(gh, settings)
    if p["kind"] == "comment":
        issue = repo.get_issue(p["number"])
        if not gp.may_trigger(repo, p["sender"], settings):
            if settings.github_refusal == "reply":
                issue.create_comment(f"@{p['sender']} only collaborators with write access can ask mltd to "
                                     "diagnose a run here.")
            return {"refused": p["sender"]}
        issue.get_comment(p["comment_id"]).create_reaction("eyes")
        pr = repo.get_pull(p["number"])
        m = _RUN_REF.search(p.get("text", ""))
        run = repo.get_workflow_run(int(m.group(1))) if m else gp.latest_failed_run(repo, pr.head.sha, settings)
        if run is None:
            gp.upsert_comment(issue, "### mltd\nNo failed training workflow run found for this pull request's head "
                                     "commit. Reply `/diagnose run <id>` to name one.", me)
            return {"status": "no_run"}
        targets = [p["number"]]
        symptom = _RUN_REF.sub("", p.get("text", "")).replace("/diagnose", "", 1).strip()
    elif p["kind"] == "workflow_run":
        run = repo.get_workflow_run(p["run_id"])
        targets = gp.pulls_for_run(repo, p["payload_run"])
        symptom = ""
    else:                                               # a later success: mark earlier comments resolved
        for number in gp.pulls_for_run(repo, p["payload_run"]):
            _mark_resolved(repo.get_issue(number), me, p["payload_run"])
        return {"status": "resolved"}
    try:
        notes = gp.fetch_run(gh, run, tmp / "run", settings)
    except MltdError as exc:                          # hostile or oversized input: say so, on the same comment
        body = f"### mltd\nI could not diagnose [this run]({run.html_url}): {neutralise(str(exc))}."
        return {"status": "refused", "error": str(exc), "comments": _post(store, repo, me, p, targets, body, owner)}
    jobs = [(j.name, j.html_url) for j in run.jobs() if j.conclusion in gp.TRAINING_CONCLUSIONS]
    out = pipeline.reply(tmp / "run", lambda diagnosis: render_github(diagnosis, run.html_url, jobs),
                         symptoms=[symptom] if symptom else [], source=run.html_url, run_id=str(run.id), notes=notes,
                         budget=settings.budget(), agent_settings=settings)
    outcome = _post(store, repo, me, p, targets, out.body, owner)
    if not targets:
        repo.get_commit(run.head_sha).create_comment(gp.MARKER + "\n" + out.body)
        outcome["commit"] = run.head_sha
        if settings.slack_alert_channel:
            top = out.replied.root_causes[0].code if out.replied.root_causes else "no cause found"
            slack.alert(settings.slack_alert_channel,
                        f"mltd: training run {run.html_url} failed on {run.head_branch}: {top}")
    summary = out.summary()
    return {"status": summary["status"], "top": summary["top"], "comments": outcome, "agent": summary["agent"]}


def fail(req: Request, exc: Exception, owner: str, *, store: Store, slack: SlackPort, settings: Settings) -> None:
    """The reply of a request whose last try failed: the sticky comment on each of its pull
    requests says so (a /diagnose only for someone who may ask)."""
    p = req.params
    if p["kind"] == "resolve":
        return
    gh = gp.client(settings, p.get("installation_id"))
    repo = gh.get_repo(p["repo"])
    if p["kind"] == "comment":
        if not gp.may_trigger(repo, p["sender"], settings):
            return
        targets, what = [p["number"]], "this pull request's run"
    else:
        targets = gp.pulls_for_run(repo, p["payload_run"])
        what = f"[this run]({p['payload_run'].get('html_url') or ''})"
    if not targets:
        log.warning("no pull request to tell that %s failed", req.key)
        return
    body = FAILED.format(what=what, error=type(exc).__name__, key=req.key)
    _post(store, repo, gp.own_login(gh, settings), p, targets, body, owner)


def _post(store: Store, repo, me: str, p: dict, targets: list[int], body: str, owner: str) -> dict:
    """Upsert the sticky comment on each pull request, one worker per PR at a time."""
    outcome = {}
    for number in targets:
        lock = f"gh:{p['repo']}#{number}"
        if not store.lock(lock, owner, ttl_s=LOCK_TTL_S):
            raise RuntimeError(f"could not lock {lock}")
        try:
            outcome[number] = gp.upsert_comment(repo.get_issue(number), body, me)
        finally:
            store.release(lock, owner)
    return outcome


def _mark_resolved(issue, me: str, run: dict) -> None:
    for c in issue.get_comments():
        if gp.MARKER in (c.body or "") and c.user.login.lower() == me.lower() and "**Resolved**" not in c.body:
            c.edit(c.body + f"\n\n**Resolved**: a later run of this workflow succeeded ({run.get('html_url', '')}).")
