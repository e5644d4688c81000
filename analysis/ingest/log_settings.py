"""The optimizer a training log names, read as a one-key config (`optimizer`), as an MLflow param is:
the LR-range rules judge the LR by its optimizer's family, wherever the run said which one it used.

Trainers print it where the run starts: `optimizer: AdamW`, `Optimizer: SGD (lr=0.1, momentum=0.9)`,
`'optimizer': 'adamw'`, or PyTorch's `print(optimizer)` (`Adam (` then `Parameter Group 0`). Only
the head of a log is read (HEAD_BYTES): a 1 GB log costs no second pass. The LR on such a line is
the scanner's (`lr=0.1` is a pair like any other); the name is kept as written, and the analyzers
decide which family, if any, it is.
"""
from __future__ import annotations

import re
from pathlib import Path

from analysis.ingest.configs import ConfigFile

HEAD_BYTES = 1 << 20
_NAME = r"([A-Za-z_][\w.]{0,63})"
# `optimizer: AdamW`, `Optimizer = SGD (`, `'optim': 'adam'`, `optimizer_type=sgd`, `optimizer : FusedAdam (`
_DECLARED = re.compile(r"(?i)(?<![\w.])optim(?:izer)?(?:[_ ](?:name|type))?['\"]?[ \t]*[:=][ \t]*['\"]?" + _NAME)
# PyTorch's `print(optimizer)`: matched only on the line before its `Parameter Group 0` (found first:
# tried at every offset of the head, the name's repeat would backtrack on a hostile log)
_REPR = re.compile(_NAME + r" \([ \t]*\r?\n[^\n]*?Parameter Group 0\b")
_GROUP = "Parameter Group 0"


def _repr(text: str) -> re.Match | None:
    at = text.find(_GROUP)
    if at < 0:
        return None
    start = text.rfind("\n", 0, text.rfind("\n", 0, at)) + 1       # the start of the line before
    return _REPR.search(text, start, at + len(_GROUP))


def optimizer_in_log(path: Path, artifact: str) -> ConfigFile | None:
    with open(path, "rb") as f:
        text = f.read(HEAD_BYTES).decode("utf-8", "replace")
    hits = [m for m in (_repr(text), _DECLARED.search(text)) if m]
    if not hits:
        return None
    m = min(hits, key=lambda m: m.start())
    line = text.count("\n", 0, m.start(1)) + 1
    # text is the matched snippet, not the file: `lines` counts in the log, which no patch may edit
    return ConfigFile(artifact, "log_line", {"optimizer": m.group(1)}, {"optimizer": line}, m.group(0))
