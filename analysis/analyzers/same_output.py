"""One output for every input, read from pasted samples: a captioner, a translator or a classifier printing
its prediction beside the reference (`generated_sentence => a man is playing a flute` / `reference =>
Children are dancing.`), the prediction the same at every sample while the references differ. The model
ignores its input: a collapse to one answer, or inputs that carry nothing (features all alike from a
broken extractor), so the data comes next."""
from __future__ import annotations

import re
from collections import defaultdict

from analysis.analyzers.common import pasted_texts, train_loss
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
_PREDICTED = re.compile(r"generat|predict|\bpred\b|\bhyp|output|caption|translat|answer|decoded", re.I)
# the true answers: where they differ, one prediction for all of them is wrong for most (an input's name or a
# file says nothing of what its answer should be)
_TRUE = re.compile(r"refer|\bref\b|target|gold|truth|label|\bgt\b|expected", re.I)
# settings and statuses, not samples: an output folder, a shape, a device, `Output: saved`
_SETTING = re.compile(r"dir|path|folder|shape|size|dtype|device|format|type|\bdim|(?<![a-z])(?:rate|status)\b", re.I)


def _pairs(text: str) -> dict[str, list[tuple[int, str, str]]]:
    """Per key (lower case), each (line number, value, the line as printed)."""
    found: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for n, line in enumerate(map(undress, text.splitlines()), 1):
        m = _PAIR.match(line) if len(line) <= LINE_MAX else None
        if m:
            found[m.group(1).strip().lower()].append((n, m.group(2), line.strip()))
    return found


def same_output(run: Run) -> list[Finding]:
    for a, text in pasted_texts(run, ("log", "traceback", "samples"), SAMPLES_MAX_BYTES):
        pairs = _pairs(text)
        refs = [v for k, v in pairs.items() if _TRUE.search(k) and not _PREDICTED.search(k)]
        for key, said in pairs.items():
            values = {v for _, v, _ in said}
            if not _PREDICTED.search(key) or _SETTING.search(key) or len(values) != 1:
                continue
            value = next(iter(values))
            if "/" in value or "\\" in value:
                continue            # a path printed at each sample is where outputs go, not an output
            if len(said) < (SAME_AT if len(value.split()) > 1 else SHORT_AT):
                continue
            varied = next((r for r in refs if len({v for _, v, _ in r}) >= len(said)), None)
            if varied is None:
                continue
            ev = [Evidence(f"{said[0][2]}: the same at all {len(said)} samples", a.path,
                           f"lines {said[0][0]}-{said[-1][0]}"),
                  Evidence(f"while the references differ: {varied[0][2]} / {varied[1][2]} ...", a.path,
                           f"lines {varied[0][0]}-{varied[-1][0]}")]
            # a loss that falls beside it says the model learns: one answer on these samples is a lead, not a verdict
            learning = (s := train_loss(run)) is not None and len(s) >= 2 and s.values[-1] < s.values[0]
            return [Finding(code="mode_collapse",
                            issue=f"The model gives one output for every input: {key} is {value!r} at all "
                                  f"{len(said)} samples while their references differ",
                            severity="medium" if learning else "high", confidence=0.7, evidence=ev,
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
