"""A live run's warning (`analysis.live_warning.LiveWarning`): the one-line headline every notifier
and the service's thread put above the diagnosis. Pure; redacted."""
from __future__ import annotations

from analysis.live_warning import LiveWarning
from bot.redact import clean


def headline(warning: LiveWarning) -> str:
    top = warning.top
    what = f"{top.finding.code}: {top.finding.issue}" if top else "see below"
    first = "early warning" if warning.update == 0 else f"update {warning.update}"
    line = f"mltd watch · run {warning.diagnosis.run['id']} · {first} at step {warning.step:g} · {what}"
    if top and top.early:
        line += f" (early: confidence {top.finding.confidence:g}, the evidence is not conclusive yet)"
    if warning.confirmed:
        line += f"\nconfirmed by the post-mortem's analyzers: {', '.join(warning.confirmed)}"
    if warning.action:
        line += f"\nguard: {warning.action}"
    return clean(line)
