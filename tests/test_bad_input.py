"""Bad input gets a clear message and an exit code, never a traceback."""
import json
import os

import torch
from safetensors.torch import save_file

from handlers.cli import main


class Payload:
    def __reduce__(self):
        return (os.system, ("touch /tmp/mltd-test-pwned",))


def _run(path, capsys, fmt="json"):
    code = main(["diagnose", str(path), "--format", fmt])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.out + cap.err
    return code, cap


def test_missing_path(tmp_path, capsys):
    code, cap = _run(tmp_path / "nope", capsys)
    assert code == 2 and "no such file or folder" in cap.err


def test_empty_folder(tmp_path, capsys):
    code, cap = _run(tmp_path, capsys)
    doc = json.loads(cap.out)
    assert code == 2 and "no artifacts found" in cap.err
    assert doc["status"] == "needs_more_data" and doc["missing_artifacts"] and doc["questions"]


def test_binary_junk(tmp_path, capsys):
    (tmp_path / "data.bin").write_bytes(bytes(range(256)) * 64)
    code, cap = _run(tmp_path, capsys)
    doc = json.loads(cap.out)
    assert code == 2 and "unrecognised binary" in doc["run"]["artifacts"][0]["problem"]


def test_zero_byte_log(tmp_path, capsys):
    (tmp_path / "train.log").write_bytes(b"")
    code, cap = _run(tmp_path / "train.log", capsys, fmt="text")
    assert code == 2 and "empty file (0 bytes)" in cap.out


def test_truncated_safetensors_is_reported_beside_a_good_log(tmp_path, capsys):
    p = tmp_path / "model.safetensors"
    save_file({"w": torch.ones(64, 64)}, p)
    p.write_bytes(p.read_bytes()[:5000])
    (tmp_path / "train.log").write_text("".join(f"step={i} loss={2 - i / 100}\n" for i in range(50)))
    code, cap = _run(tmp_path, capsys)
    doc = json.loads(cap.out)
    art = {a["path"]: a for a in doc["run"]["artifacts"]}
    assert code == 0 and art["model.safetensors"]["problem"].startswith("broken checkpoint: truncated")
    assert any("model.safetensors" in m for m in doc["missing_artifacts"])


def test_pickle_checkpoint_that_would_execute_code(tmp_path, capsys):
    if os.path.exists("/tmp/mltd-test-pwned"):
        os.remove("/tmp/mltd-test-pwned")
    torch.save({"w": torch.ones(2), "evil": Payload()}, tmp_path / "model.pt")
    code, cap = _run(tmp_path / "model.pt", capsys, fmt="markdown")
    assert code == 2 and "refused: loading needs arbitrary unpickling" in cap.out and "system" in cap.out
    assert not os.path.exists("/tmp/mltd-test-pwned")


def test_no_stack_trace_on_unreadable_file(tmp_path, capsys):
    p = tmp_path / "config.yaml"
    p.write_text("lr: [0.1\n")
    (tmp_path / "train.log").write_text("step=1 loss=2\nstep=2 loss=1.9\n")
    code, cap = _run(tmp_path, capsys)
    doc = json.loads(cap.out)
    assert code == 0 and "invalid YAML" in {a["path"]: a for a in doc["run"]["artifacts"]}["config.yaml"]["problem"]
