"""Ingestion: a run folder (or one file) in, a `Run` out. Nothing here raises on bad input; every
problem is recorded on the artifact it concerns."""
from __future__ import annotations

import json
from pathlib import Path

from analysis.ingest.checkpoints import load_safetensors, load_sharded_safetensors, load_torch, step_from_name
from analysis.ingest.configs import parse_code, parse_config
from analysis.ingest.discover import discover
from analysis.ingest.events import fold
from analysis.ingest.samples import parse_samples
from analysis.ingest.tables import parse_csv, parse_jsonl, parse_mlflow_run, parse_tensorboard, parse_trainer_state
from analysis.ingest.textlog import parse_text_log
from analysis.model import Artifact
from analysis.run import Run

__all__ = ["load_run"]


def load_run(path: str | Path, *, source: str | None = None, run_id: str | None = None) -> Run:
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    run = Run(root=root, source=source or str(path), id=run_id or (root.resolve().name or str(root)))
    found, mlflow_runs, left_out = discover(root)
    if left_out:
        run.notes.append(f"{left_out} files left out past the {len(found)}-file limit")

    def rel(p: Path) -> str:
        return p.name if root.is_file() else p.relative_to(root).as_posix()

    tb_files = [f for f in found if f.format == "tensorboard"]
    consumed_shards = set()
    for f in found:
        if f.format == "safetensors-index":
            try:
                consumed_shards |= set(json.loads(f.path.read_text()).get("weight_map", {}).values())
            except ValueError:
                pass
    trainer_states = [f for f in found if f.format == "hf_trainer_state"]
    latest_state = _latest(trainer_states)

    for f in found:
        art = Artifact(f.rel, f.kind, f.format, size=f.path.stat().st_size)
        run.artifacts.append(art)
        try:
            _ingest_one(run, f, art, latest_state, consumed_shards)
        except Exception as exc:  # one bad file never stops the run: it is named in the reply
            art.problem = f"unreadable: {type(exc).__name__}: {str(exc)[:200]}"

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
        art.skipped_lines = result.skipped
        run.params.update(result.params)
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


def _ingest_one(run: Run, f, art: Artifact, latest_state, consumed_shards) -> None:
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
        return
    if f.kind == "metrics" and f.format == "jsonl":
        result = parse_jsonl(f.path, f.rel)
        _add(run, art, result.series, result.skipped)
        return
    if f.kind in ("log", "traceback"):
        result = parse_text_log(f.path, f.rel)
        run.events.extend(result.events)
        art.skipped_lines = result.skipped_lines
        for s in result.series:
            run.metrics.add(s)
        if not result.series and any(e.context for e in result.events):
            art.kind = "traceback"
        run.log_lines[f.rel] = result.lines
        return
    if f.kind == "config":
        try:
            run.configs.append(parse_config(f.path, f.rel))
        except ValueError as exc:
            art.problem = str(exc)
        return
    if f.kind == "code":
        code = parse_code(f.path, f.rel)
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
        if f.format == "safetensors" and f.path.name in consumed_shards:
            art.format = "safetensors-shard"
            return
        try:
            if f.format == "safetensors-index":
                ckpt = load_sharded_safetensors(f.path, f.rel)
            elif f.format == "safetensors":
                ckpt = load_safetensors([f.path], f.rel)
            else:
                ckpt = load_torch(f.path, f.rel)
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
