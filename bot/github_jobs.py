"""A GitHub request, start to finish: who asked (permission asked of the API), which run, its
job logs and artifacts, the diagnosis, and the one sticky comment on each pull request (or a
commit comment, or a Slack alert, for a push without one)."""
from __future__ import annotations

import re
from pathlib import Path

from bot import agent
from bot import github_port as gp
from bot.render.github import neutralise, render_github
from bot.unzip import UnsafeArchive
from bot.store import Request

_RUN_REF = re.compile(r"(?:actions/runs/|\brun\s*#?\s*)(\d{3,})")


def process(worker, req: Request, tmp: Path, owner: str) -> dict:
    p = req.params
    settings = worker.settings
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
    except (gp.Refused, UnsafeArchive) as exc:        # hostile or oversized input: say so, on the same comment
        body = f"### mltd\nI could not diagnose [this run]({run.html_url}): {neutralise(str(exc))}."
        return {"status": "refused", "error": str(exc), "comments": _post(worker, repo, me, p, targets, body, owner)}
    from analysis import diagnose

    diagnosis, loaded = diagnose(tmp / "run", [symptom] if symptom else [], source=run.html_url, run_id=str(run.id),
                                budget=settings.budget())
    doc = diagnosis.to_dict()
    doc["questions"] = doc.get("questions", []) + notes
    doc = agent.review(tmp / "run", loaded, doc, settings)
    jobs = [(j.name, j.html_url) for j in run.jobs() if j.conclusion in gp.TRAINING_CONCLUSIONS]
    body = render_github(doc, run.html_url, jobs)
    outcome = _post(worker, repo, me, p, targets, body, owner)
    if not targets:
        repo.get_commit(run.head_sha).create_comment(gp.MARKER + "\n" + body)
        outcome["commit"] = run.head_sha
        if settings.slack_alert_channel:
            worker.slack.chat_postMessage(channel=settings.slack_alert_channel, unfurl_links=False,
                                          text=f"mltd: training run {run.html_url} failed on {run.head_branch}: "
                                               f"{doc['root_causes'][0]['code'] if doc['root_causes'] else 'no cause found'}")
    top = doc["root_causes"][0] if doc["root_causes"] else {}
    return {"status": doc["status"], "top": top.get("code"), "comments": outcome, "agent": doc["engine"].get("agent")}


def _post(worker, repo, me: str, p: dict, targets: list[int], body: str, owner: str) -> dict:
    """Upsert the sticky comment on each pull request, one worker per PR at a time."""
    outcome = {}
    for number in targets:
        lock = f"gh:{p['repo']}#{number}"
        if not worker.store.lock(lock, owner, ttl_s=120):
            raise RuntimeError(f"could not lock {lock}")
        try:
            outcome[number] = gp.upsert_comment(repo.get_issue(number), body, me)
        finally:
            worker.store.release(lock, owner)
    return outcome


def _mark_resolved(issue, me: str, run: dict) -> None:
    for c in issue.get_comments():
        if gp.MARKER in (c.body or "") and c.user.login.lower() == me.lower() and "**Resolved**" not in c.body:
            c.edit(c.body + f"\n\n**Resolved**: a later run of this workflow succeeded ({run.get('html_url', '')}).")
