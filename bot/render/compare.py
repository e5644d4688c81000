"""A comparison of two runs (`analysis.compare.Comparison.to_dict()`) as terminal text, GitHub
markdown, Slack blocks and JSON. Each starts at the output boundary (`clean_doc`), like the
diagnosis renderers: values, keys and code from the runs are redacted and made inert."""
from __future__ import annotations

import json

from bot.redact import clean_doc
from bot.redact import slack_escape as esc
from bot.render.md_safe import code_block, code_span, inline

STATUS = {"explained": "Difference found that explains the failure",
          "unexplained": "Differences found; none is clearly the cause",
          "no_difference": "No difference found"}
CONFIG_ROWS = 20                 # config keys listed; the rest are counted
SLACK_SECTION = 2900
MARKER = "<!-- mltd:compare -->"


def _runs(doc: dict) -> str:
    return f"run {doc['a']['id']} (A) vs run {doc['b']['id']} (B)"


def _diagnosis(doc: dict) -> str | None:
    d = doc.get("diagnosis")
    if not d or not d.get("code"):
        return None
    return f"A's diagnosis: {d['code']} ({d['confidence']:.2f}): {d['issue']}"


def _config_rows(doc: dict) -> list[dict]:
    """The differing keys, most explaining first."""
    order = {e["subject"]: i for i, e in enumerate(doc["explanations"]) if e["kind"] == "config"}
    return sorted(doc["config"], key=lambda d: order.get(d["key"], len(order)))


def _top(doc: dict) -> dict | None:
    return doc["explanations"][0] if doc["explanations"] and doc["status"] == "explained" else None


def _no_config(doc: dict) -> str:
    if any("config keys not compared" in n for n in doc["notes"]):
        return "not compared (see the notes)"
    return "no key differs"


def _no_code(doc: dict) -> str:
    if any("code not compared" in n for n in doc["notes"]):
        return "not compared (see the notes)"
    return "no line differs in the files both runs hold"


def render_compare_json(doc: dict, *, redact: bool = True) -> str:
    return json.dumps(clean_doc(doc, secrets=redact), indent=2, allow_nan=False, default=str) + "\n"


def render_compare_text(doc: dict, *, redact: bool = True) -> str:
    doc = clean_doc(doc, secrets=redact)
    out = [f"mltd compare · {_runs(doc)} · {STATUS[doc['status']]}"]
    if line := _diagnosis(doc):
        out.append(line)
    top = _top(doc)
    out += ["", f"What explains it: {top['why']}  — {top['where']}" if top else
            "What explains it: no difference is implicated by A's diagnosis (the differences are listed below)"]
    first = doc["first_parting"]
    out += ["", f"Curves part at step {first['step']:g} ({first['metric']})" if first else "Curves: they never part"]
    out += [f"  • {p['text']}" + (f"  — {p['where']}" if p["where"] else "") for p in doc["partings"]]
    rows = _config_rows(doc)
    out += ["", f"Config keys that differ ({len(rows)}):" if rows else "Config: " + _no_config(doc)]
    if rows:
        shown = rows[:CONFIG_ROWS]
        w = max(len(r["key"]) for r in shown)
        wa = max(len(r["a"]) for r in shown)
        for r in shown:
            out.append(f"  {r['key']:<{w}}  A {r['a']:<{wa}}  B {r['b']}  — {r['where']}")
        if len(rows) > CONFIG_ROWS:
            out.append(f"  … and {len(rows) - CONFIG_ROWS} more")
    changed = [c for c in doc["code"] if not c["only_in"]]
    out += ["", f"Code that differs ({len(changed)} file(s)):" if changed else "Code: " + _no_code(doc)]
    for c in changed:
        out.append(f"  {c['artifact']}: +{c['added']} -{c['removed']}")
        out += ["    " + line for line in c["diff"].splitlines()]
    for c in doc["code"]:
        if c["only_in"]:
            out.append(f"  {c['artifact']}: only in run {doc[c['only_in']]['id']}")
    if doc["notes"]:
        out += [""] + [f"? {n}" for n in doc["notes"]]
    return "\n".join(out).rstrip() + "\n"


def render_compare_markdown(doc: dict, *, redact: bool = True) -> str:
    doc = clean_doc(doc, secrets=redact)
    out = [f"### mltd compare: {STATUS[doc['status']]} — run {code_span(doc['a']['id'])} (A) vs run "
           f"{code_span(doc['b']['id'])} (B)", ""]
    if line := _diagnosis(doc):
        out += [inline(line), ""]
    top = _top(doc)
    out += [f"**What explains it:** {inline(top['why'])} — {code_span(top['where'])}" if top else
            "**What explains it:** no difference is implicated by A's diagnosis; the differences are below.", ""]
    first = doc["first_parting"]
    out.append(f"**Curves part at step {first['step']:g}** ({code_span(first['metric'])})" if first else
               "**Curves:** they never part")
    out += [f"- {inline(p['text'])}" + (f" — {code_span(p['where'])}" if p["where"] else "") for p in doc["partings"]]
    rows = _config_rows(doc)
    out += ["", f"**Config keys that differ ({len(rows)})**" if rows else f"**Config:** {_no_config(doc)}"]
    if rows:
        out += ["", "| key | A | B | where |", "|---|---|---|---|"]
        out += [f"| {code_span(r['key'], cell=True)} | {code_span(r['a'], cell=True)} | {code_span(r['b'], cell=True)} "
                f"| {code_span(r['where'], cell=True)} |" for r in rows[:CONFIG_ROWS]]
        if len(rows) > CONFIG_ROWS:
            out.append(f"\n… and {len(rows) - CONFIG_ROWS} more")
    changed = [c for c in doc["code"] if not c["only_in"]]
    out += ["", f"**Code that differs ({len(changed)} file(s))**" if changed else f"**Code:** {_no_code(doc)}"]
    for c in changed:
        out += ["", f"<details><summary>{inline(c['artifact'])}: +{c['added']} -{c['removed']}</summary>", "",
                *code_block(c["diff"], "diff"), "", "</details>"]
    out += [f"- {code_span(c['artifact'])}: only in run {code_span(doc[c['only_in']]['id'])}"
            for c in doc["code"] if c["only_in"]]
    if doc["notes"]:
        out += [""] + [f"> {inline(n)}" for n in doc["notes"]]
    return "\n".join(out).rstrip() + "\n"


def _section(text: str) -> dict:
    if len(text) > SLACK_SECTION:
        text = text[: SLACK_SECTION - 20] + "\n… (truncated)"
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def render_compare_slack(doc: dict) -> tuple[list[dict], str]:
    """(blocks, fallback text); every text from the runs escaped and redacted."""
    doc = clean_doc(doc)
    status = STATUS[doc["status"]]
    head = f"*mltd compare* · run `{esc(doc['a']['id'])}` (A) vs run `{esc(doc['b']['id'])}` (B) · {status}"
    if line := _diagnosis(doc):
        head += f"\n{esc(line)}"
    blocks = [_section(head)]
    top = _top(doc)
    blocks.append(_section(f"*What explains it:* {esc(top['why'])} — _{esc(top['where'])}_" if top else
                           "*What explains it:* no difference is implicated by A's diagnosis; the differences are "
                           "below."))
    first = doc["first_parting"]
    curves = [f"*Curves part at step {first['step']:g}* (`{esc(first['metric'])}`)" if first else
              "*Curves:* they never part"]
    curves += [f"• {esc(p['text'])}" + (f" — _{esc(p['where'])}_" if p["where"] else "") for p in doc["partings"]]
    blocks.append(_section("\n".join(curves)))
    rows = _config_rows(doc)
    if rows:
        table = "\n".join(f"{r['key']}: A {r['a']} | B {r['b']} ({r['where']})" for r in rows[:CONFIG_ROWS])
        more = f"\n… and {len(rows) - CONFIG_ROWS} more" if len(rows) > CONFIG_ROWS else ""
        body = esc(table).replace("```", "ˋˋˋ")[: SLACK_SECTION - 120]
        blocks.append(_section(f"*Config keys that differ ({len(rows)}):*\n```{body}```{more}"))
    changed = [c for c in doc["code"] if not c["only_in"]]
    for c in changed[:3]:
        diff = esc(c["diff"]).replace("```", "ˋˋˋ")[: SLACK_SECTION - 200]
        blocks.append(_section(f"*{esc(c['artifact'])}*: +{c['added']} -{c['removed']}\n```{diff}```"))
    extra = [] if rows else ["Config: " + esc(_no_config(doc))]
    extra += [] if changed else ["Code: " + esc(_no_code(doc))]
    extra += [f"{esc(c['artifact'])}: only in run {esc(doc[c['only_in']]['id'])}" for c in doc["code"] if c["only_in"]]
    extra += [esc(n) for n in doc["notes"]]
    if extra:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "\n".join(extra)[:SLACK_SECTION]}]})
    text = f"mltd compare: {status}" + (f". {top['subject']}" if top else "")
    return blocks, esc(text)[:3000]
