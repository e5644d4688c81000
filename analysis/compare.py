"""Two runs side by side: the failing run A against a reference run B that worked.

`compare(a, b, diagnosis_of_a)` returns a `Comparison`: the config keys that differ (every format
the ingest reads, flattened to dotted keys, list items included), the code lines that differ
(training scripts present in both runs, as a bounded unified diff), where each shared metric's
curves part beyond the runs' own step-to-step noise, and the differences ranked by how well they
explain A's failure (a difference that A's diagnosis implicates comes first, and the reply says
why). Pure: no I/O beyond the runs already loaded; every renderer is a function of the `Comparison`,
and `to_dict()` is its JSON document.
"""
from __future__ import annotations

import difflib
import math
import re
import tomllib
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from analysis.metrics import Series, clip, fmt, fmt_step
from analysis.model import Diagnosis
from analysis.names import STEP_COLUMNS
from analysis.run import Run

# Curves part where |A - B| exceeds NOISE_K times how far the runs already disagreed (the median
# gap over the NOISE_POINTS shared steps before), and keeps exceeding it at PART_SHARE of the steps
# that follow (a window of a twentieth of the run, PART_WINDOW_MIN to PART_WINDOW_MAX steps): a
# loss is spiky, so a calm step inside a divergence must not hide it, and two differently seeded
# runs of 100k steps must not part by chance (tests/test_compare.py holds both).
NOISE_K = 3.0
NOISE_POINTS = 50
PART_WINDOW_MIN = 4
PART_WINDOW_MAX = 40
PART_SHARE = 0.75
MIN_SHARED = 5                       # fewer shared steps than this: no parting is claimed
DIFF_CONTEXT = 1                     # unified diff context lines
DIFF_LINES_PER_FILE = 60
DIFF_LINES_TOTAL = 160
VALUE_CHARS = 80                     # a config value longer than this is clipped
MAX_PARTINGS = 8                     # metrics listed in the report
MAX_METRICS = 32                     # shared metrics compared (per-layer series are left out)
MAX_CONFIG_DIFFS = 200               # differing keys kept (two tokenizer configs differ in thousands)

# A key whose name says it holds a secret: its values are never shown, only that they differ.
_SECRET_KEY = re.compile(r"(?i)(token|secret|password|passwd|api[_-]?key|access[_-]?key|private[_-]?key|credential)")
# Keys that name, place or log a run but do not change its training.
_BOOKKEEPING = re.compile(r"(?i)(^|[._])(run_?name|experiment_?name|exp_?name|project|entity|tags?|notes?|"
                          r"output_dir|log(ging)?_dir|save_dir|logging_steps|save_steps|eval_steps|report_to|wandb\w*|"
                          r"mlflow\w*|tracking_uri|run_id|timestamp|date|host(name)?|user|git_sha|commit)$")

_LR_METRICS = ("lr", "learning_rate")
_COUNTERS = {"epoch", *STEP_COLUMNS}              # they count, they do not measure


@dataclass(frozen=True)
class ConfigDiff:
    key: str
    a: str                 # A's value as shown ("(absent)" when A does not set it; never a secret)
    b: str
    artifact_a: str | None = None
    line_a: int | None = None
    artifact_b: str | None = None
    line_b: int | None = None
    ratio: float | None = None       # A / B, for two positive numbers

    def where(self) -> str:
        if self.artifact_a:
            return f"{self.artifact_a} line {self.line_a}" if self.line_a else self.artifact_a
        return f"{self.artifact_b} line {self.line_b}" if self.artifact_b and self.line_b else (self.artifact_b or "")

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "a": self.a, "b": self.b, "where": self.where(), "ratio": self.ratio}


@dataclass(frozen=True)
class CodeDiff:
    artifact: str          # A's path of the file (or B's, for a file only B has)
    diff: str              # unified diff B -> A, bounded; empty for a file only one run has
    added: int
    removed: int
    only_in: str | None = None       # "a" | "b" for a file only one run has
    truncated: bool = False
    changed_lines_a: tuple[int, ...] = ()   # lines of A's file that differ
    line: int | None = None          # where in A's file the first difference sits

    def to_dict(self) -> dict[str, Any]:
        return {"artifact": self.artifact, "line": self.line, "diff": self.diff, "added": self.added,
                "removed": self.removed, "only_in": self.only_in, "truncated": self.truncated}


@dataclass(frozen=True)
class Parting:
    metric: str
    step: float | None     # the first step of the parting stretch; None when the curves never part
    a: float | None        # the values there
    b: float | None
    noise: float           # the runs' own median step-to-step change
    shared: int            # steps both runs logged
    artifact: str = ""
    locator: str = ""

    @property
    def where(self) -> str:
        return f"{self.artifact} {self.locator}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "step": self.step, "a": _num(self.a), "b": _num(self.b),
                "noise": _num(self.noise), "shared_steps": self.shared, "where": self.where,
                "text": describe_parting(self)}


@dataclass(frozen=True)
class Explanation:
    kind: str              # "config" | "code"
    subject: str           # the key, or the file
    score: float
    why: str
    where: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "score": round(self.score, 2), "why": self.why,
                "where": self.where}


@dataclass(frozen=True)
class RunSide:
    """One side of a comparison: the run's id and source, and how many of its files could be read."""

    id: str
    source: str
    artifacts: int
    usable: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "artifacts": self.artifacts, "usable": self.usable}


@dataclass(frozen=True)
class DiagnosisSummary:
    """A's diagnosis as a comparison cites it: its status and top cause (all None without a cause)."""

    status: str
    code: str | None
    issue: str | None
    confidence: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "code": self.code, "issue": self.issue, "confidence": self.confidence}


@dataclass
class Comparison:
    """What `compare` found. Renderers take it as it is; `to_dict` is the JSON document."""

    a: RunSide
    b: RunSide
    diagnosis: DiagnosisSummary | None
    config: list[ConfigDiff] = field(default_factory=list)
    code: list[CodeDiff] = field(default_factory=list)
    partings: list[Parting] = field(default_factory=list)     # parted first, then those that never part
    explanations: list[Explanation] = field(default_factory=list)   # most explaining first
    notes: list[str] = field(default_factory=list)

    @property
    def first_parting(self) -> Parting | None:
        return next((p for p in self.partings if p.step is not None), None)

    @property
    def listed_partings(self) -> list[Parting]:
        """The partings a report lists: the first `MAX_PARTINGS`."""
        return self.partings[:MAX_PARTINGS]

    @property
    def status(self) -> str:
        if self.explanations and self.explanations[0].score >= EXPLAINS:
            return "explained"
        if not self.config and not self.code and self.first_parting is None:
            return "no_difference"
        return "unexplained"

    def side(self, name: str) -> RunSide:
        """Run "a" or run "b" (as `CodeDiff.only_in` names them)."""
        return self.a if name == "a" else self.b

    def to_dict(self) -> dict[str, Any]:
        first = self.first_parting
        return {"status": self.status, "a": self.a.to_dict(), "b": self.b.to_dict(),
                "diagnosis": self.diagnosis.to_dict() if self.diagnosis else None,
                "config": [d.to_dict() for d in self.config], "code": [d.to_dict() for d in self.code],
                "first_parting": first.to_dict() if first else None,
                "partings": [p.to_dict() for p in self.listed_partings],
                "explanations": [e.to_dict() for e in self.explanations], "notes": list(self.notes)}


EXPLAINS = 3.0                     # a score that names a difference as the explanation


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


# --- config -------------------------------------------------------------------------------------

def _leaves(value: object, key: str) -> dict[str, object]:
    """Lists of mappings (a curriculum's stages) flattened too, item by item: `stages.1.lr`."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{key}.{k}"))
        return out or {key: value}
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(_leaves(v, f"{key}.{i}"))
        return out or {key: value}
    return {key: value}


def _leaf_line(text: str, start: int, leaf: str, nth: int) -> int | None:
    """The line of the nth-from-`start` line that writes key `leaf` (a list item's key)."""
    pat = re.compile(rf"""^\s*(?:-\s*)?["']?{re.escape(leaf)}["']?\s*[:=]""")
    seen = 0
    for i, line in enumerate(text.splitlines()[start - 1:], start):
        if pat.match(line):
            if seen == nth:
                return i
            seen += 1
    return None


def config_values(run: Run) -> dict[str, tuple[object, str, int | None]]:
    """Every config key of the run: dotted key -> (value, artifact, line); the first config that
    sets a key wins, as the analyzers read it."""
    out: dict[str, tuple[object, str, int | None]] = {}
    for cfg in run.configs:
        for key, value in cfg.values.items():
            leaves = _leaves(value, key)
            for i, (leaf_key, leaf) in enumerate(leaves.items()):
                if leaf_key in out:
                    continue
                line = cfg.lines.get(leaf_key)
                if line is None and leaf_key != key and cfg.lines.get(key):
                    # an item of a list: the nth line after the list's own that writes this leaf
                    name = leaf_key.rsplit(".", 1)[-1]
                    nth = sum(1 for k in list(leaves)[:i] if k.rsplit(".", 1)[-1] == name)
                    line = _leaf_line(cfg.text, cfg.lines[key], name, nth)
                out[leaf_key] = (leaf, cfg.artifact, line if line is not None else cfg.lines.get(key))
    return out


def _shown(key: str, value: object) -> str:
    if _SECRET_KEY.search(key.rsplit(".", 1)[-1]):
        return "(set, hidden)"
    return clip(repr(value) if isinstance(value, str) and not value else str(value), VALUE_CHARS)


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def diff_config(a: Run, b: Run) -> list[ConfigDiff]:
    va, vb = config_values(a), config_values(b)
    out = []
    for key in list(va) + [k for k in vb if k not in va]:
        ha, hb = va.get(key), vb.get(key)
        if ha is not None and hb is not None and ha[0] == hb[0]:
            continue
        secret = bool(_SECRET_KEY.search(key.rsplit(".", 1)[-1]))
        na, nb = (_number(ha[0]) if ha else None), (_number(hb[0]) if hb else None)
        ratio = na / nb if na is not None and nb is not None and na > 0 and nb > 0 and not secret else None
        out.append(ConfigDiff(key, _shown(key, ha[0]) if ha else "(absent)", _shown(key, hb[0]) if hb else "(absent)",
                              ha[1] if ha else None, ha[2] if ha else None, hb[1] if hb else None,
                              hb[2] if hb else None, ratio))
    return out


# --- code ---------------------------------------------------------------------------------------

def _pair_files(a: Run, b: Run) -> tuple[list[tuple[str, str, str, str]], list[str], list[str]]:
    """(path A, text A, path B, text B) for files in both runs, matched by path, else by file name;
    and the paths only A, only B has."""
    ca = {c.artifact: c.text for c in a.code}
    cb = {c.artifact: c.text for c in b.code}
    pairs, used = [], set()
    for pa, ta in ca.items():
        pb = pa if pa in cb else None
        if pb is None:
            same = [p for p in cb if PurePosixPath(p).name == PurePosixPath(pa).name and p not in used]
            pb = same[0] if len(same) == 1 else None
        if pb is not None:
            used.add(pb)
            pairs.append((pa, ta, pb, cb[pb]))
    paired_a = {p[0] for p in pairs}
    return pairs, [p for p in ca if p not in paired_a], [p for p in cb if p not in used]


def diff_code(a: Run, b: Run) -> list[CodeDiff]:
    pairs, only_a, only_b = _pair_files(a, b)
    out, budget = [], DIFF_LINES_TOTAL
    for pa, ta, pb, tb in pairs:
        if ta == tb:
            continue
        lines = list(difflib.unified_diff(tb.splitlines(), ta.splitlines(), f"b/{pb}", f"a/{pa}",
                                          n=DIFF_CONTEXT, lineterm=""))
        added = sum(1 for x in lines[2:] if x.startswith("+"))
        removed = sum(1 for x in lines[2:] if x.startswith("-"))
        changed: list[int] = []
        first: int | None = None
        for op in difflib.SequenceMatcher(None, tb.splitlines(), ta.splitlines(), autojunk=False).get_opcodes():
            if op[0] != "equal" and first is None:
                first = op[3] + 1
            if op[0] in ("replace", "insert"):
                changed += range(op[3] + 1, op[4] + 1)
        keep = min(len(lines), DIFF_LINES_PER_FILE, max(budget, 0))
        budget -= keep
        out.append(CodeDiff(pa, "\n".join(lines[:keep]) + ("\n" if keep else ""), added, removed,
                            truncated=keep < len(lines), changed_lines_a=tuple(changed), line=first))
    out += [CodeDiff(p, "", 0, 0, only_in="a") for p in only_a]
    out += [CodeDiff(p, "", 0, 0, only_in="b") for p in only_b]
    return out


# --- curves -------------------------------------------------------------------------------------

def _by_step(s: Series) -> dict[float, float]:
    return {float(st): float(v) for st, v in zip(s.steps, s.values)}      # the last value at a repeated step


def part(name: str, sa: Series, sb: Series, *, k: float = NOISE_K, window: int | None = None) -> Parting | None:
    """Where A's and B's curves of one metric part beyond noise, aligned by step.

    The noise at a shared step is how far the two runs already disagreed: the median |A - B| over
    the `NOISE_POINTS` shared steps before it (over the first ones, the runs' own median
    step-to-step change). The curves part at the first step where |A - B| exceeds `k` times that
    noise and keeps exceeding it at PART_SHARE of the next 4 shared steps and of the `window` from
    there (by default a twentieth of the run, 4 to 40 steps; a NaN on one side only counts as parted). Two identically
    seeded runs agree exactly until the fault, so they part at its first step; two differently
    seeded ones part only where one leaves the other's noise.
    None when the runs share fewer than MIN_SHARED steps."""
    if sa.step_kind != sb.step_kind:
        return None
    da, db = _by_step(sa), _by_step(sb)
    steps = sorted(set(da) & set(db))
    if len(steps) < MIN_SHARED:
        return None
    va = np.array([da[s] for s in steps])
    vb = np.array([db[s] for s in steps])
    both = np.concatenate([va, vb])
    scale = float(np.median(np.abs(both[np.isfinite(both)]))) if np.isfinite(both).any() else 0.0
    tol = max(scale * 1e-9, 1e-15)                 # what printing and float rounding leave
    fa, fb = np.isfinite(va), np.isfinite(vb)
    with np.errstate(invalid="ignore"):
        gap = np.where(fa & fb, np.abs(va - vb), np.inf)
    gap = np.where(~fa & ~fb, 0.0, gap)            # NaN in both: no disagreement
    noise = _noise_before(gap, _step_noise(va[:NOISE_POINTS], vb[:NOISE_POINTS]))
    threshold = np.maximum(k * noise, tol)
    n = len(steps)
    span = window if window else min(max(n // 20, PART_WINDOW_MIN), PART_WINDOW_MAX)
    for i in np.flatnonzero(gap > threshold):       # candidates; a parting must hold over the span after
        ahead = gap[i:i + span] > threshold[i]
        first = ahead[:PART_WINDOW_MIN]            # it starts here: 3 of the first 4 steps apart
        if len(ahead) >= 2 and first.sum() >= math.ceil(PART_SHARE * len(first)) \
                and ahead.sum() >= math.ceil(PART_SHARE * len(ahead)):
            idx = min(int(np.searchsorted(sa.steps, steps[i])), len(sa) - 1)
            return Parting(name, steps[i], float(va[i]), float(vb[i]), float(noise[i]), n, sa.artifact,
                           sa.locator(idx))
    return Parting(name, None, None, None, _step_noise(va, vb), len(steps))


def _noise_before(gap: np.ndarray, start: float, chunk: int = 8192) -> np.ndarray:
    """At each shared step, the median finite gap over the NOISE_POINTS steps before it (`start`
    while fewer than MIN_SHARED of them are known); vectorised in chunks, so a long run costs
    bounded memory."""
    g = np.where(np.isfinite(gap), gap, np.nan)
    padded = np.concatenate([np.full(NOISE_POINTS, np.nan), g])
    out = np.empty(len(g))
    for lo in range(0, len(g), chunk):
        hi = min(lo + chunk, len(g))
        windows = np.lib.stride_tricks.sliding_window_view(padded[lo:hi + NOISE_POINTS - 1], NOISE_POINTS)
        known = np.isfinite(windows).sum(axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)       # an all-NaN window: `start` below
            med = np.nanmedian(windows, axis=1)
        # enough gaps known: their median; a few, all zero: the runs started identical (same seed)
        out[lo:hi] = np.where(known >= MIN_SHARED, med, np.where((known > 0) & (np.nanmax(
            np.where(np.isfinite(windows), windows, -1.0), axis=1) == 0), 0.0, start))
    return out


def _step_noise(va: np.ndarray, vb: np.ndarray) -> float:
    """The runs' median step-to-step change, both together."""
    d = np.concatenate([np.diff(va), np.diff(vb)])
    d = np.abs(d[np.isfinite(d)])
    return float(np.median(d)) if len(d) else 0.0


def shared_metrics(a: Run, b: Run) -> list[str]:
    """The metrics both runs log, per-layer series left out, the training loss and the LR first."""
    names = [n for n in set(a.metrics.names()) & set(b.metrics.names()) if "/" not in n and n not in _COUNTERS]
    return sorted(names, key=lambda n: (name_rank(n), n))[:MAX_METRICS]


def curve_partings(a: Run, b: Run) -> list[Parting]:
    out = []
    for name in shared_metrics(a, b):
        sa, sb = a.metrics.get(name), b.metrics.get(name)
        if sa is None or sb is None:
            continue
        p = part(name, sa, sb)
        if p is not None:
            out.append(p)
    # parted first, earliest first; the training loss ahead of others at the same step
    return sorted(out, key=lambda p: (p.step is None, p.step if p.step is not None else 0.0,
                                      name_rank(p.metric), p.metric))


def name_rank(metric: str) -> int:
    return 0 if metric == "train_loss" else 1 if metric in _LR_METRICS else 2


# --- which difference explains the failure -----------------------------------------------------

def _cited(diagnosis: Diagnosis | None) -> set[tuple[str, int]]:
    """(artifact, line) pairs the top cause's evidence cites."""
    out: set[tuple[str, int]] = set()
    if diagnosis is None or not diagnosis.root_causes:
        return out
    for ev in diagnosis.root_causes[0].evidence:
        for m in re.finditer(r"lines? (\d+)(?:-(\d+))?", ev.locator):
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            out.update((ev.artifact, n) for n in range(lo, min(hi, lo + 500) + 1))
    return out


def _top_code(diagnosis: Diagnosis | None) -> str | None:
    if diagnosis is None or not diagnosis.root_causes:
        return None
    code = diagnosis.root_causes[0].code
    return None if code == "healthy" else code


@lru_cache(maxsize=1)
def implicates() -> dict[str, tuple[str, str, str]]:
    """What each diagnosis implicates, from analysis/data/implicates.toml: code -> (config-key
    pattern, code-line pattern, what those settings control)."""
    data = tomllib.loads(resources.files("analysis").joinpath("data/implicates.toml").read_text())
    return {code: (entry["keys"], entry["code"], entry["controls"]) for code, entry in data.items()}


def _lr_parting(partings: list[Parting]) -> Parting | None:
    return next((p for p in partings if p.metric in _LR_METRICS and p.step is not None), None)


def explain(config: list[ConfigDiff], code: list[CodeDiff], partings: list[Parting],
            diagnosis: Diagnosis | None) -> list[Explanation]:
    """Every difference scored for how well it explains A's failure, the best first:
    +3 the diagnosis of A implicates it (an LR key for lr_too_high, a precision key for numerical
    instability), +2 the diagnosis's own evidence cites its line, +1 the LR curve parts first and
    the key sets the LR, +0.5 a large numeric change (x3 or more); -1 a key that only names or logs
    the run. Ties keep the order the runs list them in."""
    top = _top_code(diagnosis)
    key_pat, line_pat, controls = implicates().get(top or "", ("", "", ""))
    cited = _cited(diagnosis)
    first = partings[0] if partings and partings[0].step is not None else None
    lr_part = _lr_parting(partings)
    out = []
    for d in config:
        score, why = 0.0, []
        leaf = d.key.rsplit(".", 1)[-1]
        if key_pat and re.search(key_pat, d.key, re.I) and not re.fullmatch(r"\d+", leaf or ""):
            score += 3
            why.append(f"A's diagnosis is {top}, and this key sets {controls}")
        if d.artifact_a and d.line_a and (d.artifact_a, d.line_a) in cited:
            score += 2
            why.append(f"the diagnosis cites this line ({d.artifact_a} line {d.line_a})")
        lr_key = re.search(implicates()["lr_too_low"][0], d.key, re.I)
        if lr_part is not None and lr_part.step is not None and lr_key and first is not None \
                and lr_part.step == first.step:
            score += 1
            why.append(f"the LR curves are the first to part (step {fmt_step(lr_part.step)})")
        if d.ratio is not None and (d.ratio >= 3 or d.ratio <= 1 / 3):
            score += 0.5
            times = f"{d.ratio:.3g}x" if d.ratio >= 1 else f"1/{1 / d.ratio:.3g}"
            why.append(f"A's value is {times} B's")
        if _BOOKKEEPING.search(d.key):
            score -= 1
            why.append("it names or logs the run rather than changing its training")
        lead = f"{d.key}: {d.a} in A, {d.b} in B"
        out.append(Explanation("config", d.key, score, lead + (" — " + "; ".join(why) if why else ""), d.where()))
    for c in code:
        if c.only_in:
            continue
        score, why = 0.0, []
        changed = [ln[1:] for ln in c.diff.splitlines()[2:] if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        touching = [ln.strip() for ln in changed if line_pat and re.search(line_pat, ln)]
        if touching:
            score += 3
            why.append(f"A's diagnosis is {top}, and the changed lines touch {controls} "
                       f"({clip(touching[0], VALUE_CHARS)})")
        if any((c.artifact, n) in cited for n in c.changed_lines_a):
            score += 2
            why.append("the diagnosis cites a changed line")
        lead = f"{c.artifact}: {c.added} line(s) added, {c.removed} removed"
        where = f"{c.artifact} line {c.line}" if c.line else c.artifact
        out.append(Explanation("code", c.artifact, score, lead + (" — " + "; ".join(why) if why else ""), where))
    return sorted(out, key=lambda e: -e.score)


def _diagnosis_summary(diagnosis: Diagnosis | None) -> DiagnosisSummary | None:
    if diagnosis is None:
        return None
    top = diagnosis.root_causes[0] if diagnosis.root_causes else None
    return DiagnosisSummary(diagnosis.status, top.code if top else None, top.issue if top else None,
                            top.confidence if top else None)


def _side(run: Run) -> RunSide:
    return RunSide(run.id, run.source, len(run.artifacts), len(run.usable()))


def compare(a: Run, b: Run, diagnosis: Diagnosis | None = None) -> Comparison:
    """Run A (the failing one, with its diagnosis when there is one) against reference run B."""
    config, code, partings = diff_config(a, b), diff_code(a, b), curve_partings(a, b)
    notes = []
    if len(config) > MAX_CONFIG_DIFFS:
        notes.append(f"{len(config)} config keys differ; the first {MAX_CONFIG_DIFFS} are compared")
        config = config[:MAX_CONFIG_DIFFS]
    if not a.configs or not b.configs:
        notes.append(f"no config in run {a.id if not a.configs else b.id}: config keys not compared")
    if not a.code or not b.code:
        notes.append(f"no training code in run {a.id if not a.code else b.id}: code not compared")
    if not partings:
        notes.append("the runs share no metric logged at the same steps: curves not compared")
    elif all(p.step is None for p in partings):
        notes.append("the curves never part beyond their own step-to-step noise")
    truncated = [c.artifact for c in code if c.truncated]
    if truncated:
        notes.append("code diff cut short in " + ", ".join(truncated))
    for run in (a, b):
        if not run.usable():
            n = len(run.artifacts)
            why = f"none of its {n} file(s) could be read" if n else "it holds no files"
            notes.insert(0, f"nothing readable in run {run.id}: {why}")
    return Comparison(_side(a), _side(b),
                      _diagnosis_summary(diagnosis), config, code, partings,
                      explain(config, code, partings, diagnosis), notes)


def describe_parting(p: Parting) -> str:
    """One sentence for a parting, for every renderer."""
    if p.step is None:
        return f"{p.metric}: the curves never part ({p.shared} shared steps)"
    before = "identical before" if p.noise == 0 else f"noise {fmt(p.noise)}"
    return (f"{p.metric} parts at step {fmt_step(p.step)}: {fmt(p.a) if p.a is not None else 'NaN'} in A vs "
            f"{fmt(p.b) if p.b is not None else 'NaN'} in B ({before})")
