"""A live run's warning: what the watch posts when a cause alarms, and what the service reads back.

It is the diagnosis of the run so far, its root causes as warned (the precursors' first), and the
watch's own fields: the step, which update this is, the codes that alarmed, which of those are
early, which early ones the post-mortem has since confirmed, and what the guard did. Renderers take
it as it is; `to_dict` is the JSON document (the diagnosis document plus a `watch` object, each
early cause marked `"early": true`), for the file, the service and the tests.

Unknown codes are refused, not dropped: every cause is a `Finding`, which accepts only the codes
and severities of `analysis.model` (the taxonomy), so `from_dict` raises ValueError on any other.
A cause the watch cannot name is a version skew between the watch and the service, and hiding it
would hide the very thing that alarmed; the service answers 422 with the field instead
(bot/watch_threads.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.model import Diagnosis, Finding


@dataclass(frozen=True)
class WarnedCause:
    """One root cause as a warning states it. `early`: the watch warned of it before the
    post-mortem's analyzers were certain (a precursor's, or a finding under `CONFIDENT`)."""

    finding: Finding
    early: bool


@dataclass(frozen=True)
class LiveWarning:
    diagnosis: Diagnosis              # of the run so far; its root causes as warned, the precursors' first
    step: float                       # the last step the watch had read
    update: int                       # 0 for a run's first warning, then 1, 2, ...
    alarms: tuple[str, ...] = ()      # the codes that alarmed: the post-mortem's, then the precursors'
    early: tuple[str, ...] = ()       # of those, the ones the post-mortem is not (yet) certain of, sorted
    confirmed: tuple[str, ...] = ()   # early warnings the post-mortem has confirmed since, sorted
    action: str | None = None         # what the guard did at this step
    checkpoint: str | None = None     # where the guard saved the last good weights

    @property
    def causes(self) -> tuple[WarnedCause, ...]:
        return tuple(WarnedCause(f, f.code in self.early) for f in self.diagnosis.root_causes)

    @property
    def top(self) -> WarnedCause | None:
        causes = self.causes
        return causes[0] if causes else None

    def to_dict(self) -> dict[str, Any]:
        doc = self.diagnosis.to_dict()
        doc["root_causes"] = [{**c, "early": True} if c["code"] in self.early else c for c in doc["root_causes"]]
        doc["watch"] = {"step": self.step, "update": self.update, "alarms": list(self.alarms),
                        "early": list(self.early), "confirmed": list(self.confirmed), "action": self.action,
                        "checkpoint": self.checkpoint}
        return doc

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> LiveWarning:
        """A warning read back from its JSON document. A cause marked early counts as early even
        where `watch.early` leaves it out; a code or severity outside the taxonomy raises ValueError."""
        w = doc["watch"]
        marked = {c["code"] for c in doc["root_causes"] if c.get("early")}
        return cls(Diagnosis.from_dict(doc), step=w["step"], update=w["update"], alarms=tuple(w.get("alarms") or ()),
                   early=tuple(sorted(marked | set(w.get("early") or ()))),
                   confirmed=tuple(w.get("confirmed") or ()), action=w.get("action"),
                   checkpoint=w.get("checkpoint"))
