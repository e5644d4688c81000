"""Feedback that teaches: 👍 / 👎 / "Wrong cause…" on a Slack diagnosis, and 👍/👎 reactions on
the GitHub sticky comment. A verdict is kept once per person per diagnosis (a retried or repeated
click changes nothing) and counted in `mltd_feedback_total`; a corrected cause, the real code and
why, is what `mltd feedback export` turns into a regression case."""
from __future__ import annotations

import json
import logging
from datetime import datetime

from analysis.model import CODES
from bot.redact import clean

log = logging.getLogger("mltd.feedback")

UP, DOWN, WRONG = "up", "down", "wrong_cause"
BUTTONS = (("mltd_feedback_up", UP, "👍"), ("mltd_feedback_down", DOWN, "👎"),   # action_id, verdict, label
           ("mltd_feedback_wrong", WRONG, "Wrong cause…"))
ACTIONS = {action: verdict for action, verdict, _ in BUTTONS}
MODAL = "mltd_wrong_cause"                    # the modal's callback_id
CODE_FIELD, WHY_FIELD = "code", "why"         # its two inputs (block_id and action_id alike)
REASON_MAX = 2000
REACTIONS = {"+1": UP, "-1": DOWN}            # GitHub's reaction contents that are verdicts


def record(store, request_key: str, user: str, verdict: str, *, source: str, code: str | None = None,
           reason: str | None = None) -> bool:
    """Keep the verdict (a reason redacted and bounded); False when it was recorded already."""
    if verdict == WRONG and code not in CODES:
        raise ValueError(f"not a taxonomy code: {code!r}")
    reason = clean(reason)[:REASON_MAX] if reason else None
    return store.record_feedback(request_key, user, verdict, source=source, code=code, reason=reason)


def wrong_cause_modal(request_key: str, channel: str, diagnosed: str | None) -> dict:
    """The "Wrong cause…" modal: the real cause from the taxonomy, and why. The request and its
    channel travel in `private_metadata` (Slack hands it back unchanged on submission)."""
    said = f"mltd said `{diagnosed}`. " if diagnosed else ""
    options = [{"text": {"type": "plain_text", "text": code}, "value": code} for code in CODES]
    return {
        "type": "modal", "callback_id": MODAL,
        "private_metadata": json.dumps({"request": request_key, "channel": channel}),
        "title": {"type": "plain_text", "text": "Wrong cause"},
        "submit": {"type": "plain_text", "text": "Save"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn",
                                         "text": said + "What was the real cause? Your answer becomes a test case."}},
            {"type": "input", "block_id": CODE_FIELD, "label": {"type": "plain_text", "text": "The real cause"},
             "element": {"type": "static_select", "action_id": CODE_FIELD, "options": options,
                         "placeholder": {"type": "plain_text", "text": "Pick a code"}}},
            {"type": "input", "block_id": WHY_FIELD, "optional": True, "label": {"type": "plain_text", "text": "Why"},
             "element": {"type": "plain_text_input", "action_id": WHY_FIELD, "multiline": True,
                         "max_length": REASON_MAX}},
        ],
    }


def read_reactions(store, comment, target: str, me: str) -> int:
    """👍/👎 on the sticky comment at `target`, given since its diagnosis went up, recorded
    against that diagnosis; how many were new. Reactions are read when the pull request has its
    next event, before the comment is rewritten (older ones belong to earlier diagnoses)."""
    held = store.on_show(target)
    if held is None or comment is None:
        return 0
    request_key, since = held
    new = 0
    for r in comment.get_reactions():
        verdict = REACTIONS.get(r.content)
        login = r.user.login if r.user else ""
        # GitHub's created_at has whole seconds: one given in the second the diagnosis went up is its
        if verdict is None or not login or login.lower() == me.lower() or _epoch(r.created_at) < int(since):
            continue
        new += record(store, request_key, f"github:{login}", verdict, source="github")
    return new


def _epoch(when) -> float:
    if isinstance(when, datetime):
        return when.timestamp()
    return datetime.fromisoformat(str(when).replace("Z", "+00:00")).timestamp()
