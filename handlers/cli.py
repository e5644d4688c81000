"""`mltd` on the command line.

Exit codes: 0 a report was produced from readable artifacts (whatever it found); 2 bad input (no
such path, nothing readable in it); 1 an internal error (reported in one line, never a traceback).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mltd", description="ML training debugger: ranked root causes with evidence.")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("diagnose", help="diagnose a run folder or a single log/metrics file")
    d.add_argument("path", help="run folder, or one file (log, metrics, checkpoint)")
    d.add_argument("--symptom", action="append", default=[], metavar="TEXT", help="what you saw (repeatable)")
    d.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    d.add_argument("--plot", metavar="FILE.png", help="write loss / grad norm / LR with each onset marked")
    d.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour in text output")
    return p


def _diagnose(args) -> int:
    from analysis import diagnose
    from bot.render import render_markdown, render_text

    path = Path(args.path)
    if not path.exists():
        print(f"mltd: {args.path}: no such file or folder", file=sys.stderr)
        return EXIT_INPUT
    diagnosis, run = diagnose(path, args.symptom)
    if args.plot:
        from bot.render.plot import render_plot
        try:
            written = render_plot(run.metrics, diagnosis.root_causes, args.plot)
        except OSError as exc:
            print(f"mltd: cannot write plot {args.plot}: {exc.strerror}", file=sys.stderr)
            written = None
        if written is not None:
            diagnosis.analysis_artifacts["loss_visualization"] = str(written)
        else:
            print("mltd: no loss, grad-norm or LR series to plot", file=sys.stderr)
    doc = diagnosis.to_dict()
    if args.format == "json":
        sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(render_markdown(doc))
    else:
        color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
        sys.stdout.write(render_text(doc, color=color))
    if not run.usable():
        if not run.artifacts:
            print(f"mltd: {args.path}: no artifacts found (expected logs, metrics, configs or checkpoints)", file=sys.stderr)
        else:
            print(f"mltd: {args.path}: none of the {len(run.artifacts)} file(s) could be read; see the report", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "diagnose":
            return _diagnose(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the one place a bug becomes a message, not a traceback
        print(f"mltd: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
