"""The diagnosis as one GitHub comment: the markdown report (redacted, and inert: no link, image,
HTML or mention from the run), with links to the run and its jobs."""
from __future__ import annotations

import re
from collections.abc import Sequence

from analysis.model import Diagnosis
from bot.redact import clean
from bot.render.markdown import render_markdown
from bot.render.md_safe import code_span, inline


def neutralise(text: str) -> str:
    """One message from the run (an archive's refusal), redacted and inert, for a comment."""
    return inline(clean(text))


def render_github(diagnosis: Diagnosis, run_url: str | None = None, jobs: Sequence[tuple[str, str]] = ()) -> str:
    body = render_markdown(diagnosis)
    links = []
    if run_url:
        links.append(f"[the workflow run]({run_url})")
    # a job's name comes from the workflow file, which a fork's pull request can change
    links += [f"[job {code_span(clean(name))}]({url})" for name, url in jobs]
    if links:
        body += "\nDiagnosed from " + ", ".join(links) + ".\n"
    return body + "\n<sub>mltd reads and explains; it never changes code. Reply `/diagnose` to run it again.</sub>\n"


def render_plain(text: str) -> str:
    """A plain answer (a follow-up, a fix check) as inert markdown: each line's `code` spans kept
    as code spans, the prose between them escaped."""
    lines = []
    for line in clean(text).splitlines():
        parts = re.split(r"`([^`\n]*)`", line)
        lines.append("".join(code_span(p) if i % 2 else inline(p) for i, p in enumerate(parts) if p or not i % 2))
    return "\n".join(lines)
