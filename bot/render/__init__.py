"""Renderers: pure functions of a Diagnosis (terminal text, GitHub markdown, JSON) and the plot."""
from bot.render.markdown import render_markdown
from bot.render.text import render_text

__all__ = ["render_markdown", "render_text"]
