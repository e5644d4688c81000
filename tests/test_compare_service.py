"""Comparisons through the real service: a signed Slack mention ("compare run 42 with run 41") with
both runs on S3 (moto), and `/diagnose compare` on a pull request against the GitHub stand-in
(the base branch's last successful run found through the workflow's runs list)."""
import json

import pytest
from fastapi.testclient import TestClient

from bot.render.compare import MARKER as COMPARE_MARKER
from bot.settings import Settings
from handlers.github_webhook import parse as parse_github
from handlers.slack_events import parse
from handlers.web import create_app
from tests.compare_runs import FAKE_KEY, FAULT_STEP, cached_pair
from tests.fakes.github_api import TOKEN, GitHubStandIn
from tests.fakes.service import S3, env, mention, signed, wait_for
from tests.fakes.slack_api import SlackStandIn
from tests.test_github_service import SECRET as GH_SECRET
from tests.test_github_service import SHA, comment_payload, hook, zipped

LR_KEY = "curriculum.stages.1.lr"


@pytest.fixture(scope="module")
def pair():
    return cached_pair()


# --- Slack ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def s3(pair):
    s = S3()
    s.upload(pair[0], "runs/42")
    s.upload(pair[1], "runs/41")
    yield s
    s.close()


@pytest.fixture
def service(slack, s3, tmp_path, monkeypatch):
    for k, v in env(slack.api_url, s3.url, tmp_path).items():
        monkeypatch.setenv(k, v)
    with TestClient(create_app(Settings(), run_worker=True)) as client:
        yield client


def post(client, body, **kw):
    raw, headers = signed(body, **kw)
    return client.post("/slack/events", content=raw, headers=headers)


def thread_replies(slack, thread_ts):
    posted = [p for p in slack.called("chat.postMessage") if p.get("thread_ts") == thread_ts]
    ts = {p["_response"]["ts"] for p in posted}
    return posted, [u for u in slack.called("chat.update") if u.get("ts") in ts]


@pytest.mark.parametrize("text", ["compare run 42 with run 41", "compare 42 41", "diff run 42 against 41"])
def test_the_ways_of_asking_parse_into_one_compare_request(text):
    req = parse(mention(f"<@UBOT> {text}"), Settings(slack_signing_secret="x"))
    assert req.fields["params"]["compare"] == {"a": {"run": "42", "kind": "name"}, "b": {"run": "41", "kind": "name"}}
    assert req.fields["params"]["run"] == "42"


def test_compare_in_slack_replies_once_in_the_thread(service, slack):
    thread = "1700000000.000042"
    body = mention("<@UBOT> compare run 42 with run 41", thread_ts=thread)
    assert post(service, body).status_code == 200
    assert post(service, body, retry=1).status_code == 200          # Slack's retry of the same event
    update = wait_for(lambda: thread_replies(slack, thread)[1])[0]
    posted, _ = thread_replies(slack, thread)
    assert len(posted) == 1 and posted[0]["text"] == "Comparing run 42 with run 41…"
    blocks = json.dumps(update["blocks"])
    assert f"*What explains it:* {LR_KEY}" in blocks and f"Curves part at step {FAULT_STEP}" in blocks
    assert "lr_too_high" in blocks and FAKE_KEY not in blocks
    assert update["text"] == f"mltd compare: Difference found that explains the failure. {LR_KEY}"


def test_a_run_that_cannot_be_fetched_is_named_in_the_reply(service, slack):
    thread = "1700000000.000099"
    post(service, mention("<@UBOT> compare run 42 with run 99", thread_ts=thread))
    update = wait_for(lambda: thread_replies(slack, thread)[1])[0]
    assert "I could not fetch run 99 to compare" in update["text"] and "no files under" in update["text"]


# --- GitHub ---------------------------------------------------------------------------------------

@pytest.fixture
def gh(pair):
    g = GitHubStandIn()
    failing, reference = pair
    g.permissions["alice"] = "write"
    g.add_pull(7, SHA, "exp")
    g.add_run(501, SHA, logs={"train": (failing / "train.log").read_text()}, artifacts={"run-files": zipped(failing)})
    # the base branch's last success (newest first), an older one, and a success on another branch
    g.add_run(301, "c" * 40, conclusion="success", branch="main", logs={"train": "step=1 loss=9.0\n"})
    g.add_run(401, "d" * 40, conclusion="success", branch="main", logs={"train": (reference / "train.log").read_text()},
              artifacts={"run-files": zipped(reference)})
    g.add_run(450, "e" * 40, conclusion="success", branch="other", logs={"train": "step=1 loss=9.0\n"})
    yield g
    g.close()


@pytest.fixture
def app(gh, tmp_path, monkeypatch):
    slack = SlackStandIn()
    for k, v in env(slack.api_url, "http://127.0.0.1:9", tmp_path, MLTD_GITHUB_TOKEN=TOKEN, MLTD_GITHUB_API_URL=gh.url,
                    MLTD_GITHUB_WEBHOOK_SECRET=GH_SECRET, MLTD_GITHUB_WORKFLOWS="train*",
                    MLTD_GITHUB_WRITE_INTERVAL_S="0").items():
        monkeypatch.setenv(k, v)
    with TestClient(create_app(Settings(), run_worker=True)) as client:
        yield client
    slack.close()


@pytest.mark.parametrize("text, with_run", [("/diagnose compare", None), ("/diagnose compare 41", 41),
                                             ("/diagnose compare run #41", 41),
                                             ("/diagnose compare https://github.com/acme/train/actions/runs/41", 41),
                                             ("/diagnose loss diverged", "no compare")])
def test_diagnose_compare_parses_the_run_to_compare_with(text, with_run):
    payload = {"action": "created", "issue": {"number": 7, "pull_request": {"url": "x"}},
               "comment": {"id": 1, "body": text, "user": {"login": "alice"}},
               "repository": {"full_name": "acme/train"}, "sender": {"login": "alice", "type": "User"}}
    params = parse_github("issue_comment", "d1", payload, Settings()).fields["params"]
    assert params.get("compare", {"with": "no compare"})["with"] == with_run


def compare_comments(gh, number=7):
    return [c for c in gh.mltd_comments(number) if c["body"].startswith(COMPARE_MARKER)]


def test_diagnose_compare_uses_the_base_branchs_last_success(app, gh):
    assert hook(app, "issue_comment", comment_payload(gh, "/diagnose compare")).json() == {"queued": True}
    body = wait_for(lambda: [c["body"] for c in compare_comments(gh) if LR_KEY in c["body"]])[0]
    assert "[run 401](https://github.example/acme/train/actions/runs/401) (B)" in body
    assert f"**Curves part at step {FAULT_STEP}**" in body and "lr_too_high" in body and FAKE_KEY not in body
    assert len(gh.mltd_comments(7)) == 1                         # no diagnosis comment was touched or made


def test_diagnose_compare_with_a_named_run_updates_the_same_comment(app, gh):
    hook(app, "issue_comment", comment_payload(gh, "/diagnose compare 401"))
    first = wait_for(lambda: [c for c in compare_comments(gh) if LR_KEY in c["body"]])[0]
    hook(app, "issue_comment", comment_payload(gh, "/diagnose compare 301"))
    wait_for(lambda: "actions/runs/301) (B)" in gh.comments[first["id"]]["body"])
    assert len(compare_comments(gh)) == 1
    hook(app, "issue_comment", comment_payload(gh, "/diagnose compare 999"))
    wait_for(lambda: "no workflow run 999" in gh.comments[first["id"]]["body"])


def test_no_successful_run_on_the_base_branch_is_said(app, gh):
    for run_id in (301, 401):
        gh.runs[run_id]["head_branch"] = "release"
    hook(app, "issue_comment", comment_payload(gh, "/diagnose compare"))
    body = wait_for(lambda: [c["body"] for c in compare_comments(gh)])[0]
    assert "No successful run of this workflow on `main` to compare with" in body
