"""Secrets out, mentions defused: every text from a user's artifacts passes here before it is
posted to Slack or GitHub, logged, or sent to an LLM."""
from __future__ import annotations

import re

_SECRETS = [
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), "[aws-key]"),
    (re.compile(r"(?i)(aws_secret_access_key|secret_access_key)(\s*[=:]\s*)['\"]?[A-Za-z0-9/+=]{30,}"), r"\1\2[secret]"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b"), "[github-token]"),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b|\bxapp-[A-Za-z0-9-]{10,}\b"), "[slack-token]"),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), "[hf-token]"),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}\b"), "[anthropic-key]"),
    (re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b"), "[openai-key]"),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"), "[private-key]"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), r"\1[password]@"),
    (re.compile(r"(?i)\b(password|passwd|api[_-]?key|token|secret)(\s*[=:]\s*)['\"]?[^\s'\",]{6,}"), r"\1\2[secret]"),
]


def redact(text: str) -> str:
    for pattern, repl in _SECRETS:
        text = pattern.sub(repl, text)
    return text


def slack_escape(text: str) -> str:
    """Slack's three control characters: with them escaped, `<!channel>`, `<@U123>` or a
    `<http://...|link>` in a log can never become a mention or a link."""
    return redact(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
