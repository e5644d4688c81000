"""A pull request remembers its run (issue 18), end to end: signed webhooks, PyGithub against the
GitHub stand-in (whose request log shows every download). A `/diagnose <question>` or `@mltd ...`
comment is a follow-up answered from the cached run; a new attempt or run of the workflow puts
"did the fix work" on the sticky comment."""
import time
import uuid

import pytest

from bot.github_port import MARKER
from tests import thread_runs
from tests.fakes.service import wait_for
from tests.test_github_service import SHA, app, comment_payload, gh, hook, run_payload, zipped  # noqa: F401
from tests.thread_runs import window_max


@pytest.fixture(scope="module")
def runs():
    return {"fixed": thread_runs.cached("fixed", stage2_lr=0.06),
            "still_broken": thread_runs.cached("still-broken-2", stage2_lr=2.0)}


def follow_ups(g, number=7):
    return [c for c in g.mltd_comments(number) if c["body"].startswith("<!-- mltd:followup:")]


def sticky(g, number=7):
    got = [c for c in g.mltd_comments(number) if c["body"].startswith(MARKER)]
    assert len(got) <= 1
    return got[0] if got else None


def test_a_comment_on_a_diagnosed_pull_request_is_a_follow_up(app, gh):  # noqa: F811
    hook(app, "workflow_run", run_payload(gh, 501))
    wait_for(lambda: sticky(gh) and "lr_too_high" in sticky(gh)["body"])
    diagnosis, downloads = sticky(gh)["body"], gh.downloads()
    assert downloads >= 2                                   # the job log and the artifact zip, once

    payload = comment_payload(gh, "/diagnose why not exploding gradients?")
    delivery = str(uuid.uuid4())
    assert hook(app, "issue_comment", payload, delivery).json() == {"queued": True}
    answer = wait_for(lambda: follow_ups(gh))[0]
    assert answer["body"].startswith(f"<!-- mltd:followup:{payload['comment']['id']} -->")
    assert "`exploding_gradients` is cause 2 of 2" in answer["body"] and "why not exploding gradients" in answer["body"]
    assert hook(app, "issue_comment", payload, delivery).json() == {"queued": False}     # a redelivery

    asked = comment_payload(gh, "@mltd show me the config")
    hook(app, "issue_comment", asked)
    wait_for(lambda: len(follow_ups(gh)) == 2)
    assert "curriculum.stages" in follow_ups(gh)[1]["body"]
    assert (asked["comment"]["id"], "eyes") in gh.reactions
    hook(app, "issue_comment", comment_payload(gh, "/diagnose I lowered the LR, is it fixed?"))
    wait_for(lambda: len(follow_ups(gh)) == 3)
    assert "none has finished on this pull request since my diagnosis of run 501" in follow_ups(gh)[2]["body"]
    time.sleep(0.5)
    assert len(follow_ups(gh)) == 3 and sticky(gh)["body"] == diagnosis      # the diagnosis comment untouched
    assert gh.downloads() == downloads                                      # answered from the cached run


def test_a_plain_diagnose_still_diagnoses_and_an_unknown_pr_gets_a_diagnosis(app, gh):  # noqa: F811
    hook(app, "issue_comment", comment_payload(gh, "@mltd the loss went up after epoch 7"))
    wait_for(lambda: sticky(gh) and "lr_too_high" in sticky(gh)["body"])   # nothing remembered: a diagnosis
    assert not follow_ups(gh)


def test_new_attempts_say_whether_the_fix_worked(app, gh, runs, scenario):  # noqa: F811
    hook(app, "workflow_run", run_payload(gh, 501))
    first = wait_for(lambda: sticky(gh) and "lr_too_high" in sticky(gh)["body"] and sticky(gh))

    broken = runs["still_broken"]
    gh.add_run(501, SHA, logs={"train": (broken / "train.log").read_text()}, artifacts={"run-files": zipped(broken)},
               attempt=2)
    hook(app, "workflow_run", run_payload(gh, 501, attempt=2))
    body = wait_for(lambda: "Did the fix work" in gh.comments[first["id"]]["body"] and gh.comments[first["id"]]["body"])
    assert "No: run 501 (attempt 2) still shows the signature of `lr_too_high`" in body
    # the earlier cause's own evidence, read from the first run's files (float noise moves it per CPU)
    last = window_max(scenario("lr_jump_mlp"), "train_loss", 299, 299)
    assert f"`train_loss` at step 299: {last} →" in body and "100x to 2 at step 211" in body

    fixed = runs["fixed"]
    gh.add_run(502, SHA, conclusion="success", logs={"train": (fixed / "train.log").read_text()},
               artifacts={"run-files": zipped(fixed)})
    hook(app, "workflow_run", run_payload(gh, 502, conclusion="success"))
    body = wait_for(lambda: "**Resolved**" in gh.comments[first["id"]]["body"] and gh.comments[first["id"]]["body"])
    assert "Fixed: run 502 no longer shows `lr_too_high`: `train_loss` at step" in body
    assert len(gh.mltd_comments(7)) == 1
