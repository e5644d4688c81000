"""The receivers' pure halves: what a Slack mention or a GitHub webhook asks, or why it is
ignored, decided before any I/O (the service tests drive the same functions over HTTP)."""
from bot.settings import Settings
from handlers import github_webhook, slack_events
from handlers.events import Ignored, Request
from tests.fakes.service import mention


def test_a_mention_becomes_a_request_in_its_thread():
    body = mention("<@UBOT> why did run 42 diverge at epoch 7?", thread_ts="1699999999.000001",
                   files=[{"id": "F1", "name": "train.log", "size": 10, "url_private": "https://x/f", "title": "t"}])
    got = slack_events.parse(body, Settings())
    assert isinstance(got, Request) and got.key == f"slack:{body['event_id']}"
    assert got.fields["thread_ts"] == "1699999999.000001" and got.fields["channel"] == "C1"
    assert got.fields["params"]["run"] == "42" and got.fields["params"]["kind"] == "name"
    assert "diverge at epoch 7" in got.fields["params"]["symptom"]
    assert got.fields["params"]["files"] == [{"id": "F1", "name": "train.log", "size": 10,
                                              "url_private_download": None, "url_private": "https://x/f"}]
    top = mention("<@UBOT> run 42")
    assert slack_events.parse(top, Settings()).fields["thread_ts"] == top["event"]["ts"]    # a new thread


def test_bots_and_places_outside_the_allow_lists_are_ignored():
    bot = mention("<@UBOT> run 42")
    bot["event"]["bot_id"] = "B1"
    assert slack_events.parse(bot, Settings()) == Ignored("from a bot")
    allowed = Settings(MLTD_SLACK_CHANNELS="C1", MLTD_SLACK_TEAMS="T1")
    assert slack_events.parse(mention("<@UBOT> run 42", channel="C2"), allowed).outcome == "refused"
    assert slack_events.parse(mention("<@UBOT> run 42", team="T9"), allowed).outcome == "refused"
    assert isinstance(slack_events.parse(mention("<@UBOT> run 42"), allowed), Request)


def test_a_diagnose_comment_and_a_failed_run_become_requests():
    comment = {"action": "created", "issue": {"number": 7, "pull_request": {}},
               "comment": {"id": 5, "body": "/diagnose nan"}, "repository": {"full_name": "acme/train"},
               "sender": {"login": "alice", "type": "User"}}
    got = github_webhook.parse("issue_comment", "d-1", comment, Settings())
    assert got == Request("gh:d-1", {"params": {"kind": "comment", "repo": "acme/train", "number": 7, "comment_id": 5,
                                                "sender": "alice", "text": "/diagnose nan", "installation_id": None}})
    run = {"action": "completed", "repository": {"full_name": "acme/train"}, "sender": {"login": "alice"},
           "workflow_run": {"id": 501, "name": "train", "path": ".github/workflows/train.yml", "conclusion": "failure",
                            "run_attempt": 2, "pull_requests": [{"number": 7, "url": "x"}]}}
    got = github_webhook.parse("workflow_run", "d-2", run, Settings())
    assert got.key == "gh:run:501:2" and got.fields["params"]["payload_run"]["pull_requests"] == [{"number": 7}]
    assert github_webhook.parse("push", "d-3", {}, Settings()) == Ignored("event push is not handled")
    bot = comment | {"sender": {"login": "mltd[bot]", "type": "Bot"}}
    assert github_webhook.parse("issue_comment", "d-4", bot, Settings()) == Ignored("from a bot")
