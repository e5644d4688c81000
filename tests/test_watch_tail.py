"""`mltd watch PATH` on a real scenario log that grows while it is followed."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.live_warning import LiveWarning
from handlers.watch.tail import follow
from handlers.watch.watcher import Watcher

ROOT = Path(__file__).resolve().parents[1]


class Collect:
    def __init__(self) -> None:
        self.docs: list[dict] = []

    def post(self, warning: LiveWarning) -> None:
        self.docs.append(warning.to_dict())          # the JSON document, as a file or the service gets it


def test_a_growing_log_warns_once_at_the_divergence_with_the_config_patch(scenario, tmp_path):
    src = scenario("lr_jump_mlp")
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(src / "config.yaml", run / "config.yaml")
    data = (src / "train.log").read_bytes()
    log = run / "train.log"
    log.write_bytes(data[:4000])
    written, sizes = [4000], []

    def grow(_seconds: float) -> None:         # the training appends ~1.5 kB per poll, cut anywhere in a line
        sizes.append(log.stat().st_size)
        with log.open("ab") as f:
            f.write(data[written[0]:written[0] + 1531])
        written[0] += 1531

    sink = Collect()
    w = follow(run, lambda context: Watcher("run", notifier=sink, context=context, budget=None),
               poll_s=1.0, idle_exit_s=2.0, sleep=grow)
    assert len(sizes) >= (len(data) - 4000) // 1531      # it really followed the file as it grew
    assert w.live.metrics["train_loss"].n == 300
    # first the pre-flight warning, from the config (the curriculum's 0.8 for SGD), marked early;
    # then one update when the post-mortem's analyzers confirm it after the switch at step 211
    assert len(sink.docs) == 2
    early, doc = sink.docs
    assert early["watch"]["early"] == ["lr_too_high"] and early["watch"]["step"] <= 5
    cause = early["root_causes"][0]
    assert cause["early"] and cause["confidence"] < 0.8 and "0.8" in cause["evidence"][0]["text"]
    assert cause["evidence"][0]["artifact"] == "config.yaml"
    assert 211 <= doc["watch"]["step"] <= 240 and doc["watch"]["confirmed"] == ["lr_too_high"]
    top = doc["root_causes"][0]
    assert top["code"] == "lr_too_high" and "+    lr: 0.06" in top["patch"]
    assert any(e["artifact"] == "train.log" for e in top["evidence"])


def test_a_healthy_log_followed_to_its_end_posts_nothing(scenario):
    sink = Collect()
    w = follow(scenario("healthy_noisy_mlp"), lambda context: Watcher("h", notifier=sink, context=context, budget=None),
               idle_exit_s=0.0, sleep=lambda s: None)
    assert w.live.points > 100 and sink.docs == []


def test_the_command_prints_the_warning_and_a_bad_path_is_exit_2(scenario, tmp_path):
    cmd = [sys.executable, "-m", "handlers.cli", "watch", str(scenario("lr_jump_mlp")), "--idle-exit", "0"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={"PATH": "", "MLTD_WATCH_FILE": ""})
    assert p.returncode == 0, p.stderr
    assert "early warning at step" in p.stdout and "lr_too_high" in p.stdout
    assert "(early: confidence 0.6" in p.stdout and "confirmed by the post-mortem's analyzers: lr_too_high" in p.stdout
    assert "2 warning(s) posted" in p.stderr
    p = subprocess.run([sys.executable, "-m", "handlers.cli", "watch", str(tmp_path / "nope")],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "no such file or folder" in p.stderr
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04")
    p = subprocess.run([sys.executable, "-m", "handlers.cli", "watch", str(tmp_path / "model.pt")],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "not a training log or metrics file" in p.stderr


def test_an_s3_log_is_polled_with_ranged_reads_as_it_grows(scenario, tmp_path):
    from handlers.watch_s3 import S3Log, S3LogError
    from tests.fakes.service import S3

    data = (scenario("lr_jump_mlp") / "train.log").read_bytes()
    s3 = S3()
    try:
        client = s3.client()
        client.put_object(Bucket=s3.bucket, Key="runs/42/config.yaml", Body=b"lr: 0.8\n")
        client.put_object(Bucket=s3.bucket, Key="runs/42/train.log", Body=data[:5000])
        log = S3Log(f"s3://{s3.bucket}/runs/42/", client)
        assert log.name == "train.log"
        written = [5000]

        def grow(_seconds: float) -> None:       # the job re-uploads its log, longer each time
            written[0] += 4096
            client.put_object(Bucket=s3.bucket, Key="runs/42/train.log", Body=data[:written[0]])

        sink = Collect()
        w = follow(log, lambda context: Watcher("42", notifier=sink, context=context, budget=None),
                   poll_s=1.0, idle_exit_s=2.0, sleep=grow)
        assert log.offset == len(data) and w.live.metrics["train_loss"].n == 300
        assert len(sink.docs) == 1 and sink.docs[0]["watch"]["alarms"][0] == "lr_too_high"
        with pytest.raises(S3LogError, match="no training log"):
            S3Log(f"s3://{s3.bucket}/runs/7/", client)
        with pytest.raises(S3LogError, match="not an S3 location"):
            S3Log("s3:/nope", client)
    finally:
        s3.close()
