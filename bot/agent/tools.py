"""The agent's read-only tools, bound to one fetched run: list artifacts, read a file by line
range, grep with a bounded result, a metric over a step window, the analyzers' findings, and the
checkpoints. Arguments are artifact names from the run's own list, never paths or URLs; every
result is redacted, size-capped and wrapped as untrusted data."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from analysis.model import Diagnosis
from bot.redact import redact

RESULT_MAX = 8000
GREP_HITS = 40

TOOLS = [
    {"name": "list_artifacts", "description": "The run's files: path, kind, format, size.",
     "input_schema": {"type": "object", "properties": {}}},
    {"name": "read_file", "description": "Lines of one text artifact (1-based, at most 200 lines at a time).",
     "input_schema": {"type": "object", "properties": {"artifact": {"type": "string"}, "start": {"type": "integer"},
                                                       "end": {"type": "integer"}}, "required": ["artifact"]}},
    {"name": "grep", "description": "Lines matching a regular expression (case-insensitive), with line numbers; "
                                    "at most 40 hits. Optionally in one artifact.",
     "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}, "artifact": {"type": "string"}},
                      "required": ["pattern"]}},
    {"name": "metric", "description": "A metric series (e.g. train_loss, grad_norm, lr): summary, and the values "
                                      "between two steps (at most 60 points).",
     "input_schema": {"type": "object", "properties": {"name": {"type": "string"}, "start_step": {"type": "number"},
                                                       "end_step": {"type": "number"}}, "required": ["name"]}},
    {"name": "findings", "description": "The rule-based analyzers' ranked root causes, with evidence.",
     "input_schema": {"type": "object", "properties": {}}},
    {"name": "checkpoints", "description": "Checkpoints: tensors, shapes, norms, non-finite counts, parameter share.",
     "input_schema": {"type": "object", "properties": {}}},
]


class RunTools:
    def __init__(self, root: Path, run, diagnosis: Diagnosis) -> None:
        self.root = root.resolve()
        self.run, self.diagnosis = run, diagnosis
        self.paths = {a.path: a for a in run.artifacts}

    def call(self, name: str, args: dict) -> str:
        try:
            out = getattr(self, f"_{name}")(**args) if name in {t["name"] for t in TOOLS} else f"unknown tool {name}"
        except TypeError as exc:
            out = f"bad arguments: {exc}"
        text = redact(out if isinstance(out, str) else json.dumps(out, default=str))
        if len(text) > RESULT_MAX:
            text = text[:RESULT_MAX] + f"\n… (cut at {RESULT_MAX} characters)"
        return f"<untrusted-data tool=\"{name}\">\n{text}\n</untrusted-data>"

    def _file(self, artifact: str) -> Path | None:
        """Only the run's own artifacts, resolved inside the run folder."""
        if artifact not in self.paths:
            return None
        path = (self.root / artifact).resolve()
        return path if path.is_relative_to(self.root) and path.is_file() else None

    def _list_artifacts(self):
        return [{"path": a.path, "kind": a.kind, "format": a.format, "bytes": a.size} for a in self.run.artifacts]

    def _read_file(self, artifact: str, start: int = 1, end: int | None = None):
        path = self._file(artifact)
        if path is None or self.paths[artifact].kind == "checkpoint":
            return f"no readable text artifact named {artifact!r}"
        start = max(1, int(start))
        end = min(int(end or start + 99), start + 199)
        lines = []
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, start=1):
                if n > end:
                    break
                if n >= start:
                    lines.append(f"{n}: {line.rstrip()[:500]}")
        return "\n".join(lines) or "(no lines there)"

    def _grep(self, pattern: str, artifact: str | None = None):
        try:
            rx = re.compile(pattern[:200], re.I)
        except re.error as exc:
            return f"bad pattern: {exc}"
        hits = []
        for name, a in self.paths.items():
            if (artifact and name != artifact) or a.kind == "checkpoint":
                continue
            path = self._file(name)
            if path is None or path.stat().st_size > 200 << 20:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, start=1):
                    if rx.search(line):
                        hits.append(f"{name}:{n}: {line.rstrip()[:300]}")
                        if len(hits) >= GREP_HITS:
                            return "\n".join(hits) + "\n… (more hits; narrow the pattern)"
        return "\n".join(hits) or "no match"

    def _metric(self, name: str, start_step: float | None = None, end_step: float | None = None):
        s = self.run.metrics.get(name)
        if s is None:
            return f"no metric {name!r}; known: {', '.join(sorted(self.run.metrics.series))}"
        m = np.ones(len(s), bool)
        if start_step is not None:
            m &= s.steps >= start_step
        if end_step is not None:
            m &= s.steps <= end_step
        idx = np.flatnonzero(m)
        if len(idx) > 60:
            idx = idx[np.linspace(0, len(idx) - 1, 60).astype(int)]
        v = s.values[np.isfinite(s.values)]
        return {"name": name, "artifact": s.artifact, "points": len(s),
                "summary": {"first": float(s.values[0]), "last": float(s.values[-1]),
                            "min": float(v.min()) if len(v) else None, "max": float(v.max()) if len(v) else None,
                            "non_finite": int((~np.isfinite(s.values)).sum())},
                "values": [{"step": float(s.steps[i]), "value": float(s.values[i]), "at": s.locator(int(i))}
                           for i in idx]}

    def _findings(self):
        return [c.to_dict() for c in self.diagnosis.root_causes]

    def _checkpoints(self):
        return [{"artifact": c.artifact, "step": c.step, "problem": c.problem, "parameters": c.numel,
                 "tensors": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "norm": t.norm,
                              "non_finite": t.nonfinite} for t in c.tensors[:60]]} for c in self.run.checkpoints]
