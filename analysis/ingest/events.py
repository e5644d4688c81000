"""Tracebacks, warnings and errors: the signature table and the numbers inside the messages."""
from __future__ import annotations

import re
import tomllib
from array import array
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from analysis.ingest.dressing import undress
from analysis.metrics import clip
from analysis.model import Event

TRACEBACK_START = "Traceback (most recent call last):"
# An exception line: `module.Name: message` or `Name: message` at column 0 (after a rank prefix).
# (OpenCV's exception class is lower case: `cv2.error: OpenCV(4.5.1) ...`)
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning|Failure)|cv2\.error)(?::\s?(.*))?$")
# glog's fatal check (Caffe, MXNet, TensorFlow's and Paddle's C++): `F0420 16:54:21.6 29735 math_functions.cu:26]
# Check failed: status == CUBLAS_STATUS_SUCCESS (13 vs. 0)  CUBLAS_STATUS_EXECUTION_FAILED` ends the process
_GLOG_CHECK = re.compile(r"\bCheck failed: ")
# Python's warnings module prints `path.py:186: FutureWarning: message` (the message may go on below)
_PY_WARNING = re.compile(r"^\S*\.py:\d+: [A-Za-z_]\w*Warning(?::|$)")


@dataclass(frozen=True)
class Signature:
    name: str
    code: str | None
    pattern: re.Pattern[str]


@lru_cache(maxsize=1)
def signatures() -> tuple[Signature, ...]:
    data = tomllib.loads(resources.files("analysis").joinpath("data/signatures.toml").read_text())
    return tuple(Signature(s["name"], s["code"] or None, re.compile(s["pattern"])) for s in data["signature"])


@dataclass(frozen=True)
class Benign:
    name: str
    pattern: re.Pattern[str]
    why: str
    min_scale: float | None = None


def _data(name: str) -> dict:
    return tomllib.loads(resources.files("analysis").joinpath(f"data/{name}").read_text())


@lru_cache(maxsize=1)
def benign_signatures() -> tuple[Benign, ...]:
    return tuple(Benign(b["name"], re.compile(b["pattern"]), " ".join(b["why"].split()), b.get("min_scale"))
                 for b in _data("benign.toml")["benign"])


@lru_cache(maxsize=1)
def prefilter_literals() -> tuple[str, ...]:
    """Literals of which any line worth a closer look contains one (a cheap multi-literal search)."""
    return tuple(dict.fromkeys(_data("signatures.toml")["prefilter"] + _data("benign.toml")["prefilter"]))


_SCALE = re.compile(r"(?:reducing (?:loss scale )?to|setting loss scale to|loss scale from [\d.e+]+ to):?\s*"
                    r"([\d.]+(?:e[+-]?\d+)?)")


def match_benign(text: str) -> Benign | None:
    """The benign warning this line is, if any (a loss-scale skip only while the scale stays high)."""
    for b in benign_signatures():
        if b.pattern.search(text):
            if b.min_scale is not None:
                m = _SCALE.search(text)
                if m is None or float(m.group(1)) < b.min_scale:
                    return None
            return b
    return None


MAX_LINE = 4096      # characters of a line the signatures see: a real message is far shorter


def strip_prefix(line: str) -> str:
    """The line without what a paste put in front of it (a quote marker, a rank, a timestamp; see
    dressing.py), a tab read as a space: the signatures are written with spaces, and a terminal
    copy may hold tabs where the program printed spaces (`RuntimeError:\tCUDA error:\tout of memory`)."""
    line = undress(line[:MAX_LINE].rstrip("\r\n"))
    return line.replace("\t", " ") if "\t" in line else line


def match_signature(text: str) -> Signature | None:
    for sig in signatures():
        if sig.pattern.search(text):
            return sig
    return None


_UNIT = {"b": 1, "bytes": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
         "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}
# A number starts where no digit or dot precedes it: searched from every digit of a long run of
# digits, `[\d.]+\s*UNIT` would be quadratic (a 30 KB line took 60 s). An exponent's digits are no
# number of their own (`9.8e+02 MiB` is 980 MiB, not 2).
_SIZE = r"(?<![\d.])(?<![eE][+-])([\d.]+(?:[eE][-+]?\d{1,3})?)\s*(bytes|[KMGT]i?B|B)"
_OOM_FIELDS = {
    # PyTorch >= 2.1: "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which
    # 1.23 GiB is free. ... Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB
    # is reserved by PyTorch but unallocated."
    # XLA: "Out of memory while trying to allocate 5520758552 bytes.", "Failed to allocate request for 176.00MiB"
    # PaddlePaddle: "Cannot allocate 6.933594GB memory on GPU 0, available memory is only 726.750000MB."
    "tried": rf"Tried to allocate {_SIZE}|trying to allocate {_SIZE}|allocate request for {_SIZE}"
             rf"|Cannot allocate {_SIZE}",
    "capacity": rf"total capacity of {_SIZE}|{_SIZE} total capacity",
    "free": rf"of which {_SIZE} is free|{_SIZE} free|available memory is only {_SIZE}",
    "in_use": rf"this process has {_SIZE} memory in use",
    "allocated": rf"{_SIZE} is allocated by PyTorch|{_SIZE} already allocated",
    "reserved_unallocated": rf"{_SIZE} is reserved by PyTorch but unallocated",
    "reserved": rf"{_SIZE} reserved in total by PyTorch",
    "cpu_tried": r"you tried to allocate (\d+) bytes",
}


def parse_sizes(text: str) -> dict[str, float]:
    """The byte counts in an out-of-memory message, under stable names."""
    out: dict[str, float] = {}
    for key, pattern in _OOM_FIELDS.items():
        m = re.search(pattern, text)
        if not m:
            continue
        groups = [g for g in m.groups() if g is not None]
        if key == "cpu_tried":
            out["tried"] = float(groups[0])
        elif len(groups) >= 2:
            out[key] = float(groups[0]) * _UNIT[groups[1].lower()]
    gpu = re.search(r"GPU (\d+)", text)
    if gpu:
        out["gpu"] = int(gpu.group(1))
    return out


def build_event(artifact: str, line_no: int, lines: list[str]) -> tuple[Event | None, int]:
    """The event that starts at `lines[0]` (line `line_no` of the artifact) and how many lines it
    spans: a whole traceback when one starts there, else the single line."""
    first = strip_prefix(lines[0])
    if TRACEBACK_START in first:
        block, found, j = [first], None, 1
        frames_at = 0          # the frames' indent: a traceback quoted in a box (torchrun's `traceback : ...`)
        while j < len(lines) and j < 400:
            text = strip_prefix(lines[j])
            block.append(text)
            j += 1
            indent = len(text) - len(text.lstrip(" "))
            if not frames_at and text.lstrip(" ").startswith("File "):
                frames_at = indent
            # at column 0, or, in a quoted traceback, left of its frames (`  PIL.UnidentifiedImageError: ...`)
            if text and (not text[0].isspace() or 0 < indent < frames_at) and _EXC_LINE.match(text.strip()):
                found = text
                break
        cut = found is None             # the paste ends inside the stack: no exception line, no message
        exc_line = found if found is not None else block[-1] if len(block) > 1 else first
        sig = match_signature("\n".join(block))
        benign = match_benign(exc_line) if sig is None else None
        if benign is not None:      # a traceback that ends in a harmless message (a queue cancelled at shutdown)
            return Event("benign", None, artifact, line_no + block.index(exc_line), clip(exc_line.strip(), 500),
                         fields={"benign": benign.name, "why": benign.why}), j
        event = Event(signature=sig.name if sig else "traceback", code=sig.code if sig else None,
                      artifact=artifact, line=line_no + block.index(exc_line), text=exc_line.strip(),
                      context=block[-40:], fields=_fields(sig, "\n".join(block)))
        event.fields["frames"] = _frames(block)
        if cut:
            event.fields["cut_from"] = line_no
        _values_shown(event, lines, j)
        if "in DataLoader worker process" in exc_line:
            # the worker's own error follows, after "Original Traceback": it names the sample
            for k in range(j, min(len(lines), j + 200)):
                text = strip_prefix(lines[k])
                if text and not text[0].isspace() and _EXC_LINE.match(text) and "Original Traceback" not in text:
                    event.fields["original_error"] = clip(text.strip(), 300)
                    event.fields["original_line"] = line_no + k
                    j = k + 1
                    break
        return event, j
    benign = match_benign(first)
    if benign is not None:
        return Event("benign", None, artifact, line_no, clip(first.strip(), 500),
                     fields={"benign": benign.name, "why": benign.why}), 1
    said = first
    first, exception = _unwrapped(first)
    sig = match_signature(first)
    if sig is not None and sig.name == "uncaught_cpp" and len(lines) > 1 and "what():" in lines[1]:
        # libstdc++ prints the exception's message on the next line (`  what():  CUDA error: ...`)
        said = f"{first.strip()} {strip_prefix(lines[1]).strip()}"
        benign = match_benign(said)
        if benign is not None:      # an abort at exit (`what():  driver shutting down`): the work was done
            return Event("benign", None, artifact, line_no, clip(said, 500),
                         fields={"benign": benign.name, "why": benign.why}), 2
        # a message a signature knows (`what():  CUDA error: device-side assert triggered`) is that signature's
        inner = match_signature(strip_prefix(lines[1]))
        if inner is not None and inner.code:
            return Event(inner.name, inner.code, artifact, line_no, clip(said, 500)), 2
        return Event(sig.name, sig.code, artifact, line_no, clip(said, 500)), 2
    if (sig is not None and sig.name == "target_size_mismatch" and first.rstrip().endswith("that is") and len(lines) > 1
            and strip_prefix(lines[1]).lstrip().startswith("different to the input size")):
        # a paste wrapped the warning after `that is`: the input size, which tells a harmless pair, is on the next line
        said = f"{first.strip()} {strip_prefix(lines[1]).strip()}"
        benign = match_benign(said)
        if benign is not None:
            return Event("benign", None, artifact, line_no, clip(said, 500),
                         fields={"benign": benign.name, "why": benign.why}), 2
        return Event(sig.name, sig.code, artifact, line_no, clip(said, 500)), 2
    if sig is None:
        m = _EXC_LINE.match(first.strip())
        if not m and _GLOG_CHECK.search(first):
            return _values_shown(Event("error", None, artifact, line_no, clip(first.strip(), 500)), lines, 1), 1
        if not m and _PY_WARNING.match(first.strip()):
            return Event("warning", None, artifact, line_no, clip(first.strip(), 500)), 1
        if not m or m.group(1).endswith("Warning") and "Warning:" not in first:
            return None, 1
        if m.group(1).endswith("Warning"):
            return Event("warning", None, artifact, line_no, clip(first.strip(), 500)), 1
        # a tuner's report is quoted as printed (its trial's parameters, the LR among them, are the evidence)
        event = Event("error", None, artifact, line_no, clip(said.strip(), 500))
        if exception:
            event.fields["exception"] = exception
        return _values_shown(event, lines, 1), 1
    return Event(sig.name, sig.code, artifact, line_no, clip(first.strip(), 500), fields=_fields(sig, first)), 1


# A tuner's one-line report of the exception a trial raised (Optuna 2: `[W ...] Trial 2 failed because of the
# following error: ValueError('The parameter loc has invalid values')`; Optuna 3 names the trial's parameters
# and ends with a period), its traceback often cut
_WRAPPED = re.compile(r"because of the following error: ([A-Za-z_][\w.]*(?:Error|Exception))\((['\"])(.*)\2\)\.?\s*$")


def _unwrapped(line: str) -> tuple[str, str]:
    """The exception line a tuner's report quotes, as Python prints it (`ValueError: ...`), and the exception's
    type; else the line and ""."""
    m = _WRAPPED.search(line) if "because of the following error" in line else None
    return (f"{m.group(1)}: {m.group(3)}", m.group(1)) if m else (line, "")


# torch.distributions refusing a parameter ends its message `..., but found invalid values:` and prints
# the tensor on the lines after it; whether they are NaN or finite (a negative scale) is what tells why
VALUES_FOLLOW = "found invalid values:"
VALUES_LINES = 8


def _values_shown(event: Event, lines: list[str], j: int) -> Event:
    """`event` with the tensor printed after its message (lines[j:], up to VALUES_LINES) in
    fields["values"], where the message says it follows."""
    if event.text.rstrip().endswith(VALUES_FOLLOW):
        shown = [strip_prefix(x).strip() for x in lines[j:j + VALUES_LINES]]
        event.fields["values"] = clip(" ".join(x for x in shown if x), 300)
    return event


_BARRIER = re.compile(r"world_size=(\d+), worker_count=(\d+)")


def _fields(sig: Signature | None, text: str) -> dict:
    if sig is not None and sig.code == "out_of_memory":
        return parse_sizes(text)
    if sig is not None and sig.name == "loss_scale_overflow" and (m := _SCALE.search(text)):
        return {"scale": float(m.group(1))}
    if sig is not None and sig.name == "store_barrier" and (m := _BARRIER.search(text)):
        return {"world_size": int(m.group(1)), "worker_count": int(m.group(2))}
    return {}


_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')


def _frames(block: list[str]) -> list[dict]:
    frames = []
    for i, text in enumerate(block):
        m = _FRAME.match(text)
        if m:
            code = block[i + 1].strip() if i + 1 < len(block) and not _FRAME.match(block[i + 1]) else ""
            frames.append({"file": m.group(1), "line": int(m.group(2)), "func": m.group(3), "code": code})
    return frames


def fold(events: list[Event]) -> list[Event]:
    """Repeated warnings with the same signature and text fold into the first, with a count."""
    out: list[Event] = []
    seen: dict[tuple[str, str, str], Event] = {}
    for e in events:
        if e.signature == "traceback" or e.context:
            out.append(e)
            continue
        key = (e.artifact, e.signature, re.sub(r"\d+", "#", e.text))
        if key in seen:
            seen[key].count += 1
            seen[key].fields["last_line"] = e.line
            if e.signature == "benign":
                # every line a harmless message was printed on, for the values read off them
                # (common.off_harmless_lines): 4 bytes a line, as darknet prints one each region each batch
                seen[key].fields.setdefault("lines", array("I", [seen[key].line])).append(e.line)
        else:
            seen[key] = e
            out.append(e)
    return out
