"""The specialist agent: after the analyzers, an LLM (Anthropic's Messages API with tool use, or
Bedrock) investigates the run with read-only tools and submits a diagnosis, which is checked by
code before anyone sees it. Without a key, or when the API fails, the analyzers' diagnosis stands
and the reply says so in one line."""
from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from analysis.model import Diagnosis, Finding
from bot.agent.tools import TOOLS, RunTools
from bot.agent.verify import SUBMIT, Invalid, check_schema, clean_answer, sanitise
from bot.redact import clean_doc, redact
from bot.settings import Settings

log = logging.getLogger("mltd.agent")
GRAVE = ("critical", "high")       # the severities a false alarm is made of
# USD per million tokens: input, output, cache write, cache read (Claude Sonnet list prices)
PRICES = {"sonnet": (3.0, 15.0, 3.75, 0.30), "opus": (15.0, 75.0, 18.75, 1.50), "haiku": (1.0, 5.0, 1.25, 0.10)}


def prompt(name: str = "prompt.md") -> str:
    return resources.files("bot.agent").joinpath(name).read_text()


def configured(settings: Settings) -> bool:
    return settings.agent_provider == "bedrock" or bool(settings.anthropic_api_key)


def make_client(settings: Settings):
    import anthropic

    if settings.agent_provider == "bedrock":       # boto3's credentials and region; AWS_ENDPOINT_URL_BEDROCK_RUNTIME
        import os

        return anthropic.AnthropicBedrock(max_retries=settings.agent_retries, timeout=settings.agent_time_limit_s,
                                          base_url=os.environ.get("AWS_ENDPOINT_URL_BEDROCK_RUNTIME") or None)
    return anthropic.Anthropic(api_key=settings.anthropic_api_key, max_retries=settings.agent_retries,
                               timeout=settings.agent_time_limit_s)   # ANTHROPIC_BASE_URL is read by the SDK


def _cost(model: str, usage: dict) -> float:
    p = next((v for k, v in PRICES.items() if k in model), PRICES["sonnet"])
    return round((usage["input"] * p[0] + usage["output"] * p[1] + usage["cache_write"] * p[2]
                  + usage["cache_read"] * p[3]) / 1e6, 5)


def _brief(diagnosis: Diagnosis) -> str:
    """The first user turn: what was asked and what the analyzers found, as untrusted data."""
    keys = ("code", "issue", "severity", "confidence", "evidence", "fix")
    summary = {"symptoms": diagnosis.symptoms, "status": diagnosis.status,
               "root_causes": [{k: c.to_dict()[k] for k in keys} for c in diagnosis.root_causes[:5]]}
    return ("Diagnose this training run. The analyzers' findings and the user's words follow; investigate with the "
            "tools, then call submit_diagnosis.\n<untrusted-data tool=\"analyzers\">\n"
            + json.dumps(clean_doc(summary), indent=1, default=str)[:12000] + "\n</untrusted-data>")


def review(root: Path, run, diagnosis: Diagnosis, settings: Settings, client=None) -> Diagnosis:
    """The diagnosis to post (a new one; the one given is left as it is): the agent's, verified, or
    the analyzers' with a one-line note."""
    if not configured(settings):
        return replace(diagnosis, agent_note="Analyzers only: the specialist agent is off (no ANTHROPIC_API_KEY).")
    usage = {"input": 0, "output": 0, "cache_write": 0, "cache_read": 0}
    info = {"model": settings.agent_model, "turns": 0}
    try:
        causes, quick, removed = _investigate(root, run, diagnosis, settings, client or make_client(settings), usage,
                                              info)
    except Exception as exc:                # the API down, overloaded past its retries, or a bad answer twice
        log.warning("agent fell back to the analyzers: %s", redact(f"{type(exc).__name__}: {exc}")[:300])
        causes, quick, removed = None, None, 0
        info["error"] = type(exc).__name__
    info.update(tokens=usage, cost_usd=_cost(settings.agent_model, usage), evidence_removed=removed)
    reviewed = replace(diagnosis, engine={**diagnosis.engine, "agent": info})
    if not causes:
        reviewed.agent_note = ("Analyzers only: the specialist agent " +
                               ("was unavailable" if "error" in info else "gave no verifiable answer") + ".")
        return reviewed
    # the agent's verified causes first; the analyzers' causes it did not speak to stay below them
    causes = _corroborated(causes, diagnosis.root_causes)
    reviewed.root_causes = _coherent(_merged(causes, diagnosis.root_causes))
    if quick:
        reviewed.quick_fixes = [sanitise(q, 200) for q in quick[:4]]
    return reviewed                         # bot.pipeline states the status these causes earn


def _merged(causes: list[Finding], analyzers: list[Finding]) -> list[Finding]:
    """The agent's causes first, then the analyzers' it did not speak to, as they ranked them; the
    analyzers' own first reading (a fault, or that the run is healthy) keeps a place in the top three
    (third, where the agent named three others): where the two readers disagree, both are shown."""
    spoken = {c.code for c in causes}
    rest = [c for c in analyzers if c.code not in spoken]
    if len(causes) >= 3 and analyzers and analyzers[0].code not in spoken:
        return causes[:2] + rest[:1] + causes[2:] + rest[1:]
    return causes + rest


def _corroborated(causes: list[Finding], analyzers: list[Finding]) -> list[Finding]:
    """A grave fault (critical, high) is said as grave where the analyzers, which read every number and
    line, found something grave themselves (a crash, a NaN, a divergence, whatever its cause); a grave
    claim none of them corroborates is the model's judgment of a run the rules saw nothing wrong in,
    said as medium: a likely problem the artifacts do not prove. The ranking is the agent's either way."""
    if any(c.code != "healthy" and c.severity in GRAVE for c in analyzers):
        return causes
    return _at_most_medium(causes)


def _coherent(causes: list[Finding]) -> list[Finding]:
    """A reply that leads with "the run is healthy" flags nothing grave below it: what it lists after
    are possibilities the agent weighed and put second, so none of them is said as critical or high
    (copies: the analyzers' own findings stay as they ranked them)."""
    if not causes or causes[0].code != "healthy":
        return causes
    return causes[:1] + _at_most_medium(causes[1:])


def _at_most_medium(causes: list[Finding]) -> list[Finding]:
    """Copies of the grave ones said as medium; the others as they are."""
    return [replace(c, severity="medium") if c.severity in GRAVE else c for c in causes]


def _investigate(root: Path, run, diagnosis: Diagnosis, settings: Settings, client, usage: dict,
                 info: dict) -> tuple[list[Finding] | None, list[str] | None, int]:
    tools = RunTools(root, run, diagnosis)
    # the static prefix (system prompt, tool definitions) is cached across turns and jobs
    system = [{"type": "text", "text": prompt(), "cache_control": {"type": "ephemeral"}}]
    defs = [dict(t) for t in TOOLS] + [dict(SUBMIT, cache_control={"type": "ephemeral"})]
    messages: list[dict[str, Any]] = [{"role": "user", "content": _brief(diagnosis)}]
    deadline = time.monotonic() + settings.agent_time_limit_s
    retried = False
    for turn in range(settings.agent_max_turns):
        if time.monotonic() > deadline or usage["input"] + usage["output"] > settings.agent_max_tokens:
            break
        resp = client.messages.create(model=settings.agent_model, max_tokens=4096, system=system, tools=defs,
                                      messages=messages)
        info["turns"] = turn + 1
        u = resp.usage
        usage["input"] += u.input_tokens or 0
        usage["output"] += u.output_tokens or 0
        usage["cache_write"] += getattr(u, "cache_creation_input_tokens", 0) or 0
        usage["cache_read"] += getattr(u, "cache_read_input_tokens", 0) or 0
        blocks = [b.model_dump(exclude_none=True) for b in resp.content]
        messages.append({"role": "assistant", "content": blocks})
        calls = [b for b in blocks if b.get("type") == "tool_use"]
        submit = next((b for b in calls if b["name"] == "submit_diagnosis"), None)
        if submit is not None:
            try:
                check_schema(submit["input"])
            except Invalid as exc:
                if retried:
                    raise
                retried = True
                refusal = {"type": "tool_result", "tool_use_id": submit["id"], "is_error": True,
                           "content": f"Invalid submission: {exc}. Fix it and call submit_diagnosis again."}
                messages.append({"role": "user", "content": [refusal]})
                continue
            causes, removed = clean_answer(submit["input"], root, run)
            return causes, submit["input"].get("quick_fixes"), removed
        if not calls:
            messages.append({"role": "user", "content": "Call submit_diagnosis with your answer now."})
            continue
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b["id"], "content": tools.call(b["name"], b.get("input") or {})}
            for b in calls]})
    return None, None, 0


ANSWER_MAX = 3000


def answer(root: Path, run, doc: Diagnosis, question: str, settings: Settings, client=None) -> tuple[str | None, dict]:
    """A follow-up question answered by the agent with its read-only tools over the cached run,
    given the thread's earlier diagnosis: the answer (sanitised), or None when the agent is off,
    failed, or gave none; and what it cost."""
    if not configured(settings):
        return None, {}
    usage = {"input": 0, "output": 0, "cache_write": 0, "cache_read": 0}
    info: dict[str, Any] = {"model": settings.agent_model, "turns": 0}
    try:
        text = _converse(root, run, doc, question, settings, client or make_client(settings), usage, info)
    except Exception as exc:                # the API down or overloaded past its retries: the analyzers answer
        log.warning("agent follow-up fell back to the analyzers: %s", redact(f"{type(exc).__name__}: {exc}")[:300])
        text, info["error"] = None, type(exc).__name__
    info.update(tokens=usage, cost_usd=_cost(settings.agent_model, usage))
    return (sanitise(text, ANSWER_MAX) if text else None), info


def _converse(root: Path, run, doc: Diagnosis, question: str, settings: Settings, client, usage: dict,
              info: dict) -> str | None:
    tools = RunTools(root, run, doc)
    system = [{"type": "text", "text": prompt("followup.md"), "cache_control": {"type": "ephemeral"}}]
    keys = ("code", "issue", "severity", "confidence", "evidence")
    earlier = {"status": doc.status, "root_causes": [{k: c.to_dict()[k] for k in keys} for c in doc.root_causes[:5]],
               "tell_apart": doc.tell_apart}
    messages: list[dict[str, Any]] = [{"role": "user", "content": (
        "<untrusted-data tool=\"earlier-diagnosis\">\n" + json.dumps(clean_doc(earlier), indent=1, default=str)[:12000]
        + "\n</untrusted-data>\n<untrusted-data tool=\"question\">\n" + redact(question)[:2000]
        + "\n</untrusted-data>")}]
    deadline = time.monotonic() + settings.agent_time_limit_s
    for turn in range(settings.agent_max_turns):
        if time.monotonic() > deadline or usage["input"] + usage["output"] > settings.agent_max_tokens:
            break
        resp = client.messages.create(model=settings.agent_model, max_tokens=2048, system=system,
                                      tools=[dict(t) for t in TOOLS], messages=messages)
        info["turns"] = turn + 1
        u = resp.usage
        usage["input"] += u.input_tokens or 0
        usage["output"] += u.output_tokens or 0
        usage["cache_write"] += getattr(u, "cache_creation_input_tokens", 0) or 0
        usage["cache_read"] += getattr(u, "cache_read_input_tokens", 0) or 0
        blocks = [b.model_dump(exclude_none=True) for b in resp.content]
        calls = [b for b in blocks if b.get("type") == "tool_use"]
        if not calls:
            return "\n".join(b["text"] for b in blocks if b.get("type") == "text").strip() or None
        messages.append({"role": "assistant", "content": blocks})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b["id"], "content": tools.call(b["name"], b.get("input") or {})}
            for b in calls]})
    return None
