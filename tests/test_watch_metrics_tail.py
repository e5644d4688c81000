"""`mltd watch` on a growing metrics file (CSV, JSON Lines), written step by step by a real tiny
training: the same warning, at the same step, as following the run's log."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from handlers.watch.tail import find_log, follow
from handlers.watch.watcher import Watcher
from tests.scenarios import training
from tests.watching import Collect, one_thread  # noqa: F401 (one_thread: an autouse fixture)

STEPS_PER_EPOCH = 30          # 960 samples, batches of 32


def _train(schedule: list[list[float]], epochs: int) -> dict[str, list[bytes]]:
    """A real SGD run of an MLP; each step's line as its log, its CSV and its JSON Lines would get it
    (the same rounded numbers in all three, as one logging call writes them)."""
    cfg = {"seed": 3, "samples": 960, "dim": 16, "classes": 4, "hidden": 64, "batch_size": 32, "epochs": epochs,
           "schedule": schedule}
    out: dict[str, list[bytes]] = {"train.log": [b"starting run\n"], "metrics.csv": [b"step,epoch,loss,lr,grad_norm\n"],
                                   "metrics.jsonl": []}

    def on_step(step, epoch, loss, lr, grad_norm):
        loss, grad_norm = float(f"{loss:.4f}"), float(f"{grad_norm:.4g}")
        out["train.log"].append(f"epoch={epoch} step={step} loss={loss} lr={lr:.4g} grad_norm={grad_norm}\n".encode())
        out["metrics.csv"].append(f"{step},{epoch},{loss},{lr:.4g},{grad_norm}\n".encode())
        out["metrics.jsonl"].append((json.dumps({"step": step, "epoch": epoch, "loss": loss, "lr": float(f"{lr:.4g}"),
                                                 "grad_norm": grad_norm}) + "\n").encode())

    training.train_mlp(cfg, on_step)
    return out


@pytest.fixture(scope="module")
def nan_run() -> dict[str, list[bytes]]:
    """Trains well for 3 epochs; then the LR is raised 5000x: the loss blows up, and is NaN from step 103."""
    return _train([[0, 0.02], [3, 100.0]], 6)


@pytest.fixture(scope="module")
def healthy_run() -> dict[str, list[bytes]]:
    return _train([[0, 0.02]], 6)


def _follow(path: Path, lines: list[bytes], chunk: int = 613, first: int = 2) -> tuple[Watcher, Collect]:
    """Follows `path` while it grows: the first lines, then `chunk` bytes per poll, cut anywhere in a line."""
    data = b"".join(lines)
    start = len(b"".join(lines[:first]))
    path.write_bytes(data[:start])
    written = [start]

    def grow(_seconds: float) -> None:
        with path.open("ab") as f:
            f.write(data[written[0]:written[0] + chunk])
        written[0] += chunk

    sink = Collect()
    w = follow(path, lambda context: Watcher("run", notifier=sink, context=context, budget=None),
               poll_s=1.0, idle_exit_s=2.0, sleep=grow)
    return w, sink


@pytest.mark.parametrize("name", ["metrics.csv", "metrics.jsonl"])
def test_a_growing_metrics_file_warns_at_the_step_the_log_does(nan_run, tmp_path, name):
    log, log_sink = _follow(tmp_path / "train.log", nan_run["train.log"])
    w, sink = _follow(tmp_path / name, nan_run[name])
    assert log_sink.docs, "the log tail itself warns on this run"
    assert w.live.metrics["train_loss"].n == log.live.metrics["train_loss"].n == 6 * STEPS_PER_EPOCH
    first, log_first = sink.docs[0], log_sink.docs[0]
    assert first["watch"]["step"] == log_first["watch"]["step"]
    assert first["watch"]["alarms"] == log_first["watch"]["alarms"]
    assert len(sink.docs) == len(log_sink.docs) and w.skipped_lines == 0
    # the NaNs are kept as the points they are: the loss series holds them at their steps
    s = w.live.metrics["train_loss"]
    assert s.steps[: s.n][np.isnan(s.values[: s.n])][0] == 103
    assert sink.docs[0]["root_causes"][0]["evidence"][0]["artifact"] == name


@pytest.mark.parametrize("name", ["metrics.csv", "metrics.jsonl"])
def test_a_healthy_metrics_file_posts_nothing(healthy_run, tmp_path, name):
    w, sink = _follow(tmp_path / name, healthy_run[name], chunk=1024)
    assert w.live.metrics["train_loss"].n == 6 * STEPS_PER_EPOCH and sink.docs == []


def test_malformed_lines_are_skipped_counted_and_cost_nothing_else(nan_run, tmp_path):
    clean, clean_sink = _follow(tmp_path / "clean.jsonl", nan_run["metrics.jsonl"])
    lines = list(nan_run["metrics.jsonl"])
    lines[40:40] = [b'{"step": 41, "loss": 0.3\n', b"Traceback (most recent call last):\n", b"[1, 2]\n"]
    w, sink = _follow(tmp_path / "metrics.jsonl", lines)
    assert w.skipped_lines == 3
    assert w.live.metrics["train_loss"].n == clean.live.metrics["train_loss"].n
    assert [d["watch"] for d in sink.docs] == [d["watch"] for d in clean_sink.docs]
    rows = list(nan_run["metrics.csv"])
    rows[60:60] = [b"1,2,3,4,5,6,7\n", b"step,epoch,loss,lr,grad_norm\n"]      # too many cells; a repeated header
    w, _ = _follow(tmp_path / "metrics.csv", rows)
    assert w.skipped_lines == 2 and w.live.metrics["train_loss"].n == 6 * STEPS_PER_EPOCH


def test_a_truncated_metrics_file_is_followed_again_from_its_header(nan_run, healthy_run, tmp_path):
    """The job restarts and rewrites its CSV: the new header is read as a header, not a bad row."""
    path = tmp_path / "metrics.csv"
    old, new = b"".join(nan_run["metrics.csv"][:41]), b"".join(healthy_run["metrics.csv"])
    path.write_bytes(old)
    polls = [0]

    def restart(_seconds: float) -> None:
        polls[0] += 1
        if polls[0] == 1:
            path.write_bytes(new[:300])       # replaced by a shorter file
        elif polls[0] == 2:
            with path.open("ab") as f:
                f.write(new[300:])

    sink = Collect()
    w = follow(path, lambda context: Watcher("run", notifier=sink, context=context, budget=None),
               poll_s=1.0, idle_exit_s=2.0, sleep=restart)
    assert w.skipped_lines == 0 and sink.docs == []
    assert w.live.points == 40 + 6 * STEPS_PER_EPOCH


def test_in_a_run_folder_a_growing_metrics_file_is_followed_before_the_log(tmp_path):
    import os

    for name in ("train.log", "metrics.csv", "samples.jsonl"):
        (tmp_path / name).write_text("step,loss\n1,0.5\n")
    assert find_log(tmp_path).name == "metrics.csv"          # both grow: the metrics file
    os.utime(tmp_path / "metrics.csv", (1e9, 1e9))
    assert find_log(tmp_path).name == "train.log"            # the CSV is long done: the log is the run's now


def test_an_s3_metrics_file_is_polled_as_it_grows(nan_run, tmp_path):
    from handlers.watch_s3 import S3Log
    from tests.fakes.service import S3

    log, log_sink = _follow(tmp_path / "train.log", nan_run["train.log"])
    data = b"".join(nan_run["metrics.jsonl"])
    s3 = S3()
    try:
        client = s3.client()
        client.put_object(Bucket=s3.bucket, Key="runs/43/metrics.jsonl", Body=data[:2000])
        source = S3Log(f"s3://{s3.bucket}/runs/43/", client)
        assert source.name == "metrics.jsonl"
        written = [2000]

        def grow(_seconds: float) -> None:       # the job re-uploads its metrics, longer each time
            written[0] += 3001
            client.put_object(Bucket=s3.bucket, Key="runs/43/metrics.jsonl", Body=data[:written[0]])

        sink = Collect()
        w = follow(source, lambda context: Watcher("43", notifier=sink, context=context, budget=None),
                   poll_s=1.0, idle_exit_s=2.0, sleep=grow)
        assert source.offset == len(data) and w.live.metrics["train_loss"].n == 6 * STEPS_PER_EPOCH
        assert [d["watch"]["step"] for d in sink.docs] == [d["watch"]["step"] for d in log_sink.docs]
    finally:
        s3.close()
