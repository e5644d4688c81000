"""The agent's answer is untrusted: every evidence item must name one of the run's artifacts and a
locator, and the number or phrase it quotes must really be there (checked here, by code). Text
that will be posted is redacted, stripped of links outside an allow-list and of images, has its
mentions neutralised and its length capped."""
from __future__ import annotations

import re
from collections.abc import Set

import numpy as np

from analysis.model import AGENT, CODES, SEVERITIES, Evidence, Finding
from bot.redact import redact

LINK_ALLOW = ("pytorch.org", "docs.pytorch.org", "huggingface.co", "github.com/pytorch", "docs.python.org")
_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_LINES = re.compile(r"^lines? (\d+)(?:\s*-\s*(\d+))?$")
_STEPS = re.compile(r"^(?:steps?|index|indices) ([-\d.e+]+)(?:\s*-\s*([-\d.e+]+))?$")
_URL = re.compile(r"!?\[([^\]]*)\]\((\S+?)\)|https?://[^\s)>\]]+")
CAPS = {"issue": 300, "fix": 1500, "expected_impact": 400, "patch": 6000, "text": 400}

SUBMIT = {
    "name": "submit_diagnosis",
    "description": "Your final answer: ranked root causes, each with located evidence read from the artifacts.",
    "input_schema": {
        "type": "object",
        "properties": {
            "root_causes": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "enum": list(CODES)},
                    "issue": {"type": "string"}, "severity": {"type": "string", "enum": list(SEVERITIES)},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "evidence": {"type": "array", "items": {"type": "object", "properties": {
                        "text": {"type": "string"}, "artifact": {"type": "string"}, "locator": {"type": "string"}},
                        "required": ["text", "artifact", "locator"]}},
                    "fix": {"type": "string"}, "expected_impact": {"type": "string"}, "patch": {"type": "string"}},
                "required": ["code", "issue", "severity", "confidence", "evidence", "fix"]}},
            "quick_fixes": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["root_causes"],
    },
}


class Invalid(ValueError):
    """The submission breaks the schema."""


def check_schema(answer: dict) -> None:
    causes = answer.get("root_causes")
    if not isinstance(causes, list) or not causes:
        raise Invalid("root_causes must be a non-empty list")
    for c in causes:
        if not isinstance(c, dict):
            raise Invalid("each root cause must be an object")
        if c.get("code") not in CODES:
            raise Invalid(f"code {c.get('code')!r} is not in the taxonomy")
        if c.get("severity") not in SEVERITIES:
            raise Invalid(f"severity {c.get('severity')!r} is not one of {', '.join(SEVERITIES)}")
        if not isinstance(c.get("confidence"), (int, float)) or not 0 <= c["confidence"] <= 1:
            raise Invalid("confidence must be a number in [0, 1]")
        if not isinstance(c.get("evidence"), list) or not all(
                isinstance(e, dict) and {"text", "artifact", "locator"} <= set(e) for e in c["evidence"]):
            raise Invalid("evidence must be a list of {text, artifact, locator}")


def sanitise(text: str, cap: int) -> str:
    """Redacted, no link outside the allow-list, no image, no mention, capped."""
    def link(m):
        url = m.group(2) or m.group(0)
        if m.group(0).startswith("!") or not any(host in url for host in LINK_ALLOW):
            return (m.group(1) or "") + " [link removed]" if m.group(2) else "[link removed]"
        return m.group(0)
    text = _URL.sub(link, redact(str(text)))
    text = re.sub(r"(?<![\w`])@(?=[A-Za-z0-9])", "@\u200b", text).replace("<!", "<\u200b!")
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _numbers(text: str) -> list[float]:
    out = []
    for m in _NUM.finditer(text):
        try:
            out.append(float(m.group()))
        except ValueError:
            pass
    return out


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-3 * max(abs(a), abs(b))


def _quoted(text: str, target: str, exclude: Set[float] = frozenset()) -> bool:
    """The evidence quotes the target: one of its numbers (other than the locator's own) is there,
    or, with no numbers, a quoted phrase or most of its words."""
    nums = [x for x in _numbers(text) if x not in exclude]
    if nums:
        there = _numbers(target)
        return any(_close(a, b) for a in nums for b in there)
    phrases = re.findall(r"[`'\"]([^`'\"]{6,})[`'\"]", text)
    if phrases:
        return any(p.lower() in target.lower() for p in phrases)
    words = [w for w in re.findall(r"[A-Za-z_]{4,}", text)]
    return bool(words) and sum(w.lower() in target.lower() for w in words) >= max(1, len(words) // 2)


def verified(ev: dict, root, run) -> bool:
    artifact, locator, text = ev.get("artifact", ""), str(ev.get("locator", "")).strip(), str(ev.get("text", ""))
    paths = {a.path: a for a in run.artifacts}
    if artifact not in paths or not locator:
        return False
    m = _LINES.match(locator)
    if m:
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if b < a or b - a > 500:
            return False
        path = (root / artifact).resolve()
        if not path.is_relative_to(root.resolve()) or not path.is_file():
            return False
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line for n, line in enumerate(f, start=1) if a <= n <= b]
        return bool(lines) and _quoted(text, "".join(lines), exclude={float(a), float(b)})
    m = _STEPS.match(locator)
    if m:
        lo, hi = float(m.group(1)), float(m.group(2) or m.group(1))
        series = [s for s in run.metrics.series.values() if s.artifact == artifact]
        values = [f"{v:.6g}" for s in series for v in s.values[(s.steps >= lo) & (s.steps <= hi)] if np.isfinite(v)]
        return bool(values) and _quoted(text, " ".join(values), exclude={lo, hi})
    if locator.startswith("tensor"):
        names = {t.name for c in run.checkpoints if c.artifact == artifact for t in c.tensors}
        return any(n in locator for n in names)
    return False


def clean_answer(answer: dict, root, run) -> tuple[list[Finding], int]:
    """Root causes whose evidence checks out (unverified items removed; a cause left with none is
    dropped), sanitised; and how many evidence items were removed."""
    out, removed = [], 0
    for c in answer["root_causes"]:
        good = []
        for ev in c["evidence"]:
            if verified(ev, root, run):
                good.append(Evidence(sanitise(ev["text"], CAPS["text"]), ev["artifact"], str(ev["locator"])))
            else:
                removed += 1
        if not good:
            continue
        out.append(Finding(
            code=c["code"], issue=sanitise(c["issue"], CAPS["issue"]), severity=c["severity"],
            confidence=round(float(c["confidence"]), 2), evidence=good, fix=sanitise(c.get("fix", ""), CAPS["fix"]),
            expected_impact=sanitise(c["expected_impact"], CAPS["expected_impact"]) if c.get("expected_impact") else "",
            patch=redact(c["patch"])[: CAPS["patch"]] if c.get("patch") else None, analyzer=AGENT))
    return out, removed
