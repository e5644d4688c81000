"""The engine's one entry point: a run folder or file in, a ranked `Diagnosis` out."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from analysis.analyzers import ANALYZERS
from analysis.analyzers.common import train_loss
from analysis.budget import DEFAULT, Budget
from analysis.calibration import calibrated
from analysis.ingest import load_run
from analysis.metrics import clip, fmt, fmt_step
from analysis.model import Diagnosis, Event, Evidence, Finding
from analysis.performance import observe
from analysis.rank import combine, tell_apart
from analysis.run import Run
from analysis.signals import relative_change

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


def _adversarial_balance(run: Run) -> Finding | None:
    """A GAN's health: both losses finite and neither player winning outright in the second half."""
    d = next((run.metrics.get(n) for n in ("d_loss", "disc_loss", "discriminator_loss", "loss_d")
              if run.metrics.get(n)), None)
    g = next((run.metrics.get(n) for n in ("g_loss", "gen_loss", "generator_loss", "loss_g")
              if run.metrics.get(n)), None)
    if d is None or g is None or min(len(d), len(g)) < 20:
        return None
    if not (np.isfinite(d.values).all() and np.isfinite(g.values).all()):
        return None
    dl, gl = d.values[len(d) // 2:], g.values[len(g) // 2:]
    if float(np.median(dl)) < 0.1 or float(np.median(gl)) > 5.0:
        return None
    ev = [Evidence(f"discriminator loss stayed between {fmt(float(dl.min()))} and {fmt(float(dl.max()))} over the "
                   "second half", d.artifact, d.span_locator(len(d) // 2, len(d) - 1)),
          Evidence(f"generator loss stayed between {fmt(float(gl.min()))} and {fmt(float(gl.max()))}: neither player "
                   "wins outright", g.artifact, g.span_locator(len(g) // 2, len(g) - 1))]
    return Finding("healthy", "The GAN looks healthy: both losses stay finite and balanced, and no sign of collapse",
                   "info", 0.8, ev, fix="Nothing to fix; judge progress by sample quality", analyzer="diagnose")


HEALTHY_POINTS = 3          # a falling loss over three reports already says the run learns
WARNINGS_ONLY = 0.55        # warnings alone say little either way: healthy, without confidence


def _improving_metric(run: Run) -> Finding | None:
    """Healthy where a paste holds no loss but an accuracy or mAP that rises report after report."""
    for name in ("val_acc", "train_acc", "map", "val_map", "map50", "mAP"):
        s = run.metrics.get(name)
        if s is None or len(s) < HEALTHY_POINTS or not np.isfinite(s.values).all():
            continue
        v = s.values
        if v[-1] > v[0] * 1.02 and (np.diff(v) >= 0).mean() >= 0.5:
            return Finding("healthy", f"The run looks healthy: {name} rose from {fmt(float(v[0]))} to "
                           f"{fmt(float(v[-1]))}, with no divergence, NaN, crash or warning that points to a fault",
                           "info", 0.7,
                           [Evidence(f"{name} rose from {fmt(float(v[0]))} to {fmt(float(v[-1]))} over {s.step_kind}s "
                                     f"{fmt_step(s.steps[0])}-{fmt_step(s.steps[-1])}", s.artifact,
                                     s.span_locator(0, len(s) - 1))],
                           fix="Nothing to fix; keep training", analyzer="diagnose")
    return None


def _healthy(run: Run) -> Finding | None:
    s = train_loss(run)
    if s is None:
        return _adversarial_balance(run) or _improving_metric(run)
    if len(s) < HEALTHY_POINTS:
        return None
    change = relative_change(s.values)
    if change <= 0.02:
        return None
    ev = [Evidence(f"loss fell {change * 100:.0f}% from {fmt(float(s.values[0]))} to {fmt(float(s.values[-1]))} "
                   f"over {s.step_kind}s {fmt_step(s.steps[0])}-{fmt_step(s.steps[-1])}",
                   s.artifact, s.span_locator(0, len(s) - 1))]
    g = run.metrics.get("grad_norm")
    if g is not None and len(g):
        ev.append(Evidence(f"grad_norm stayed between {fmt(float(g.values.min()))} and {fmt(float(g.values.max()))}",
                           g.artifact, g.span_locator(0, len(g) - 1)))
    return Finding("healthy", "The run looks healthy: the loss falls steadily, with no divergence, NaN, crash or "
                   "warning that points to a fault", "info", 0.85, ev, fix="Nothing to fix; keep training",
                   analyzer="diagnose")


def _benign_only(run: Run) -> Finding | None:
    """Healthy where the artifacts hold only warnings a maintainer calls harmless
    (analysis/data/benign.toml), each with why."""
    seen: dict[str, Event] = {}
    for e in run.events:
        if e.signature == "benign":
            seen.setdefault(e.fields["benign"], e)
    if not seen or any(e.signature != "benign" for e in run.events):
        return None               # an unknown warning among them: _warnings_only says so, with less confidence
    ev = [Evidence(f"{clip(e.text, 160)}{f' (x{e.count})' if e.count > 1 else ''}: harmless. {e.fields['why']}",
                   e.artifact, e.locator) for e in seen.values()]
    return Finding("healthy", "No fault shown: the only messages are warnings that are harmless ("
                   + ", ".join(n.replace("_", " ") for n in seen) + ")", "info", 0.8, ev,
                   fix="Nothing to fix; if training misbehaves, share the training log with the loss per step",
                   analyzer="diagnose")


def _warnings_only(run: Run) -> Finding | None:
    """Healthy, with little confidence, where a paste holds no metrics and no error, only warnings
    that name no known failure: a warning does not stop training, and none of these is one that
    matters (those are signatures). A harmless one among them is said so with why."""
    if run.metrics.series or not run.events or any(e.signature not in ("warning", "benign") for e in run.events):
        return None
    seen = {e.text: e for e in run.events}
    ev = [Evidence(clip(e.text, 160) + (f": harmless. {e.fields['why']}" if e.signature == "benign" else
                                        ": a warning that names no known failure"), e.artifact, e.locator)
          for e in list(seen.values())[:4]]
    return Finding("healthy", "No fault shown: the only messages are warnings, and none of them names a known failure",
                   "info", WARNINGS_ONLY, ev,
                   fix="Nothing to fix from these lines; if training misbehaves, share the training log with the loss "
                       "per step", analyzer="diagnose")


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


def status_of(causes: list[dict], failed: list) -> str:
    """The status a ranked list earns: `healthy` on top is no failure found, a first cause at
    `CONFIDENT` or more completes the diagnosis; short of that, a failed analyzer makes the analysis
    incomplete and otherwise more data is needed."""
    if causes and causes[0]["code"] == "healthy" and not failed:
        return "no_failure_found"
    if causes and causes[0]["code"] != "healthy" and causes[0]["confidence"] >= CONFIDENT:
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
    for c in causes:            # ranked on the raw confidences; said as how often such a cause is right
        c.confidence = calibrated(c.confidence)
    crashes = [e for e in run.events if e.signature == "traceback"]   # a crash no signature explains
    questions: list[str] = []
    if not run.artifacts:
        status = "needs_more_data"
        questions.append("The folder holds no files: where are the run's logs, metrics and checkpoints?")
    elif not run.usable():
        status = "needs_more_data"
        questions.append("None of the files could be read (see the artifact list): can you share the raw training log?")
    # a run that crashed, or that was not fully analysed, is never healthy
    elif (not any(c.severity in ("critical", "high", "medium") for c in causes) and not crashes and not failed
          and (healthy := _healthy(run) or _benign_only(run) or _warnings_only(run)
               or next((c for c in causes if c.code == "healthy"), None))):
        # minor notes stay below it
        if not any(c is healthy for c in causes):
            healthy.confidence = calibrated(healthy.confidence)
        causes, status = [healthy] + [c for c in causes if c.code != "healthy"], "no_failure_found"
    elif not causes:
        status = "needs_more_data"
        questions.append("Nothing in these artifacts shows a fault or a healthy loss curve: what symptom did you see, "
                         "and at which step?")
    elif causes[0].confidence >= CONFIDENT:
        status = "diagnosis_complete"
    else:
        status = "needs_more_data"
        ranked = ", ".join(f"{c.code} ({c.confidence:.2f})" for c in causes[:3] if c.code != "healthy")
        questions.append(f"No cause reaches {CONFIDENT}: the artifacts point to {ranked}; which artifact would tell "
                         "them apart is named above.")
    if failed and status != "diagnosis_complete":
        status = "incomplete"           # the renderers name each failed analyzer in one line
    if crashes and status != "diagnosis_complete":
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
    perf = observe(run)
    if perf:
        engine["performance"] = perf
    return Diagnosis(
        status=status,
        run={"id": run.id, "source": run.source, "artifacts": [a.to_dict() for a in run.artifacts]},
        symptoms=list(symptoms), root_causes=causes, quick_fixes=quick[:4],
        missing_artifacts=_missing(run, causes, status), questions=questions, engine=engine,
        tell_apart=tell_apart(causes) if status in ("needs_more_data", "incomplete") else "")
