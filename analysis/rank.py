"""From findings to ranked root causes.

Findings of the same code merge (a finding from the code analyzer brings the specific fix and
patch: the line that causes it). Then rules that read findings together decide which one is the
cause and which a consequence: a NaN after gradients grew geometrically is exploding gradients; a
divergence right after the LR was raised is the LR; degenerate outputs from a model whose
parameters sit in its embeddings is the architecture. Rules run in order; each only moves
confidence and evidence, never invents a finding.
"""
from __future__ import annotations

from analysis.model import Evidence, Finding

SEVERITY_WEIGHT = {"critical": 1.0, "high": 0.85, "medium": 0.6, "low": 0.4, "info": 0.2}
CRASH_CODES = ("out_of_memory", "distributed_failure", "dataloader_failure")
STALL_CAUSES = ("no_parameter_updates", "lr_too_low", "dead_relu", "vanishing_gradients", "architecture_imbalance")
SYMPTOM_WORDS = {
    "out_of_memory": ("oom", "out of memory", "memory"),
    "numerical_instability": ("nan", "inf", "overflow"),
    "lr_too_high": ("diverg", "blew up", "explod", "learning rate", " lr"),
    "exploding_gradients": ("grad", "explod"),
    "mode_collapse": ("same token", "collapse", "all the same", "repeat", "::::"),
    "architecture_imbalance": ("embedding", "param"),
    "overfitting": ("overfit", "val loss", "validation"),
    "distributed_failure": ("nccl", "hang", "timeout", "rank"),
    "dataloader_failure": ("dataloader", "worker", "killed"),
    "zero_variance": ("var()", "degrees of freedom", "variance"),
    "loss_spikes": ("spike",),
    "no_parameter_updates": ("not learning", "flat", "not changing", "stuck"),
    "data_pipeline_bug": ("chance", "random", "stuck", "not learning"),
}


def _merge(findings: list[Finding]) -> dict[str, Finding]:
    by_code: dict[str, Finding] = {}
    for f in sorted(findings, key=lambda f: -f.confidence):
        have = by_code.get(f.code)
        if have is None:
            by_code[f.code] = f
            continue
        _absorb(have, f.evidence)
        if f.analyzer == "code" and f.patch:
            # the line of code that causes the symptom is the fix to make, not a generic remedy
            have.patch, have.fix, have.quick_fix = f.patch, f.fix, f.quick_fix
            have.expected_impact = f.expected_impact or have.expected_impact
        have.patch = have.patch or f.patch
    return by_code


def _absorb(target: Finding, evidence: list[Evidence]) -> None:
    """Adds the evidence the target does not already cite: a place it quotes (the same lines of the
    same file), or the first line of a span it quotes, is said once."""
    seen = {(e.artifact, e.locator) for e in target.evidence}
    for e in evidence:
        if (e.artifact, e.locator) in seen:
            continue
        if e.locator.startswith("line ") and any(
                a == e.artifact and loc.startswith(f"lines {e.locator[5:]}-") for a, loc in seen):
            continue
        target.evidence.append(e)
        seen.add((e.artifact, e.locator))


def _before(a: Finding, b: Finding, slack: float = 0.0) -> bool:
    return a.onset_step is not None and b.onset_step is not None and a.onset_step <= b.onset_step + slack


def _demote(f: Finding, below: Finding, severity: str | None = None) -> None:
    f.confidence = round(min(f.confidence, below.confidence - 0.1), 2)
    if severity:
        f.severity = severity


def combine(findings: list[Finding], symptoms: list[str] = ()) -> list[Finding]:
    c = _merge(findings)
    lr, exp, num = c.get("lr_too_high"), c.get("exploding_gradients"), c.get("numerical_instability")
    jump = lr is not None and lr.analyzer == "learning_rate" and lr.confidence >= 0.9
    if exp and num and _before(exp, num):
        exp.confidence = max(exp.confidence, 0.9)
        _absorb(exp, num.evidence[:1])
        _demote(num, exp, "medium")
    if jump:
        for other in (exp, num):
            if other is not None and _before(lr, other, slack=float("inf")):
                _absorb(lr, other.evidence[:1])
                _demote(other, lr, "medium")
    elif lr is not None and lr.analyzer == "loss" and exp is not None:
        # a divergence with geometric gradient growth behind it: the gradients are the story
        _absorb(exp, lr.evidence)
        exp.confidence = max(exp.confidence, 0.85)
        _demote(lr, exp, "high")
    elif lr is not None and lr.analyzer == "loss" and c.get("loss_spikes") is not None:
        _absorb(lr, c["loss_spikes"].evidence[:1])
    spk = c.get("loss_spikes")
    if spk is not None and spk.onset_step is not None:
        # a spike inside a divergence or after a NaN is part of that failure, not a separate cause
        worse = [f for f in c.values() if f is not spk and f.severity == "critical" and _before(f, spk)]
        if worse:
            _absorb(worse[0], spk.evidence[:1])
            del c["loss_spikes"]
    arch, collapse = c.get("architecture_imbalance"), c.get("mode_collapse")
    if arch and collapse:
        arch.confidence = max(arch.confidence, 0.9)
        _absorb(arch, collapse.evidence[:1])
        _demote(collapse, arch)
    crash = [c[k] for k in CRASH_CODES if k in c]
    if crash:
        # the job died of this; trends before a crash are context unless they failed first
        top = max(crash, key=lambda f: f.confidence)
        for f in c.values():
            if f.code not in CRASH_CODES and f.onset_step is None and f.confidence >= top.confidence:
                _demote(f, top)
    # a loss stuck at chance is a data bug only when nothing else explains a model that learns
    # nothing: weights that never change, an LR too small to move them, dead units, gradients that
    # never reach the input layers
    chance = c.get("data_pipeline_bug")
    stall = [c[k] for k in STALL_CAUSES if k in c and c[k].severity in ("critical", "high")]
    if chance is not None and stall:
        top = max(stall, key=lambda f: f.confidence)
        top.confidence = round(max(top.confidence, min(0.9, chance.confidence + 0.1)), 2)
        _absorb(top, chance.evidence[:1])
        _demote(chance, top, "medium")
    # units that died mid-run explain the loss going back up: the rise is their consequence
    dead = c.get("dead_relu")
    if dead is not None and lr is not None and lr.analyzer == "loss":
        _absorb(dead, lr.evidence)
        _demote(lr, dead, "medium")
    if "zero_variance" in c and num is not None:
        _absorb(c["zero_variance"], num.evidence[:1])
        _demote(num, c["zero_variance"], "medium")
    said = " ".join(symptoms).lower()
    for code, f in c.items():
        if said and any(w in said for w in SYMPTOM_WORDS.get(code, ())):
            f.confidence = round(min(1.0, f.confidence + 0.03), 2)
    return sorted(c.values(), key=lambda f: (-(f.confidence * SEVERITY_WEIGHT[f.severity]), -f.confidence))
