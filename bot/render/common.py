"""Wording shared by every renderer."""
from __future__ import annotations

STATUS_LINE = {
    "diagnosis_complete": "Diagnosis complete",
    "needs_more_data": "Needs more data",
    "no_failure_found": "No failure found",
    "incomplete": "Incomplete analysis",
    "error": "Error",
}
SEVERITY_MARK = {"critical": "CRITICAL", "high": "HIGH", "medium": "MEDIUM", "low": "LOW", "info": "INFO"}


def where(ev: dict) -> str:
    return f"{ev['artifact']} {ev['locator']}"


def artifact_problems(doc: dict) -> list[str]:
    out = []
    for a in doc["run"]["artifacts"]:
        if a.get("problem"):
            out.append(f"{a['path']}: {a['problem']}")
        elif a.get("skipped_lines"):
            out.append(f"{a['path']}: {a['skipped_lines']} malformed line(s) skipped")
    return out


def incomplete_line(doc: dict) -> str | None:
    """One line naming each analyzer that failed, for every renderer; None when all ran."""
    failed = doc.get("engine", {}).get("failed_analyzers") or []
    if not failed:
        return None
    return "Incomplete: " + "; ".join(f"the {f['analyzer']} analyzer failed ({f['error']})" for f in failed)
