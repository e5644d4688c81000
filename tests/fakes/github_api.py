"""A stand-in for the GitHub REST API on loopback, serving what PyGithub asks for: repository,
user, issues and pull requests, collaborator permission, comments and their reactions (added and
listed), workflow runs, jobs, job logs and artifact zips behind GitHub's real 302 redirect to a blob
store (which refuses any request that carries the token). It records every write."""
from __future__ import annotations

import itertools
import json
import re
import threading
import time
from urllib.parse import parse_qs, urlparse

from tests.fakes.loopback import LoopbackServer, QuietHandler

TOKEN = "ghs_testtoken"
ME = "mltd-bot"


class GitHubStandIn(LoopbackServer):
    def __init__(self, repo: str = "acme/train", app_public_key: str | None = None, app_id: str = "") -> None:
        self.repo = repo
        self.me = ME                                     # the login mltd's comments appear under
        self.app_public_key, self.app_id = app_public_key, app_id
        self.installation_tokens: list[int] = []
        self.permissions: dict[str, str] = {}
        self.pulls: dict[int, dict] = {}                 # number -> {"sha", "branch", "owner"}
        self.comments: dict[int, dict] = {}              # id -> comment
        self.commit_comments: list[dict] = []
        self.reactions: list[tuple[int, str]] = []      # (comment id, content) that mltd added
        self.comment_reactions: dict[int, list[dict]] = {}   # comment id -> reactions, as GitHub lists them
        self.runs: dict[int, dict] = {}                  # id -> run (with "jobs", "artifacts")
        self.workflow_ids: dict[str, int] = {}           # workflow name -> id
        self.blobs: dict[str, bytes] = {}
        self.writes: list[tuple[str, str]] = []
        self.requests: list[tuple[str, str]] = []        # (method, path) of every request, blobs included
        self.blob_requests_with_token = 0
        self._ids = itertools.count(1000)
        self._lock = threading.Lock()
        self._start(self._handler())

    # --- fixtures a test sets up ------------------------------------------------------------------

    def add_pull(self, number: int, sha: str, branch: str, owner: str = "acme") -> None:
        self.pulls[number] = {"sha": sha, "branch": branch, "owner": owner}

    def add_run(self, run_id: int, sha: str, *, name: str = "train", conclusion: str = "failure",
                branch: str = "exp", logs: dict[str, str] | None = None, artifacts: dict[str, bytes] | None = None,
                attempt: int = 1) -> dict:
        jobs = []
        for i, (job, text) in enumerate((logs or {}).items()):
            jid = run_id * 10 + i
            self.blobs[f"joblog-{jid}"] = text.encode()
            jobs.append({"id": jid, "name": job, "conclusion": "success" if conclusion == "success" else "failure"})
        arts = []
        for i, (art, data) in enumerate((artifacts or {}).items()):
            aid = run_id * 10 + i
            self.blobs[f"artifact-{aid}"] = data
            arts.append({"id": aid, "name": art, "size_in_bytes": len(data), "expired": False})
        workflow_id = self.workflow_ids.setdefault(name, 9000 + len(self.workflow_ids))
        run = {"id": run_id, "name": name, "path": f".github/workflows/{name}.yml", "conclusion": conclusion,
               "head_sha": sha, "head_branch": branch, "run_attempt": attempt, "workflow_id": workflow_id,
               "jobs": jobs, "artifacts": arts}
        self.runs[run_id] = run
        return run

    def downloads(self) -> int:
        """Job logs and artifact zips fetched from blob storage so far."""
        return sum(1 for _, p in self.requests if p.startswith("/blob/"))

    def mltd_comments(self, number: int) -> list[dict]:
        return [c for c in self.comments.values() if c["issue"] == number and c["user"]["login"] == self.me]

    def _installation_token(self, path: str, auth: str):
        """POST /app/installations/{id}/access_tokens, authorised by the App's RS256 JWT."""
        import jwt

        m = re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)
        try:
            claims = jwt.decode(auth.removeprefix("Bearer "), self.app_public_key, algorithms=["RS256"])
        except jwt.PyJWTError as exc:
            return 401, {"message": f"bad JWT: {exc}"}
        if not m or str(claims.get("iss")) != self.app_id:
            return 401, {"message": "wrong app"}
        self.installation_tokens.append(int(m.group(1)))
        return 201, {"token": TOKEN, "expires_at": "2099-01-01T00:00:00Z", "permissions": {"issues": "write"}}

    # --- JSON shapes ------------------------------------------------------------------------------

    def _repo(self) -> dict:
        owner = self.repo.split("/")[0]
        return {"id": 1, "name": self.repo.split("/")[1], "full_name": self.repo,
                "url": f"{self.url}/repos/{self.repo}",
                "html_url": f"https://github.example/{self.repo}", "owner": {"login": owner, "type": "Organization"},
                "private": False}

    def _pull(self, n: int) -> dict:
        p = self.pulls[n]
        return {"number": n, "url": f"{self.url}/repos/{self.repo}/pulls/{n}", "state": "open",
                "html_url": f"https://github.example/{self.repo}/pull/{n}",
                "head": {"sha": p["sha"], "ref": p["branch"], "label": f"{p['owner']}:{p['branch']}",
                         "repo": {"full_name": f"{p['owner']}/train"}},
                "base": {"ref": "main", "sha": "0" * 40}}

    def _issue(self, n: int) -> dict:
        return {"number": n, "url": f"{self.url}/repos/{self.repo}/issues/{n}", "state": "open",
                "comments_url": f"{self.url}/repos/{self.repo}/issues/{n}/comments",
                "pull_request": {"url": f"{self.url}/repos/{self.repo}/pulls/{n}"}}

    def _run(self, r: dict) -> dict:
        base = f"{self.url}/repos/{self.repo}/actions/runs/{r['id']}"
        return {k: v for k, v in r.items() if k not in ("jobs", "artifacts")} | {
            "workflow_url": f"{self.url}/repos/{self.repo}/actions/workflows/{r['workflow_id']}",
            "url": base, "html_url": f"https://github.example/{self.repo}/actions/runs/{r['id']}",
            "jobs_url": f"{base}/jobs", "artifacts_url": f"{base}/artifacts", "status": "completed",
            "pull_requests": []}

    def _job(self, j: dict, run_id: int) -> dict:
        return j | {"url": f"{self.url}/repos/{self.repo}/actions/jobs/{j['id']}", "run_id": run_id,
                    "status": "completed",
                    "html_url": f"https://github.example/{self.repo}/actions/runs/{run_id}/job/{j['id']}"}

    def _artifact(self, a: dict) -> dict:
        return a | {"url": f"{self.url}/repos/{self.repo}/actions/artifacts/{a['id']}",
                    "archive_download_url": f"{self.url}/repos/{self.repo}/actions/artifacts/{a['id']}/zip"}

    def _comment(self, body: str, issue: int, login: str) -> dict:
        cid = next(self._ids)
        c = {"id": cid, "body": body, "issue": issue, "user": {"login": login, "type": "Bot"},
             "url": f"{self.url}/repos/{self.repo}/issues/comments/{cid}",
             "html_url": f"https://github.example/{self.repo}/pull/{issue}#issuecomment-{cid}"}
        self.comments[cid] = c
        return c

    def add_user_comment(self, issue: int, body: str, login: str) -> int:
        return self._comment(body, issue, login)["id"]

    def react(self, comment_id: int, content: str, login: str, at: float | None = None) -> dict:
        """Someone reacts to a comment (`+1`, `-1`, `heart`, ...), at `at` (epoch seconds; now by default)."""
        with self._lock:
            return self._reaction(comment_id, content, login, at)

    def _reaction(self, comment_id: int, content: str, login: str, at: float | None = None) -> dict:
        """GET/POST /repos/{o}/{r}/issues/comments/{id}/reactions: GitHub's reaction object."""
        rid = next(self._ids)
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if at is None else at))
        r = {"id": rid, "node_id": f"REA_{rid}", "content": content, "created_at": when,
             "user": {"login": login, "id": abs(hash(login)) % 10**6, "type": "Bot" if login == self.me else "User",
                      "url": f"{self.url}/users/{login}"}}
        self.comment_reactions.setdefault(comment_id, []).append(r)
        return r

    # --- routing ----------------------------------------------------------------------------------

    def route(self, method: str, path: str, query: dict, body: dict | None):
        r = f"/repos/{self.repo}"
        if path == "/user":
            return 200, {"login": self.me, "type": "Bot", "url": f"{self.url}/user"}
        if path == r:
            return 200, self._repo()
        m = re.fullmatch(rf"{r}/collaborators/([^/]+)/permission", path)
        if m:
            return 200, {"permission": self.permissions.get(m.group(1), "read"), "user": {"login": m.group(1)}}
        m = re.fullmatch(rf"{r}/(issues|pulls)/(\d+)", path)
        if m:
            n = int(m.group(2))
            if n not in self.pulls:
                return 404, {"message": "Not Found"}
            return 200, self._issue(n) if m.group(1) == "issues" else self._pull(n)
        if path == f"{r}/pulls":
            head = query.get("head", [""])[0]
            return 200, [self._pull(n) for n, p in self.pulls.items() if f"{p['owner']}:{p['branch']}" == head]
        m = re.fullmatch(rf"{r}/issues/(\d+)/comments", path)
        if m:
            n = int(m.group(1))
            if method == "POST":
                with self._lock:
                    self.writes.append(("comment", body["body"]))
                    return 201, self._comment(body["body"], n, self.me)
            return 200, [c for c in self.comments.values() if c["issue"] == n]
        m = re.fullmatch(rf"{r}/issues/comments/(\d+)(/reactions)?", path)
        if m:
            c = self.comments.get(int(m.group(1)))
            if c is None:
                return 404, {"message": "Not Found"}
            if m.group(2):
                if method == "GET":
                    return 200, list(self.comment_reactions.get(c["id"], []))
                with self._lock:
                    self.reactions.append((c["id"], body["content"]))
                    return 201, self._reaction(c["id"], body["content"], self.me)
            if method == "PATCH":
                with self._lock:
                    self.writes.append(("edit", body["body"]))
                    c["body"] = body["body"]
            return 200, c
        m = re.fullmatch(rf"{r}/commits/([0-9a-f]+)(/comments)?", path)
        if m:
            if m.group(2):
                self.commit_comments.append({"sha": m.group(1), "body": body["body"]})
                return 201, {"id": next(self._ids), "body": body["body"], "user": {"login": ME}}
            return 200, {"sha": m.group(1), "url": f"{self.url}{r}/commits/{m.group(1)}", "commit": {"message": "x"}}
        if path == f"{r}/actions/runs":
            sha = query.get("head_sha", [None])[0]
            newest_first = sorted(self.runs.values(), key=lambda x: -x["id"])
            runs = [self._run(x) for x in newest_first if sha in (None, x["head_sha"])]
            return 200, {"total_count": len(runs), "workflow_runs": runs}
        m = re.fullmatch(rf"{r}/actions/workflows/([^/]+)", path)
        if m:                                   # a workflow by id or file name
            for name, wid in self.workflow_ids.items():
                if m.group(1) in (str(wid), f"{name}.yml"):
                    return 200, {"id": wid, "name": name, "path": f".github/workflows/{name}.yml", "state": "active",
                                 "url": f"{self.url}{r}/actions/workflows/{wid}",
                                 "html_url": f"https://github.example/{self.repo}/actions/workflows/{name}.yml"}
            return 404, {"message": "Not Found"}
        m = re.fullmatch(rf"{r}/actions/workflows/([^/]+)/runs", path)
        if m:                                   # a workflow by id or file name; newest first, filtered
            wanted = m.group(1)
            branch, status = query.get("branch", [None])[0], query.get("status", [None])[0]
            runs = [self._run(x) for x in sorted(self.runs.values(), key=lambda x: -x["id"])
                    if wanted in (str(x["workflow_id"]), x["path"].rsplit("/", 1)[-1])
                    and branch in (None, x["head_branch"]) and status in (None, x["conclusion"], "completed")]
            return 200, {"total_count": len(runs), "workflow_runs": runs}
        m = re.fullmatch(rf"{r}/actions/runs/(\d+)(/jobs|/artifacts)?", path)
        if m:
            run = self.runs.get(int(m.group(1)))
            if run is None:
                return 404, {"message": "Not Found"}
            if m.group(2) == "/jobs":
                return 200, {"total_count": len(run["jobs"]), "jobs": [self._job(j, run["id"]) for j in run["jobs"]]}
            if m.group(2) == "/artifacts":
                artifacts = [self._artifact(a) for a in run["artifacts"]]
                return 200, {"total_count": len(artifacts), "artifacts": artifacts}
            return 200, self._run(run)
        m = re.fullmatch(rf"{r}/actions/(jobs/(\d+)/logs|artifacts/(\d+)/zip)", path)
        if m:                                   # GitHub answers with a short-lived redirect to blob storage
            blob = f"joblog-{m.group(2)}" if m.group(2) else f"artifact-{m.group(3)}"
            return 302, {"Location": f"{self.url}/blob/{blob}?sig=short-lived"}
        return 404, {"message": "Not Found", "path": path}

    def _handler(self):
        gh = self

        class Handler(QuietHandler):
            def _serve(self, method: str):
                u = urlparse(self.path)
                gh.requests.append((method, u.path))
                if u.path.startswith("/blob/"):
                    if self.headers.get("Authorization"):
                        gh.blob_requests_with_token += 1
                        return self._send(400, {"message": "a token must not reach blob storage"})
                    data = gh.blobs.get(u.path[len("/blob/"):])
                    return self._send(200, None, raw=data) if data is not None else self._send(404, {"message": "gone"})
                if u.path.startswith("/app/installations/") and gh.app_public_key:
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    code, payload = gh._installation_token(u.path, self.headers.get("Authorization", ""))
                    return self._send(code, payload)
                if self.headers.get("Authorization") not in (f"token {TOKEN}", f"Bearer {TOKEN}"):
                    return self._send(401, {"message": "Bad credentials"})
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}") if n else None
                code, payload = gh.route(method, u.path, parse_qs(u.query), body)
                if code == 302:
                    return self._send(302, {}, headers=payload)
                self._send(code, payload)

            def do_GET(self):
                self._serve("GET")

            def do_POST(self):
                self._serve("POST")

            def do_PATCH(self):
                self._serve("PATCH")

        return Handler
