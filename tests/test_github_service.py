"""The GitHub path end to end: signed webhooks into the app, PyGithub against the GitHub stand-in
(logs and artifacts behind real redirects), and the one sticky comment per pull request."""
import hashlib
import hmac
import io
import json
import time
import uuid
import zipfile

import pytest
from fastapi.testclient import TestClient

from bot.github_port import MARKER
from bot.settings import Settings
from handlers.github_webhook import signature_ok
from handlers.web import create_app
from tests.fakes.github_api import ME, TOKEN, GitHubStandIn
from tests.fakes.service import env, wait_for
from tests.fakes.slack_api import SlackStandIn

SECRET = "gh-test-secret"
SHA = "a" * 40


def zipped(folder) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file() and not f.name.startswith("."):
                z.write(f, f.relative_to(folder).as_posix())
    return buf.getvalue()


@pytest.fixture
def gh(scenario):
    g = GitHubStandIn()
    run = scenario("lr_jump_mlp")
    g.permissions["alice"] = "write"
    g.add_pull(7, SHA, "exp")
    g.add_run(501, SHA, logs={"train": (run / "train.log").read_text()}, artifacts={"run-files": zipped(run)})
    yield g
    g.close()


@pytest.fixture
def app(gh, tmp_path, monkeypatch):
    slack = SlackStandIn()
    for k, v in env(slack.api_url, "http://127.0.0.1:9", tmp_path, MLTD_GITHUB_TOKEN=TOKEN, MLTD_GITHUB_API_URL=gh.url,
                    MLTD_GITHUB_WEBHOOK_SECRET=SECRET, MLTD_GITHUB_WORKFLOWS="train*",
                    MLTD_GITHUB_WRITE_INTERVAL_S="0").items():
        monkeypatch.setenv(k, v)
    with TestClient(create_app(Settings(), run_worker=True)) as client:
        yield client
    slack.close()


def hook(client, event, payload, delivery=None, secret=SECRET):
    raw = json.dumps(payload).encode()
    sig = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return client.post("/github/webhook", content=raw, headers={
        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()), "X-Hub-Signature-256": sig,
        "Content-Type": "application/json"})


def comment_payload(gh, body, login="alice", number=7):
    cid = gh.add_user_comment(number, body, login)
    return {"action": "created", "issue": {"number": number, "pull_request": {"url": "x"}},
            "comment": {"id": cid, "body": body, "user": {"login": login}},
            "repository": {"full_name": gh.repo}, "sender": {"login": login, "type": "User"}}


def run_payload(gh, run_id, conclusion="failure", prs=(7,), attempt=1, name="train", owner="acme", branch="exp",
                sha=SHA):
    return {"action": "completed", "repository": {"full_name": gh.repo}, "sender": {"login": "alice", "type": "User"},
            "workflow_run": {"id": run_id, "name": name, "path": f".github/workflows/{name}.yml",
                             "conclusion": conclusion,
                             "run_attempt": attempt, "head_sha": sha, "head_branch": branch,
                             "html_url": f"https://github.example/{gh.repo}/actions/runs/{run_id}",
                             "pull_requests": [{"number": n} for n in prs],
                             "head_repository": {"owner": {"login": owner}}}}


def test_githubs_documented_signature_vector():
    assert signature_ok("It's a Secret to Everybody", b"Hello, World!",
                        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
    assert not signature_ok("It's a Secret to Everybody", b"Hello, World!", "sha256=" + "0" * 64)
    assert not signature_ok("It's a Secret to Everybody", b"Hello, World!", "")


def test_bad_signature_is_refused(app, gh):
    assert hook(app, "issue_comment", comment_payload(gh, "/diagnose"), secret="wrong").status_code == 401
    assert app.post("/github/webhook", content=b"{}", headers={"X-GitHub-Event": "ping"}).status_code == 401


def test_diagnose_comment_gets_eyes_and_one_sticky_comment(app, gh):
    payload = comment_payload(gh, "/diagnose loss diverged after the curriculum switch")
    delivery = str(uuid.uuid4())
    assert hook(app, "issue_comment", payload, delivery).json() == {"queued": True}
    body = wait_for(lambda: [c["body"] for c in gh.mltd_comments(7) if "lr_too_high" in c["body"]])[0]
    assert (payload["comment"]["id"], "eyes") in gh.reactions
    assert body.startswith(MARKER) and "<details>" in body and "```diff" in body and "0.02 to 0.8" in body
    assert "https://github.example/acme/train/actions/runs/501" in body
    assert gh.blob_requests_with_token == 0                      # the token never reached blob storage
    assert hook(app, "issue_comment", payload, delivery).json() == {"queued": False}   # a redelivery
    time.sleep(1)
    assert len(gh.mltd_comments(7)) == 1


def test_a_reader_cannot_trigger_it(app, gh):
    gh.permissions["mallory"] = "read"
    payload = comment_payload(gh, "/diagnose", login="mallory")
    hook(app, "issue_comment", payload)
    wait_for(lambda: [c for c in gh.mltd_comments(7) if "only collaborators with write access" in c["body"]])
    assert not [r for r in gh.reactions if r[0] == payload["comment"]["id"]]
    assert not [c for c in gh.mltd_comments(7) if MARKER in c["body"]]


def test_edits_plain_issues_and_bots_do_nothing(app, gh):
    edited = comment_payload(gh, "/diagnose") | {"action": "edited"}
    assert "ignored" in hook(app, "issue_comment", edited).json()
    plain = comment_payload(gh, "/diagnose")
    plain["issue"].pop("pull_request")
    assert "ignored" in hook(app, "issue_comment", plain).json()
    bot = comment_payload(gh, "/diagnose") | {"sender": {"login": "mltd[bot]", "type": "Bot"}}
    assert "ignored" in hook(app, "issue_comment", bot).json()


def test_failed_training_run_posts_once_and_its_rerun_updates_it(app, gh):
    hook(app, "workflow_run", run_payload(gh, 501))
    first = wait_for(lambda: [c for c in gh.mltd_comments(7) if "lr_too_high" in c["body"]])[0]
    gh.add_run(501, SHA, logs={"train": "step=1 loss=2.0\nstep=2 loss=nan\n"}, attempt=2)
    hook(app, "workflow_run", run_payload(gh, 501, attempt=2))
    wait_for(lambda: "numerical_instability" in gh.comments[first["id"]]["body"])
    assert len(gh.mltd_comments(7)) == 1
    hook(app, "workflow_run", run_payload(gh, 502, conclusion="success"))
    wait_for(lambda: "**Resolved**" in gh.comments[first["id"]]["body"])
    assert "ignored" in hook(app, "workflow_run", run_payload(gh, 503, conclusion="cancelled")).json()
    assert "ignored" in hook(app, "workflow_run", run_payload(gh, 504, name="lint")).json()


def test_a_forks_failed_run_lands_on_its_pull_request(app, gh, scenario):
    gh.add_pull(9, "b" * 40, "fork-exp", owner="forker")
    gh.add_run(601, "b" * 40, logs={"train": (scenario("lr_jump_mlp") / "train.log").read_text()})
    hook(app, "workflow_run", run_payload(gh, 601, prs=(), owner="forker", branch="fork-exp", sha="b" * 40))
    wait_for(lambda: [c for c in gh.mltd_comments(9) if "lr_too_high" in c["body"]])


def test_a_planted_marker_is_not_mltds_comment(app, gh):
    gh.add_user_comment(7, MARKER + "\nI am not mltd", "mallory")
    hook(app, "workflow_run", run_payload(gh, 501))
    wait_for(lambda: [c for c in gh.mltd_comments(7) if "lr_too_high" in c["body"]])
    assert [c["body"] for c in gh.comments.values() if c["user"]["login"] == "mallory"] == [MARKER + "\nI am not mltd"]


def test_a_hostile_artifact_is_refused_with_a_clear_message(app, gh, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../../escape.txt", "x")
    gh.add_run(701, SHA, logs={"train": "step=1 loss=2.0\n"}, artifacts={"evil": buf.getvalue()})
    hook(app, "workflow_run", run_payload(gh, 701))
    wait_for(lambda: [c for c in gh.mltd_comments(7) if "would escape the folder" in c["body"]])
    assert not (tmp_path.parent / "escape.txt").exists()
    assert ME == "mltd-bot"


def test_an_artifact_zipfile_cannot_read_gets_a_clear_reply(app, gh, tmp_path):
    """A bad CRC is no UnsafeArchive of ours but must end the same way: one comment, no retries."""
    from tests.test_unzip import bad_crc_zip

    gh.add_run(702, SHA, logs={"train": "step=1 loss=2.0\n"}, artifacts={"damaged": bad_crc_zip(tmp_path).read_bytes()})
    hook(app, "workflow_run", run_payload(gh, 702))
    wait_for(lambda: [c for c in gh.mltd_comments(7) if "the archive is damaged" in c["body"]])


def test_as_a_github_app(scenario, tmp_path, monkeypatch):
    """App auth: a JWT signed with the App's key buys an installation token from the webhook's
    installation id; the sticky comment is found under the App's own bot login."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    g = GitHubStandIn(app_public_key=public, app_id="4242")
    g.me = "mltd-app[bot]"
    run = scenario("lr_jump_mlp")
    g.add_pull(7, SHA, "exp")
    g.add_run(501, SHA, logs={"train": (run / "train.log").read_text()})
    slack = SlackStandIn()
    try:
        for k, v in env(slack.api_url, "http://127.0.0.1:9", tmp_path, MLTD_GITHUB_APP_ID="4242",
                        MLTD_GITHUB_PRIVATE_KEY=pem, MLTD_GITHUB_APP_SLUG="mltd-app", MLTD_GITHUB_API_URL=g.url,
                        MLTD_GITHUB_WEBHOOK_SECRET=SECRET, MLTD_GITHUB_WRITE_INTERVAL_S="0").items():
            monkeypatch.setenv(k, v)
        with TestClient(create_app(Settings(), run_worker=True)) as client:
            hook(client, "workflow_run", run_payload(g, 501) | {"installation": {"id": 77}})
            wait_for(lambda: [c for c in g.mltd_comments(7) if "lr_too_high" in c["body"]])
            hook(client, "workflow_run", run_payload(g, 501, attempt=2) | {"installation": {"id": 77}})
            wait_for(lambda: len(g.installation_tokens) >= 2)           # each job buys its own token
            time.sleep(0.5)
        assert set(g.installation_tokens) == {77}
        assert len(g.mltd_comments(7)) == 1
    finally:
        g.close()
        slack.close()


def test_eyes_come_at_once_even_before_a_worker_runs(gh, tmp_path, monkeypatch):
    slack = SlackStandIn()
    for k, v in env(slack.api_url, "http://127.0.0.1:9", tmp_path, MLTD_GITHUB_TOKEN=TOKEN, MLTD_GITHUB_API_URL=gh.url,
                    MLTD_GITHUB_WEBHOOK_SECRET=SECRET, MLTD_GITHUB_WRITE_INTERVAL_S="0").items():
        monkeypatch.setenv(k, v)
    try:
        with TestClient(create_app(Settings(), run_worker=False)) as client:     # no worker anywhere
            payload = comment_payload(gh, "/diagnose")
            assert hook(client, "issue_comment", payload).json() == {"queued": True}
            wait_for(lambda: (payload["comment"]["id"], "eyes") in gh.reactions, 10)
            gh.permissions["mallory"] = "read"
            refused = comment_payload(gh, "/diagnose", login="mallory")
            hook(client, "issue_comment", refused)
            time.sleep(0.5)
            assert not [r for r in gh.reactions if r[0] == refused["comment"]["id"]]
        assert not gh.mltd_comments(7)                   # the diagnosis itself waits for a worker
    finally:
        slack.close()


def test_a_job_that_fails_says_so_on_the_pull_request(gh, tmp_path, monkeypatch):
    """A run GitHub no longer has (404 on its first read) fails the job on its last try; the PR
    gets one clear comment naming the request instead of silence, and a /diagnose gets the same."""
    from bot.store import Store

    slack = SlackStandIn()
    for k, v in env(slack.api_url, "http://127.0.0.1:9", tmp_path, MLTD_GITHUB_TOKEN=TOKEN, MLTD_GITHUB_API_URL=gh.url,
                    MLTD_GITHUB_WEBHOOK_SECRET=SECRET, MLTD_GITHUB_WORKFLOWS="train*", MLTD_JOB_RETRIES="0",
                    MLTD_GITHUB_WRITE_INTERVAL_S="0").items():
        monkeypatch.setenv(k, v)
    try:
        with TestClient(create_app(Settings(), run_worker=True)) as client:
            store = Store(client.app.state.worker.settings.database_url)
            hook(client, "workflow_run", run_payload(gh, 999))
            failed = wait_for(lambda: [c for c in gh.mltd_comments(7) if "internal error" in c["body"]])[0]
            assert failed["body"].startswith(MARKER) and "`gh:run:999:1`" in failed["body"]
            assert "UnknownObjectException" in failed["body"] and "actions/runs/999" in failed["body"]
            wait_for(lambda: store.get("gh:run:999:1").status == "failed")
            assert "404" in store.get("gh:run:999:1").error

            delivery = str(uuid.uuid4())
            hook(client, "issue_comment", comment_payload(gh, "/diagnose run 998"), delivery)
            wait_for(lambda: f"`gh:{delivery}`" in gh.comments[failed["id"]]["body"])    # the same comment, updated
            assert len(gh.mltd_comments(7)) == 1
    finally:
        slack.close()
