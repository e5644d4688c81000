"""👍/👎 reactions on the sticky comment, read through PyGithub from the GitHub stand-in (the REST
reactions listing in its wire format) when the pull request has its next event, and stored with
the diagnosis the comment showed when they were given."""
import time

from bot.store import Store
from tests.fakes.github_api import ME
from tests.fakes.service import wait_for
from tests.test_github_service import SHA, app, gh, hook, run_payload  # noqa: F401  (fixtures)


def given(client, verdict: str) -> float:
    line = f'mltd_feedback_total{{verdict="{verdict}"}} '
    return next(float(x[len(line):]) for x in client.get("/metrics").text.splitlines() if x.startswith(line))


def test_reactions_on_the_sticky_comment_are_feedback_on_the_diagnosis_it_showed(app, gh):  # noqa: F811
    store = Store(app.app.state.worker.settings.database_url)
    up, down = given(app, "up"), given(app, "down")
    hook(app, "workflow_run", run_payload(gh, 501))
    sticky = wait_for(lambda: [c for c in gh.mltd_comments(7) if "lr_too_high" in c["body"]])[0]
    first = "gh:run:501:1"
    wait_for(lambda: store.get(first).status == "done")
    time.sleep(1.1)                                                   # GitHub's created_at has whole seconds
    gh.react(sticky["id"], "-1", "dave", at=time.time() - 3600)      # before this diagnosis went up: not about it
    gh.react(sticky["id"], "+1", "alice")
    gh.react(sticky["id"], "-1", "bob")
    gh.react(sticky["id"], "heart", "carol")                          # not a verdict
    gh.react(sticky["id"], "+1", ME)                                  # mltd's own
    assert store.feedback(first) == []                                # read on the pull request's next event
    time.sleep(1.1)

    gh.add_run(501, SHA, logs={"train": "step=1 loss=2.0\nstep=2 loss=nan\n"}, attempt=2)
    hook(app, "workflow_run", run_payload(gh, 501, attempt=2))
    wait_for(lambda: "numerical_instability" in gh.comments[sticky["id"]]["body"])
    assert sorted((f["user"], f["verdict"], f["source"]) for f in store.feedback(first)) == [
        ("github:alice", "up", "github"), ("github:bob", "down", "github")]
    assert given(app, "up") == up + 1 and given(app, "down") == down + 1

    second = "gh:run:501:2"
    wait_for(lambda: store.get(second).status == "done")
    time.sleep(1.1)                                                   # GitHub's created_at has whole seconds
    gh.react(sticky["id"], "+1", "erin")
    hook(app, "workflow_run", run_payload(gh, 502, conclusion="success"))
    wait_for(lambda: "**Resolved**" in gh.comments[sticky["id"]]["body"])
    assert [(f["user"], f["verdict"]) for f in store.feedback(second)] == [("github:erin", "up")]
    assert len(store.feedback(first)) == 2                            # alice's and bob's stay with the first
    assert given(app, "up") == up + 2
