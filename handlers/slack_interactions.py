"""`POST /slack/interactions` (or Socket Mode): the 👍 / 👎 / "Wrong cause…" buttons under a
diagnosis and the modal that asks for the real cause. Slack signs these exactly like events (v0
over the raw body, which is form-encoded with the JSON in `payload=`): the route verifies, bolt
routes, `parse` says what the payload is; the click is checked against the stored request's
workspace and channel, recorded, and acked well within 3 s; the modal opens right after the ack,
with the click's trigger_id."""
from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass

from analysis.model import CODES
from bot import feedback, metrics
from bot.settings import Settings
from handlers.events import Ignored
from handlers.slack_events import serve

log = logging.getLogger("mltd.feedback")
ROUTE = "/slack/interactions"
THANKS = {feedback.UP: "Thanks: noted 👍 on this diagnosis.",
          feedback.DOWN: "Thanks: noted 👎. *Wrong cause…* tells me what it was, and it becomes a test case."}


@dataclass(frozen=True)
class Click:
    request_key: str
    verdict: str                      # up | down | wrong_cause (which opens the modal)
    team: str
    channel: str
    user: str
    trigger_id: str
    response_url: str                 # for a word of thanks only the clicker sees


@dataclass(frozen=True)
class Correction:
    request_key: str
    team: str
    channel: str
    user: str
    code: str | None                  # None or not a taxonomy code: the modal says so and stays open
    reason: str


def parse(payload: dict, settings: Settings) -> Click | Correction | Ignored:
    """A verified interaction payload: a click on one of mltd's feedback buttons, a submitted
    "Wrong cause…" modal, or why it is ignored."""
    team = (payload.get("team") or {}).get("id") or (payload.get("user") or {}).get("team_id") or ""
    user = (payload.get("user") or {}).get("id") or ""
    if settings.teams and team not in settings.teams:
        return Ignored(f"workspace {team} is not allowed", "refused")
    if payload.get("type") == "block_actions":
        action = next((a for a in payload.get("actions") or [] if a.get("action_id") in feedback.ACTIONS), None)
        channel = (payload.get("channel") or {}).get("id") or (payload.get("container") or {}).get("channel_id") or ""
        if action is None or not action.get("value"):
            return Ignored("not a feedback button")
        return Click(action["value"], feedback.ACTIONS[action["action_id"]], team, channel, user,
                     payload.get("trigger_id") or "", payload.get("response_url") or "")
    if payload.get("type") == "view_submission" and (payload.get("view") or {}).get("callback_id") == feedback.MODAL:
        view = payload["view"]
        try:
            meta = json.loads(view.get("private_metadata") or "{}")
        except ValueError:
            return Ignored("modal without its request")
        values = (view.get("state") or {}).get("values") or {}
        chosen = ((values.get(feedback.CODE_FIELD) or {}).get(feedback.CODE_FIELD) or {}).get("selected_option") or {}
        why = ((values.get(feedback.WHY_FIELD) or {}).get(feedback.WHY_FIELD) or {}).get("value") or ""
        code = chosen.get("value")
        return Correction(str(meta.get("request") or ""), team, str(meta.get("channel") or ""), user,
                          code if code in CODES else None, why)
    return Ignored(f"interaction {payload.get('type')} is not handled")


def belongs(req, team: str, channel: str) -> bool:
    """Whether a click may touch this request: a Slack diagnosis in the same workspace and channel
    (a button value copied into another workspace reaches nothing)."""
    return req is not None and req.source == "slack" and req.team == team and req.channel == channel


def register(app, bolt, settings: Settings, worker) -> None:
    """The buttons' and the modal's listeners on `bolt`, and their URL on `app`."""
    after = AfterAck(worker.slack)

    @bolt.action(re.compile(r"^mltd_feedback_"))
    async def on_click(ack, body):
        await ack(**await _handle(parse(body, settings), worker.store, after))

    @bolt.view(feedback.MODAL)
    async def on_submit(ack, body):
        await ack(**await _handle(parse(body, settings), worker.store, after))

    serve(app, ROUTE, bolt, settings)


class AfterAck:
    """What a click makes mltd say, once Slack has its answer: the modal (its trigger lives 3 s)
    and a word of thanks only the clicker sees. A failure is logged: the verdict is kept already."""

    def __init__(self, port) -> None:
        self.port = port
        self.pending: set[asyncio.Task] = set()

    def open_modal(self, trigger_id: str, view: dict) -> None:
        self._later(self.port.async_web.views_open(trigger_id=trigger_id, view=view), "open the wrong-cause modal")

    def thank(self, response_url: str, text: str) -> None:
        if response_url:
            self._later(asyncio.to_thread(self.port.respond, response_url, text), "thank for the feedback")

    def _later(self, work, what: str) -> None:
        async def run():
            try:
                await work
            except Exception:
                log.warning("could not %s", what, exc_info=True)
        task = asyncio.create_task(run())
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)


async def _handle(parsed, store, after: AfterAck) -> dict:
    """What to ack with: nothing (a click, a saved correction: the modal closes), or the modal's
    error when no code was picked."""
    if isinstance(parsed, Ignored):
        metrics.EVENTS.labels("slack", parsed.outcome).inc()
        return {}
    req = await asyncio.to_thread(store.get, parsed.request_key)
    if not belongs(req, parsed.team, parsed.channel):
        metrics.EVENTS.labels("slack", "refused").inc()
        log.warning("feedback refused: %s is not a diagnosis of %s/%s", parsed.request_key, parsed.team,
                    parsed.channel)
        return {}
    user = f"slack:{parsed.team}:{parsed.user}"
    if isinstance(parsed, Click):
        if parsed.verdict == feedback.WRONG:
            after.open_modal(parsed.trigger_id, feedback.wrong_cause_modal(req.key, req.channel,
                                                                           (req.result or {}).get("top")))
        elif await asyncio.to_thread(feedback.record, store, req.key, user, parsed.verdict, source="slack"):
            after.thank(parsed.response_url, THANKS[parsed.verdict])
        return {}
    if parsed.code is None:
        return {"response_action": "errors", "errors": {feedback.CODE_FIELD: "Pick the real cause from the list."}}
    await asyncio.to_thread(feedback.record, store, req.key, user, feedback.WRONG, source="slack", code=parsed.code,
                            reason=parsed.reason)
    return {}
