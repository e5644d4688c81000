"""GitHub-flavoured markdown: the ranked table, evidence, fixes and patches in ```diff blocks.

Everything from the run goes through `md_safe` (escaped prose, code spans, long-enough fences), so
the same markdown can be posted on a pull request as is (`deploy/examples/diagnose-on-failure.yml`
does)."""
from __future__ import annotations

from analysis.model import Diagnosis
from bot.redact import clean_diagnosis
from bot.render.common import STATUS_LINE, artifact_problems, incomplete_line, reader, where
from bot.render.md_safe import code_block, code_span, inline


def render_markdown(diagnosis: Diagnosis, *, redact: bool = True) -> str:
    d = clean_diagnosis(diagnosis, secrets=redact)
    out = [f"### mltd: {STATUS_LINE[d.status]} — run {code_span(d.run['id'])}", ""]
    if line := incomplete_line(d):
        out += [f"**{inline(line)}**", ""]
    if d.symptoms:
        out += ["**Symptoms:** " + "; ".join(map(inline, d.symptoms)), ""]
    causes = d.root_causes
    if causes:
        by = [reader(d, c) for c in causes]          # a column only where the agent took part
        out += ["| # | Root cause | Code | Severity | Confidence |" + (" Read by |" if by[0] else ""),
                "|---|---|---|---|---|" + ("---|" if by[0] else "")]
        for i, c in enumerate(causes, 1):
            out.append(f"| {i} | {inline(c.issue, cell=True)} | {code_span(c.code, cell=True)} | "
                       f"{inline(c.severity, cell=True)} | {c.confidence:.2f} |" + (f" {by[i - 1]} |" if by[0] else ""))
        out.append("")
    for i, c in enumerate(causes, 1):
        out += [f"#### {i}. {inline(c.issue)}", ""]
        for ev in c.evidence:
            out.append(f"- {inline(ev.text)} — {code_span(where(ev))}")
        out += ["", f"**Fix:** {inline(c.fix)}"]
        if c.expected_impact:
            out.append(f"**Expected impact:** {inline(c.expected_impact)}")
        if c.patch:
            out += ["", "<details><summary>Suggested patch (not applied)</summary>", "",
                    *code_block(c.patch, "diff"), "", "</details>"]
        out.append("")
    if d.quick_fixes:
        out += ["**Quick fixes:** " + "; ".join(map(inline, d.quick_fixes)), ""]
    if d.performance:
        out += ["**Speed:**"] + [f"- {inline(p.text)} — {code_span(where(p))}" for p in d.performance] + [""]
    problems = artifact_problems(d)
    if problems:
        out += ["**Artifacts with problems:**"] + [f"- {inline(p)}" for p in problems] + [""]
    if d.missing_artifacts:
        out += ["**Would settle it:** " + "; ".join(map(inline, d.missing_artifacts)), ""]
    if d.tell_apart:
        out += ["**Would tell them apart:** " + inline(d.tell_apart), ""]
    out += [f"> {inline(q)}" for q in d.questions]
    if d.agent_note:
        out += ["", f"<sub>{inline(d.agent_note)}</sub>"]
    return "\n".join(out).rstrip() + "\n"
