"""Model outputs saved beside a run: generations, predictions, sample texts."""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from analysis.ingest.dressing import undress

MAX_SAMPLES = 2000
_TEXT_KEYS = ("generation", "generated", "output", "completion", "sample", "text", "prediction", "pred", "predicted",
              "label_pred", "real", "target", "reference", "data")
# Samples of the training data itself (what a generator should reproduce), told apart by the file's name.
_REAL_NAME = re.compile(r"real|target|reference|ground[_-]?truth|dataset|data[_-]samples", re.I)


@dataclass
class Samples:
    artifact: str
    items: list[tuple[int, str]] = field(default_factory=list)   # (line, text)
    role: str = "generated"          # or "real": samples of the data the model should reproduce


def parse_samples(path: Path, artifact: str) -> Samples:
    out = Samples(artifact, role="real" if _REAL_NAME.search(path.name) else "generated")
    suffix = path.suffix.lower()
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        if suffix == ".jsonl":
            for n, line in enumerate(f, start=1):
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                text = _pick(obj) if isinstance(obj, dict) else None
                if text is not None:
                    out.items.append((n, text))
                if len(out.items) >= MAX_SAMPLES:
                    break
        elif suffix == ".csv":
            reader = csv.DictReader(f)
            for row in reader:
                text = _pick(row)
                if text is not None:
                    out.items.append((reader.line_num, text))
                if len(out.items) >= MAX_SAMPLES:
                    break
        else:
            for n, line in enumerate(f, start=1):
                text = undress(line.rstrip("\r\n"))     # a console's timestamp is no part of the sample
                if text.strip():
                    out.items.append((n, text))
                if len(out.items) >= MAX_SAMPLES:
                    break
    return out


def _pick(row: dict) -> str | None:
    lowered = {str(k).lower(): v for k, v in row.items()}
    for key in _TEXT_KEYS:
        if key in lowered and lowered[key] is not None:
            return str(lowered[key])
    return None
