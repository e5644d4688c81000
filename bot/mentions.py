"""What a mention asks: which run, and what the user saw."""
from __future__ import annotations

import re
from dataclasses import dataclass

_USER = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_LINK = re.compile(r"<((?:https?|s3)://[^>|]+)(?:\|[^>]*)?>")
_S3 = re.compile(r"\bs3://[a-z0-9][a-z0-9.\-]{1,62}/?[^\s<>|]*")
_GH_RUN = re.compile(r"https://[^\s/]+/[^\s/]+/[^\s/]+/actions/runs/\d+(?:/attempts/\d+)?")
_RUN = re.compile(r"\brun\s*(?:#\s*|no\.\s*|number\s+)?([A-Za-z0-9][A-Za-z0-9._\-]{0,99})", re.I)
RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,99}$")
_WORDS_NOT_RUNS = {"the", "a", "my", "this", "that", "it", "was", "is", "has", "did", "diverge", "diverged", "crash",
                   "crashed", "fail", "failed", "fine", "ok"}


@dataclass
class Ask:
    run: str | None          # an s3:// URI, a run name, or a GitHub Actions run URL
    kind: str | None         # "s3" | "name" | "github"
    symptom: str             # the rest of the message, as the user wrote it


def parse(text: str) -> Ask:
    text = _USER.sub("", text or "")
    text = _LINK.sub(r"\1", text).strip()
    for pattern, kind in ((_S3, "s3"), (_GH_RUN, "github")):
        m = pattern.search(text)
        if m:
            return Ask(m.group(0).rstrip(".,;:!?)"), kind, _clean(text[: m.start()] + text[m.end():]))
    for m in _RUN.finditer(text):
        name = m.group(1).rstrip(".,;:!?)")
        if name.lower() not in _WORDS_NOT_RUNS and RUN_NAME.match(name):
            return Ask(name, "name", _clean(text[: m.start()] + text[m.end():]))
    return Ask(None, None, _clean(text))


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" ,.")


@dataclass
class CompareAsk:
    a: Ask                   # the run that failed
    b: Ask                   # the run to compare it with

    def params(self) -> dict:
        """The request params of a comparison (a mention's or `/mltd compare`'s alike): run A as the
        request's run, both sides under `compare` (bot/compare_jobs.py)."""
        sides = {"a": {"run": self.a.run, "kind": self.a.kind}, "b": {"run": self.b.run, "kind": self.b.kind}}
        return {"run": self.a.run, "kind": self.a.kind, "symptom": self.a.symptom, "compare": sides}


_REF = r"(?:run\s*(?:#\s*|no\.\s*|number\s+)?)?(s3://[^\s<>|]+|#?[A-Za-z0-9][A-Za-z0-9._\-]{0,99})"
_COMPARE = re.compile(rf"\b(?:compare|diff)\s+{_REF}\s*,?\s+(?:(?:with|to|against|and|vs\.?|versus)\s+)?{_REF}",
                      re.I)
_CONNECTORS = {"with", "to", "against", "and", "vs", "vs.", "versus", "run", "runs"}


def parse_compare(text: str) -> CompareAsk | None:
    """"compare run 42 with run 41", "compare 42 41", "diff run 42 against 41" (either may be an
    s3:// location): the two runs, the failing one first; None when the text asks no comparison."""
    text = _LINK.sub(r"\1", _USER.sub("", text or "")).strip()
    m = _COMPARE.search(text)
    if not m:
        return None
    refs = [ref.rstrip(".,;:!?)").lstrip("#") for ref in m.groups()]
    if any(r.lower() in _WORDS_NOT_RUNS | _CONNECTORS or not (r.startswith("s3://") or RUN_NAME.match(r))
           for r in refs):
        return None
    rest = _clean(text[: m.start()] + text[m.end():])
    a, b = (Ask(r, "s3" if r.startswith("s3://") else "name", rest) for r in refs)
    return CompareAsk(a, b)
