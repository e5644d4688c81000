"""GitHub through PyGithub: who may ask, which run failed, its job logs and artifacts, and the one
sticky comment per pull request.

Downloads follow GitHub's short-lived redirects by hand: asked with the token and without
following, then the `Location` fetched without the token (it must never reach blob storage),
streamed under a byte cap, and unzipped member by member (bot/unzip.py).
"""
from __future__ import annotations

import fnmatch
import re
import urllib.request
from pathlib import Path

from analysis.errors import MltdError
from bot.settings import Settings
from bot.unzip import safe_extract

MARKER = "<!-- mltd:diagnosis -->"
COMMENT_MAX = 65_536
TRAINING_CONCLUSIONS = ("failure", "timed_out")


class Refused(MltdError):
    """A request mltd will not serve, worded for a reply."""


def client(settings: Settings, installation_id: int | None = None):
    from github import Auth, Github

    def github(auth: Auth.Auth) -> Github:
        return Github(auth=auth, base_url=settings.github_api_url.rstrip("/"), seconds_between_requests=0.0,
                      seconds_between_writes=settings.github_write_interval_s)

    if settings.github_token:
        return github(Auth.Token(settings.github_token))
    key = settings.github_key()
    if installation_id is None:
        raise Refused("the GitHub App needs the installation id from the webhook")
    # the installation token is fetched (and refreshed) by PyGithub from the App's JWT
    return github(Auth.AppAuth(int(settings.github_app_id), key).get_installation_auth(int(installation_id)))


def is_training(workflow_name: str, workflow_path: str, settings: Settings) -> bool:
    globs = [g.strip() for g in settings.github_workflows.split(",") if g.strip()] or ["*"]
    names = [workflow_name or "", Path(workflow_path or "").name, workflow_path or ""]
    return any(fnmatch.fnmatch(n, g) for g in globs for n in names)


def may_trigger(repo, login: str, settings: Settings) -> bool:
    """Write or admin on the repository, asked of the API (author_association is unreliable), or
    on the allow-list."""
    allowed = {u.strip().lower() for u in settings.github_allowed_users.split(",") if u.strip()}
    if login.lower() in allowed:
        return True
    try:
        return repo.get_collaborator_permission(login) in ("admin", "write", "maintain")
    except Exception:
        return False


def _download(url: str, dest: Path, cap: int) -> Path:
    """A redirect target, fetched without any token, streamed under `cap` bytes."""
    req = urllib.request.Request(url, headers={"User-Agent": "mltd"})
    written = 0
    with urllib.request.urlopen(req, timeout=60) as resp, open(dest, "wb") as out:
        while chunk := resp.read(1 << 20):
            written += len(chunk)
            if written > cap:
                raise Refused(f"{dest.name} is larger than the {cap / 2**20:,.0f} MB cap")
            out.write(chunk)
    return dest


def location(gh, url: str) -> str:
    """Ask with the token, do not follow: GitHub answers with a short-lived redirect."""
    headers, _ = gh.requester.requestBlobAndCheck("GET", url)
    loc = headers.get("location") or headers.get("Location")
    if not loc:
        raise Refused("GitHub gave no download location")
    return loc


def fetch_run(gh, run, dest: Path, settings: Settings,
              conclusions: tuple[str, ...] | None = TRAINING_CONCLUSIONS) -> list[str]:
    """The logs of the jobs that ended in `conclusions` (the failed ones; a succeeded run's own,
    for a fix check; None: every job, for a reference run) and the run's artifacts into `dest`;
    notes for what was skipped."""
    notes: list[str] = []
    logs = dest / "job-logs"
    logs.mkdir(parents=True, exist_ok=True)
    for job in run.jobs():
        if conclusions is not None and job.conclusion not in conclusions:
            continue
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", job.name)[:80] or f"job-{job.id}"
        _download(location(gh, f"{job.url}/logs"), logs / f"{name}.log", settings.max_file_bytes)
    unpacked = sum(p.stat().st_size for p in logs.iterdir() if p.is_file())   # the run's disk cap covers all
    for art in run.get_artifacts():
        if art.expired:
            notes.append(f"artifact {art.name} has expired")
            continue
        if art.size_in_bytes > settings.max_run_bytes:
            notes.append(f"skipped artifact {art.name} ({art.size_in_bytes / 2**20:,.0f} MB, over the cap)")
            continue
        zipped = dest / f".{art.id}.zip"
        _download(location(gh, art.archive_download_url), zipped, settings.max_run_bytes)
        written = safe_extract(zipped, dest / re.sub(r"[^A-Za-z0-9._-]+", "_", art.name)[:80],
                               max_total_bytes=max(settings.max_run_bytes - unpacked, 0))
        unpacked += sum(p.stat().st_size for p in written)
        zipped.unlink()
    return notes


def latest_failed_run(repo, sha: str, settings: Settings):
    for run in repo.get_workflow_runs(head_sha=sha):
        if run.conclusion in TRAINING_CONCLUSIONS and is_training(run.name, run.path, settings):
            return run
    return None


def workflow_run_or_none(repo, run_id: int):
    from github import GithubException

    try:
        return repo.get_workflow_run(run_id)
    except GithubException as exc:
        if exc.status == 404:
            return None
        raise


def last_successful_run(repo, failed, branch: str):
    """The newest successful run of `failed`'s workflow on `branch` (GET .../actions/workflows/{id}/runs
    with `branch` and `status=success`, newest first), or None."""
    for run in repo.get_workflow(failed.workflow_id).get_runs(branch=branch, status="success"):
        if run.id != failed.id:
            return run
    return None


def pulls_for_run(repo, payload_run: dict) -> list[int]:
    """PR numbers of a workflow run; for a fork the payload lists none, so look them up by the
    head branch of the head repository, then confirm the head SHA."""
    numbers = [p["number"] for p in payload_run.get("pull_requests") or []]
    if numbers:
        return numbers
    head = payload_run.get("head_repository") or {}
    owner = (head.get("owner") or {}).get("login")
    if not owner or not payload_run.get("head_branch"):
        return []
    return [p.number for p in repo.get_pulls(state="open", head=f"{owner}:{payload_run['head_branch']}")
            if p.head.sha == payload_run.get("head_sha")]


def own_login(gh, settings: Settings) -> str:
    if settings.github_token:
        return gh.get_user().login
    return f"{settings.github_app_slug or 'mltd'}[bot]"


def followup_marker(comment_id: int) -> str:
    """The hidden marker of mltd's answer to one follow-up comment (a redelivery edits it)."""
    return f"<!-- mltd:followup:{int(comment_id)} -->"


def upsert_comment(issue, body: str, me: str, marker: str = MARKER) -> str:
    """The one mltd comment on this PR (or the one answer to a follow-up, by its own marker):
    found by the marker *and* mltd's own author (a user can paste the marker), edited in place,
    left alone when nothing changed. Returns what happened."""
    body = marker + "\n" + body
    if len(body) > COMMENT_MAX:
        body = body[: COMMENT_MAX - 200] + "\n\n… (truncated: the full report is in the job's artifacts)"
    c = sticky_comment(issue, me, marker)
    if c is not None:
        if c.body == body:
            return "unchanged"
        c.edit(body)
        return "updated"
    issue.create_comment(body)
    return "created"


def sticky_comment(issue, me: str, marker: str = MARKER):
    """mltd's one comment on this PR (or its answer to one follow-up, by that marker), or None."""
    for c in issue.get_comments():
        if (c.body or "").startswith(marker) and c.user.login.lower() == me.lower():
            return c
    return None
