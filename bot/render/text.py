"""The terminal report (rich; colour only when the stream is a TTY)."""
from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from analysis.model import Diagnosis
from bot.redact import clean_diagnosis
from bot.render.common import STATUS_LINE, artifact_problems, incomplete_line, reader, where

_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan", "info": "green"}


def render_text(diagnosis: Diagnosis, *, color: bool = False, width: int = 100, redact: bool = True,
                brief: bool = False) -> str:
    """The report for a terminal; `brief`: the status and one line per cause, with the place that
    proves it (for CI logs)."""
    d = clean_diagnosis(diagnosis, secrets=redact)       # no secret, and no escape sequence for the terminal
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=color, no_color=not color, width=width, highlight=False, emoji=False)
    run = d.run
    con.print(f"[bold]mltd[/bold] · run {escape(run['id'])} · {len(run['artifacts'])} artifact(s) · "
              f"[bold]{STATUS_LINE[d.status]}[/bold]")
    if line := incomplete_line(d):
        con.print(f"[yellow]{escape(line)}[/yellow]")
    causes = d.root_causes
    if brief:
        for i, c in enumerate(causes, 1):
            first = f"  [dim]— {escape(where(c.evidence[0]))}[/dim]" if c.evidence else ""
            con.print(f"{i}. {c.code} [{_STYLE[c.severity]}]{c.severity}[/] {c.confidence:.2f}  "
                      f"{escape(c.issue)}{first}")
        return _trimmed(buf)
    if d.symptoms:
        con.print("Symptoms: " + escape("; ".join(d.symptoms)))
    if causes:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for col in ("#", "code", "severity", "conf.", "issue"):
            table.add_column(col, overflow="fold")
        for i, c in enumerate(causes, 1):
            table.add_row(str(i), c.code, f"[{_STYLE[c.severity]}]{c.severity}[/]", f"{c.confidence:.2f}",
                          escape(c.issue))
        con.print()
        con.print(table)
    for i, c in enumerate(causes, 1):
        con.print()
        by = reader(d, c)
        con.print(f"[bold]{i}. {escape(c.issue)}[/bold] [{_STYLE[c.severity]}]({c.code}, {c.severity}, "
                  f"confidence {c.confidence:.2f}{f', read by {by}' if by else ''})[/]")
        for ev in c.evidence:
            con.print(f"   • {escape(ev.text)}  [dim]— {escape(where(ev))}[/dim]")
        con.print(f"   Fix: {escape(c.fix)}")
        if c.expected_impact:
            con.print(f"   Expected: {escape(c.expected_impact)}")
        if c.patch:
            con.print("   Suggested patch (not applied):")
            for line in c.patch.splitlines():
                style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
                con.print(f"     [{style}]{escape(line)}[/]")
    if d.quick_fixes:
        con.print()
        con.print("Quick fixes: " + escape("; ".join(d.quick_fixes)))
    if d.performance:
        con.print()
        con.print("[bold]Speed[/bold]")
        for seen in d.performance:
            con.print(f"   • {escape(seen.text)}  [dim]— {escape(where(seen))}[/dim]")
    problems = artifact_problems(d)
    if problems:
        con.print()
        con.print("[bold]Artifacts with problems[/bold]")
        for p in problems:
            con.print(f"   • {escape(p)}")
    if d.missing_artifacts:
        con.print()
        con.print("[bold]Would settle it[/bold]: " + escape("; ".join(d.missing_artifacts)))
    if d.tell_apart:
        con.print("[bold]Would tell them apart[/bold]: " + escape(d.tell_apart))
    for q in d.questions:
        con.print(f"? {escape(q)}")
    for key, path in d.analysis_artifacts.items():
        con.print(f"[dim]{key}: {escape(path)}[/dim]")
    if d.agent_note:
        con.print(f"[dim]{escape(d.agent_note)}[/dim]")
    return _trimmed(buf)


def _trimmed(buf: io.StringIO) -> str:
    """The printed text without the spaces rich pads table cells with."""
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())
