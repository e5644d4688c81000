"""What a mention asks, what a reply may contain, and how a long diagnosis fits Slack's limits."""
import json

import pytest

from analysis.model import Diagnosis
from bot.mentions import parse
from bot.redact import redact, slack_escape
from bot.render.slack import BLOCKS_MAX, SECTION_MAX, TOTAL_MAX, render, with_feedback
from handlers.cli import main


@pytest.mark.parametrize("text, run, kind", [
    ("<@U0BOT> why did run 42 diverge?", "42", "name"),
    ("<@U0BOT> run #exp-7.3 has NaN loss", "exp-7.3", "name"),
    ("<@U0BOT> look at <s3://ml-runs/runs/42/> please", "s3://ml-runs/runs/42/", "s3"),
    ("<@U0BOT> s3://ml-runs/a/b is stuck", "s3://ml-runs/a/b", "s3"),
    ("<@U0BOT> <https://github.com/o/r/actions/runs/123|this run> failed", "https://github.com/o/r/actions/runs/123",
     "github"),
    ("<@U0BOT> what happened to run nope-7?", "nope-7", "name"),
    ("<@U0BOT> the run diverged", None, None),
])
def test_the_run_a_mention_names(text, run, kind):
    ask = parse(text)
    assert (ask.run, ask.kind) == (run, kind)
    assert "<@" not in ask.symptom


def test_secrets_are_redacted():
    text = ("AKIAABCDEFGHIJKLMNOP ghp_" + "a" * 36 + " xoxb-1234-5678-abcdefgh hf_" + "b" * 34 +
            " https://user:hunter2@db.example.com/x password=swordfish sk-ant-" + "c" * 30)
    out = redact(text)
    for secret in ("AKIAABCDEFGHIJKLMNOP", "ghp_", "xoxb-", "hf_bbbb", "hunter2", "swordfish", "sk-ant-"):
        assert secret not in out, (secret, out)


def test_mentions_and_links_are_defused():
    assert slack_escape("<!channel> <@U123> <!subteam^S1> <http://x|y> & more") == \
        "&lt;!channel&gt; &lt;@U123&gt; &lt;!subteam^S1&gt; &lt;http://x|y&gt; &amp; more"


def test_a_long_diagnosis_fits_slack(scenario, capsys):
    main(["diagnose", str(scenario("lr_jump_mlp")), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    cause = doc["root_causes"][0]
    doc["root_causes"] = [dict(cause, issue=cause["issue"] + " " + "x" * 4000, evidence=cause["evidence"] * 40)] * 60
    blocks, text, complete = render(Diagnosis.from_dict(doc))
    assert not complete and len(blocks) <= BLOCKS_MAX
    texts = [b["text"]["text"] if "text" in b else b["elements"][0]["text"] for b in blocks]
    assert all(len(t) <= SECTION_MAX for t in texts) and sum(map(len, texts)) <= TOTAL_MAX
    assert text.startswith("mltd: Diagnosis complete") and len(text) <= 3000
    blocks = [*blocks[:-1], *[blocks[1]] * BLOCKS_MAX, blocks[-1]]             # at the limit, and over it
    for cut in (BLOCKS_MAX - 1, BLOCKS_MAX, len(blocks)):
        shown = with_feedback(blocks[: cut - 1] + blocks[-1:], "slack:Ev1")
        assert len(shown) <= BLOCKS_MAX and shown[-1]["type"] == "actions"
        assert "full report is attached" in shown[-2]["elements"][0]["text"]
        assert {e["value"] for e in shown[-1]["elements"]} == {"slack:Ev1"}


def test_log_records_are_redacted():
    import logging

    from bot.logs import Redacting

    try:
        raise RuntimeError("connect to postgresql://mltd:hunter2@db/x failed")
    except RuntimeError:
        import sys
        record = logging.LogRecord("t", logging.ERROR, __file__, 1, "token=%s", ("xoxb-1234-5678-abcdefgh",),
                                   sys.exc_info())
    Redacting().filter(record)
    assert "xoxb-1234" not in record.getMessage() and "hunter2" not in record.exc_text
