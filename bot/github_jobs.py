"""A GitHub request, start to finish: who asked (permission asked of the API), which run, its
job logs and artifacts, the reply through the pipeline, and the one sticky comment on each pull
request (or a commit comment, and a Slack alert, for a push without one). A job whose last try
failed says so on the same comment.

A pull request remembers its run: after a diagnosis the store keeps the run, the workflow, the
fetched artifacts' cache key and the diagnosis. A `/diagnose <question>` or `@<app slug> ...` on
it that names no run is a follow-up, answered from the cached run in a reply of its own; a new
attempt or run of the same workflow that finishes puts "did the fix work" on the sticky comment.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path

from analysis.errors import MltdError
from bot import compare_jobs, feedback, followup, pipeline
from bot import github_port as gp
from bot.fetch import Fetched
from bot.render.github import neutralise, render_github, render_plain
from bot.run_cache import RunCache, key_of
from bot.settings import Settings
from bot.slack_port import SlackPort
from bot.store import Request, Store, Thread

log = logging.getLogger("mltd.github")
_RUN_REF = re.compile(r"(?:actions/runs/|\brun\s*#?\s*)(\d{3,})")
LOCK_TTL_S = 120
FAILED = ("### mltd\nSorry, I hit an internal error while diagnosing {what} ({error}). It is logged under request "
          "`{key}`; comment `/diagnose` to try again.")
NEXT_RUN = ("I put whether the earlier cause is gone on the diagnosis comment when the next run of this workflow "
            "finishes; none has finished on this pull request since my diagnosis of run {run}.")


def pr_key(repo: str, number: int) -> str:
    return f"gh:{repo}#{number}"


def question_of(text: str, slug: str) -> str:
    """The words after `/diagnose` or `@slug`."""
    text = text.strip()
    for lead in ("/diagnose", f"@{slug}"):
        if text.lower().startswith(lead.lower()):
            return text[len(lead):].strip(" ,:")
    return text


def process(req: Request, tmp: Path, owner: str, *, store: Store, slack: SlackPort, settings: Settings) -> dict:
    """Answer the request on its pull requests; what the store keeps of the answer."""
    p = req.params
    gh = gp.client(settings, p.get("installation_id"))
    repo = gh.get_repo(p["repo"])
    me = gp.own_login(gh, settings)
    cache = RunCache(settings)
    if p["kind"] == "comment":
        issue = repo.get_issue(p["number"])
        if not gp.may_trigger(repo, p["sender"], settings):
            if settings.github_refusal == "reply":
                issue.create_comment(f"@{p['sender']} only collaborators with write access can ask mltd to "
                                     "diagnose a run here.")
            return {"refused": p["sender"]}
        issue.get_comment(p["comment_id"]).create_reaction("eyes")
        if p.get("compare"):
            return compare_jobs.github(req, tmp, owner, gh=gh, repo=repo, me=me, store=store, settings=settings)
        pr = repo.get_pull(p["number"])
        m = _RUN_REF.search(p.get("text", ""))
        question = question_of(_RUN_REF.sub("", p.get("text", "")), settings.github_app_slug)
        earlier = store.thread(pr_key(p["repo"], p["number"]))
        if not m and question and earlier is not None and earlier.diagnosis is not None:
            latest = gp.latest_failed_run(repo, pr.head.sha, settings) if followup.asks_fix(question) else None
            if latest is None or latest.id == int(earlier.run or 0):
                return _follow_up(req, earlier, question, gh, repo, issue, me, tmp, cache, settings)
        run = repo.get_workflow_run(int(m.group(1))) if m else gp.latest_failed_run(repo, pr.head.sha, settings)
        if run is None:
            gp.upsert_comment(issue, "### mltd\nNo failed training workflow run found for this pull request's head "
                                     "commit. Reply `/diagnose run <id>` to name one.", me)
            return {"status": "no_run"}
        targets = [p["number"]]
        symptom = question
    elif p["kind"] == "workflow_run":
        run = repo.get_workflow_run(p["run_id"])
        targets = gp.pulls_for_run(repo, p["payload_run"])
        symptom = ""
    else:                                               # a later success: mark earlier comments resolved
        checked = {}
        for number in gp.pulls_for_run(repo, p["payload_run"]):
            issue = repo.get_issue(number)
            _read_feedback(store, issue, pr_key(p["repo"], number), me)
            line = _fixed_line(store, p, number, gh, repo, tmp, cache, settings)
            _mark_resolved(issue, me, p["payload_run"], line)
            checked[number] = line
        return {"status": "resolved", "fix_checks": checked}
    try:
        got = _fetch(gh, run, tmp, cache, p["repo"], settings)
    except MltdError as exc:                          # hostile or oversized input: say so, on the same comment
        body = f"### mltd\nI could not diagnose [this run]({run.html_url}): {neutralise(str(exc))}."
        return {"status": "refused", "error": str(exc), "comments": _post(store, repo, me, p, targets, body, owner)}
    jobs = [(j.name, j.html_url) for j in run.jobs() if j.conclusion in gp.TRAINING_CONCLUSIONS]
    out = pipeline.reply(got.path, lambda diagnosis: render_github(diagnosis, run.html_url, jobs),
                         symptoms=[symptom] if symptom else [], source=run.html_url, run_id=str(run.id),
                         notes=got.notes, budget=settings.budget(), agent_settings=settings)
    cache_key = _cache_key(p["repo"], run)
    checks = {n: _check_against(store.thread(pr_key(p["repo"], n)), run, cache_key, out) for n in targets}
    bodies = {n: (render_plain(c.text) + "\n\n" + out.body if c else out.body) for n, c in checks.items()}
    outcome = _post(store, repo, me, p, targets, bodies, owner, shows=req.key)
    signature = pipeline.signature(out)
    for n in targets:
        store.remember(pr_key(p["repo"], n), "github", request_key=req.key, run=str(run.id), run_uri=run.html_url,
                       workflow=run.path, cache_key=cache_key, diagnosis=pipeline.remembered(out), signature=signature)
    if not targets:
        repo.get_commit(run.head_sha).create_comment(gp.MARKER + "\n" + out.body)
        outcome["commit"] = run.head_sha
        if settings.slack_alert_channel:
            top = out.replied.root_causes[0].code if out.replied.root_causes else "no cause found"
            slack.alert(settings.slack_alert_channel,
                        f"mltd: training run {run.html_url} failed on {run.head_branch}: {top}")
    summary = out.summary()
    return {"status": summary["status"], "top": summary["top"], "comments": outcome, "agent": summary["agent"],
            "fix_checks": {n: c.text for n, c in checks.items() if c}}


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


def _cache_key(repo: str, run) -> str:
    return key_of("gh", repo, str(run.id), str(getattr(run, "run_attempt", None) or 1))


def _fetch(gh, run, tmp: Path, cache: RunCache, repo: str, settings: Settings,
           conclusions: tuple[str, ...] = gp.TRAINING_CONCLUSIONS) -> Fetched:
    """The run's logs and artifacts: from the cache when this attempt was fetched before."""
    key = _cache_key(repo, run)
    got = cache.get(key)
    if got is not None:
        return got
    notes = gp.fetch_run(gh, run, tmp / "run", settings, conclusions)
    return cache.put(key, Fetched(tmp / "run", run.html_url, notes))


def _check_against(earlier: Thread | None, run, cache_key: str, out: pipeline.Reply) -> pipeline.FixCheck | None:
    """"Did the fix work" for a pull request whose earlier diagnosis was of another attempt or
    run of this workflow."""
    if earlier is None or earlier.diagnosis is None or earlier.workflow != run.path or earlier.cache_key == cache_key:
        return None
    attempt = getattr(run, "run_attempt", None) or 1
    label = f"run {run.id}" + (f" (attempt {attempt})" if attempt > 1 else "")
    return pipeline.fix_check(earlier.diagnosis, earlier.signature, out, label)


def _fixed_line(store: Store, p: dict, number: int, gh, repo, tmp: Path, cache: RunCache,
                settings: Settings) -> str | None:
    """For a pull request diagnosed earlier: the succeeded run's own logs held against that
    diagnosis, as one line; None when there is nothing to check or the run cannot be read (the
    plain "Resolved" line still goes up)."""
    earlier = store.thread(pr_key(p["repo"], number))
    if earlier is None or earlier.diagnosis is None:
        return None
    try:
        run = repo.get_workflow_run(p["run_id"])
        if earlier.workflow != run.path:
            return None
        got = _fetch(gh, run, tmp / str(number), cache, p["repo"], settings, conclusions=("success", "failure"))
        out = pipeline.reply(got.path, lambda doc: "", source=run.html_url, run_id=str(run.id), notes=got.notes,
                             budget=settings.budget())
    except Exception as exc:                        # the check is extra: the resolution is said regardless
        log.warning("no fix check for %s#%s: %s", p["repo"], number, type(exc).__name__)
        return None
    checked = pipeline.fix_check(earlier.diagnosis, earlier.signature, out, f"run {run.id}")
    return checked.text if checked is not None else None


def _follow_up(req: Request, earlier: Thread, question: str, gh, repo, issue, me: str, tmp: Path, cache: RunCache,
               settings: Settings) -> dict:
    """A question about the pull request's diagnosed run, answered from its cached copy in a
    reply of its own (found again by its marker on a redelivery)."""
    p = req.params
    assert earlier.diagnosis is not None
    marker = gp.followup_marker(p["comment_id"])
    if followup.asks_fix(question):
        gp.upsert_comment(issue, render_plain(NEXT_RUN.format(run=earlier.run)), me, marker)
        return {"status": "follow_up", "by": "analyzers", "thread_run": earlier.run}
    got = cache.get(earlier.cache_key)
    refetched = got is None
    if got is None:
        got = _fetch(gh, repo.get_workflow_run(int(earlier.run or 0)), tmp, cache, p["repo"], settings)
    ans = pipeline.follow_up(got.path, question, earlier.diagnosis, source=got.source, run_id=earlier.run,
                             budget=settings.budget(), agent_settings=settings)
    quoted = "> " + neutralise(question[:300])
    gp.upsert_comment(issue, f"{quoted}\n\n{render_plain(ans.text)}", me, marker)
    return {"status": "follow_up", "by": ans.by, "thread_run": earlier.run, "refetched": refetched, "agent": ans.agent}


def _post(store: Store, repo, me: str, p: dict, targets: list[int], body: str | dict[int, str], owner: str, *,
          shows: str | None = None) -> dict:
    """Upsert the sticky comment on each pull request (`body`, or its own from a dict), one worker
    per PR at a time: first the 👍/👎 given to the diagnosis it shows now are read, then it shows
    request `shows`'s (if a diagnosis: a failure or a refusal is no diagnosis to react to)."""
    outcome = {}
    for number in targets:
        lock = f"gh:{p['repo']}#{number}"
        if not store.lock(lock, owner, ttl_s=LOCK_TTL_S):
            raise RuntimeError(f"could not lock {lock}")
        try:
            issue = repo.get_issue(number)
            _read_feedback(store, issue, lock, me)
            outcome[number] = gp.upsert_comment(issue, body[number] if isinstance(body, dict) else body, me)
            if shows is not None:
                store.show(lock, shows)
        finally:
            store.release(lock, owner)
    return outcome


def _read_feedback(store: Store, issue, target: str, me: str) -> None:
    try:
        feedback.read_reactions(store, gp.sticky_comment(issue, me), target, me)
    except Exception:                       # feedback is a courtesy: the diagnosis goes up regardless
        log.warning("could not read the reactions on %s", target, exc_info=True)


def _mark_resolved(issue, me: str, run: dict, fix_line: str | None = None) -> None:
    for c in issue.get_comments():
        if (c.body or "").startswith(gp.MARKER) and c.user.login.lower() == me.lower() and "**Resolved**" not in c.body:
            line = f"\n\n**Resolved**: a later run of this workflow succeeded ({run.get('html_url', '')})."
            c.edit(c.body + line + (" " + render_plain(fix_line) if fix_line else ""))
