"""`mltd feedback export DIR`: each corrected diagnosis (someone pressed "Wrong cause…" and named the
real one) becomes a case in the layout of the wild corpus (`tests/wild/`): `DIR/cases/<id>/` holds
the run's text artifacts, redacted, and `DIR/labels.json` one entry with the real code, so a team's
own misses become its regression suite. An export into the same folder again updates its cases
in place and keeps every other entry.

The run is fetched the way its answer fetched it (the S3 run, the run name through MLTD_RUN_URI,
the attached files, the pasted text). Checkpoints and other binary files are left out, and a text
file over the corpus's 200 KB cap keeps its last 200 KB (a failure shows at the end of a log);
`excerpt_note` says what was left out or cut.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bot.feedback import WRONG
from bot.fetch import FetchError
from bot.redact import redact
from bot.run_cache import RunCache
from bot.settings import Settings
from bot.slack_jobs import gather
from bot.slack_port import SlackPort
from bot.store import Request, Store

FILE_MAX = 200_000                       # the wild corpus's cap per file
SNIFF = 8192


@dataclass
class Exported:
    cases: list[dict] = field(default_factory=list)        # the labels written
    problems: list[str] = field(default_factory=list)      # corrections that could not be exported, and why


def split_of(source_url: str) -> str:
    """The wild corpus's split rule: sha256 of the source, even -> tune (tests/wild/README.md)."""
    return "tune" if int(hashlib.sha256(source_url.encode()).hexdigest(), 16) % 2 == 0 else "measure"


def export(store: Store, dest: Path, settings: Settings) -> Exported:
    out = Exported()
    labels_path = dest / "labels.json"
    labels = {e["id"]: e for e in json.loads(labels_path.read_text())} if labels_path.exists() else {}
    slack, cache = SlackPort(settings), RunCache(settings)   # a run the follow-ups kept is not fetched again
    for fb in store.feedback(verdict=WRONG):
        req = store.get(fb["request_key"])
        if req is None or req.source != "slack":
            out.problems.append(f"{fb['request_key']}: the request is no longer stored")
            continue
        case = _case_id(req, fb["code"])
        with tempfile.TemporaryDirectory(prefix="mltd-export-", dir=settings.work_dir or None) as tmp:
            try:
                path = gather(req, Path(tmp), slack, settings, cache).got.path
            except FetchError as exc:
                out.problems.append(f"{case}: {exc}")
                continue
            folder = dest / "cases" / case
            if folder.exists():
                shutil.rmtree(folder)
            notes = _copy_redacted(path, folder)
        if not any(folder.iterdir()):
            folder.rmdir()
            out.problems.append(f"{case}: the run has no text artifact to keep")
            continue
        labels[case] = _label(case, req, fb, notes)
        out.cases.append(labels[case])
    dest.mkdir(parents=True, exist_ok=True)
    labels_path.write_text(json.dumps(list(labels.values()), indent=2, ensure_ascii=False) + "\n")
    return out


def _case_id(req: Request, code: str) -> str:
    run = re.sub(r"[^A-Za-z0-9._-]+", "-", (req.params.get("run") or "pasted").split("://")[-1]).strip("-.")[-40:]
    return f"{run or 'run'}-{code}-{hashlib.sha256(req.key.encode()).hexdigest()[:8]}"


def _source_url(req: Request) -> str:
    """Where the diagnosis was answered: slack://TEAM/CHANNEL/THREAD_TS."""
    return f"slack://{req.team}/{req.channel}/{req.thread_ts or req.reply_ts}"


def _label(case: str, req: Request, fb: dict, notes: list[str]) -> dict:
    url = _source_url(req)
    label = {"id": case, "source_url": url, "thread_title": redact(req.text or "")[:200], "dialect": "unknown",
             "code": fb["code"], "alt_codes": [], "established_by": "team feedback (Wrong cause…)",
             "evidence_quote": fb.get("reason") or "", "split": split_of(url),
             "diagnosed_code": (req.result or {}).get("top"), "request": req.key}
    if notes:
        label["excerpt_note"] = "; ".join(notes)
    return label


def _copy_redacted(src: Path, dest: Path) -> list[str]:
    """Every text file under `src`, redacted, flat in `dest` (a sub-folder's name joins the file's
    with `_`); notes for what was left out or cut."""
    dest.mkdir(parents=True)
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file() and not p.name.startswith("."))
    notes = []
    for f in files:
        rel = f.name if f == src else "_".join(f.relative_to(src).parts)
        with open(f, "rb") as fh:
            head = fh.read(SNIFF)
        if b"\x00" in head or not _decodes(head):
            notes.append(f"left out {rel} (binary)")
            continue
        data = f.read_bytes()
        if len(data) > FILE_MAX:
            cut = data[-FILE_MAX:]
            data = cut[cut.find(b"\n") + 1:] if b"\n" in cut else cut
            notes.append(f"{rel}: the last {len(data):,} of {f.stat().st_size:,} bytes")
        text = redact(data.decode("utf-8", errors="replace")).encode("utf-8")[-FILE_MAX:]   # a marker can be longer
        (dest / rel).write_bytes(text)
    return notes


def _decodes(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:        # a multi-byte character cut at the sniff's end is still text
        return exc.start >= len(head) - 3
    return True
