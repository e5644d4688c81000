"""The diagnosis as one GitHub comment: the markdown report, made safe to post from hostile
input (secrets redacted, `@user` and `@org/team` mentions and images neutralised), with links
to the run and its jobs."""
from __future__ import annotations

import re

from bot.redact import redact
from bot.render.markdown import render_markdown

_MENTION = re.compile(r"(?<![\w`/])@(?=[A-Za-z0-9])")
_IMAGE = re.compile(r"!\[")


def neutralise(text: str) -> str:
    """No mention pings, no remote image loads: a zero-width space after `@`, `![` made literal."""
    return _IMAGE.sub("!\u200b[", _MENTION.sub("@\u200b", redact(text)))


def render_github(doc: dict, run_url: str | None = None, jobs: list[tuple[str, str]] = ()) -> str:
    body = neutralise(render_markdown(doc))
    links = []
    if run_url:
        links.append(f"[the workflow run]({run_url})")
    links += [f"[job `{name}`]({url})" for name, url in jobs]
    if links:
        body += "\nDiagnosed from " + ", ".join(links) + ".\n"
    return body + "\n<sub>mltd reads and explains; it never changes code. Reply `/diagnose` to run it again.</sub>\n"
