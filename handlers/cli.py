"""`mltd` on the command line.

Exit codes: 0 a report was produced from readable artifacts (whatever it found); 2 bad input (no
such path, nothing readable in it); 1 an internal error (reported in one line, never a traceback).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.model import Diagnosis

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mltd", description="ML training debugger: ranked root causes with evidence.")
    p.add_argument("--version", action="version", version=f"mltd {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("diagnose", help="diagnose a run folder or a single log/metrics file")
    d.add_argument("path", nargs="+", help="run folder, one file (log, metrics, checkpoint), an s3:// location, "
                   "or `run NAME` (through MLTD_RUN_URI)")
    d.add_argument("--symptom", action="append", default=[], metavar="TEXT", help="what you saw (repeatable)")
    d.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    d.add_argument("--plot", metavar="FILE.png", help="write loss / grad norm / LR with each onset marked")
    d.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour in text output")
    d.add_argument("--top", type=int, metavar="N", help="report only the N most likely causes")
    d.add_argument("--quiet", action="store_true", help="text: one line per cause (for CI logs)")
    d.add_argument("--agent", action="store_true", help="hand the run to the specialist agent (ANTHROPIC_API_KEY)")
    d.add_argument("--no-redact", dest="redact", action="store_false",
                   help="show secrets found in the run as they are (your own local run only; never for posting)")
    c = sub.add_parser("compare", help="compare a failing run A with a reference run B: config keys and code that "
                       "differ, where the curves part, and which difference explains the failure")
    c.add_argument("a", help="the failing run: a folder, an s3:// location, or a run name (through MLTD_RUN_URI)")
    c.add_argument("b", help="the reference run that worked, the same way")
    c.add_argument("--symptom", action="append", default=[], metavar="TEXT", help="what you saw in A (repeatable)")
    c.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    c.add_argument("--no-redact", dest="redact", action="store_false",
                   help="show secrets found in the runs as they are (your own local runs only)")
    s = sub.add_parser("serve", help="the web service: Slack events, health, metrics (and a worker in-process)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--no-worker", action="store_true", help="run no worker here (start `mltd worker` elsewhere)")
    s.add_argument("--socket-mode", action="store_true", help="receive Slack events over Socket Mode (SLACK_APP_TOKEN)")
    sub.add_parser("doctor", help="check the environment and every configured connection")
    t = sub.add_parser("watch", help="follow a growing training log or metrics file and warn early (stdout, "
                       "MLTD_WATCH_FILE or MLTD_WATCH_WEBHOOK)")
    t.add_argument("path", help="a training log or metrics file (.csv, .tsv, .jsonl), a run folder (its newest of "
                   "them; its config and code for the fix), or s3://bucket/prefix/ (its newest of them, polled; "
                   "needs mltd[s3])")
    t.add_argument("--poll", type=float, default=2.0, metavar="S", help="seconds between two looks at the log")
    t.add_argument("--idle-exit", type=float, default=None, metavar="S",
                   help="stop once the log has not grown for S seconds (default: follow until interrupted)")
    f = sub.add_parser("feedback", help="what people said of mltd's diagnoses")
    fsub = f.add_subparsers(dest="feedback_command", required=True)
    e = fsub.add_parser("export", help="each corrected diagnosis as a run folder plus label, in the format of the "
                        "wild corpus (cases/<id>/, labels.json): a regression suite of your own misses")
    e.add_argument("dir", help="the folder to write (created; earlier exports in it are updated, others kept)")
    w = sub.add_parser("worker", help="workers alone: take requests from the queue (MLTD_QUEUE_URL)")
    w.add_argument("--workers", type=int, default=None, help="worker threads (default MLTD_WORKERS)")
    return p


def _say(message: str) -> None:
    """A message on stderr, redacted and free of escape sequences like every other output."""
    from bot.redact import clean

    print(clean(message), file=sys.stderr)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mltd")
    except PackageNotFoundError:
        return "(not installed)"


def _diagnose(args) -> int:
    import tempfile

    if args.plot and not _writable(Path(args.plot)):
        return EXIT_INPUT

    with tempfile.TemporaryDirectory(prefix="mltd-") as tmp:
        return _diagnose_in(args, Path(tmp))


def _locate(args, tmp: Path) -> tuple[Path | None, str | None]:
    """The local folder for `path`: as given, or fetched from S3 / MLTD_RUN_URI like the service does."""
    words = args.path
    if (len(words) == 2 and words[0] == "run") or words[0].startswith("s3://"):
        from bot.fetch import fetch, resolve
        from bot.settings import Settings

        settings = Settings()
        ref, kind = (words[1], "name") if words[0] == "run" else (words[0], "s3")
        got = fetch(resolve(ref, kind, settings), tmp / "run", settings)     # a FetchError is said by main
        for note in got.notes:
            _say(f"mltd: {note}")
        return got.path, got.source
    if len(words) > 1:
        _say(f"mltd: give one run folder or file, not {len(words)} ({', '.join(words[:3])}); quote a path with "
             "spaces in it, or write `run NAME` for a run found through MLTD_RUN_URI")
        return None, None
    path = Path(words[0])
    if not path.exists():
        _say(f"mltd: {path}: no such file or folder")
        return None, None
    return path, None


def _writable(plot: Path) -> bool:
    """Whether the plot can be written, said before any work: a report that then cannot save its
    plot is a failed command."""
    folder = plot.parent if str(plot.parent) else Path(".")
    if not folder.is_dir():
        _say(f"mltd: cannot write the plot {plot}: no folder {folder}")
        return False
    if not os.access(folder, os.W_OK) or (plot.exists() and not os.access(plot, os.W_OK)):
        _say(f"mltd: cannot write the plot {plot}: permission denied")
        return False
    return True


def _budget():
    """The artifact and run budgets from the environment (MLTD_ARTIFACT_TIME_S, ...); the engine's
    defaults where the service's settings are not installed."""
    from analysis.budget import DEFAULT

    if not any(k.startswith("MLTD_") for k in os.environ):
        return DEFAULT           # nothing to read: skip the settings machinery (0.2 s of imports)
    try:
        from bot.settings import Settings
    except ImportError:
        return DEFAULT
    return Settings().budget()


def _diagnose_in(args, tmp: Path) -> int:
    from bot import pipeline

    path, source = _locate(args, tmp)
    if path is None:
        return EXIT_INPUT
    args.path = str(path) if source is None else source
    agent_settings = None
    if args.agent:
        from bot.settings import Settings

        agent_settings = Settings()
    out = pipeline.reply(path, lambda diagnosis: _render(args, diagnosis), symptoms=args.symptom, source=source,
                         budget=_budget(), agent_settings=agent_settings, plot=Path(args.plot) if args.plot else None)
    if out.plot_error:
        _say(f"mltd: cannot write plot {args.plot}: {out.plot_error}")
    elif args.plot and out.plot is None:
        _say("mltd: no loss, grad-norm or LR series to plot")
    sys.stdout.write(out.body)
    run = out.run
    if not run.usable():
        if not run.artifacts:
            _say(f"mltd: {args.path}: no artifacts found (expected logs, metrics, configs or checkpoints)")
        else:
            _say(f"mltd: {args.path}: none of the {len(run.artifacts)} file(s) could be read; see the report")
        return EXIT_INPUT
    return EXIT_OK


def _compare(args) -> int:
    import functools
    import tempfile

    from bot import pipeline
    from bot.render.compare import render_compare_json, render_compare_markdown, render_compare_text

    renderers = {"json": render_compare_json, "markdown": render_compare_markdown, "text": render_compare_text}
    render = renderers[args.format]
    with tempfile.TemporaryDirectory(prefix="mltd-") as tmp:
        found = [_locate_ref(ref, Path(tmp) / side) for ref, side in ((args.a, "a"), (args.b, "b"))]
        if any(path is None for path, _ in found):
            return EXIT_INPUT
        (path_a, source_a), (path_b, source_b) = found
        out = pipeline.compare(path_a, path_b, functools.partial(render, redact=args.redact), source_a=source_a,
                               source_b=source_b, symptoms=args.symptom, budget=_budget())
        sys.stdout.write(out.body)
    unreadable = [ref for ref, run in ((args.a, out.comparison.a), (args.b, out.comparison.b)) if not run.usable]
    if unreadable:
        _say(f"mltd: nothing readable in {', '.join(unreadable)} (expected logs, metrics, configs or checkpoints)")
        return EXIT_INPUT
    return EXIT_OK


def _locate_ref(ref: str, tmp: Path) -> tuple[Path | None, str | None]:
    """One run of `mltd compare`: a local path, an s3:// location, or a run name through MLTD_RUN_URI."""
    if not ref.startswith("s3://") and (Path(ref).exists() or not os.environ.get("MLTD_RUN_URI")):
        if not Path(ref).exists():
            _say(f"mltd: {ref}: no such file or folder")
            return None, None
        return Path(ref), None
    from bot.fetch import FetchError, fetch, resolve
    from bot.settings import Settings

    settings = Settings()
    try:
        got = fetch(resolve(ref, "s3" if ref.startswith("s3://") else "name", settings), tmp, settings)
    except FetchError as exc:
        _say(f"mltd: {exc}")
        return None, None
    for note in got.notes:
        _say(f"mltd: {note}")
    return got.path, got.source


def _watch(args) -> int:
    from handlers.watch.tail import follow
    from handlers.watch.watcher import Watcher
    from handlers.watch_s3 import S3Log  # boto3 only once an s3:// log is opened; its S3LogError is said by main

    try:
        if args.path.startswith("s3://"):
            source, name = S3Log(args.path), args.path.rstrip("/").rsplit("/", 1)[-1]
        else:
            source, name = args.path, Path(args.path).resolve().name
        watcher = follow(source, lambda context: Watcher(name, context=context, budget=None),
                         poll_s=args.poll, idle_exit_s=args.idle_exit)
    except FileNotFoundError as exc:
        _say(f"mltd: {exc}")
        return EXIT_INPUT
    except KeyboardInterrupt:
        return EXIT_OK
    skipped = f", {watcher.skipped_lines} malformed line(s) skipped" if watcher.skipped_lines else ""
    _say(f"mltd watch: {watcher.live.points} steps read, {len(watcher.posts)} warning(s) posted{skipped}")
    return EXIT_OK


def _render(args, diagnosis: Diagnosis) -> str:
    from bot.render import render_json, render_markdown, render_text

    if args.top is not None:
        diagnosis = replace(diagnosis, root_causes=diagnosis.root_causes[: max(args.top, 0)])
    if args.format == "json":
        return render_json(diagnosis, redact=args.redact)
    if args.format == "markdown":
        return render_markdown(diagnosis, redact=args.redact)
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    # the terminal's width on a terminal; no wrapping at all into a pipe or a CI log
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else 100_000
    return render_text(diagnosis, color=color, redact=args.redact, width=width, brief=args.quiet)


def _doctor() -> int:
    from bot.doctor import run_checks
    from bot.settings import Settings

    checks = run_checks(Settings())
    mark = {True: "ok", False: "FAIL", None: "off"}
    width = max(len(c.name) for c in checks)
    for c in checks:
        fix = f"\n{'':<{width}}        fix: {c.fix}" if c.ok is False else ""
        print(f"{c.name:<{width}}  {mark[c.ok]:<4}  {c.detail}" + fix)
    failed = [c for c in checks if c.ok is False]
    return EXIT_INTERNAL if failed else EXIT_OK


def _serve(args) -> int:
    import gc

    import uvicorn

    from bot import logs
    from bot.settings import Settings
    from handlers.web import create_app

    logs.setup()
    settings = Settings()
    app = create_app(settings, run_worker=not args.no_worker, socket_mode=args.socket_mode)
    # the modules and objects of startup never die: kept out of the collector's full passes, which
    # would otherwise walk them all and stall every ack in flight (~100 ms under a burst)
    gc.collect()
    gc.freeze()
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", log_config=None)
    return EXIT_OK


def _feedback_export(args) -> int:
    from bot.feedback_export import export
    from bot.settings import Settings
    from bot.store import Store

    settings = Settings()
    dest = Path(args.dir)
    if dest.exists() and not dest.is_dir():
        _say(f"mltd: {dest} is not a folder")
        return EXIT_INPUT
    out = export(Store(settings.database_url), dest, settings)
    for problem in out.problems:
        _say(f"mltd: not exported: {problem}")
    _say(f"mltd: {len(out.cases)} corrected case(s) written to {dest}")
    return EXIT_INPUT if out.problems else EXIT_OK


def _worker(args) -> int:
    import threading

    from bot import logs
    from bot.settings import Settings
    from bot.worker import Worker

    logs.setup()
    settings = Settings()
    worker = Worker(settings)
    stop = threading.Event()
    worker.reaper(stop)
    # worker processes: a job's time limit (MLTD_JOB_TIMEOUT_S) is enforced there (SIGALRM), and
    # diagnoses run in parallel, free of one interpreter's lock
    consumer = worker.huey.create_consumer(workers=args.workers or settings.workers, worker_type="process",
                                           periodic=False)
    try:
        consumer.run()                     # until SIGINT/SIGTERM
    finally:
        stop.set()
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from analysis.errors import MltdError

    try:
        if args.command == "diagnose":
            return _diagnose(args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "serve":
            return _serve(args)
        if args.command == "worker":
            return _worker(args)
        if args.command == "watch":
            return _watch(args)
        if args.command == "doctor":
            return _doctor()
        if args.command == "feedback":
            return _feedback_export(args)
    except MltdError as exc:  # the one place a user-facing error is said: one line, exit 2
        # a fetch error is worded for a Slack thread; on the command line the fix is a setting
        _say("mltd: " + str(exc).replace("Mention me with its s3:// location instead.",
                                         "Set MLTD_RUN_URI (e.g. s3://bucket/runs/{run}/) or give the s3:// location."))
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the one place a bug becomes a message, not a traceback
        _say(f"mltd: internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
