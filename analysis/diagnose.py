"""The engine's one entry point: a run folder or file in, a ranked `Diagnosis` out."""
from __future__ import annotations

import time
from pathlib import Path

from analysis.analyzers import ANALYZERS, healthy
from analysis.analyzers.common import off_harmless_lines, train_loss
from analysis.analyzers.crashes import WARNED_ONLY
from analysis.analyzers.error_readings import setup_error, trained_after
from analysis.budget import DEFAULT, Budget
from analysis.calibration import calibrated, thin_paste
from analysis.ingest import load_run
from analysis.metrics import clip
from analysis.model import Diagnosis, Event, Evidence, Finding
from analysis.performance import observe
from analysis.rank import combine, tell_apart
from analysis.rivals import add_open, add_rivals
from analysis.run import Run

CONFIDENT = 0.8
# What would settle a hypothesis, by code: the artifact kinds that carry its evidence.
_SETTLES = {
    "lr_too_high": ("metrics", "the learning-rate schedule (lr per step in the log) and the run's config"),
    "exploding_gradients": ("metrics", "grad_norm per step in the log"),
    "numerical_instability": ("code", "the training script (precision, loss computation)"),
    "architecture_imbalance": ("checkpoint", "a checkpoint (model weights) and sample outputs"),
    "mode_collapse": ("checkpoint", "a checkpoint to count parameters per module"),
    "out_of_memory": ("config", "the run's config (batch size, sequence length, precision)"),
    "data_pipeline_bug": ("code", "the data loading code"),
    "zero_variance": ("code", "the model code that computes the statistic"),
}
WARNINGS_ONLY = 0.55        # warnings alone say little either way: healthy, without confidence


def _benign_only(run: Run) -> Finding | None:
    """Healthy where the artifacts hold only warnings a maintainer calls harmless
    (analysis/data/benign.toml), each with why."""
    seen: dict[str, Event] = {}
    for e in run.events:
        if e.signature == "benign":
            seen.setdefault(e.fields["benign"], e)
    if not seen or any(e.signature not in ("benign", "trainable_params") for e in run.events):
        return None               # an unknown warning among them: _warnings_only says so, with less confidence
        #                           (a model summary's count of trainable parameters is no message)
    ev = [Evidence(f"{clip(e.text, 160)}{f' (x{e.count})' if e.count > 1 else ''}: harmless. {e.fields['why']}",
                   e.artifact, e.locator) for e in seen.values()]
    return Finding(code="healthy", issue="No fault shown: the only messages are warnings that are harmless ("
                   + ", ".join(n.replace("_", " ") for n in seen) + ")", severity="info", confidence=0.8, evidence=ev,
                   fix="Nothing to fix; if training misbehaves, share the training log with the loss per step",
                   analyzer="diagnose")


def _warnings_only(run: Run) -> Finding | None:
    """Healthy, with little confidence, where a paste holds no metrics and no error, only warnings
    that name no known failure: a warning does not stop training, and none of these is one that
    matters (those are signatures). A harmless one among them is said so with why."""
    read = [s for n in run.metrics.names() if (s := run.metrics.get(n)) is not None and not off_harmless_lines(run, s)]
    if read or not run.events or any(e.signature not in ("warning", "benign", *WARNED_ONLY) for e in run.events):
        return None             # (a warning read only beside a failure has none beside it here: crashes.py)
    seen = {e.text: e for e in run.events}
    ev = [Evidence(clip(e.text, 160) + (f": harmless. {e.fields['why']}" if e.signature == "benign" else
                                        ": a fault only where a failure follows it, and none does here"
                                        if e.signature in WARNED_ONLY else ": a warning that names no known failure"),
                   e.artifact, e.locator)
          for e in list(seen.values())[:4]]
    return Finding(code="healthy",
                   issue="No fault shown: the only messages are warnings, and none of them names a known failure",
                   severity="info",
                   confidence=WARNINGS_ONLY,
                   evidence=ev,
                   fix="Nothing to fix from these lines; if training misbehaves, share the training log with the loss "
                       "per step",
                   analyzer="diagnose")


def _missing(run: Run, causes: list[Finding], status: str) -> list[str]:
    kinds = {a.kind for a in run.usable()}
    out = []
    if not run.metrics.series and "traceback" not in kinds:
        out.append("a training log or metrics file with the loss per step")
    wanted = [_SETTLES[c.code] for c in causes[:2] if c.code in _SETTLES]
    if status == "needs_more_data":
        wanted += [("config", "the run's config (learning rate, batch size, precision)"),
                   ("checkpoint", "a checkpoint (model weights)")]
    for kind, text in wanted:
        if kind not in kinds and text not in out and (kind != "metrics" or not run.metrics.series):
            out.append(text)
    for a in run.artifacts:
        if a.problem and a.kind != "unknown":
            out.append(f"a readable copy of {a.path} ({a.problem})")
    return out


def status_of(causes: list[Finding], failed: list) -> str:
    """The status a ranked list earns: `healthy` on top is no failure found, a first cause at
    `CONFIDENT` or more completes the diagnosis; short of that, a failed analyzer makes the analysis
    incomplete and otherwise more data is needed."""
    if causes and causes[0].code == "healthy" and not failed:
        return "no_failure_found"
    if causes and causes[0].code != "healthy" and causes[0].confidence >= CONFIDENT:
        return "diagnosis_complete"
    return "incomplete" if failed else "needs_more_data"


def diagnose(path: str | Path, symptoms: list[str] | tuple[str, ...] = (), *, source: str | None = None,
             run_id: str | None = None, budget: Budget = DEFAULT) -> tuple[Diagnosis, Run]:
    t0 = time.perf_counter()
    run = load_run(path, source=source, run_id=run_id, budget=budget)
    return diagnose_run(run, symptoms, started=t0), run


def diagnose_run(run: Run, symptoms: list[str] | tuple[str, ...] = (), *, started: float | None = None) -> Diagnosis:
    """The diagnosis of a run already in memory: a folder just read, or a live run's bounded summary."""
    t0 = time.perf_counter() if started is None else started
    findings: list[Finding] = []
    used, failed = [], []
    for analyzer in ANALYZERS:
        try:
            findings += analyzer.analyze(run)
        except Exception as exc:   # an analyzer bug costs its findings, not the reply, and is said
            failed.append({"analyzer": analyzer.NAME, "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
        used.append(analyzer.NAME)
    causes = combine(findings, list(symptoms))
    paste = thin_paste(run)
    try:
        causes = add_rivals(causes, run)
    except Exception as exc:   # like an analyzer's: the look-alikes are lost, the reply is not
        failed.append({"analyzer": "rivals", "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
    for c in causes:            # ranked on the raw confidences; said as how often such a cause is right
        c.raw_confidence, c.confidence = c.confidence, calibrated(c.confidence, paste)
    # a crash no signature explains (not a traceback a library printed for an exception it handled: the loss went on)
    loss = train_loss(run)
    crashes = [e for e in run.events if e.signature == "traceback" and not trained_after(e, loss)]
    questions: list[str] = []
    named: str | None = None
    if not run.artifacts:
        status = "needs_more_data"
        questions.append("The folder holds no files: where are the run's logs, metrics and checkpoints?")
    elif not run.usable():
        status = "needs_more_data"
        questions.append("None of the files could be read (see the artifact list): can you share the raw training log?")
    # a run that crashed, or that was not fully analysed, is never healthy
    elif (not any(c.severity in ("critical", "high", "medium") for c in causes) and not crashes and not failed
          and (verdict := next(iter(healthy.analyze(run)), None) or _benign_only(run) or _warnings_only(run)
               or next((c for c in causes if c.code == "healthy"), None))):
        # minor notes stay below it
        if not any(c is verdict for c in causes):
            verdict.raw_confidence, verdict.confidence = verdict.confidence, calibrated(verdict.confidence, paste)
        causes, status = [verdict] + [c for c in causes if c.code != "healthy"], "no_failure_found"
        try:
            causes = add_open(causes, run)
        except Exception:          # the notes are lost; the verdict and its status are not (no analysis failed)
            pass
    elif not causes:
        status = "needs_more_data"
        named = setup_error(run.events)       # the error and its fix, said already: no "is that the failure" after it
        questions.append(named or "Nothing in these artifacts shows a fault or a healthy loss curve: "
                         "what symptom did you see, and at which step?")
    elif causes[0].confidence >= CONFIDENT:
        status = "diagnosis_complete"
    else:
        status = "needs_more_data"
        ranked = ", ".join(f"{c.code} ({c.confidence:.2f})" for c in causes[:3] if c.code != "healthy")
        questions.append(f"No cause reaches {CONFIDENT}: the artifacts point to {ranked}; which artifact would tell "
                         "them apart is named above.")
    if failed and status != "diagnosis_complete":
        status = "incomplete"           # the renderers name each failed analyzer in one line
    if crashes and status != "diagnosis_complete" and not named:
        e = crashes[-1]
        questions.append(f"The run crashed with {clip(e.text, 160)!r} ({e.artifact} line {e.line}); "
                         "is that the failure you mean?")
    quick = []
    for c in causes:
        if (c.quick_fix and c.quick_fix not in quick and c.code != "healthy"
                and c.severity in ("critical", "high", "medium")):
            quick.append(c.quick_fix)
    engine = {"analyzers": used, "agent": None, "elapsed_s": round(time.perf_counter() - t0, 3)}
    if failed:
        engine["failed_analyzers"] = failed
    if run.notes:
        engine["notes"] = run.notes
    return Diagnosis(
        status=status,
        run={"id": run.id, "source": run.source, "artifacts": [a.to_dict() for a in run.artifacts]},
        symptoms=list(symptoms), root_causes=causes, quick_fixes=quick[:4],
        missing_artifacts=_missing(run, causes, status), questions=questions, engine=engine, performance=observe(run),
        tell_apart=tell_apart(causes) if status in ("needs_more_data", "incomplete") else "")
