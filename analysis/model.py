"""The engine's data model: what a run holds and what a diagnosis says.

A `Diagnosis` serialises to exactly the JSON document of DESIGN.md (`to_dict`); every renderer is a
pure function of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The root-cause codes and severities of the team's TAXONOMY.md, in its order (tests/test_taxonomy.py
# checks them against it); the agent's submission schema (bot/agent/verify.py) offers exactly these.
SEVERITIES = ("critical", "high", "medium", "low", "info")

CODES = (
    "lr_too_high", "lr_too_low", "exploding_gradients", "vanishing_gradients",
    "numerical_instability", "dead_relu", "mode_collapse", "architecture_imbalance",
    "overfitting", "no_parameter_updates", "data_pipeline_bug", "zero_variance",
    "out_of_memory", "loss_spikes", "distributed_failure", "dataloader_failure", "healthy",
)

# The analyzer name of a cause the specialist agent submitted and verification kept; such a cause
# says so in its JSON (`"analyzer": "agent"`), the analyzers' causes do not.
AGENT = "agent"

KINDS = ("metrics", "log", "checkpoint", "config", "code", "samples", "traceback", "unknown")


@dataclass(frozen=True)
class Evidence:
    """One located fact: the text, the artifact it comes from, and where in it (line or step)."""

    text: str
    artifact: str
    locator: str

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text, "artifact": self.artifact, "locator": self.locator}


@dataclass
class Finding:
    """What one analyzer concluded. Ranking merges findings into root causes."""

    code: str
    issue: str
    severity: str
    confidence: float
    evidence: list[Evidence]
    fix: str
    expected_impact: str = ""
    patch: str | None = None
    analyzer: str = ""
    onset_step: float | None = None
    end_step: float | None = None     # where what the onset began was over (a growth's peak), if known
    quick_fix: str | None = None
    settle: str = ""          # the artifact or number that would confirm this cause over its rivals
    rules_out: tuple[str, ...] = ()   # rival codes this finding's own evidence excludes (ranking demotes them)
    raw_confidence: float | None = field(default=None, compare=False)   # the rules' own, before calibration

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown root-cause code {self.code!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        self.confidence = round(min(max(float(self.confidence), 0.0), 1.0), 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "issue": self.issue,
            "severity": self.severity,
            "confidence": self.confidence,
            "evidence": [e.to_dict() for e in self.evidence],
            "fix": self.fix,
            "expected_impact": self.expected_impact,
            "patch": self.patch,
        } | ({"analyzer": AGENT} if self.analyzer == AGENT else {})

    @classmethod
    def from_dict(cls, c: dict[str, Any]) -> Finding:
        """A root cause read back from its JSON form."""
        return cls(code=c["code"], issue=c["issue"], severity=c["severity"], confidence=c["confidence"],
                   evidence=[Evidence(e["text"], e["artifact"], e["locator"]) for e in c["evidence"]],
                   fix=c.get("fix", ""), expected_impact=c.get("expected_impact") or "", patch=c.get("patch"),
                   analyzer=c.get("analyzer", ""))


@dataclass
class Artifact:
    """A file of the run, classified. `problem` says why it could not be (fully) read."""

    path: str
    kind: str
    format: str
    size: int = 0
    skipped_lines: int = 0
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind, "format": self.format}
        if self.skipped_lines:
            out["skipped_lines"] = self.skipped_lines
        if self.problem:
            out["problem"] = self.problem
        return out


@dataclass
class Event:
    """A traceback, warning or error found in a log, matched against the signature table."""

    signature: str            # name of the matching signature, or "traceback" for any other crash
    code: str | None          # root-cause code the signature points to, if any
    artifact: str
    line: int
    text: str                 # the line that matched
    context: list[str] = field(default_factory=list)   # the traceback around it
    fields: dict[str, Any] = field(default_factory=dict)
    count: int = 1            # repeated warnings are folded into one event

    @property
    def locator(self) -> str:
        return f"line {self.line}"


@dataclass
class Diagnosis:
    """What the engine (and, in the service, the agent) concluded. Renderers and the agent take it
    as it is; `to_dict` is for the JSON edges only (`--format json`, the watch's document, the LLM)."""

    status: str
    run: dict[str, Any]
    symptoms: list[str]
    root_causes: list[Finding]
    quick_fixes: list[str] = field(default_factory=list)
    missing_artifacts: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    # when no cause is confident: the one artifact or number that would tell the ranked causes apart
    tell_apart: str = ""
    analysis_artifacts: dict[str, str] = field(default_factory=dict)
    # how the engine ran: analyzers, agent (its model, turns, cost), elapsed_s, failed_analyzers, notes
    engine: dict[str, Any] = field(default_factory=dict)
    # speed, beside the causes (analysis/performance.py): located observations, never root causes
    performance: list[Evidence] = field(default_factory=list)
    agent_note: str = ""      # one line when the specialist agent's answer is not what is shown, and why

    @property
    def failed_analyzers(self) -> list[dict[str, str]]:
        """Each analyzer that raised, with its error (`{"analyzer": ..., "error": ...}`)."""
        return self.engine.get("failed_analyzers", [])

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "run": self.run,
            "symptoms": list(self.symptoms),
            "root_causes": [c.to_dict() for c in self.root_causes],
            "quick_fixes": list(self.quick_fixes),
            "missing_artifacts": list(self.missing_artifacts),
            "questions": list(self.questions),
            "tell_apart": self.tell_apart,
            "analysis_artifacts": dict(self.analysis_artifacts),
            "engine": self._engine_dict(),
        }

    def _engine_dict(self) -> dict[str, Any]:
        # the JSON document keeps the user-facing speed and agent note under `engine`, as it always has
        out = dict(self.engine)
        if self.performance:
            out["performance"] = [p.to_dict() for p in self.performance]
        if self.agent_note:
            out["agent_note"] = self.agent_note
        return out

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Diagnosis:
        """A diagnosis read back from its JSON document (a watch warning is posted as one)."""
        engine = dict(doc.get("engine") or {})
        performance = [Evidence(p["text"], p["artifact"], p["locator"]) for p in engine.pop("performance", [])]
        agent_note = engine.pop("agent_note", "")
        return cls(status=doc["status"], run=doc["run"], symptoms=list(doc["symptoms"]),
                   root_causes=[Finding.from_dict(c) for c in doc["root_causes"]],
                   quick_fixes=list(doc["quick_fixes"]), missing_artifacts=list(doc["missing_artifacts"]),
                   questions=list(doc["questions"]), tell_apart=doc.get("tell_apart", ""),
                   analysis_artifacts=dict(doc.get("analysis_artifacts") or {}), engine=engine,
                   performance=performance, agent_note=agent_note)
