"""Wording shared by every renderer."""
from __future__ import annotations

from analysis.model import AGENT, Diagnosis, Evidence, Finding

STATUS_LINE = {
    "diagnosis_complete": "Diagnosis complete",
    "needs_more_data": "Needs more data",
    "no_failure_found": "No failure found",
    "incomplete": "Incomplete analysis",
    "error": "Error",
}
SEVERITY_MARK = {"critical": "CRITICAL", "high": "HIGH", "medium": "MEDIUM", "low": "LOW", "info": "INFO"}


def where(ev: Evidence) -> str:
    return f"{ev.artifact} {ev.locator}"


def artifact_problems(diagnosis: Diagnosis) -> list[str]:
    out = []
    for a in diagnosis.run["artifacts"]:
        if a.get("problem"):
            out.append(f"{a['path']}: {a['problem']}")
        elif a.get("skipped_lines"):
            out.append(f"{a['path']}: {a['skipped_lines']} malformed line(s) skipped")
    return out


def incomplete_line(diagnosis: Diagnosis) -> str | None:
    """One line naming each analyzer that failed, for every renderer; None when all ran."""
    failed = diagnosis.failed_analyzers
    if not failed:
        return None
    return "Incomplete: " + "; ".join(f"the {f['analyzer']} analyzer failed ({f['error']})" for f in failed)


def reader(diagnosis: Diagnosis, cause: Finding) -> str:
    """Who read this cause, where the specialist agent took part: its causes lead, the analyzers' follow,
    and a reply whose readers disagree shows both, so each says whose it is. Empty otherwise."""
    if not any(c.analyzer == AGENT for c in diagnosis.root_causes):
        return ""
    return "the agent" if cause.analyzer == AGENT else "the analyzers"
