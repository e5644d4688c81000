"""Renderers: pure functions of a Diagnosis (terminal text, GitHub markdown, JSON, Slack blocks)
and the plot. Each starts with `bot.redact.clean_diagnosis`, the one output boundary: secrets and
control characters never reach a format or a channel."""
from bot.render.jsondoc import render_json
from bot.render.markdown import render_markdown
from bot.render.text import render_text

__all__ = ["render_json", "render_markdown", "render_text"]
