"""The one way a run becomes a reply: the engine's diagnosis, the specialist agent's review, the
status, then a renderer. The CLI, the Slack job and the GitHub job all call `reply` (and `compare`
for two runs); they differ only in how they find the runs and where the rendered reply goes.

The status rule itself ("a first cause at `CONFIDENT` completes the diagnosis") is the engine's,
`analysis.diagnose.status_of`, because the engine states a status on its own; after the agent has
put its verified causes first, this module applies that same rule to them, and nothing else does.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Generic, Sequence, TypeVar

from analysis import diagnose
from analysis.budget import DEFAULT, Budget
from analysis.diagnose import status_of
from analysis.model import AGENT

if TYPE_CHECKING:
    from analysis.compare import Comparison
    from analysis.model import Diagnosis
    from analysis.run import Run
    from bot.settings import Settings

Rendered = TypeVar("Rendered")
# matplotlib (pyplot, its mathtext parser) is not thread-safe: two jobs on a worker's threads
# drawing at once fail with a parse error, so plots are drawn one at a time per process
_PLOTTING = threading.Lock()


@dataclass
class Reply(Generic[Rendered]):
    diagnosis: Diagnosis              # the engine's, as the analyzers ranked it
    run: Run
    replied: Diagnosis                # what is replied: after the agent and the status rule
    body: Rendered                    # the renderer's output
    plot: Path | None = None          # written when asked for and there was a series to draw
    plot_error: str | None = None     # why the plot asked for could not be written

    def summary(self) -> dict:
        """What the request store keeps of a reply."""
        top = self.replied.root_causes[0] if self.replied.root_causes else None
        return {"status": self.replied.status, "top": top.code if top else None,
                "confidence": top.confidence if top else None, "agent": self.replied.engine.get("agent")}


def reply(path: Path, render: Callable[[Diagnosis], Rendered], *, symptoms: Sequence[str] = (),
          source: str | None = None, run_id: str | None = None, notes: Sequence[str] = (), budget: Budget = DEFAULT,
          agent_settings: Settings | None = None, plot: Path | None = None) -> Reply[Rendered]:
    """Diagnose the run at `path` and render the reply with `render`.

    `notes` (files skipped while fetching) join the questions; `agent_settings` hands the run to
    the specialist agent (which says in one line when it is off); `plot` is where to draw loss,
    gradient norm and LR, recorded in the diagnosis's `analysis_artifacts`."""
    diagnosis, run = diagnose(path, list(symptoms), source=source, run_id=run_id, budget=budget)
    written, error = draw(diagnosis, run, plot) if plot is not None else (None, None)
    # a copy: the engine's diagnosis stays as the analyzers ranked it
    replied = replace(diagnosis, questions=diagnosis.questions + list(notes), engine=dict(diagnosis.engine),
                      analysis_artifacts=dict(diagnosis.analysis_artifacts))
    if agent_settings is not None:
        from bot import agent  # the agent needs the service extras; the core CLI does not

        replied = agent.review(path, run, replied, agent_settings)
        if replied.root_causes and replied.root_causes[0].analyzer == AGENT:
            replied.status = status_of(replied.root_causes, replied.failed_analyzers)
            if replied.status == "diagnosis_complete":
                replied.tell_apart = ""       # the agent's verified cause settled what the analyzers could not
    return Reply(diagnosis, run, replied, render(replied), written, error)


def draw(diagnosis: Diagnosis, run: Run, dest: Path) -> tuple[Path | None, str | None]:
    """Loss, gradient norm and LR with each onset marked, recorded in `analysis_artifacts`: the
    path written (None without a series to draw), or why it could not be written."""
    from bot.render.plot import plot_title, render_plot

    try:
        with _PLOTTING:
            written = render_plot(run.metrics, diagnosis.root_causes, dest, title=plot_title(diagnosis))
    except OSError as exc:
        return None, exc.strerror or str(exc)
    if written is not None:
        diagnosis.analysis_artifacts["loss_visualization"] = str(written)
    return written, None


# --- a thread's conversation: follow-ups and "did the fix work" (issue 18) ----------------------

@dataclass
class Answer:
    text: str                         # plain text with `code` spans; the port escapes it
    by: str                           # "analyzers" or "agent"
    agent: dict | None = None         # the agent's model, turns and cost, when it was asked


SERIOUS = ("critical", "high", "medium")
AGENT_FELL_BACK = "(The specialist agent could not answer; this is the analyzers' answer.)\n"


def follow_up(path: Path, question: str, earlier: Diagnosis, *, source: str | None = None, run_id: str | None = None,
              budget: Budget = DEFAULT, agent_settings: Settings | None = None) -> Answer:
    """A follow-up about the run at `path` (the cached run its thread's diagnosis `earlier` read):
    the agent's answer when it is configured, else (or when it fails) the analyzers'."""
    from analysis.ingest import load_run
    from bot import followup

    run = load_run(path, source=source, run_id=run_id, budget=budget)
    note = ""
    if agent_settings is not None:
        from bot import agent

        if agent.configured(agent_settings):
            text, info = agent.answer(path, run, earlier, question, agent_settings)
            if text:
                return Answer(text, "agent", info)
            note = AGENT_FELL_BACK
    q = followup.parse_question(question, run.metrics.names())
    return Answer(note + followup.answer(q, run, earlier), "analyzers")


def signature(out: Reply) -> dict | None:
    """The located fact of the reply's top cause that a later run is held against."""
    from analysis.signature import signature_of

    top = next((c for c in out.replied.root_causes if c.code != "healthy"), None)
    if top is None:
        return None
    found = next((f for f in out.diagnosis.root_causes if f.code == top.code), None)
    sig = signature_of(found, out.run) if found is not None else None
    if sig is not None and "text" in sig:               # a log line: kept redacted, like the diagnosis
        from bot.redact import clean

        sig["text"] = clean(sig["text"])
    return sig


def remembered(out: Reply) -> Diagnosis:
    """What a thread keeps of its diagnosis: the replied diagnosis, redacted (it is stored, and
    answers quote it)."""
    from analysis.model import Diagnosis
    from bot.redact import clean_doc

    return Diagnosis.from_dict(clean_doc(out.replied.to_dict()))


@dataclass
class FixCheck:
    text: str                         # plain text with `code` spans; one line when fixed
    fixed: bool
    check: dict | None                # analysis.signature.check's result, when there was a signature


def fix_check(earlier: Diagnosis, earlier_signature: dict | None, out: Reply, label: str) -> FixCheck | None:
    """Whether the run of `out` fixed the earlier diagnosis' top cause; None when the earlier
    diagnosis named no cause to check."""
    from analysis.signature import check
    from bot.render.fixcheck import is_fixed, render_fix_check, render_no_signature

    top = next((c for c in earlier.root_causes if c.code != "healthy"), None)
    if top is None or earlier.status == "no_failure_found" or top.severity not in SERIOUS:
        return None                   # a healthy run, or only notes: no cause to have fixed
    new = out.replied
    if earlier_signature is None:
        return FixCheck(render_no_signature(top, new, label), False, None)
    got = check(earlier_signature, out.run, [c.to_dict() for c in new.root_causes])
    return FixCheck(render_fix_check(got, top, new, label), is_fixed(got, new), got)


@dataclass
class CompareReply(Generic[Rendered]):
    comparison: Comparison            # with the fetch notes
    body: Rendered

    def summary(self) -> dict:
        """What the request store keeps of a comparison."""
        c = self.comparison
        top, first = (c.explanations[0] if c.explanations else None), c.first_parting
        return {"status": c.status, "explained_by": top.subject if top else None,
                "parting_step": first.step if first else None, "compared_with": c.b.id}


def compare(path_a: Path, path_b: Path, render: Callable[[Comparison], Rendered], *, source_a: str | None = None,
            source_b: str | None = None, run_a: str | None = None, run_b: str | None = None,
            symptoms: Sequence[str] = (), notes: Sequence[str] = (),
            budget: Budget = DEFAULT) -> CompareReply[Rendered]:
    """Run A (the failing one, diagnosed so its cause can point at a difference) against reference
    run B, rendered with `render`."""
    from analysis.compare import compare as compare_runs
    from analysis.ingest import load_run

    diagnosis, a = diagnose(path_a, list(symptoms), source=source_a, run_id=run_a, budget=budget)
    b = load_run(path_b, source=source_b, run_id=run_b, budget=budget)
    result = compare_runs(a, b, diagnosis)
    result = replace(result, notes=result.notes + list(notes))
    return CompareReply(result, render(result))
