"""GitHub-flavoured markdown: the ranked table, evidence, fixes and patches in ```diff blocks.

Everything from the run goes through `md_safe` (escaped prose, code spans, long-enough fences), so
the same markdown can be posted on a pull request as is (`deploy/examples/diagnose-on-failure.yml`
does)."""
from __future__ import annotations

from bot.redact import clean_doc
from bot.render.common import STATUS_LINE, artifact_problems, incomplete_line, where
from bot.render.md_safe import code_block, code_span, inline


def render_markdown(doc: dict, *, redact: bool = True) -> str:
    doc = clean_doc(doc, secrets=redact)
    run = doc["run"]
    out = [f"### mltd: {STATUS_LINE[doc['status']]} — run {code_span(run['id'])}", ""]
    if line := incomplete_line(doc):
        out += [f"**{inline(line)}**", ""]
    if doc["symptoms"]:
        out += ["**Symptoms:** " + "; ".join(map(inline, doc["symptoms"])), ""]
    causes = doc["root_causes"]
    if causes:
        out += ["| # | Root cause | Code | Severity | Confidence |", "|---|---|---|---|---|"]
        for i, c in enumerate(causes, 1):
            out.append(f"| {i} | {inline(c['issue'], cell=True)} | {code_span(c['code'], cell=True)} | "
                       f"{inline(c['severity'], cell=True)} | {c['confidence']:.2f} |")
        out.append("")
    for i, c in enumerate(causes, 1):
        out += [f"#### {i}. {inline(c['issue'])}", ""]
        for ev in c["evidence"]:
            out.append(f"- {inline(ev['text'])} — {code_span(where(ev))}")
        out += ["", f"**Fix:** {inline(c['fix'])}"]
        if c.get("expected_impact"):
            out.append(f"**Expected impact:** {inline(c['expected_impact'])}")
        if c.get("patch"):
            out += ["", "<details><summary>Suggested patch (not applied)</summary>", "",
                    *code_block(c["patch"], "diff"), "", "</details>"]
        out.append("")
    if doc["quick_fixes"]:
        out += ["**Quick fixes:** " + "; ".join(map(inline, doc["quick_fixes"])), ""]
    perf = doc.get("engine", {}).get("performance") or []
    if perf:
        out += ["**Speed:**"] + [f"- {inline(p['text'])} — {code_span(where(p))}" for p in perf] + [""]
    problems = artifact_problems(doc)
    if problems:
        out += ["**Artifacts with problems:**"] + [f"- {inline(p)}" for p in problems] + [""]
    if doc["missing_artifacts"]:
        out += ["**Would settle it:** " + "; ".join(map(inline, doc["missing_artifacts"])), ""]
    if doc.get("tell_apart"):
        out += ["**Would tell them apart:** " + inline(doc["tell_apart"]), ""]
    out += [f"> {inline(q)}" for q in doc["questions"]]
    if doc.get("engine", {}).get("agent_note"):
        out += ["", f"<sub>{inline(doc['engine']['agent_note'])}</sub>"]
    return "\n".join(out).rstrip() + "\n"
