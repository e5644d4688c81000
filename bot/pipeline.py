"""The one way a run becomes a reply: the engine's diagnosis, the specialist agent's review, the
status, then a renderer. The CLI, the Slack job and the GitHub job all call `reply`; they differ
only in how they find the run and where the rendered reply goes.

The status rule itself ("a first cause at `CONFIDENT` completes the diagnosis") is the engine's,
`analysis.diagnose.status_of`, because the engine states a status on its own; after the agent has
put its verified causes first, this module applies that same rule to them, and nothing else does.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Generic, Sequence, TypeVar

from analysis import diagnose
from analysis.budget import DEFAULT, Budget
from analysis.diagnose import status_of
from analysis.model import AGENT

if TYPE_CHECKING:
    from analysis.model import Diagnosis
    from analysis.run import Run
    from bot.settings import Settings

Rendered = TypeVar("Rendered")


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
        written = render_plot(run.metrics, diagnosis.root_causes, dest, title=plot_title(diagnosis))
    except OSError as exc:
        return None, exc.strerror or str(exc)
    if written is not None:
        diagnosis.analysis_artifacts["loss_visualization"] = str(written)
    return written, None
