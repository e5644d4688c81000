"""The diagnosis as JSON (the document DESIGN.md describes), through the same output boundary as
every other renderer."""
from __future__ import annotations

import json

from bot.redact import clean_doc


def render_json(doc: dict, *, redact: bool = True) -> str:
    return json.dumps(clean_doc(doc, secrets=redact), indent=2, allow_nan=False, default=str) + "\n"
