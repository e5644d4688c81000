"""GitHub-flavoured markdown: the ranked table, evidence, fixes and patches in ```diff blocks."""
from __future__ import annotations

from bot.render.common import STATUS_LINE, artifact_problems, where


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def render_markdown(doc: dict) -> str:
    run = doc["run"]
    out = [f"### mltd: {STATUS_LINE[doc['status']]} — run `{run['id']}`", ""]
    if doc["symptoms"]:
        out += ["**Symptoms:** " + "; ".join(doc["symptoms"]), ""]
    causes = doc["root_causes"]
    if causes:
        out += ["| # | Root cause | Code | Severity | Confidence |", "|---|---|---|---|---|"]
        for i, c in enumerate(causes, 1):
            out.append(f"| {i} | {_cell(c['issue'])} | `{c['code']}` | {c['severity']} | {c['confidence']:.2f} |")
        out.append("")
    for i, c in enumerate(causes, 1):
        out += [f"#### {i}. {c['issue']}", ""]
        for ev in c["evidence"]:
            out.append(f"- {ev['text']} — {_code(where(ev))}")
        out += ["", f"**Fix:** {c['fix']}"]
        if c.get("expected_impact"):
            out.append(f"**Expected impact:** {c['expected_impact']}")
        if c.get("patch"):
            out += ["", "<details><summary>Suggested patch (not applied)</summary>", "", "```diff",
                    c["patch"].rstrip("\n"), "```", "", "</details>"]
        out.append("")
    if doc["quick_fixes"]:
        out += ["**Quick fixes:** " + "; ".join(doc["quick_fixes"]), ""]
    perf = doc.get("engine", {}).get("performance") or []
    if perf:
        out += ["**Speed:**"] + [f"- {p['text']} — {_code(where(p))}" for p in perf] + [""]
    problems = artifact_problems(doc)
    if problems:
        out += ["**Artifacts with problems:**"] + [f"- {p}" for p in problems] + [""]
    if doc["missing_artifacts"]:
        out += ["**Would settle it:** " + "; ".join(doc["missing_artifacts"]), ""]
    out += [f"> {q}" for q in doc["questions"]]
    if doc.get("engine", {}).get("agent_note"):
        out += ["", f"<sub>{doc['engine']['agent_note']}</sub>"]
    return "\n".join(out).rstrip() + "\n"
