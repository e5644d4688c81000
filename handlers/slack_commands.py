"""`POST /slack/commands` (or Socket Mode): the `/mltd` slash command. Signed like events (v0 over
the raw, form-encoded body): the route verifies, bolt routes, `parse` turns the form into a request
to enqueue or a reply given at once, and the ack is an ephemeral message, well within 3 s. The job
answers in the channel as it answers a mention: a placeholder, then the diagnosis written over it."""
from __future__ import annotations

import time
from dataclasses import dataclass

from bot import metrics
from bot.mentions import parse as parse_ask
from bot.mentions import parse_compare
from bot.settings import Settings
from handlers.events import Request, accept
from handlers.slack_events import serve

ROUTE = "/slack/commands"
USAGE = ("`/mltd diagnose s3://bucket/runs/42/` (or `/mltd diagnose run 42`, or a pasted traceback) diagnoses a run "
         "and answers in this channel; `/mltd compare 42 41` compares two runs; `/mltd help` shows this.")
WORKING = "Working on it: the diagnosis of {run} will appear in this channel."
COMPARING = "Working on it: the comparison of {a} with {b} will appear in this channel."
NOT_HERE = "mltd is not enabled in this {where}; an admin can add it to {setting}."


@dataclass(frozen=True)
class Reply:
    """An answer given in the ack itself, nothing enqueued."""
    text: str
    outcome: str = "ignored"


def parse(form: dict[str, str], settings: Settings) -> Request | Reply:
    """A `/mltd ...` command: the request it makes, or the reply it gets at once."""
    team, channel = form.get("team_id", ""), form.get("channel_id", "")
    if settings.teams and team not in settings.teams:
        return Reply(NOT_HERE.format(where="workspace", setting="MLTD_SLACK_TEAMS"), "refused")
    if settings.channels and channel not in settings.channels:
        return Reply(NOT_HERE.format(where="channel", setting="MLTD_SLACK_CHANNELS"), "refused")
    verb, _, rest = (form.get("text") or "").strip().partition(" ")
    verb = verb.lower()
    if verb in ("", "help"):
        return Reply(USAGE)
    if verb not in ("diagnose", "compare"):
        return Reply(f"I don't know `/mltd {verb[:40]}`. " + USAGE)
    if not rest.strip():
        return Reply("Which run? " + USAGE)
    ask = parse_ask(rest)
    params = {"run": ask.run, "kind": ask.kind, "symptom": ask.symptom, "files": [],
              "response_url": form.get("response_url")}
    if verb == "compare":                              # the same request a "compare run 42 with run 41" mention makes
        cmp = parse_compare(f"compare {rest}")
        if cmp is None:
            return Reply("Which two runs? " + USAGE)
        params.update(cmp.params())
    key = f"slack:cmd:{form.get('trigger_id') or form.get('response_url') or time.time()}"
    return Request(key, {"team": team, "channel": channel, "thread_ts": None, "user": form.get("user_id"),
                         "text": rest, "params": params})


def register(app, bolt, settings: Settings, worker) -> None:
    """The `/mltd` listener on `bolt`, and its URL on `app`."""
    store = worker.store

    @bolt.command("/mltd")
    async def on_command(ack, body):
        parsed = parse({k: str(v) for k, v in body.items()}, settings)
        if isinstance(parsed, Reply):
            metrics.EVENTS.labels("slack", parsed.outcome).inc()
            text = parsed.text
        else:
            await accept("slack", parsed, store=store, worker=worker, lease_s=settings.lease_s)
            params = parsed.fields["params"]
            run = params["run"]
            text = (COMPARING.format(a=f"`{run}`", b=f"`{params['compare']['b']['run']}`") if params.get("compare")
                    else WORKING.format(run=f"`{run}`" if run else "what you pasted"))
        await ack(response_type="ephemeral", text=text)

    serve(app, ROUTE, bolt, settings)
