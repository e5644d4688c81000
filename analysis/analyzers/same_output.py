"""One output for every input, read from pasted samples: a captioner, a translator or a classifier printing
its prediction beside the reference (`generated_sentence => a man is playing a flute` / `reference =>
Children are dancing.`), the prediction the same at every sample while the references differ. The model
ignores its input: a collapse to one answer, or inputs that carry nothing (features all alike from a
broken extractor), so the data comes next."""
from __future__ import annotations

import re
from collections import defaultdict

from analysis.ingest.dressing import undress
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "excerpt"
SAMPLES_MAX_BYTES = 256 * 1024
LINE_MAX = 400          # a sample line is short; longer lines are not tried (bounded regex work)
SAME_AT = 3             # the same prediction at 3 samples or more...
SHORT_AT = 5            # ...or at 5 when it is one word (a class name repeats by chance)

# `key => value`, `key: value`, `key = value`, with a key of a few words
_PAIR = re.compile(r"^\s*([A-Za-z][\w .\-]{0,30}?)\s*(?:=>|->|:|=)\s*(\S.*?)\s*$")
_PREDICTED = re.compile(r"generat|predict|\bpred\b|\bhyp|output|caption|translat|answer|decoded|\bsample",
                        re.I)
_REFERENCE = re.compile(r"refer|\bref\b|target|gold|truth|label|\bgt\b|expected|\bsource\b|\bsrc\b|input|"
                        r"video|image|file|question", re.I)
_TRUE = re.compile(r"refer|\bref\b|target|gold|truth|label|\bgt\b|expected", re.I)   # the answer, before the input
# settings, not samples: an output folder, a shape, a device
_SETTING = re.compile(r"dir|path|folder|shape|size|dtype|device|format|type|\bdim", re.I)


def _pairs(text: str) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for n, line in enumerate(map(undress, text.splitlines()), 1):
        m = _PAIR.match(line) if len(line) <= LINE_MAX else None
        if m:
            found[m.group(1).strip().lower()].append((n, m.group(2)))
    return found


def same_output(run: Run) -> list[Finding]:
    base = run.root if run.root.is_dir() else run.root.parent
    for a in run.usable():
        if a.kind not in ("log", "traceback", "samples") or a.size > SAMPLES_MAX_BYTES:
            continue
        try:
            pairs = _pairs((base / a.path).read_text(errors="replace"))
        except OSError:
            continue
        refs = [(k, v) for k, v in pairs.items() if _REFERENCE.search(k) and not _PREDICTED.search(k)
                and not _SETTING.search(k)]
        # where the true answers are printed, they decide: one output under one answer is no collapse
        refs = [(k, v) for k, v in refs if _TRUE.search(k)] or refs
        for key, said in pairs.items():
            values = {v for _, v in said}
            if not _PREDICTED.search(key) or _SETTING.search(key) or len(values) != 1:
                continue
            value = next(iter(values))
            if "/" in value or "\\" in value:
                continue            # a path printed at each sample is where outputs go, not an output
            if len(said) < (SAME_AT if len(value.split()) > 1 else SHORT_AT):
                continue
            varied = next((r for _, r in refs if len({v for _, v in r}) >= len(said)), None)
            if varied is None:
                continue
            ev = [Evidence(f"{key} => {value}: the same at all {len(said)} samples", a.path,
                           f"lines {said[0][0]}-{said[-1][0]}"),
                  Evidence(f"while the references differ ({varied[0][1]!r}, {varied[1][1]!r}, ...)", a.path,
                           f"lines {varied[0][0]}-{varied[-1][0]}")]
            return [Finding(code="mode_collapse",
                            issue=f"The model gives one output for every input: {key} is {value!r} at all "
                                  f"{len(said)} samples while their references differ",
                            severity="high", confidence=0.7, evidence=ev,
                            fix="Check that the inputs differ: print a few input features' mean and std per "
                                "sample. If they do, the model ignores them: lower the LR, check the decoder "
                                "is conditioned on the encoder's output, and rebalance a dominant answer",
                            expected_impact="outputs that follow their inputs",
                            analyzer=NAME, quick_fix="Print the inputs' features per sample"),
                    Finding(code="data_pipeline_bug",
                            issue="Inputs that carry nothing (features all alike from a broken extractor or "
                                  "decoder, a zeroed image) give one output whatever the sample",
                            severity="medium", confidence=0.45, evidence=ev[:1],
                            fix="Print the mean and std of a few samples' input features: identical or zero "
                                "features mean the extraction failed (a codec or OpenCV build that reads no "
                                "frames, a wrong path)",
                            analyzer=NAME, quick_fix="Print the inputs' features per sample")]
    return []
