"""From findings to ranked root causes: an ordered table of named rules.

Findings of the same code merge first (a finding from the code analyzer brings the specific fix and
patch: the line that causes it). Then each rule of `RULES`, in order, reads the merged findings
together and decides which one is the cause and which a consequence: a NaN after gradients grew
geometrically is exploding gradients; a divergence right after the LR was raised is the LR;
degenerate outputs from a model whose parameters sit in its embeddings is the architecture. A rule
only moves confidence, severity and evidence between findings that exist; it never invents one. So
every cause on the ranked list is there because an analyzer found evidence for it, and a rival that
no rule explains away stays on the list as a real alternative, with its own evidence.

Last, each cause gets what would settle it (`Finding.settle`, from analysis/data/differential.toml),
and `tell_apart` words the one artifact or number that separates the leading causes.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

from analysis.model import Evidence, Finding

SEVERITY_WEIGHT = {"critical": 1.0, "high": 0.85, "medium": 0.6, "low": 0.4, "info": 0.2}
CRASH_CODES = ("out_of_memory", "distributed_failure", "dataloader_failure")
STALL_CAUSES = ("no_parameter_updates", "lr_too_low", "dead_relu", "vanishing_gradients", "architecture_imbalance")
SYMPTOM_WORDS = {
    "out_of_memory": ("oom", "out of memory", "memory"),
    "numerical_instability": ("nan", "inf", "overflow"),
    "lr_too_high": ("diverg", "blew up", "explod", "learning rate", " lr"),
    "exploding_gradients": ("grad", "explod"),
    "mode_collapse": ("same token", "collapse", "all the same", "repeat", "::::", "one class"),
    "architecture_imbalance": ("embedding", "param"),
    "overfitting": ("overfit", "val loss", "validation"),
    "distributed_failure": ("nccl", "hang", "timeout", "rank"),
    "dataloader_failure": ("dataloader", "worker", "killed"),
    "zero_variance": ("var()", "degrees of freedom", "variance"),
    "loss_spikes": ("spike",),
    "no_parameter_updates": ("not learning", "flat", "not changing", "stuck"),
    "data_pipeline_bug": ("chance", "random", "stuck", "not learning"),
}
LEADING = ("critical", "high", "medium")
TIE = 0.05             # confidences this close are a tie the evidence has not settled
CHECKPOINT_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin", ".ckpt")
NAN_ALONE = 0.7        # the confidence of a NaN loss with nothing else for or against a reading
DIFFERENTIAL = Path(__file__).parent / "data" / "differential.toml"


@dataclass
class Ranking:
    """The merged findings, one per code, and the words of the question (a symptom, never evidence)."""

    causes: dict[str, Finding]
    symptoms: str = ""

    def get(self, code: str) -> Finding | None:
        return self.causes.get(code)


# --- helpers the rules share ---------------------------------------------------------------------

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


def _before(a: Finding, b: Finding) -> bool:
    return a.onset_step is not None and b.onset_step is not None and a.onset_step <= b.onset_step


def _demote(f: Finding, below: Finding, severity: str | None = None) -> None:
    f.confidence = round(min(f.confidence, below.confidence - 0.1), 2)
    if severity:
        f.severity = severity


def _lr_jump(r: Ranking) -> Finding | None:
    lr = r.get("lr_too_high")
    return lr if lr is not None and lr.analyzer == "learning_rate" and lr.confidence >= 0.9 else None


def _loss_divergence(r: Ranking) -> Finding | None:
    lr = r.get("lr_too_high")
    return lr if lr is not None and lr.analyzer == "loss" else None


# --- the rules, in the order they run -------------------------------------------------------------

def gradients_before_nan(r: Ranking) -> None:
    """Exploding gradients vs numerical instability: a NaN that follows a geometric gradient blow-up
    is the blow-up's consequence, so the gradients lead and the NaN is cited as their end."""
    exp, num = r.get("exploding_gradients"), r.get("numerical_instability")
    if exp and num and _before(exp, num):
        exp.confidence = max(exp.confidence, 0.9)
        _absorb(exp, num.evidence[:1])
        _demote(num, exp, "medium")


def lr_jump_explains_what_follows(r: Ranking) -> None:
    """An LR raised by a large factor, with gradients or the loss blowing up after it: the jump is
    the cause, whatever came after (gradients, NaN) its consequence. The onsets are not compared:
    the learning-rate analyzer ties the jump to the loss's divergence (within JUMP_LAG/JUMP_LEAD of
    the run); a gradient growth whose fit starts a few steps before the jump (its noisy low start)
    does not make the jump its consequence. A growth that was over (at its peak) before the jump
    is: nothing the rate did later can have made it."""
    lr = _lr_jump(r)
    if lr is None or lr.onset_step is None:
        return
    for other in (r.get("exploding_gradients"), r.get("numerical_instability")):
        over_before = other is not None and other.end_step is not None and other.end_step < lr.onset_step
        if other is not None and other.onset_step is not None and not over_before:
            _absorb(lr, other.evidence[:1])
            _demote(other, lr, "medium")


def gradients_explain_divergence(r: Ranking) -> None:
    """Exploding gradients vs LR too high: a divergence seen in the loss alone, with geometric
    gradient growth behind it and no LR change, is the gradients' story (an architecture or an
    initialisation can explode under a small, constant LR)."""
    lr, exp = _loss_divergence(r), r.get("exploding_gradients")
    if _lr_jump(r) is None and lr is not None and exp is not None:
        _absorb(exp, lr.evidence)
        exp.confidence = max(exp.confidence, 0.85)
        _demote(lr, exp, "high")


def evidence_rules_out_a_rival(r: Ranking) -> None:
    """A finding whose own evidence excludes a rival (gradients exploding from step 1 under a
    constant LR inside its optimizer's range exclude the LR: the architecture or the
    initialisation explodes) leads that rival, which stays listed below it as the alternative.
    Never against an LR jump: a rate raised right before a blow-up is its cause."""
    for f in list(r.causes.values()):
        for code in f.rules_out:
            rival = r.get(code)
            if rival is None or rival is f or (code == "lr_too_high" and _lr_jump(r) is not None):
                continue
            f.confidence = round(max(f.confidence, rival.confidence, 0.85), 2)
            _absorb(f, rival.evidence[:1])
            _demote(rival, f, "medium")


def spikes_inside_divergence(r: Ranking) -> None:
    """Spikes seen while the loss diverges are part of the divergence: cited there as evidence."""
    lr, spk = _loss_divergence(r), r.get("loss_spikes")
    if _lr_jump(r) is None and r.get("exploding_gradients") is None and lr is not None and spk is not None:
        _absorb(lr, spk.evidence[:1])


def spike_inside_a_failure(r: Ranking) -> None:
    """A spike after a critical failure began (a divergence, a NaN) belongs to that failure, not to
    a separate cause: its evidence moves there and the spike leaves the list."""
    spk = r.get("loss_spikes")
    if spk is None or spk.onset_step is None:
        return
    worse = [f for f in r.causes.values() if f is not spk and f.severity == "critical" and _before(f, spk)]
    if worse:
        _absorb(worse[0], spk.evidence[:1])
        del r.causes["loss_spikes"]


def parameter_budget_explains_collapse(r: Ranking) -> None:
    """Degenerate outputs from a model whose parameters sit in one part (the embeddings): the
    imbalance is the cause, the collapse what it looks like."""
    arch, collapse = r.get("architecture_imbalance"), r.get("mode_collapse")
    if arch and collapse:
        arch.confidence = max(arch.confidence, 0.9)
        _absorb(arch, collapse.evidence[:1])
        _demote(collapse, arch)


def crash_outranks_trends(r: Ranking) -> None:
    """The job died of a crash (OOM, a rank, the DataLoader): a trend with no onset before it is
    context, ranked below the crash. A crash the differential of an unknown error only suggests
    (medium) is no known crash: its rivals keep their own confidences."""
    crash = [r.causes[k] for k in CRASH_CODES if k in r.causes and r.causes[k].severity in ("critical", "high")]
    if not crash:
        return
    top = max(crash, key=lambda f: f.confidence)
    for f in r.causes.values():
        if f.code not in CRASH_CODES and f.onset_step is None and f.confidence >= top.confidence:
            _demote(f, top)


def stall_cause_explains_chance(r: Ranking) -> None:
    """"It doesn't learn" has many causes: a loss stuck at chance is a data bug only when nothing
    else explains a model that learns nothing (weights that never change, an LR too small to move
    them, dead units, gradients that never reach the input layers). When one of those is found, it
    leads and the data bug stays below it as the alternative."""
    chance = r.get("data_pipeline_bug")
    stall = [r.causes[k] for k in STALL_CAUSES if k in r.causes and r.causes[k].severity in ("critical", "high")]
    if chance is not None and stall:
        top = max(stall, key=lambda f: f.confidence)
        top.confidence = round(max(top.confidence, min(0.9, chance.confidence + 0.1)), 2)
        _absorb(top, chance.evidence[:1])
        _demote(chance, top, "medium")


def dead_units_explain_rise(r: Ranking) -> None:
    """Units that died mid-run explain the loss going back up: the rise is their consequence."""
    dead, lr = r.get("dead_relu"), _loss_divergence(r)
    if dead is not None and lr is not None:
        _absorb(dead, lr.evidence)
        _demote(lr, dead, "medium")


def zero_variance_explains_nan(r: Ranking) -> None:
    """A statistic over one element (var() with no degrees of freedom) is NaN by construction: the
    NaN loss is its consequence."""
    zv, num = r.get("zero_variance"), r.get("numerical_instability")
    if zv is not None and num is not None:
        _absorb(zv, num.evidence[:1])
        _demote(num, zv, "medium")


def divergence_to_nan_is_the_lr(r: Ranking) -> None:
    """LR too high vs numerical instability, from the loss alone: a loss that climbed for several
    reports before turning NaN diverged (the LR's signature) and the NaN is where it ended; a NaN
    out of a calm, falling loss stays numerical. Both stay listed, the climb first. Only while
    nothing else speaks for the numerical reading (calm gradients, fp16 lift it above 0.7)."""
    lr, num = r.get("lr_too_high"), r.get("numerical_instability")
    if lr is None or num is None or num.confidence > NAN_ALONE or lr.severity not in ("critical", "high"):
        return
    if lr.onset_step is not None and num.onset_step is not None and lr.onset_step < num.onset_step:
        lr.confidence = round(max(lr.confidence, min(0.75, num.confidence + 0.05)), 2)
        lr.severity = "critical"          # a divergence that ends in NaN is as grave as the NaN
        _absorb(lr, num.evidence[:1])
        num.confidence = round(min(num.confidence, lr.confidence - 0.05), 2)


def slow_weights_are_not_still(r: Ranking) -> None:
    """Too slow vs no updates: weights that moved between two checkpoints, only too little per
    step, were updated, so a reading of "no updates" from elsewhere (an LR logged as 0 because
    the log rounds it) is refuted by the checkpoints, and the slow rate leads."""
    low, none = r.get("lr_too_low"), r.get("no_parameter_updates")
    if low is None or none is None or none.analyzer == "weights":
        return
    if any(e.artifact.endswith(CHECKPOINT_SUFFIXES) for e in low.evidence):
        low.confidence = round(max(low.confidence, none.confidence), 2)
        low.severity = "critical" if none.severity == "critical" else low.severity
        _absorb(low, none.evidence)
        _demote(none, low, "medium")


def low_lr_cannot_diverge(r: Ranking) -> None:
    """LR too low vs LR too high: an LR below its optimizer's useful range cannot drive a
    divergence, so a rise of the loss read as one is noise around a model that barely moves."""
    low, lr = r.get("lr_too_low"), _loss_divergence(r)
    if low is not None and lr is not None and low.analyzer == "learning_rate":
        _absorb(low, lr.evidence[:1])
        _demote(lr, low, "low")


def lasting_gap_over_passing_spikes(r: Ranking) -> None:
    """Overfitting vs loss spikes, when the artifacts support both about equally: spikes recover
    within a few steps, a validation loss that keeps rising while the training loss falls does
    not, so the lasting gap is what ends the run badly and leads; the spikes stay listed."""
    over, spk = r.get("overfitting"), r.get("loss_spikes")
    if over is not None and spk is not None and over.confidence >= spk.confidence - TIE:
        over.confidence = round(max(over.confidence, spk.confidence), 2)
        _demote(spk, over)


def fault_outranks_health(r: Ranking) -> None:
    """A healthy reading of a paste's numbers never stands beside a fault: any cause of medium
    severity or more found anywhere means the lines are not healthy, so the healthy reading leaves
    the list (its "nothing shows a fault" would be false)."""
    if "healthy" in r.causes and any(c.code != "healthy" and c.severity in LEADING for c in r.causes.values()):
        del r.causes["healthy"]


RULES: tuple[Callable[[Ranking], None], ...] = (
    gradients_before_nan,
    lr_jump_explains_what_follows,
    gradients_explain_divergence,
    evidence_rules_out_a_rival,
    spikes_inside_divergence,
    spike_inside_a_failure,
    parameter_budget_explains_collapse,
    crash_outranks_trends,
    stall_cause_explains_chance,
    dead_units_explain_rise,
    zero_variance_explains_nan,
    divergence_to_nan_is_the_lr,
    slow_weights_are_not_still,
    low_lr_cannot_diverge,
    lasting_gap_over_passing_spikes,
    fault_outranks_health,
)


# --- merging, ordering and what would settle each cause ------------------------------------------

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
        have.settle = have.settle or f.settle
    return by_code


def _said(f: Finding, symptoms: str) -> bool:
    return bool(symptoms) and any(w in symptoms for w in SYMPTOM_WORDS.get(f.code, ()))


def order(causes: list[Finding], symptoms: str = "") -> list[Finding]:
    """Most likely first: confidence weighted by severity. The question's words (the symptom the
    user names) only break a tie between causes the artifacts support equally: a symptom is never
    evidence, so it never moves a confidence."""
    return sorted(causes, key=lambda f: (-(f.confidence * SEVERITY_WEIGHT[f.severity]), -f.confidence,
                                         not _said(f, symptoms)))


@cache
def _differential() -> dict:
    return tomllib.loads(DIFFERENTIAL.read_text())


def settle_text(code: str) -> str:
    """What would confirm `code` over its rivals, in general terms (analysis/data/differential.toml)."""
    return _differential()["settle"].get(code, "")


def rivals_of(code: str) -> list[str]:
    """The causes whose symptom `code`'s looks like, most likely first (analysis/data/differential.toml)."""
    return list(_differential().get("rivals", {}).get(code, []))


def pair_text(a: str, b: str) -> str:
    """What separates causes `a` and `b` when the table has it (either order), else ""."""
    pairs = _differential()["pair"]
    return pairs.get(f"{a}|{b}") or pairs.get(f"{b}|{a}") or ""


def tell_apart(causes: list[Finding]) -> str:
    """The one artifact or number that separates the leading causes: the pair's own discriminator
    when the table has one, else what would confirm the first. Leads are the first three causes
    of medium severity or more: a low note is context, not a rival."""
    lead = [c for c in causes if c.code != "healthy" and c.severity in LEADING][:3]
    if not lead:
        return ""
    if len(lead) >= 2:
        pairs = _differential()["pair"]
        for a, b in ((lead[0].code, lead[1].code), (lead[1].code, lead[0].code)):
            text = pairs.get(f"{a}|{b}")
            if text:
                return f"To tell {lead[0].code} from {lead[1].code}: {text}" + _also(lead[2:])
        names = " from ".join(c.code for c in lead[:2])
        return f"To tell {names}: {lead[0].settle or settle_text(lead[0].code)}" + _also(lead[2:])
    return f"To confirm {lead[0].code}: {lead[0].settle or settle_text(lead[0].code)}"


def _also(rest: list[Finding]) -> str:
    return "".join(f". Also possible, {c.code}: {c.settle or settle_text(c.code)}" for c in rest)


def combine(findings: list[Finding], symptoms: list[str] | tuple[str, ...] = (),
            rules: tuple[Callable[[Ranking], None], ...] = RULES) -> list[Finding]:
    """The ranked root causes: merged by code, read together by `rules` in order, then ordered."""
    r = Ranking(_merge(findings), " ".join(symptoms).lower())
    for rule in rules:
        rule(r)
    for f in r.causes.values():
        f.settle = f.settle or settle_text(f.code)
    return order(list(r.causes.values()), r.symptoms)
