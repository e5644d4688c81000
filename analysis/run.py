"""A run as the analyzers see it: every artifact, parsed."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from analysis.ingest.checkpoints import Checkpoint
from analysis.ingest.configs import CodeFile, ConfigFile
from analysis.ingest.samples import Samples
from analysis.metrics import MetricTable
from analysis.model import Artifact, Event, Evidence

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class ConfigHit(NamedTuple):
    """A config key one of the asked names matched: the file, the full key, and its value."""

    config: ConfigFile
    key: str
    value: object

    @property
    def locator(self) -> str:
        return f"line {self.config.lines.get(self.key, 1)}"

    @property
    def number(self) -> float | None:
        """The value when it is a number (a bool is none), else None; a number written as a string counts: YAML 1.1
        (PyYAML) reads `lr: 1e-7`, with no dot, as the string '1e-7', and configs quote numbers too."""
        v = self.value
        if isinstance(v, str) and _NUMBER.fullmatch(v.strip()):
            return float(v)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def evidence(self, text: str | None = None) -> Evidence:
        """`key = value` (or `text` about it), located at the key's line."""
        return Evidence(f"{self.key} = {self.value}" if text is None else text, self.config.artifact, self.locator)


@dataclass
class Run:
    root: Path
    source: str
    id: str
    artifacts: list[Artifact] = field(default_factory=list)
    metrics: MetricTable = field(default_factory=MetricTable)
    events: list[Event] = field(default_factory=list)
    configs: list[ConfigFile] = field(default_factory=list)
    code: list[CodeFile] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    samples: list[Samples] = field(default_factory=list)
    params: dict[str, object] = field(default_factory=dict)
    log_lines: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def usable(self) -> list[Artifact]:
        return [a for a in self.artifacts if not a.problem and a.kind != "unknown"]

    def config_value(self, *names: str) -> ConfigHit | None:
        """The first config that sets one of `names`, else None."""
        for cfg in self.configs:
            hit = cfg.find(*names)
            if hit:
                return ConfigHit(cfg, hit[0], hit[1])
        return None

    def loaded_checkpoints(self) -> list[Checkpoint]:
        return [c for c in self.checkpoints if c.tensors and not c.problem]
