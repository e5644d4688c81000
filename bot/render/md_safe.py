"""Text from a run, made inert in GitHub-flavoured markdown: it reads the same once rendered, but
can open no link, image, HTML tag or comment, and ping nobody.

Prose is escaped (`[`, `]`, `<`, `>`, `&`, backticks, `|`, `*`, `~`, backslash); URLs, which GitHub
would autolink, become code spans; `@name` and `#123` get a zero-width space so they neither
mention nor cross-reference. Code spans and fences are longer than any backtick run inside them,
so no content can close them.
"""
from __future__ import annotations

import re

# what GitHub autolinks, or a scheme a link could carry: made a code span whole
_URL = re.compile(r"(?i)(?<![a-z0-9+.-])(?:[a-z][a-z0-9+.-]{0,30}:/{1,3}|www\.)[^\s]++")
_ESCAPE = {c: "\\" + c for c in "\\`[]|*~"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_SPECIAL = re.compile(r"[\\`\[\]|*~<>&]")
# @user and @org/team wherever they start (after a backtick, a bracket, a line start); an email's
# `a@b.com` is no mention and stays; #123 and owner/repo#123 cross-reference, wherever they stand
_PING = re.compile(r"((?<![A-Za-z0-9])@|#)(?=[A-Za-z0-9])")
_TICKS = re.compile(r"`++")


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def _escape(text: str) -> str:
    return _PING.sub("\\1\u200b", _SPECIAL.sub(lambda m: _ESCAPE[m.group(0)], text))


def inline(text: str, *, cell: bool = False) -> str:
    """Prose on one line: escaped, with URLs as inert code spans (`cell`: inside a table)."""
    text = _one_line(str(text))
    out, at = [], 0
    for m in _URL.finditer(text):
        out += [_escape(text[at:m.start()]), code_span(m.group(0), cell=cell)]
        at = m.end()
    out.append(_escape(text[at:]))
    return "".join(out)


def _fence_len(text: str, least: int) -> int:
    return max([least] + [len(m.group(0)) + 1 for m in _TICKS.finditer(text)])


def code_span(text: str, *, cell: bool = False) -> str:
    """`text` as one code span that no backtick inside can close (`cell`: `|` escaped for a table)."""
    text = _one_line(str(text))
    text = text.replace("|", "\\|") if cell else text
    fence = "`" * _fence_len(text, 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, lang: str = "") -> list[str]:
    """Lines of a fenced block whose fence is longer than any backtick run in `text`."""
    fence = "`" * _fence_len(text, 3)
    return [fence + lang, text.rstrip("\n"), fence]
