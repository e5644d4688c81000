"""A live run's warning (the diagnosis document plus its `watch` fields): the one-line headline
every notifier and the service's thread put above the diagnosis. Pure; redacted."""
from __future__ import annotations

from bot.redact import clean


def headline(doc: dict) -> str:
    w = doc["watch"]
    top = doc["root_causes"][0] if doc["root_causes"] else None
    what = f"{top['code']}: {top['issue']}" if top else "see below"
    first = "early warning" if w["update"] == 0 else f"update {w['update']}"
    line = f"mltd watch · run {doc['run']['id']} · {first} at step {w['step']:g} · {what}"
    if top and top.get("early"):
        line += f" (early: confidence {top['confidence']:g}, the evidence is not conclusive yet)"
    if w.get("confirmed"):
        line += f"\nconfirmed by the post-mortem's analyzers: {', '.join(w['confirmed'])}"
    if w.get("action"):
        line += f"\nguard: {w['action']}"
    return clean(line)
