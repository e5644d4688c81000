"""Ingestion: a run folder (or one file) in, a `Run` out. Nothing here raises on bad input; every
problem is recorded on the artifact it concerns."""
from __future__ import annotations

import os
from pathlib import Path

from analysis.budget import DEFAULT, Budget, OverBudget, time_limit
from analysis.ingest.checkpoints import (
    load_safetensors,
    load_sharded_safetensors,
    load_torch,
    shard_paths,
    step_from_name,
)
from analysis.ingest.configs import mlflow_param, parse_code, parse_config
from analysis.ingest.discover import discover
from analysis.ingest.events import fold
from analysis.ingest.log_settings import settings_in_log
from analysis.ingest.samples import parse_samples
from analysis.ingest.tables import parse_csv, parse_jsonl, parse_mlflow_run, parse_tensorboard, parse_trainer_state
from analysis.ingest.textlog import parse_text_log
from analysis.metrics import clip
from analysis.model import Artifact
from analysis.run import Run

__all__ = ["load_run"]


# Formats read whole into memory: they count against the run's memory budget.
_READ_WHOLE = ("config", "code", "samples")


def load_run(path: str | Path, *, source: str | None = None, run_id: str | None = None,
             budget: Budget = DEFAULT) -> Run:
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    run = Run(root=root, source=source or str(path), id=run_id or (root.resolve().name or str(root)))
    found, mlflow_runs, left_out, too_deep = discover(root, budget.folder_depth)
    if left_out:
        run.notes.append(f"{left_out} files left out past the {len(found)}-file limit")
    for rel_dir in too_deep:
        run.artifacts.append(Artifact(rel_dir, "unknown", "folder", problem=f"skipped: folders nested more than "
                                      f"{budget.folder_depth} levels deep are not read"))
    base = root if root.is_dir() else root.parent

    def rel(p: Path) -> str:
        return p.name if root.is_file() else p.relative_to(root).as_posix()

    tb_files = [f for f in found if f.format == "tensorboard"]
    consumed_shards: set[str] = set()
    for f in found:
        if f.format == "safetensors-index":
            try:
                consumed_shards |= {os.path.abspath(p) for p in shard_paths(f.path, base, budget)}
            except (ValueError, OSError):
                pass             # named when the index itself is read
    trainer_states = [f for f in found if f.format == "hf_trainer_state"]
    latest_state = _latest(trainer_states)

    held = 0                     # bytes of the artifacts read whole, against the run's budget
    for f in found:
        art = Artifact(f.rel, f.kind, f.format, size=f.path.stat().st_size)
        run.artifacts.append(art)
        if f.kind in _READ_WHOLE:
            if held + art.size > budget.run_bytes:
                art.problem = f"skipped: the run's artifacts are over the {budget.mb(budget.run_bytes)} budget"
                continue
            held += art.size
        try:
            with time_limit(budget.seconds_for(art.size), f.rel):
                _ingest_one(run, f, art, latest_state, consumed_shards, budget, base)
        except OverBudget as exc:
            art.problem = f"skipped: {exc}"
        except Exception as exc:  # one bad file never stops the run: it is named in the reply
            art.problem = f"unreadable: {type(exc).__name__}: {clip(str(exc), 200)}"

    if tb_files:
        result = parse_tensorboard([f.path for f in tb_files], rel)
        for s in result.series:
            run.metrics.add(s)
        run.notes.extend(result.notes)
        if result.skipped:
            for art in run.artifacts:
                if art.format == "tensorboard":
                    art.skipped_lines = result.skipped
                    break
    for run_dir in mlflow_runs:
        art = Artifact(rel(run_dir), "metrics", "mlflow")
        run.artifacts.append(art)
        result = parse_mlflow_run(run_dir, rel)
        for s in result.series:
            run.metrics.add(s)
        # each metric is a file of its own, and the evidence read from it names that file
        for path in dict.fromkeys(s.artifact for s in result.series if s.artifact != art.path):
            run.artifacts.append(Artifact(path, "metrics", "mlflow_metric"))
        art.skipped_lines = result.skipped
        run.params.update(result.params)
        for name, value in result.params.items():
            param_rel = rel(run_dir / "params" / name)
            run.artifacts.append(Artifact(param_rel, "config", "mlflow_param"))
            run.configs.append(mlflow_param(name, str(value), param_rel))
        run.notes.extend(result.notes)
        if not result.series:
            art.problem = "MLflow run holds no metric values"
    run.events = fold(run.events)
    return run


def _latest(states):
    if not states:
        return None
    top = [f for f in states if "/" not in f.rel]
    if top:
        return top[0]
    return max(states, key=lambda f: step_from_name(f.rel) or -1)


def _ingest_one(run: Run, f, art: Artifact, latest_state, consumed_shards, budget: Budget, base: Path) -> None:
    if f.format == "empty":
        art.problem = "empty file (0 bytes)"
        return
    if f.kind == "unknown":
        art.problem = "unrecognised binary file: not a log, metrics file, config or checkpoint mltd can read"
        return
    if f.format == "tensorboard":
        return   # read together with its siblings, after the walk
    if f.format == "hf_trainer_state":
        if f is not latest_state:
            art.problem = None
            art.format = "hf_trainer_state (older copy, superseded)"
            return
        result = parse_trainer_state(f.path, f.rel)
        _add(run, art, result.series, result.skipped)
        run.params.update(result.params)
        return
    if f.kind == "metrics" and f.format in ("csv", "lightning_csv"):
        result = parse_csv(f.path, f.rel)
        _add(run, art, result.series, result.skipped)
        run.notes.extend(result.notes)
        return
    if f.kind == "metrics" and f.format == "jsonl":
        result = parse_jsonl(f.path, f.rel)
        _add(run, art, result.series, result.skipped)
        return
    if f.kind in ("log", "traceback"):
        log = parse_text_log(f.path, f.rel)
        run.events.extend(log.events)
        art.skipped_lines = log.skipped_lines
        run.notes.extend(log.notes)
        for s in log.series:
            run.metrics.add(s)
        if not log.series and any(e.context for e in log.events):
            art.kind = "traceback"
        run.log_lines[f.rel] = log.lines
        run.configs.extend(settings_in_log(f.path, f.rel))
        return
    if f.kind == "config":
        try:
            run.configs.append(parse_config(f.path, f.rel, budget))
        except ValueError as exc:
            art.problem = str(exc)
        return
    if f.kind == "code":
        code = parse_code(f.path, f.rel, budget)
        run.code.append(code)
        art.problem = code.parse_error
        return
    if f.kind == "samples":
        run.samples.append(parse_samples(f.path, f.rel))
        return
    if f.kind == "checkpoint":
        if f.format == "torch-aux":
            art.problem = None
            return   # optimizer/scheduler/RNG state: not model weights
        if f.format == "safetensors" and os.path.abspath(f.path) in consumed_shards:
            art.format = "safetensors-shard"
            return
        try:
            if f.format == "safetensors-index":
                ckpt = load_sharded_safetensors(f.path, f.rel, base, budget)
            elif f.format == "safetensors":
                ckpt = load_safetensors([f.path], f.rel, budget=budget)
            else:
                ckpt = load_torch(f.path, f.rel, budget)
                art.format = ckpt.format
        except ValueError as exc:
            art.problem = f"broken checkpoint: {exc}"
            return
        art.problem = ckpt.problem
        run.checkpoints.append(ckpt)


def _add(run: Run, art: Artifact, series, skipped: int) -> None:
    art.skipped_lines = skipped
    for s in series:
        run.metrics.add(s)
    if not series:
        art.problem = "no metric values found"
