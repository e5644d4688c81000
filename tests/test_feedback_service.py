"""Feedback and the slash command end to end: a real diagnosis answered in Slack through the service,
then signed clicks on its buttons (counted once, checked against the workspace and channel), the
"Wrong cause…" modal opened and submitted, `mltd feedback export` writing the correction as a case
the wild corpus's checker accepts, and `/mltd` answered."""
import json
import time

import pytest
from fastapi.testclient import TestClient

from analysis.model import CODES
from bot.settings import Settings
from bot.store import Store
from handlers import cli
from handlers.web import create_app
from tests.fakes.service import S3, click, env, mention, signed, signed_form, submission, wait_for
from tests.wild import check_labels


@pytest.fixture(scope="module")
def s3(scenario):
    s = S3()
    s.upload(scenario("lr_jump_mlp"), "runs/42")
    yield s
    s.close()


@pytest.fixture
def service(slack, s3, tmp_path, monkeypatch):
    def start(**extra):
        for k, v in env(slack.api_url, s3.url, tmp_path, **extra).items():
            monkeypatch.setenv(k, v)
        return TestClient(create_app(Settings(), run_worker=True))
    return start


def interact(client, payload: dict, **kw):
    raw, headers = signed_form({"payload": json.dumps(payload)}, **kw)
    return client.post("/slack/interactions", content=raw, headers=headers)


def command(client, text: str, *, channel: str = "C1", response: str = "r1", **kw):
    raw, headers = signed_form({"token": "legacy", "team_id": "T1", "team_domain": "test", "channel_id": channel,
                                "channel_name": "ml-runs", "user_id": "U1", "user_name": "ada", "command": "/mltd",
                                "text": text, "api_app_id": "A1", "is_enterprise_install": "false",
                                "response_url": f"{response}", "trigger_id": f"{time.time_ns()}.1.abc"}, **kw)
    return client.post("/slack/commands", content=raw, headers=headers)


def given(client, verdict: str) -> float:
    """mltd_feedback_total for `verdict`, as /metrics reports it."""
    line = f'mltd_feedback_total{{verdict="{verdict}"}} '
    return next(float(x[len(line):]) for x in client.get("/metrics").text.splitlines() if x.startswith(line))


def diagnosed(client, slack, text="<@UBOT> why did run 42 diverge?") -> tuple[str, dict]:
    """Mention mltd, wait for its answer; the request key and the answer's feedback buttons."""
    body = mention(text)
    raw, headers = signed(body)
    assert client.post("/slack/events", content=raw, headers=headers).status_code == 200
    ts = body["event"]["ts"]
    placeholder = wait_for(lambda: [p for p in slack.called("chat.postMessage") if p.get("thread_ts") == ts])[0]
    answer = wait_for(lambda: [u for u in slack.called("chat.update")
                               if u["ts"] == placeholder["_response"]["ts"] and "lr_too_high" in u["text"]])[0]
    blocks = json.loads(answer["blocks"]) if isinstance(answer["blocks"], str) else answer["blocks"]
    key = f"slack:{body['event_id']}"
    store = Store(client.app.state.worker.settings.database_url)
    wait_for(lambda: store.get(key).status == "done")               # the plot is up too: the job is over
    return key, blocks[-1]


def test_clicks_are_verified_counted_once_and_stored(service, slack):
    with service() as client:
        key, actions = diagnosed(client, slack)
        assert actions["type"] == "actions"
        buttons = {e["action_id"]: e for e in actions["elements"]}
        assert [b["text"]["text"] for b in buttons.values()] == ["👍", "👎", "Wrong cause…"]
        assert {b["value"] for b in buttons.values()} == {key}
        store = Store(client.app.state.worker.settings.database_url)
        up, down = given(client, "up"), given(client, "down")

        thanks = slack.response_url(f"thanks-{key}")
        assert interact(client, click("mltd_feedback_up", key, response_url=thanks)).status_code == 200
        assert given(client, "up") == up + 1
        said = wait_for(lambda: slack.responded(f"thanks-{key}"))                 # only the clicker sees it
        assert said[0]["response_type"] == "ephemeral" and "noted 👍" in said[0]["text"]
        assert [(f["user"], f["verdict"]) for f in store.feedback(key)] == [("slack:T1:U2", "up")]
        assert interact(client, click("mltd_feedback_up", key, response_url=thanks)).status_code == 200   # a retry
        assert given(client, "up") == up + 1
        time.sleep(0.5)
        assert len(slack.responded(f"thanks-{key}")) == 1                          # thanked once
        interact(client, click("mltd_feedback_down", key))                                # a change of mind
        assert given(client, "down") == down + 1 and store.feedback(key)[0]["verdict"] == "down"

        raw, headers = signed_form({"payload": json.dumps(click("mltd_feedback_up", key, user="U3"))})
        forged = client.post("/slack/interactions", content=raw, headers={**headers, "X-Slack-Signature": "v0=00"})
        assert forged.status_code == 401
        replayed = interact(client, click("mltd_feedback_up", key, user="U3"), ts=str(int(time.time()) - 600))
        assert replayed.status_code == 401
        unsigned = client.post("/slack/interactions", content=raw, headers={"Content-Type": headers["Content-Type"]})
        assert unsigned.status_code == 401
        assert interact(client, click("mltd_feedback_up", key, team="T9", channel="C1", user="U3")).status_code == 200
        assert interact(client, click("mltd_feedback_up", key, channel="C2", user="U3")).status_code == 200
        assert interact(client, click("mltd_feedback_up", "slack:EvNOSUCH", user="U3")).status_code == 200
        assert given(client, "up") == up + 1 and len(store.feedback(key)) == 1            # none of those counted
        # not ours: bolt has no listener
        assert interact(client, click("someone_elses_button", key)).status_code == 404


def test_wrong_cause_opens_a_modal_and_the_correction_becomes_a_case(service, slack, s3, tmp_path, scenario):
    with service() as client:
        key, actions = diagnosed(client, slack)
        store = Store(client.app.state.worker.settings.database_url)
        wrong = given(client, "wrong_cause")
        trigger = f"{time.time_ns()}.9.xyz"
        assert interact(client, click("mltd_feedback_wrong", key, trigger_id=trigger)).status_code == 200
        opened = wait_for(lambda: [v for v in slack.called("views.open") if v["trigger_id"] == trigger])[0]
        assert opened["_response"]["ok"], opened["_response"]
        view = opened["_response"]["view"]
        select = next(b["element"] for b in view["blocks"] if b.get("block_id") == "code")
        assert [o["value"] for o in select["options"]] == list(CODES)
        assert "lr_too_high" in view["blocks"][0]["text"]["text"]                   # what mltd said
        assert given(client, "wrong_cause") == wrong                               # opening the modal decides nothing

        nothing_picked = {"code": {"code": {"type": "static_select", "selected_option": None}}}
        unpicked = interact(client, submission(view, nothing_picked))
        assert unpicked.json()["response_action"] == "errors" and "code" in unpicked.json()["errors"]
        why = "the labels were shuffled by the loader (key AKIAABCDEFGHIJKLMNOP in my env)"
        values = {"code": {"code": {"type": "static_select", "selected_option": {
                      "text": {"type": "plain_text", "text": "data_pipeline_bug"}, "value": "data_pipeline_bug"}}},
                  "why": {"why": {"type": "plain_text_input", "value": why}}}
        done = interact(client, submission(view, values))
        assert done.status_code == 200 and done.content == b""                      # closes the modal
        assert given(client, "wrong_cause") == wrong + 1
        fb = store.feedback(key)[0]
        assert fb["verdict"] == "wrong_cause" and fb["code"] == "data_pipeline_bug"
        assert "AKIAABCDEFGHIJKLMNOP" not in fb["reason"] and "shuffled" in fb["reason"]
        assert interact(client, submission(view, values, team="T9")).status_code == 200   # another workspace: refused
        assert given(client, "wrong_cause") == wrong + 1

        suite = tmp_path / "suite"
        assert cli.main(["feedback", "export", str(suite)]) == 0
        assert check_labels.main(suite) == 0
        labels = json.loads((suite / "labels.json").read_text())
        case = next(e for e in labels if e["request"] == key)
        assert case["code"] == "data_pipeline_bug" and case["diagnosed_code"] == "lr_too_high"
        assert case["split"] == check_labels.split_of(case["source_url"]) and "shuffled" in case["evidence_quote"]
        folder = suite / "cases" / case["id"]
        assert (folder / "train.log").read_text() == (scenario("lr_jump_mlp") / "train.log").read_text()
        assert cli.main(["feedback", "export", str(suite)]) == 0                   # again: the same case, updated
        assert len(json.loads((suite / "labels.json").read_text())) == len(labels)


def test_export_says_what_it_could_not_fetch(service, slack, s3, tmp_path, scenario, capsys):
    s3.upload(scenario("lr_jump_mlp"), "runs/43")
    with service() as client:
        key, _ = diagnosed(client, slack, "<@UBOT> why did run 43 diverge?")
        assert interact(client, submission(_opened(client, slack, key), _picked("overfitting"))).status_code == 200
        listed = s3.client().list_objects_v2(Bucket="ml-runs", Prefix="runs/43/")["Contents"]
        s3.client().delete_objects(Bucket="ml-runs", Delete={"Objects": [{"Key": o["Key"]} for o in listed]})
        capsys.readouterr()
        assert cli.main(["feedback", "export", str(tmp_path / "suite")]) == 2
        err = capsys.readouterr().err
        assert "not exported" in err and "There are no files under s3://ml-runs/runs/43/" in err
        assert json.loads((tmp_path / "suite" / "labels.json").read_text()) == []      # nothing half-written


def _opened(client, slack, key) -> dict:
    trigger = f"{time.time_ns()}.7.abc"
    interact(client, click("mltd_feedback_wrong", key, trigger_id=trigger))
    opened = wait_for(lambda: [v for v in slack.called("views.open") if v["trigger_id"] == trigger])
    return opened[0]["_response"]["view"]


def _picked(code: str) -> dict:
    return {"code": {"code": {"type": "static_select", "selected_option": {
        "text": {"type": "plain_text", "text": code}, "value": code}}}}


def test_slash_command_is_acked_at_once_and_answered_in_the_channel(service, slack):
    with service() as client:
        t = time.perf_counter()
        ack = command(client, "diagnose s3://ml-runs/runs/42/ loss blew up", response=slack.response_url("r-ok"))
        assert ack.status_code == 200 and time.perf_counter() - t < 3                # Slack's limit for the ack
        assert ack.json()["response_type"] == "ephemeral" and "Working on it" in ack.json()["text"]
        posted = wait_for(lambda: [p for p in slack.called("chat.postMessage")
                                   if "s3://ml-runs/runs/42/" in p.get("text", "") and not p.get("thread_ts")])
        assert len(posted) == 1 and posted[0]["channel"] == "C1"
        answer = wait_for(lambda: [u for u in slack.called("chat.update")
                                   if u["ts"] == posted[0]["_response"]["ts"] and "lr_too_high" in u["text"]])
        assert "mltd_feedback_up" in str(answer[0]["blocks"])
        plot = wait_for(lambda: [c for c in slack.called("files.completeUploadExternal")
                                 if c.get("thread_ts") == posted[0]["_response"]["ts"]])       # under the answer
        assert len(plot) == 1

        assert "diagnose" in command(client, "help").json()["text"]
        compared = command(client, "compare 42 41", response=slack.response_url("r-cmp")).json()["text"]
        assert "comparison of `42` with `41`" in compared
        assert wait_for(lambda: [p for p in slack.called("chat.postMessage")
                                 if "Comparing" in p.get("text", "") and "41" in p.get("text", "")
                                 and not p.get("thread_ts")])          # the compare job took it, in the channel
        assert "Which two runs?" in command(client, "compare 42").json()["text"]
        assert "I don't know `/mltd frobnicate`" in command(client, "frobnicate").json()["text"]
        assert "Which run?" in command(client, "diagnose").json()["text"]
        raw, headers = signed_form({"command": "/mltd", "text": "help"})
        assert client.post("/slack/commands", content=raw,
                           headers={**headers, "X-Slack-Signature": "v0=" + "0" * 64}).status_code == 401


def test_slash_command_where_mltd_is_not_invited_says_so(service, slack):
    slack.not_member.add("C7")
    with service() as client:
        ack = command(client, "diagnose run 42", channel="C7", response=slack.response_url("r-c7"))
        assert "Working on it" in ack.json()["text"]
        said = wait_for(lambda: slack.responded("r-c7"))
        assert said[0]["response_type"] == "ephemeral" and "/invite @mltd" in said[0]["text"]


def test_slash_command_allow_list(service, slack):
    with service(MLTD_SLACK_CHANNELS="C1") as client:
        assert "not enabled in this channel" in command(client, "diagnose run 42", channel="C2").json()["text"]
