"""A comparison request, start to finish: both runs fetched the way a diagnosis fetches one, the
comparison through the pipeline, one reply. In Slack ("@mltd compare run 42 with run 41") it
replaces the placeholder in the thread; on a pull request (`/diagnose compare [RUN_ID]`) it is
one sticky comment of its own beside the diagnosis, found by its marker and updated in place.
"""
from __future__ import annotations

from pathlib import Path

from bot import github_port as gp
from bot import pipeline
from bot.fetch import FetchError, fetch, resolve
from bot.render.compare import MARKER, render_compare_markdown, render_compare_slack
from bot.settings import Settings
from bot.slack_port import SlackPort
from bot.store import Request, Store
from bot.unzip import UnsafeArchive

LOCK_TTL_S = 120


def slack(req: Request, tmp: Path, *, store: Store, slack: SlackPort, settings: Settings) -> dict:
    """Answer "compare run 42 with run 41" in its thread; what the store keeps of the answer."""
    req = slack.ensure_placeholder(store, req)
    sides = req.params["compare"]
    fetched = []
    for name in ("a", "b"):
        ref = sides[name]
        try:
            fetched.append(fetch(resolve(ref["run"], ref.get("kind"), settings), tmp / name, settings))
        except FetchError as exc:
            slack.say(store, req, f"I could not fetch run {ref['run']} to compare: {exc}")
            return {"status": "not_fetched", "run": ref["run"], "error": str(exc)}
    a, b = fetched
    out = pipeline.compare(a.path, b.path, render_compare_slack, source_a=a.source, source_b=b.source,
                           run_a=_run_id(sides["a"]), run_b=_run_id(sides["b"]), notes=a.notes + b.notes,
                           budget=settings.budget())
    blocks, text = out.body
    slack.update(req, blocks, text)
    return out.summary()


def _run_id(ref: dict) -> str | None:
    return ref["run"] if ref.get("kind") == "name" else None


def github(req: Request, tmp: Path, owner: str, *, gh, repo, me: str, store: Store, settings: Settings) -> dict:
    """`/diagnose compare [RUN_ID]` on a pull request (the asker's permission already checked):
    this PR's failed training run against run RUN_ID, or against the last successful run of the
    same workflow on the base branch."""
    p = req.params
    issue, pr = repo.get_issue(p["number"]), repo.get_pull(p["number"])
    failed = gp.latest_failed_run(repo, pr.head.sha, settings)
    if failed is None:
        return _say(store, repo, issue, me, owner, "No failed training workflow run found for this pull request's head "
                    "commit, so there is nothing to compare yet.", {"status": "no_run"})
    reference_id = p["compare"].get("with")
    if reference_id is not None:
        reference = gp.workflow_run_or_none(repo, int(reference_id))
        if reference is None:
            return _say(store, repo, issue, me, owner, f"There is no workflow run {int(reference_id)} in this "
                        "repository to compare with.", {"status": "no_reference"})
    else:
        reference = gp.last_successful_run(repo, failed, pr.base.ref)
        if reference is None:
            return _say(store, repo, issue, me, owner, f"No successful run of this workflow on `{pr.base.ref}` to "
                        "compare with. Name one: `/diagnose compare <run id>`.", {"status": "no_reference"})
    try:
        notes = gp.fetch_run(gh, failed, tmp / "a", settings)
        notes += gp.fetch_run(gh, reference, tmp / "b", settings, conclusions=None)
    except (gp.Refused, UnsafeArchive) as exc:
        return _say(store, repo, issue, me, owner, f"I could not compare the runs: {exc}.", {"status": "refused"})
    out = pipeline.compare(tmp / "a", tmp / "b", render_compare_markdown, source_a=failed.html_url,
                           source_b=reference.html_url, run_a=str(failed.id), run_b=str(reference.id), notes=notes,
                           budget=settings.budget())
    body = (out.body + f"\nCompared [run {failed.id}]({failed.html_url}) (A, failed) with "
            f"[run {reference.id}]({reference.html_url}) (B).\n")
    return {**out.summary(), "comment": _upsert(store, repo, issue, me, owner, body)}


def _say(store: Store, repo, issue, me: str, owner: str, text: str, result: dict) -> dict:
    return {**result, "comment": _upsert(store, repo, issue, me, owner, "### mltd compare\n" + text)}


def _upsert(store: Store, repo, issue, me: str, owner: str, body: str) -> str:
    """The one comparison comment on this PR, one worker at a time."""
    lock = f"gh:{repo.full_name}#{issue.number}"          # the same lock as the diagnosis comment's
    if not store.lock(lock, owner, ttl_s=LOCK_TTL_S):
        raise RuntimeError(f"could not lock {lock}")
    try:
        return gp.upsert_comment(issue, body, me, marker=MARKER)
    finally:
        store.release(lock, owner)
