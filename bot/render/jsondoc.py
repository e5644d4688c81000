"""The diagnosis as JSON (the document DESIGN.md describes), through the same output boundary as
every other renderer."""
from __future__ import annotations

import json

from analysis.model import Diagnosis
from bot.redact import clean_doc


def render_json(diagnosis: Diagnosis, *, redact: bool = True) -> str:
    return render_document(diagnosis.to_dict(), redact=redact)


def render_document(doc: dict, *, redact: bool = True) -> str:
    """Any JSON document through the same boundary (a watch warning: a diagnosis and its `watch` fields)."""
    return json.dumps(clean_doc(doc, secrets=redact), indent=2, allow_nan=False, default=str) + "\n"
