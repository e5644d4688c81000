"""A comparison of two runs (`analysis.compare.Comparison`) as terminal text, GitHub markdown, Slack
blocks and JSON (`Comparison.to_dict()`, serialised here once). Each starts at the output boundary
(`clean_doc`), like the diagnosis renderers: values, keys and code from the runs are redacted and
made inert."""
from __future__ import annotations

import json

from analysis.compare import Comparison, ConfigDiff, Explanation, describe_parting
from bot.redact import clean_doc
from bot.redact import slack_escape as esc
from bot.render.md_safe import code_block, code_span, inline

STATUS = {"explained": "Difference found that explains the failure",
          "unexplained": "Differences found; none is clearly the cause",
          "no_difference": "No difference found"}
CONFIG_ROWS = 20                 # config keys listed; the rest are counted
SLACK_SECTION = 2900
MARKER = "<!-- mltd:compare -->"


def _cleaned(comparison: Comparison, *, redact: bool = True) -> Comparison:
    """The output boundary: a copy with every string from the runs cleaned (redacted unless not)."""
    cleaned: Comparison = clean_doc(comparison, secrets=redact)
    return cleaned


def _runs(c: Comparison) -> str:
    return f"run {c.a.id} (A) vs run {c.b.id} (B)"


def _diagnosis(c: Comparison) -> str | None:
    d = c.diagnosis
    if not d or not d.code:
        return None
    return f"A's diagnosis: {d.code} ({d.confidence:.2f}): {d.issue}"


def _config_rows(c: Comparison) -> list[ConfigDiff]:
    """The differing keys, most explaining first."""
    order = {e.subject: i for i, e in enumerate(c.explanations) if e.kind == "config"}
    return sorted(c.config, key=lambda d: order.get(d.key, len(order)))


def _top(c: Comparison) -> Explanation | None:
    return c.explanations[0] if c.explanations and c.status == "explained" else None


def _no_config(c: Comparison) -> str:
    if any("config keys not compared" in n for n in c.notes):
        return "not compared (see the notes)"
    return "no key differs"


def _no_code(c: Comparison) -> str:
    if any("code not compared" in n for n in c.notes):
        return "not compared (see the notes)"
    return "no line differs in the files both runs hold"


def render_compare_json(comparison: Comparison, *, redact: bool = True) -> str:
    doc = clean_doc(comparison.to_dict(), secrets=redact)
    return json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n"


def render_compare_text(comparison: Comparison, *, redact: bool = True) -> str:
    c = _cleaned(comparison, redact=redact)
    out = [f"mltd compare · {_runs(c)} · {STATUS[c.status]}"]
    if line := _diagnosis(c):
        out.append(line)
    top = _top(c)
    out += ["", f"What explains it: {top.why}  — {top.where}" if top else
            "What explains it: no difference is implicated by A's diagnosis (the differences are listed below)"]
    first = c.first_parting
    out += ["", f"Curves part at step {first.step:g} ({first.metric})" if first else "Curves: they never part"]
    out += [f"  • {describe_parting(p)}" + (f"  — {p.where}" if p.where else "") for p in c.listed_partings]
    rows = _config_rows(c)
    out += ["", f"Config keys that differ ({len(rows)}):" if rows else "Config: " + _no_config(c)]
    if rows:
        shown = rows[:CONFIG_ROWS]
        w = max(len(r.key) for r in shown)
        wa = max(len(r.a) for r in shown)
        for r in shown:
            out.append(f"  {r.key:<{w}}  A {r.a:<{wa}}  B {r.b}  — {r.where()}")
        if len(rows) > CONFIG_ROWS:
            out.append(f"  … and {len(rows) - CONFIG_ROWS} more")
    changed = [f for f in c.code if not f.only_in]
    out += ["", f"Code that differs ({len(changed)} file(s)):" if changed else "Code: " + _no_code(c)]
    for f in changed:
        out.append(f"  {f.artifact}: +{f.added} -{f.removed}")
        out += ["    " + line for line in f.diff.splitlines()]
    for f in c.code:
        if f.only_in:
            out.append(f"  {f.artifact}: only in run {c.side(f.only_in).id}")
    if c.notes:
        out += [""] + [f"? {n}" for n in c.notes]
    return "\n".join(out).rstrip() + "\n"


def render_compare_markdown(comparison: Comparison, *, redact: bool = True) -> str:
    c = _cleaned(comparison, redact=redact)
    out = [f"### mltd compare: {STATUS[c.status]} — run {code_span(c.a.id)} (A) vs run "
           f"{code_span(c.b.id)} (B)", ""]
    if line := _diagnosis(c):
        out += [inline(line), ""]
    top = _top(c)
    out += [f"**What explains it:** {inline(top.why)} — {code_span(top.where)}" if top else
            "**What explains it:** no difference is implicated by A's diagnosis; the differences are below.", ""]
    first = c.first_parting
    out.append(f"**Curves part at step {first.step:g}** ({code_span(first.metric)})" if first else
               "**Curves:** they never part")
    out += [f"- {inline(describe_parting(p))}" + (f" — {code_span(p.where)}" if p.where else "")
            for p in c.listed_partings]
    rows = _config_rows(c)
    out += ["", f"**Config keys that differ ({len(rows)})**" if rows else f"**Config:** {_no_config(c)}"]
    if rows:
        out += ["", "| key | A | B | where |", "|---|---|---|---|"]
        out += [f"| {code_span(r.key, cell=True)} | {code_span(r.a, cell=True)} | {code_span(r.b, cell=True)} "
                f"| {code_span(r.where(), cell=True)} |" for r in rows[:CONFIG_ROWS]]
        if len(rows) > CONFIG_ROWS:
            out.append(f"\n… and {len(rows) - CONFIG_ROWS} more")
    changed = [f for f in c.code if not f.only_in]
    out += ["", f"**Code that differs ({len(changed)} file(s))**" if changed else f"**Code:** {_no_code(c)}"]
    for f in changed:
        out += ["", f"<details><summary>{inline(f.artifact)}: +{f.added} -{f.removed}</summary>", "",
                *code_block(f.diff, "diff"), "", "</details>"]
    out += [f"- {code_span(f.artifact)}: only in run {code_span(c.side(f.only_in).id)}"
            for f in c.code if f.only_in]
    if c.notes:
        out += [""] + [f"> {inline(n)}" for n in c.notes]
    return "\n".join(out).rstrip() + "\n"


def _section(text: str) -> dict:
    if len(text) > SLACK_SECTION:
        text = text[: SLACK_SECTION - 20] + "\n… (truncated)"
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def render_compare_slack(comparison: Comparison) -> tuple[list[dict], str]:
    """(blocks, fallback text); every text from the runs escaped and redacted."""
    c = _cleaned(comparison)
    status = STATUS[c.status]
    head = f"*mltd compare* · run `{esc(c.a.id)}` (A) vs run `{esc(c.b.id)}` (B) · {status}"
    if line := _diagnosis(c):
        head += f"\n{esc(line)}"
    blocks = [_section(head)]
    top = _top(c)
    blocks.append(_section(f"*What explains it:* {esc(top.why)} — _{esc(top.where)}_" if top else
                           "*What explains it:* no difference is implicated by A's diagnosis; the differences are "
                           "below."))
    first = c.first_parting
    curves = [f"*Curves part at step {first.step:g}* (`{esc(first.metric)}`)" if first else
              "*Curves:* they never part"]
    curves += [f"• {esc(describe_parting(p))}" + (f" — _{esc(p.where)}_" if p.where else "")
               for p in c.listed_partings]
    blocks.append(_section("\n".join(curves)))
    rows = _config_rows(c)
    if rows:
        table = "\n".join(f"{r.key}: A {r.a} | B {r.b} ({r.where()})" for r in rows[:CONFIG_ROWS])
        more = f"\n… and {len(rows) - CONFIG_ROWS} more" if len(rows) > CONFIG_ROWS else ""
        body = esc(table).replace("```", "ˋˋˋ")[: SLACK_SECTION - 120]
        blocks.append(_section(f"*Config keys that differ ({len(rows)}):*\n```{body}```{more}"))
    changed = [f for f in c.code if not f.only_in]
    for f in changed[:3]:
        diff = esc(f.diff).replace("```", "ˋˋˋ")[: SLACK_SECTION - 200]
        blocks.append(_section(f"*{esc(f.artifact)}*: +{f.added} -{f.removed}\n```{diff}```"))
    extra = [] if rows else ["Config: " + esc(_no_config(c))]
    extra += [] if changed else ["Code: " + esc(_no_code(c))]
    extra += [f"{esc(f.artifact)}: only in run {esc(c.side(f.only_in).id)}" for f in c.code if f.only_in]
    extra += [esc(n) for n in c.notes]
    if extra:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "\n".join(extra)[:SLACK_SECTION]}]})
    text = f"mltd compare: {status}" + (f". {top.subject}" if top else "")
    return blocks, esc(text)[:3000]
