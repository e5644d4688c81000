"""Secrets out, terminal controls out, mentions defused: every text from a user's artifacts passes
here before it is printed, posted to Slack or GitHub, logged, or sent to an LLM.

The patterns are data, applied in order. Each is linear: a token pattern may only start where its
own character class does not precede it (so a long run is scanned once, not once per offset), its
repeats are possessive, and any other repeat is bounded. `tests/test_redact.py` holds a corpus of
real-looking secrets per provider, the training text that must stay untouched, and a 100 KB
adversarial line per pattern.
"""
from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.model import Diagnosis

_T = r"(?<![A-Za-z0-9_-])"                   # a token starts a run of its own characters
# what names a secret, after a non-letter (so `HF_TOKEN`, `MY_API_KEY`, `aws_session_token` count)
_KEY = (r"(?:secret[_-]?access[_-]?key|access[_-]?key|account[_-]?key|storage[_-]?key|api[_-]?key|apikey"
        r"|secret[_-]?key|private[_-]?key|client[_-]?secret|password|passwd|secret|token)")
# tokenizer settings are not secrets: `pad_token: <pad>`, `max_token: 2048`
_NOT_SPECIAL = r"(?<!pad_)(?<!eos_)(?<!bos_)(?<!unk_)(?<!sep_)(?<!cls_)(?<!mask_)(?<!max_)(?<!num_)"
_SEP = r"""(\\?["']?[ \t]{0,8}[=:][ \t]{0,8})"""   # `=`, `: `, `": "` (also JSON-escaped `\": \"`)
# a value that is a reference or a placeholder, not a secret: `<pad>`, `[secret]`, `${{ secrets.X }}`
_NOT_REF = r"""(?![<\[{($*])"""

_SECRETS = [
    (re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)"),
     "[private-key]"),
    (re.compile(r"(?i)https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]++"),
     "[slack-webhook]"),
    (re.compile(_T + r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
     "[aws-key]"),
    (re.compile(_T + r"(?:gh[pousr]_[A-Za-z0-9]{30,}+|github_pat_[A-Za-z0-9_]{40,}+)"), "[github-token]"),
    (re.compile(_T + r"(?:xox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}+|xapp-[A-Za-z0-9-]{10,}+)"), "[slack-token]"),
    (re.compile(_T + r"hf_[A-Za-z0-9]{30,}+"), "[hf-token]"),
    (re.compile(_T + r"sk-ant-[A-Za-z0-9_-]{20,}+"), "[anthropic-key]"),
    (re.compile(_T + r"sk-(?:proj-)?[A-Za-z0-9_-]{20,}+"), "[openai-key]"),
    (re.compile(_T + r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}+"), "[stripe-key]"),
    (re.compile(_T + r"gl(?:pat|ptt|dt|rt)-[A-Za-z0-9_-]{20,}+"), "[gitlab-token]"),
    (re.compile(_T + r"npm_[A-Za-z0-9]{30,}+"), "[npm-token]"),
    (re.compile(_T + r"AIza[0-9A-Za-z_-]{30,}+"), "[google-key]"),
    (re.compile(_T + r"ya29\.[0-9A-Za-z_-]{20,}+"), "[google-token]"),
    (re.compile(_T + r"eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"), "[jwt]"),
    (re.compile(r"(?i)(?<![A-Za-z0-9-])(authorization[ \t]{0,8}:[ \t]{0,8}"
                r"(?:(?:bearer|basic|token|digest)[ \t]{1,8})?+)"
                r"[A-Za-z0-9._~+/=-]{6,}+"), r"\1[secret]"),
    (re.compile(r"(?i)(?<![A-Za-z0-9])(bearer[ \t]{1,8})[A-Za-z0-9._~+/-]{16,}+=*+"), r"\1[secret]"),
    # user:password@ in any URL, the user possibly empty (`redis://:pw@host`)
    (re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}://[^\s:/@]{0,256}:)[^\s@/]++@"), r"\1[password]@"),
    # `--api-key X`, `--hf-token X` (`--token=X` is the assignment below)
    (re.compile(r"(?i)(?<![A-Za-z0-9-])(--?(?:[a-z0-9]{1,32}[-_]){0,3}(?:api[-_]?key|token|password|passwd|secret"
                r"|access[-_]?key|secret[-_]?key)[ \t]{1,8})" + _NOT_REF + r"(?!-)[^\s'\"]++"), r"\1[secret]"),
    # `"password": "two words"`, `api_key='x'`, JSON-escaped as the agent's brief has it
    (re.compile(r"(?i)(?<![A-Za-z0-9])" + _NOT_SPECIAL + "(" + _KEY + ")" + _SEP + r"""(\\?["'])""" + _NOT_REF
                + r"""[^"'\n\\]{1,200}+(?=\\?["'])"""), r"\1\2\3[secret]"),
    # `WANDB_API_KEY=…`, `AccountKey=…;`, `password: hunter22`, `?access_token=…&`
    (re.compile(r"(?i)(?<![A-Za-z0-9])" + _NOT_SPECIAL + "(" + _KEY + ")" + _SEP + _NOT_REF
                + r"""(?!["'\\])[^\s'"\\,;&]{6,}+"""), r"\1\2[secret]"),
]

# OSC (clipboard writes `ESC ] 52`, hyperlinks `ESC ] 8`) and CSI sequences whole, then any other
# C0/C1 control (tab and newline stay) and the bidi overrides that reorder what a reader sees
_CONTROLS = re.compile(r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*+(?:\x07|\x1b\\|\x9c)?|(?:\x1b\[|\x9b)[0-?]*+[ -/]*+[@-~]?"
                       r"|\x1b[ -~]?|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def redact(text: str) -> str:
    for pattern, repl in _SECRETS:
        text = pattern.sub(repl, text)
    return text


def strip_controls(text: str) -> str:
    return _CONTROLS.sub("", text)


def clean(text: str, *, secrets: bool = True) -> str:
    """One string, safe to show: controls stripped, then (unless `secrets` is False) redacted."""
    text = strip_controls(text)
    return redact(text) if secrets else text


def clean_diagnosis(diagnosis: Diagnosis, *, secrets: bool = True) -> Diagnosis:
    """The output boundary: a copy of a diagnosis with every string in it passed through `clean`.
    Every renderer starts here, so what it prints, posts or serialises has no secret and no control
    character, and JSON stays valid."""
    cleaned: Diagnosis = clean_doc(diagnosis, secrets=secrets)
    return cleaned


def clean_doc(obj, *, secrets: bool = True):
    """A copy of any JSON-like value, or of a dataclass of them (a diagnosis), with every string,
    keys included, passed through `clean`."""
    if isinstance(obj, str):
        return clean(obj, secrets=secrets)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{f.name: clean_doc(getattr(obj, f.name), secrets=secrets)
                                           for f in dataclasses.fields(obj) if f.init})
    if isinstance(obj, dict):
        return {clean_doc(k, secrets=secrets) if isinstance(k, str) else k: clean_doc(v, secrets=secrets)
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_doc(v, secrets=secrets) for v in obj]
    return obj


def slack_escape(text: str) -> str:
    """Slack's three control characters: with them escaped, `<!channel>`, `<@U123>` or a
    `<http://...|link>` in a log can never become a mention or a link."""
    return clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
