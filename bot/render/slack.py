"""The diagnosis as Slack Block Kit: the top root cause with its evidence and fix first, the others
after, quick fixes, patch text in a code block; within Slack's limits (3,000 characters a section,
50 blocks, ~10k characters in all), with a plain-text fallback. Every text that came from the
run is escaped and redacted, so a log line can never ping a channel or leak a token."""
from __future__ import annotations

from analysis.model import Diagnosis, Finding
from bot.feedback import BUTTONS
from bot.redact import clean_diagnosis
from bot.redact import slack_escape as esc
from bot.render.common import STATUS_LINE, incomplete_line, reader, where

SECTION_MAX = 3000
BLOCKS_MAX = 50
TOTAL_MAX = 10_000


def _section(text: str) -> dict:
    if len(text) > SECTION_MAX:
        text = text[: SECTION_MAX - 20] + "\n… (truncated)"
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _cause(i: int, c: Finding, full: bool, by: str) -> list[dict]:
    head = (f"*{i}. {esc(c.issue)}*\n`{c.code}` · {c.severity} · confidence {c.confidence:.2f}"
            + (f" · read by {by}" if by else ""))
    evidence = c.evidence if full else c.evidence[:2]
    lines = [f"• {esc(e.text)} — _{esc(where(e))}_" for e in evidence]
    body = head + ("\n" + "\n".join(lines) if lines else "")
    if c.fix:
        body += f"\n*Fix:* {esc(c.fix)}"
    if full and c.expected_impact:
        body += f"\n*Expected:* {esc(c.expected_impact)}"
    blocks = [_section(body)]
    if full and c.patch:
        patch = esc(c.patch).replace("```", "ˋˋˋ")
        blocks.append(_section(f"*Suggested patch* (not applied):\n```{patch[: SECTION_MAX - 60]}```"))
    return blocks


def render(diagnosis: Diagnosis) -> tuple[list[dict], str, bool]:
    """(blocks, fallback text, complete): `complete` is False when the reply had to be cut, and
    the full report should follow as a file."""
    d = clean_diagnosis(diagnosis)
    causes = d.root_causes
    status = STATUS_LINE.get(d.status, d.status)
    blocks: list[dict] = [_section(f"*mltd* · run `{esc(str(d.run['id']))}` · {status}")]
    if line := incomplete_line(d):
        blocks.append(_section(f"*{esc(line)}*"))
    for i, c in enumerate(causes, start=1):
        blocks += _cause(i, c, full=i == 1, by=reader(d, c))
    if d.quick_fixes:
        blocks.append(_section("*Quick fixes, by impact:* " + "; ".join(esc(q) for q in d.quick_fixes)))
    if d.performance:
        blocks.append(_section("*Speed:*\n" + "\n".join(f"• {esc(p.text)} — _{esc(where(p))}_"
                                                          for p in d.performance)))
    extra = [esc(d.agent_note)] if d.agent_note else []
    extra += [f"Would settle it: {esc(m)}" for m in d.missing_artifacts]
    extra += [f"Would tell them apart: {esc(d.tell_apart)}"] if d.tell_apart else []
    extra += [esc(q) for q in d.questions]
    if extra:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "\n".join(extra)[:SECTION_MAX]}]})
    complete = True
    while len(blocks) > BLOCKS_MAX or sum(len(_text(b)) for b in blocks) > TOTAL_MAX:
        blocks.pop(-2 if len(blocks) > 2 else -1)
        complete = False
    if not complete:
        blocks.append({"type": "context",
                       "elements": [{"type": "mrkdwn", "text": "The full report is attached below."}]})
    top = causes[0] if causes else None
    text = f"mltd: {status}" + (f". {top.code}: {top.issue}" if top else "")
    return blocks, esc(text)[:3000], complete


def message(text: str) -> list[dict]:
    """A one-section reply (a placeholder, or a problem and what to do about it)."""
    return [_section(text)]


def _text(block: dict) -> str:
    if "text" in block:
        return block["text"]["text"]
    return "".join(e.get("text", "") for e in block.get("elements", []))


def with_feedback(blocks: list[dict], request_key: str) -> list[dict]:
    """The reply's blocks with 👍 / 👎 / "Wrong cause…" under them (within the 50-block limit);
    every button's value names the request the diagnosis answered (not a secret: a click is
    checked against that request's workspace and channel)."""
    buttons = [{"type": "button", "action_id": a, "value": request_key, "text": {"type": "plain_text", "text": t}}
               for a, _, t in BUTTONS]
    if len(blocks) >= BLOCKS_MAX:                     # keep the last block: it may say the full report follows
        blocks = blocks[: BLOCKS_MAX - 2] + blocks[-1:]
    return blocks + [{"type": "actions", "block_id": "mltd_feedback", "elements": buttons}]


def prefaced(preface: str, blocks: list[dict], text: str) -> tuple[list[dict], str]:
    """A reply with one plain section before it (a fix check before the new run's diagnosis),
    still within Slack's limits: the reply's last blocks give way."""
    out = [_section(esc(preface))] + blocks
    while len(out) > BLOCKS_MAX or sum(len(_text(b)) for b in out) > TOTAL_MAX:
        out.pop(-1)
    return out, (esc(preface.splitlines()[0]) + " " + text)[:3000]
