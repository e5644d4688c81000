"""The look-alikes a careful reader keeps beside the leading cause, each with what points to it.

An analyzer speaks for the cause its own evidence shows; it does not list what the same symptom
would also be. A loss that diverged under an LR is the LR's signature, and also what gradients
blowing up look like when no gradient norm was logged; a loss that turned NaN is an overflow, or the
end of a divergence, or a NaN in a batch. When the one reading is wrong, the right one must still be
on the list, with the artifact that would settle it.

Each leading cause has its look-alikes (`[rivals]` in analysis/data/differential.toml, most likely
first). One joins the list only where the artifacts leave it open and something in them points to
it: each check below returns that evidence, or None where the artifacts exclude it (gradient norms
logged and calm up to the failure, a loss that never turned non-finite, an LR far under its
optimizer's range, a finding whose own evidence rules it out). A look-alike is never a new finding
of a fault: its confidence is what the leader leaves, shared among the look-alikes, so the leader
stays first and what the reply says the leader's confidence means does not change.
"""
from __future__ import annotations

import re
from typing import Callable

import numpy as np

from analysis.analyzers.common import (
    COLLECTIVE_WAITED,
    LR_RANGE,
    losses,
    optimizer_family,
    peak_lr,
    point,
    train_loss,
)
from analysis.analyzers.crashes import LAUNCHER_REPORTS, WAITED_FOR
from analysis.analyzers.error_readings import UNKNOWN
from analysis.analyzers.excerpt import a_loss_falls, as_share, early_line
from analysis.analyzers.weights import RELU
from analysis.metrics import Series, clip, fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.rank import LEADING, pair_text, rivals_of, settle_text
from analysis.run import Run
from analysis.signals import first_nonfinite

GREW = 10.0            # gradient norms that rose this many times over before the failure did not stay calm
NEAR_TOP = 30.0        # an LR within this factor of its optimizer's range top can still be too high for a model
MOST = 2               # look-alikes added beside one leader
FLOOR = 0.03           # the least confidence a look-alike is said with
STALLED = 0.8         # a loss whose best stayed above this share of its start learned nothing
STILL = 0.01           # ...and one that moved less than this share of it was not updated at all
LOW_END = 10.0         # an LR within this factor of its optimizer's range bottom barely moves the weights
SURE = 0.9             # a leader this sure (its own evidence excludes the rest) leaves no room to list any
MODEL = re.compile(r"nn\.(Module|Sequential)\b|keras\.")     # code that builds the model


def _upto(s: Series, leader: Finding) -> np.ndarray:
    """The series' values before the leader's onset (its whole length when the onset is unknown or
    past it): what the artifacts show before the failure the leader explains. The onset's own point
    is the failure's consequence, not its cause (a NaN loss backpropagates a NaN norm)."""
    if leader.onset_step is None:
        return s.values
    n = int(np.searchsorted(s.steps, leader.onset_step, side="left"))
    return s.values[:max(n, 2)]


def _symptom(leader: Finding, why: str) -> Evidence:
    e = leader.evidence[0]
    return Evidence(f"{e.text}: {why}", e.artifact, e.locator)


def _gradients(run: Run, leader: Finding) -> Evidence | None:
    """Open where no gradient norm is logged; pointed to by norms that grew GREW-fold before the
    failure, or went non-finite and stayed so up to it; excluded by norms that stayed calm up to it.
    An Inf the norms came back from is a loss scaler's skipped step (fp16), which it takes by design."""
    g = run.metrics.get("grad_norm")
    if g is None or len(g) < 2:
        return _symptom(leader, "no gradient norm is logged, so gradients blowing up behind this are not excluded")
    v = _upto(g, leader)
    bad = first_nonfinite(v)
    if bad is not None and not np.isfinite(v[bad:]).any():
        return point(g, bad, "grad_norm non-finite")
    ok = np.flatnonzero(np.isfinite(v))
    if not len(ok):
        return None
    base = float(np.median(v[ok[:3]]))
    top = int(ok[np.argmax(v[ok])])
    if base > 0 and v[top] >= GREW * base:
        return Evidence(f"grad_norm rose from {fmt(base)} to {fmt(float(v[top]))} before it",
                        g.artifact, g.locator(top))
    return None


def _nonfinite(run: Run, leader: Finding) -> Evidence | None:
    """Open only where a loss turned non-finite: an overflow (fp16, a log of 0) ends in one."""
    for s in losses(run):
        i = first_nonfinite(s.values)
        if i is not None:
            return point(s, i, f"{s.name} non-finite")
    return None


def _lr_high(run: Run, leader: Finding) -> Evidence | None:
    """Open where the LR is not in the artifacts; pointed to by an LR within NEAR_TOP of its
    optimizer's range top; excluded by one far under it (such a rate does not drive a blow-up)."""
    peak = peak_lr(run)
    if peak is None:
        return _symptom(leader, "the LR is not in the artifacts, so an LR too high for this model is not excluded")
    fam = optimizer_family(run)
    top = LR_RANGE[fam[0] if fam else "adam"][1]
    if peak[0] * NEAR_TOP < top:
        return None
    name = fam[0] if fam else "an adaptive optimizer"
    where = "above" if peak[0] > top else f"within {NEAR_TOP:g}x of"
    return Evidence(f"{peak[1].text}: {where} the top of {name}'s usual range ({fmt(top)}), "
                    "high enough to be too high for a deep or unnormalised model", peak[1].artifact, peak[1].locator)


def _stall(run: Run) -> tuple[Series, float, float] | None:
    """The main loss, its start and its span, when its best never came below STALLED of its start
    (a model that learned nothing, whatever the reason): the symptom the stall look-alikes share."""
    s = train_loss(run) or next(iter(losses(run)), None)
    if s is None:
        return None
    v = s.values[np.isfinite(s.values)]
    if len(v) < 4:
        return None
    start = float(np.median(v[:3]))
    if start <= 0 or float(v.min()) < STALLED * start:
        return None
    return s, start, float(v.max() - v.min())


def _stalled(s: Series, start: float, why: str) -> Evidence:
    return Evidence(f"{s.name} stayed within {(1 - STALLED) * 100:.0f}% of its start ({fmt(start)}) to "
                    f"{s.step_kind} {fmt_step(s.steps[-1])}: {why}", s.artifact, s.span_locator(0, len(s) - 1))


def _bad_data(run: Run, leader: Finding) -> Evidence | None:
    """Open where a loss turned non-finite (a NaN or Inf in a batch's inputs or targets gives the
    same NaN whatever the LR) or where the loss never left its start (labels disconnected from
    their inputs hold it at chance the same way)."""
    nf = _nonfinite(run, leader)
    if nf is not None:
        return Evidence(f"{nf.text}: a NaN or Inf in a batch's inputs or targets gives the same NaN whatever the LR",
                        nf.artifact, nf.locator)
    stall = _stall(run)
    return None if stall is None else _stalled(stall[0], stall[1], "labels that do not match their inputs hold a "
                                               "loss at chance the same way")


def _lr_low(run: Run, leader: Finding) -> Evidence | None:
    """Open, on a loss that never left its start, where the LR is not in the artifacts; pointed to
    by an LR within LOW_END of its optimizer's range bottom; excluded by one above that."""
    stall = _stall(run)
    if stall is None:
        return None
    peak = peak_lr(run)
    if peak is None:
        return _stalled(stall[0], stall[1], "the LR is not in the artifacts, so one too small to move the weights "
                                            "is not excluded")
    fam = optimizer_family(run)
    bottom = LR_RANGE[fam[0] if fam else "adam"][0]
    if peak[0] > LOW_END * bottom:
        return None
    return Evidence(f"{peak[1].text}: within {LOW_END:g}x of the bottom of the usual range ({fmt(bottom)})",
                    peak[1].artifact, peak[1].locator)


def _still(run: Run, leader: Finding) -> Evidence | None:
    """Open where the loss barely moved at all (under STILL of its start) and no two checkpoints
    were read (those would show whether the weights changed)."""
    stall = _stall(run)
    if stall is None or len(run.loaded_checkpoints()) >= 2 or stall[2] > STILL * stall[1]:
        return None
    return _stalled(stall[0], stall[1], f"it moved less than {STILL * 100:g}%, as when the weights are never updated")


def _unread_layers(why: str) -> Callable[[Run, Finding], Evidence | None]:
    """Open, on a loss that never left its start, where no checkpoint was read: the layers' signal
    and units are read from one (the weights analyzers would have spoken), and here there is none."""
    def check(run: Run, leader: Finding) -> Evidence | None:
        stall = _stall(run)
        if stall is None or run.loaded_checkpoints():
            return None
        return _stalled(stall[0], stall[1], f"no checkpoint was shared to read {why}")
    return check


def _dead_units(run: Run, leader: Finding) -> Evidence | None:
    """As `_unread_layers`, and excluded where the code that builds the model was shared and names no
    ReLU (tanh, an LSTM's gates): there are no ReLU units to die."""
    if any(MODEL.search(c.text) for c in run.code) and not any(RELU.search(c.text) for c in run.code):
        return None
    return _unread_layers("the units (ReLUs that no input switches on)")(run, leader)


CHECKS: dict[str, Callable[[Run, Finding], Evidence | None]] = {
    "exploding_gradients": _gradients,
    "numerical_instability": _nonfinite,
    "lr_too_high": _lr_high,
    "data_pipeline_bug": _bad_data,
    "lr_too_low": _lr_low,
    "no_parameter_updates": _still,
    "vanishing_gradients": _unread_layers("the signal layer by layer (a signal that fades towards the input)"),
    "dead_relu": _dead_units,
}
ISSUE = {
    "exploding_gradients": "Also possible: gradients blowing up (an architecture or an initialisation can explode "
                           "under a sound LR)",
    "numerical_instability": "Also possible: a numerical overflow (fp16, a log of 0, a division by ~0) rather than "
                             "the leading cause",
    "lr_too_high": "Also possible: an LR too high for this model",
    "data_pipeline_bug": "Also possible: bad data (a NaN or Inf in the inputs, labels that do not match their inputs)",
    "lr_too_low": "Also possible: an LR too small to move the weights",
    "no_parameter_updates": "Also possible: the weights are never updated (a frozen model, a missing optimizer.step())",
    "vanishing_gradients": "Also possible: gradients vanishing before they reach the first layers",
    "dead_relu": "Also possible: dead ReLU units",
}


# What a healthy reading leaves open: the lines show no fault, but the question was asked, so each fault the curves
# do not exclude and something in them points to is said beside the verdict, with what would settle it.
SLOW = 0.7             # a loss whose last report is still 70% of its first or more fell slowly
# a score under this (as a share) is low for its kind (not a detector's mAP: low for many epochs, and read at 0 apart)
SCORE_LOW = {"acc": 0.3, "dice": 0.3, "miou": 0.3}
KIND_SAID = {"acc": "an accuracy", "dice": "a Dice score", "miou": "a mean IoU"}
HELD_GAP = 0.15        # a held-out score this far (as a share) under the training one
LOW_REPORTS = 3        # a training run's low score at 3 reports or more, not climbing (an evaluation alone at one)
VAL_ROSE = 1.1         # a validation loss whose last report is 10% above its best


def _score_kind(name: str) -> str | None:
    base = name.removeprefix("train_").removeprefix("val_").removeprefix("test_")
    return next((k for k in SCORE_LOW if base == k or base.startswith(k) and base[len(k):] in ("50", "")), None)


def _scores(run: Run) -> list[Series]:
    return [s for n in run.metrics.names() if _score_kind(n) is not None and (s := run.metrics.get(n)) is not None
            and len(s) and np.isfinite(s.values).all() and 0 <= float(s.values.min())]


def _slow_loss(run: Run) -> Evidence | None:
    s = train_loss(run)          # the training loss only: a GAN's two losses do not fall by design
    if s is None:
        return None
    v = s.values[np.isfinite(s.values)]
    if len(v) < 4 or v[0] <= 0 or not SLOW * v[0] <= v[-1] <= v[0] or not early_line(run, s, 0) \
            or early_line(run, s, len(s) - 1):
        return None              # slow from the run's start to past its first steps, by its counters (a late window
                                 # of a converged run is slow, and so are a warm-up's first steps)
    peak = peak_lr(run)
    if peak is not None:
        fam = optimizer_family(run)
        if peak[0] > LOW_END * LR_RANGE[fam[0] if fam else "adam"][0]:     # a normal LR: the slow fall is not its
            return None
    lr_said = "" if peak else ", and the LR is not in the artifacts"
    return Evidence(f"{s.name} fell only {(1 - v[-1] / v[0]) * 100:.0f}% ({fmt(float(v[0]))} to "
                    f"{fmt(float(v[-1]))}) over {len(v)} reports{lr_said}: an LR too small falls this slowly",
                    s.artifact, s.span_locator(0, len(s) - 1))


def _low_score(run: Run) -> Evidence | None:
    if any("top5" in n or "top10" in n for n in run.metrics.names()):
        return None              # a top-k printed: many classes, where a low top-1 is no sign of anything
    if a_loss_falls(run):
        return None              # a model whose loss falls is learning
    training = train_loss(run) is not None or run.metrics.get("train_loss") is not None
    for s in _scores(run):
        kind = _score_kind(s.name)
        if kind is None or early_line(run, s, len(s) - 1):
            continue             # every model scores low in its first epoch
        if training and (len(s) < LOW_REPORTS or float(s.values[-1]) >= 1.25 * float(s.values[0])):
            continue             # a training run's score at a report or two, or climbing, is no plateau
        if float(as_share(s.values)[-1]) < SCORE_LOW[kind]:
            return Evidence(f"{s.name} {fmt(float(s.values[-1]))} at its last report, low for {KIND_SAID[kind]}: "
                            "labels that do not match their inputs (or inputs prepared otherwise) hold a score down",
                            s.artifact, s.locator(len(s) - 1))
    return None


def _held_gap(run: Run, why: str) -> Evidence | None:
    for kind in SCORE_LOW:
        tr = next((run.metrics.get(n) for n in (f"train_{kind}", kind) if run.metrics.get(n) is not None), None)
        for held in (f"val_{kind}", f"test_{kind}"):
            h = run.metrics.get(held)
            if tr is None or h is None or not len(tr) or not len(h) \
                    or not np.isfinite([tr.values[-1], h.values[-1]]).all():
                continue
            a, b = float(as_share(tr.values)[-1]), float(as_share(h.values)[-1])
            if a - b >= HELD_GAP:
                return Evidence(f"{tr.name} {fmt(float(tr.values[-1]))} beside {h.name} {fmt(float(h.values[-1]))}: "
                                f"{why}", h.artifact, h.locator(len(h) - 1))
    return None


def _val_rose(run: Run) -> Evidence | None:
    v, t = run.metrics.get("val_loss"), train_loss(run)
    falls = t is not None and np.isfinite(t.values[[0, -1]]).all() and t.values[-1] < t.values[0]
    # beside a training loss that falls, and not past twice its best (a blow-up is no fit)
    if v is not None and len(v) >= 3 and np.isfinite(v.values).all() and falls \
            and 2 * v.values.min() >= v.values[-1] >= VAL_ROSE * v.values.min() > 0:
        best = int(np.argmin(v.values))
        return Evidence(f"val_loss {fmt(float(v.values[-1]))} at its last report, "
                        f"{v.values[-1] / v.values[best] - 1:.0%} above its best {fmt(float(v.values[best]))}: a model "
                        "that starts to fit its training set",
                        v.artifact, v.span_locator(best, len(v) - 1))
    return _held_gap(run, "a model that fits its training set and not the rest")


OPEN: dict[str, Callable[[Run], Evidence | None]] = {
    "data_pipeline_bug": _low_score,
    "overfitting": _val_rose,
    "lr_too_low": _slow_loss,
}
OPEN_ISSUE = {
    "data_pipeline_bug": "Not excluded by these lines: bad data (labels that do not match their inputs, a held-out "
                         "set prepared otherwise)",
    "overfitting": "Not excluded by these lines: overfitting",
    "lr_too_low": "Not excluded by these lines: an LR too small (a loss that falls, but slowly)",
}


def _left_by(leader: Finding, n: int) -> float:
    """The confidence each of `n` look-alikes is said with: what the leader leaves, shared with it, never above it (a
    weak leader leaves more than it holds, and its look-alikes stay under it)."""
    return round(min(max(FLOOR, (1 - leader.confidence) / (n + 1)), leader.confidence - 0.01), 2)


def add_open(causes: list[Finding], run: Run) -> list[Finding]:
    """`causes`, led by the healthy verdict, with what the verdict short of SURE leaves open (OPEN, each where its
    check finds something in the lines pointing to it), at most MOST, low, under the verdict."""
    if not causes or causes[0].code != "healthy" or causes[0].confidence >= SURE:
        return causes
    have = {c.code for c in causes}
    found = [(code, ev) for code, check in OPEN.items() if code not in have and (ev := check(run)) is not None][:MOST]
    if not found:
        return causes
    share = _left_by(causes[0], len(found))
    # said as the verdict's calibrated confidence leaves them (the verdict is calibrated before it is chosen)
    added = [Finding(code=code, issue=OPEN_ISSUE[code], severity="low", confidence=share, evidence=[ev],
                     fix=f"Check before changing anything: {settle_text(code)}", analyzer="rivals",
                     settle=settle_text(code), raw_confidence=share) for code, ev in found]
    return causes[:1] + added + causes[1:]


# A launcher's or a collective's report that a rank stopped (torchrun's ChildFailedError, a watchdog's timeout,
# Horovod shut down or stalled) is where a rank's failure shows, not what it was: the rank's own error is in its own
# log. Where the paste holds none, what most often stops one rank while the rest wait is listed beside it, however
# sure the report is that the job failed.
STOPPED = LAUNCHER_REPORTS + WAITED_FOR
# ...of nccl_timeout's lines, the collective that waited (a watchdog's timeout, a communicator aborted after one), not
# NCCL's own errors (`ncclInternalError`, `invalid usage`, `unhandled system error`), which name a cause of their own;
# of rank_failure's, a rank that exited once the job ran (torchrun's report, an exit code), not a rendezvous or a
# connection that never formed (no rank had trained: the job's setup is the fault)
WAITED = {"nccl_timeout": COLLECTIVE_WAITED,
          "rank_failure": re.compile(r"ChildFailedError|exitcode|exit code|return code|non-zero (?:exit )?status|"
                                     r"errors\.html")}
STOPPED_BY = {
    "out_of_memory": "a rank killed for memory (CUDA out of memory, or the kernel's OOM killer on host RAM) stops "
                     "the job this way, its error in that rank's log only",
    "dataloader_failure": "a rank whose DataLoader worker died or hung stops the job this way, its error in that "
                          "rank's log only",
}
STOPPED_ISSUE = {
    "out_of_memory": "Also possible: one rank ran out of memory, and the others stopped with it",
    "dataloader_failure": "Also possible: one rank's input pipeline died or hung, and the others stopped with it",
}


def _stopped_by(run: Run, causes: list[Finding], leader: Finding) -> list[tuple[str, Evidence]]:
    """What stopped a rank, where the leader is only a report that one stopped and the paste shows no error of
    a rank's own: no other fault read, and no traceback, exception or device error, named or not (a warning is
    none)."""
    ev = leader.evidence[0]
    report = any(e.signature in STOPPED and e.artifact == ev.artifact and e.locator == ev.locator
                 and (e.signature not in WAITED or WAITED[e.signature].search(e.text)) for e in run.events)
    if leader.code != "distributed_failure" or not report \
            or any(e.signature not in STOPPED and (e.code is not None or e.signature in UNKNOWN) for e in run.events) \
            or any(c.code != leader.code for c in causes if c.code != "healthy" and c.severity in LEADING):
        return []
    have, said = {c.code for c in causes}, clip(ev.text, 160).rstrip(": ")
    return [(code, Evidence(f"{said}: the report names no error of its own; {why}", ev.artifact, ev.locator))
            for code, why in STOPPED_BY.items() if code not in have][:MOST]


def add_rivals(causes: list[Finding], run: Run) -> list[Finding]:
    """`causes` (ranked) with the leader's open look-alikes inserted after the causes of medium
    severity or more, before the minor notes."""
    lead = [c for c in causes if c.code != "healthy" and c.severity in LEADING]
    if not lead or not lead[0].evidence:
        return causes
    leader, have = lead[0], {c.code for c in causes}
    found = _stopped_by(run, causes, leader)
    if found:
        return _beside(causes, leader, found, STOPPED_ISSUE)
    if leader.confidence >= SURE:
        return causes
    if leader.onset_step is None and _stall(run) is None:
        return causes            # a reading from a config or a traceback alone has no curve to look alike
    excluded = {code for c in causes for code in c.rules_out}
    for code in rivals_of(leader.code):
        if code in have or code in excluded or code not in CHECKS or len(found) == MOST:
            continue
        ev = CHECKS[code](run, leader)
        if ev is not None:
            found.append((code, ev))
    return _beside(causes, leader, found, ISSUE) if found else causes


def _beside(causes: list[Finding], leader: Finding, found: list[tuple[str, Evidence]],
            issues: dict[str, str]) -> list[Finding]:
    """`causes` with `found` inserted after the causes of medium severity or more, before the minor notes."""
    share = _left_by(leader, len(found))
    added = [Finding(code=code, issue=issues[code], severity="medium", confidence=share, evidence=[ev],
                     fix=f"Check before changing anything: {pair_text(leader.code, code) or settle_text(code)}",
                     analyzer="rivals", settle=settle_text(code)) for code, ev in found]
    cut = max(i for i, c in enumerate(causes) if c.severity in LEADING) + 1
    return causes[:cut] + added + causes[cut:]
