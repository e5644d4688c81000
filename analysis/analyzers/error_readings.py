"""Always a differential diagnosis: an error or a traceback that no signature knows still gets
ranked plausible causes from what it shows, its exception type, the words of its message and the
library frames it passed through (analysis/data/error_readings.toml). The confidences stay low and
each cause carries what would settle it, so the reply says "probably one of these, and this would
tell" instead of "nothing shows a fault"."""
from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

from analysis.analyzers.common import metrics_read, paste_kinds, pasted_texts, reported_after
from analysis.metrics import Series, clip
from analysis.model import Event, Evidence, Finding
from analysis.run import Run

READINGS = Path(__file__).resolve().parents[1] / "data" / "error_readings.toml"
# the event signatures of an error no cause is known for: a traceback or an exception line no
# signature names, and a CUDA error, a native crash, an uncaught C++ exception or a NaN checkpoint metric whose
# own words name no cause (signatures.toml, code "")
UNKNOWN = ("traceback", "error", "cuda_error", "native_crash", "nan_checkpoint_metric", "uncaught_cpp")
TRAINED_AFTER = 3     # loss reports after an error line: the run went on past it
WORDS_ONLY = 0.6      # a reading's words in a line that is no error: suggested, less than by an error
WORDS_MAX_BYTES = 256 * 1024    # a paste, not a run's log (a long log from which nothing was read is no paste)
WORDS_LINE_MAX = 2000
VALUES = ("nan", "inf")     # printed values, not words: a per-class row of nan, a mask of -inf say nothing alone
# a line that says of itself it is no failure (TF's allocator: "The caller indicates that this is not a failure")
_DISOWNED = re.compile(r"not a failure|can (?:safely )?be ignored|is harmless", re.I)
# A line logged at a notice's level says the program went on: `NCCL INFO ...`, `WARNING:absl:Unable to initialize
# backend 'tpu'`, glog's `I0420`/`W0420`, TensorFlow's `W tensorflow/...`, a Python warning category. NCCL's
# `WARN` is its error level (a failed connection is reported there): its words are read. c10d's own
# `[W socket.cpp:634]` notices (a server socket not yet listening) are retried, not failures.
_NOTICE = re.compile(r"\b(?:INFO|DEBUG|WARNING)\b|\[[IWD]\d*[^\]]*\.(?:cpp|hpp|cc|h):\d+\]|^\s*[IW]\d{4} "
                     r"|\b[IW] tensorflow/|\w+Warning: |warnings\.warn\(")


@cache
def _table() -> tuple[list[tuple[dict, re.Pattern | None]], dict]:
    doc = tomllib.loads(READINGS.read_text())
    out = []
    for r in doc["reading"]:
        words = _words(r.get("match", []))
        out.append((r, re.compile(words) if words else None))
    return out, doc["fallback"]


def _words(words: list[str]) -> str:
    return "|".join(rf"(?<![a-z0-9_]){re.escape(w.lower())}(?![a-z0-9_])" for w in words)


def _frame_place(path: str) -> str:
    """The part of a frame's path that says whose code it is: below site-packages for a library,
    the file's own name otherwise (a user's folder named `data` is not the DataLoader)."""
    low = path.replace("\\", "/").lower()
    if "site-packages/" in low or "dist-packages/" in low:
        return low.split("-packages/", 1)[1]
    if "/lib/python" in low:
        return low.split("/lib/python", 1)[1]
    return low.rsplit("/", 1)[-1]


_RECORD_WRAPPER = "torch/distributed/elastic/multiprocessing/errors"


def _hits(e: Event) -> list[tuple[dict, str]]:
    """The readings this error matches, each with what in it matched."""
    text = f"{e.text} {_asserted(e)}".lower()
    # (not torchrun's @record decorator around a rank's main: every rank's traceback passes through it)
    places = [p for f in e.fields.get("frames", []) if _RECORD_WRAPPER not in (p := _frame_place(f["file"]))]
    table, _ = _table()
    out, muted = [], False
    for r, words in table:
        m = words.search(text) if words else None
        shown = f"{text} {e.fields.get('values', '')}".lower()
        if m and r.get("requires") and not re.search(_words(r["requires"]), shown):
            # the message is this reading's, but what it must also show (the values it printed) is not
            # there: no reading of it, and an exclusive one still says what the message is not
            muted = muted or bool(r.get("exclusive"))
            continue
        if m:
            out.append((r, f"the message says {m.group(0)!r}"))
            continue
        lib = next((p for p in places for part in r.get("frames", []) if part.lower() in p), None)
        if lib:
            out.append((r, f"it passed through {lib}"))
    exclusive = [h for h in out if h[0].get("exclusive")]
    return exclusive or ([] if muted else out)


def _asserted(e: Event) -> str:
    """What a bare `AssertionError` checked: Python prints no message for `assert cond`, only the
    statement's line as the traceback's last frame (`assert (boxes1[:, 2:] >= boxes1[:, :2]).all()`)."""
    if e.text.strip() not in ("AssertionError", "AssertionError:") or not e.context:
        return ""
    code = [ln.strip() for ln in e.context[:-1] if ln.strip() and not ln.strip().startswith(("File ", "^", "~"))]
    return code[-1] if code and code[-1].startswith("assert") else ""


def _findings(e: Event) -> list[Finding]:
    hits = _hits(e)
    kind = (e.fields.get("exception") or ("C++ exception nothing caught" if e.signature == "uncaught_cpp" else "")
            or (e.text.split(":", 1)[0].strip() if ":" in e.text else "error"))
    if not hits:
        _, fb = _table()
        hits = [(fb, f"a {clip(kind, 60)} that names no known failure")]
    best: dict[str, Finding] = {}
    for r, why_here in hits:
        for c in r["causes"]:
            have = best.get(c["code"])
            if have is not None and have.confidence >= c["confidence"]:
                continue
            ev = Evidence(f"{clip(e.text, 200)}: {why_here}; {c['why']}", e.artifact, e.locator)
            best[c["code"]] = _finding(r, c["code"], f"An error no signature names ({clip(e.text, 120)}): {c['why']}",
                                       "medium", c["confidence"], ev)
    return list(best.values())


def _finding(r: dict, code: str, issue: str, severity: str, confidence: float, ev: Evidence) -> Finding:
    """A cause a reading suggests, with what would settle it (its `tell`) as the fix."""
    return Finding(code=code, issue=issue, severity=severity, confidence=confidence, evidence=[ev],
                   fix=r["tell"][0].upper() + r["tell"][1:], analyzer="crashes",
                   quick_fix=r["tell"].split(":")[0][:80], settle=r["tell"])


def setup_error(events: list[Event]) -> str | None:
    """What to say of an error that is the installation's, not the training's (a reading with no
    cause): no taxonomy code fits, so the reply names the error and what to check instead of
    "nothing shows a fault"."""
    unknown = [e for e in events if e.signature in UNKNOWN]
    if any(e.code for e in events) or not unknown:
        return None
    e = _stopping(unknown)
    hits = _hits(e)
    if not hits or any(r["causes"] for r, _ in hits):
        return None
    r = hits[0][0]
    return f"The run stopped with {clip(e.text, 160)!r} ({e.artifact} line {e.line}): {r['tell']}."


def analyze_events(events: list[Event], loss: Series | None = None) -> list[Finding]:
    """The differential of the last unknown error (the one that stopped the run), where no
    signature named any error in the paste: a known one already says what happened. An exception
    line the training loss is reported after (TRAINED_AFTER times or more, in the same file) did not
    stop the run: a logger printed an error the code handled (an upload retried)."""
    if any(e.code for e in events):
        return []
    unknown = [e for e in events if e.signature in UNKNOWN and not trained_after(e, loss)]
    return _findings(_stopping(unknown)) if unknown else []


def _stopping(unknown: list[Event]) -> Event:
    """The error that stopped the run: the last one, unless it is a traceback cut before its exception line
    and a line just above it quotes the exception (a tuner's report: Optuna logs the trial's error, then its
    traceback)."""
    last = unknown[-1]
    start = last.fields.get("cut_from")
    if start is not None and len(unknown) > 1 and start - 1 <= unknown[-2].line < start:
        return unknown[-2]
    return last


def analyze_words(run: Run) -> list[Finding]:
    """The last resort of a paste from which nothing was read: no metric, no error line, no warning
    (a module's printout, a debugger session, an `assert` line quoted alone). Its words still point
    somewhere: each reading whose words one of its lines holds adds its causes at WORDS_ONLY of their
    confidence, with that line as the evidence, so the reply ranks what the words suggest and says what
    would settle it instead of "nothing shows a fault". A line logged as a notice (INFO, WARNING, a Python
    warning) is not read: the program went on after it."""
    if run.events or metrics_read(run):
        return []
    table, _ = _table()
    best: dict[str, Finding] = {}
    for a, text in pasted_texts(run, paste_kinds(run), WORDS_MAX_BYTES):
        lines = text.splitlines()
        readable = _readable(lines)
        for r, words in table:
            if words is None or not r["causes"]:
                continue
            hit = next(((n, ln, m) for n, ln in readable
                        if (m := next((m for m in words.finditer(ln.lower()) if m.group(0) not in VALUES), None))),
                       None)
            if hit is None:
                continue
            n, ln, m = hit
            for c in r["causes"]:
                conf = round(c["confidence"] * WORDS_ONLY, 2)
                if c["code"] in best and best[c["code"]].confidence >= conf:
                    continue
                said = f"{clip(ln.strip(), 160)}: the words {m.group(0)!r}"
                best[c["code"]] = _finding(r, c["code"], f"Nothing in the paste was read as a metric or an error, "
                                           f"but {said} suggest it: {c['why']}", "low", conf,
                                           Evidence(f"{said}; {c['why']}", a.path, f"line {n}"))
    return list(best.values())


def _readable(lines: list[str]) -> list[tuple[int, str]]:
    """The numbered lines whose words may be read: not a notice (INFO, WARNING, a Python warning), nor
    the source line a Python warning prints indented under it, nor one that disowns a failure."""
    out, under_notice = [], False
    for n, ln in enumerate(lines, 1):
        if _NOTICE.search(ln):
            under_notice = True
            continue
        if under_notice and ln[:1].isspace():
            continue            # `  ret = ret.dtype.type(ret / rcount)` under its RuntimeWarning
        under_notice = False
        if len(ln) <= WORDS_LINE_MAX and not _DISOWNED.search(ln):
            out.append((n, ln))
    return out


def trained_after(e: Event, loss: Series | None) -> bool:
    """Whether an error has the loss reported after it: a logger's one line, or a traceback a library printed for
    an exception it handled (wandb's `entering retry loop`, then the run's loss on)."""
    if e.signature not in ("error", "traceback") or (e.context and e.signature == "error"):
        return False
    return len(reported_after(loss, e)) >= TRAINED_AFTER
