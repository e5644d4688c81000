"""Hostile run folders, built by code at test time (nothing big is committed), and the harness
that runs `mltd diagnose --format json` on one in a child process and measures it.

Each case writes into `run/` beside an `outside/` folder that holds a canary: a secret file and
another run's checkpoint. Its atime is set before its mtime, so a read of it (relatime) moves the
atime: reading a file outside the run is detected, not only echoing it.
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CANARY = "CANARY-7f3a9c-do-not-read"
TIME_LIMIT_S = 15.0
RSS_LIMIT_MB = 1024
GOOD_LOG = "".join(f"step={i} loss={2.5 - i / 40:.4f} grad_norm={1 + (i % 3) / 10:.2f}\n" for i in range(60))


@dataclass
class Case:
    run: Path
    artifact: str          # the artifact that must be named ...
    reason: str            # ... with this (lower-case) word or phrase in its reason


# --- the canary outside the run ---------------------------------------------------------------

def plant_canary(outside: Path) -> list[Path]:
    outside.mkdir(parents=True, exist_ok=True)
    secret = outside / "secret.txt"
    secret.write_text(f"{CANARY}\n1 {CANARY} 1\n")
    other = outside / "other-run"
    other.mkdir(exist_ok=True)
    _safetensors(other / "model.safetensors", {"canary_tensor_weight": np.ones((4, 4), np.float32)})
    for p in (secret, other / "model.safetensors"):
        os.utime(p, (946684800, p.stat().st_mtime))     # atime in 2000: the first read moves it
    return [secret, other / "model.safetensors"]


def canary_read(files: list[Path]) -> list[str]:
    return [str(p) for p in files if p.stat().st_atime > 946684800 + 1]


# --- writers ----------------------------------------------------------------------------------

def _safetensors(path: Path, tensors: dict[str, np.ndarray], header_extra: dict | None = None) -> None:
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": {"float32": "F32"}[arr.dtype.name], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header.update(header_extra or {})
    head = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def _run(tmp: Path, log: bool = True) -> Path:
    run = tmp / "run"
    run.mkdir(parents=True, exist_ok=True)
    if log:
        (run / "train.log").write_text(GOOD_LOG)
    return run


# --- the cases: each returns what the report must name ----------------------------------------

def shard_index_outside(tmp: Path) -> Case:
    """weight_map names an absolute path and another run's shard through `..`."""
    run = _run(tmp)
    index = {"weight_map": {"a.weight": str(tmp / "outside" / "secret.txt"),
                            "b.weight": "../outside/other-run/model.safetensors"}}
    (run / "model.safetensors.index.json").write_text(json.dumps(index))
    return Case(run, "model.safetensors.index.json", "outside the run")


def shard_index_symlink(tmp: Path) -> Case:
    """A shard that is a symlink out of the run (discovery skips it; the index must too)."""
    run = _run(tmp)
    (run / "model-00001.safetensors").symlink_to(tmp / "outside" / "other-run" / "model.safetensors")
    (run / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"w": "model-00001.safetensors"}}))
    return Case(run, "model.safetensors.index.json", "outside the run")


def shard_index_list(tmp: Path) -> Case:
    run = _run(tmp)
    (run / "model.safetensors.index.json").write_text("[1, 2, 3]")
    return Case(run, "model.safetensors.index.json", "not a json object")


def shard_index_unhashable(tmp: Path) -> Case:
    run = _run(tmp)
    (run / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"w": ["a", "b"]}}))
    return Case(run, "model.safetensors.index.json", "weight_map")


def shard_index_deep(tmp: Path) -> Case:
    run = _run(tmp)
    (run / "model.safetensors.index.json").write_text('{"weight_map": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return Case(run, "model.safetensors.index.json", "nested")


def deep_folder(tmp: Path) -> Case:
    """1,500 levels of folders (a RecursionError for a recursive walk)."""
    run = _run(tmp)
    deep = run
    for _ in range(1500):                   # os.makedirs itself recurses per level
        deep = deep / "d"
        deep.mkdir()
    (deep / "deep.log").write_text(GOOD_LOG)
    return Case(run, "d/d/d", "levels deep")


def mlflow_symlinks(tmp: Path) -> Case:
    """An MLflow run whose params/ and one metrics file are symlinks out of the run."""
    run = _run(tmp, log=False)
    r = run / "mlruns" / "0" / "abc123"
    (r / "metrics").mkdir(parents=True)
    (r / "meta.yaml").write_text("run_id: abc123\n")
    (r / "metrics" / "loss").write_text("".join(f"{1000 + i} {2.5 - i / 40} {i}\n" for i in range(60)))
    (r / "metrics" / "grad_norm").symlink_to(tmp / "outside" / "secret.txt")
    (r / "params").symlink_to(tmp / "outside")
    return Case(run, "mlruns/0/abc123", "symlink")


def yaml_alias_bomb(tmp: Path) -> Case:
    """Under 1 KB: nine levels of mappings, each aliasing the previous nine times (9^9 leaves)."""
    run = _run(tmp)
    lines = ["a0: &a0 {x: 1, y: 2, z: 3, w: 4, v: 5, u: 6, t: 7, s: 8, r: 9}"]
    for i in range(1, 10):
        refs = ", ".join(f"k{j}: *a{i - 1}" for j in range(9))
        lines.append(f"a{i}: &a{i} {{{refs}}}")
    (run / "config.yaml").write_text("\n".join(lines) + "\n")
    return Case(run, "config.yaml", "alias")


def stride0_pt(tmp: Path) -> Case:
    """A 1.6 KB torch.save: one float viewed as 32768 x 32768 through stride 0 (4 GB dense)."""
    import torch

    run = _run(tmp)
    big = torch.zeros(1).as_strided((32768, 32768), (0, 0))
    torch.save({"w": big}, run / "model.pt")
    return Case(run, "model.pt", "storage")


def zip_pt_big_pickle(tmp: Path) -> Case:
    """A zip `.pt` whose data.pkl inflates to 600 MB from a ~600 KB member."""
    run = _run(tmp)
    with zipfile.ZipFile(run / "model.pt", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open("archive/data.pkl", "w", force_zip64=True) as f:
            f.write(b"\x80\x02}q\x00.")
            chunk = b"\x00" * (8 << 20)
            for _ in range(75):
                f.write(chunk)
        z.writestr("archive/version", "3\n")
    return Case(run, "model.pt", "data.pkl")


def safetensors_wide_mlp(tmp: Path) -> Case:
    """A 200 KB "MLP" whose first layer takes 50,000 inputs, and a bias that would broadcast: the
    dead-unit check must not build a 4096 x 50,000 activation."""
    run = _run(tmp)
    (run / "train.py").write_text("import torch.nn.functional as F\nh = F.relu(x)\n")
    rng = np.random.default_rng(0)
    _safetensors(run / "model.safetensors", {
        "fc1.weight": rng.standard_normal((1, 50_000)).astype(np.float32),
        "fc1.bias": np.zeros(1, np.float32),
        "fc2.weight": np.ones((1, 1), np.float32),
        "fc2.bias": np.zeros(50_000, np.float32),
        "fc3.weight": np.ones((1, 1), np.float32),
    })
    return Case(run, "model.safetensors", "")


def safetensors_shape_lies(tmp: Path) -> Case:
    """A header whose shape claims 10^12 elements over 16 bytes of data."""
    run = _run(tmp)
    head = json.dumps({"w": {"dtype": "F32", "shape": [1_000_000, 1_000_000], "data_offsets": [0, 16]}}).encode()
    (run / "model.safetensors").write_bytes(struct.pack("<Q", len(head)) + head + b"\x00" * 16)
    return Case(run, "model.safetensors", "shape")


def big_code(tmp: Path) -> Case:
    """A 6 MB train.py: parsed with ast it costs seconds and hundreds of MB."""
    run = _run(tmp)
    (run / "train.py").write_text("x = [1, 2, 3]\n" * 450_000)
    return Case(run, "train.py", "over")


def oom_long_line(tmp: Path) -> Case:
    """A 30 KB out-of-memory line of digits: quadratic for `[\\d.]+\\s*UNIT` searched at every digit."""
    run = _run(tmp)
    with open(run / "train.log", "a") as f:
        f.write("torch.OutOfMemoryError: CUDA out of memory. " + "1" * 30_000 + "\n")
    return Case(run, "train.log", "")


def tokenizer_json(tmp: Path) -> Case:
    """A pretty-printed 400 KB tokenizer.json: one line per key (a per-key line scan is quadratic)."""
    run = _run(tmp)
    vocab = {f"tok{i}": i for i in range(20_000)}
    (run / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE", "vocab": vocab}}, indent=2))
    return Case(run, "tokenizer.json", "")


def jsonl_deep_line(tmp: Path) -> Case:
    run = _run(tmp, log=False)
    rows = [json.dumps({"step": i, "loss": 2.5 - i / 40}) for i in range(60)]
    rows.insert(5, "[" * 990 + "]" * 990)
    rows.insert(9, '{"step": 9, "loss": ' + "9" * 400 + "}")
    (run / "metrics.jsonl").write_text("\n".join(rows) + "\n")
    return Case(run, "metrics.jsonl", "skipped")


def csv_big_cell(tmp: Path) -> Case:
    run = _run(tmp, log=False)
    rows = ["step,loss"] + [f"{i},{2.5 - i / 40}" for i in range(60)]
    rows.insert(5, "4," + "x" * 200_000)
    (run / "metrics.csv").write_text("\n".join(rows) + "\n")
    return Case(run, "metrics.csv", "skipped")


def csv_repeated_column(tmp: Path) -> Case:
    """`loss` twice in the header: the second column (constant) must not silently replace the first."""
    run = _run(tmp, log=False)
    rows = ["step,loss,loss"] + [f"{i},{2.5 - i / 40},7" for i in range(60)]
    (run / "metrics.csv").write_text("\n".join(rows) + "\n")
    return Case(run, "metrics.csv", "repeated")


def log_with_ff_bytes(tmp: Path) -> Case:
    run = _run(tmp, log=False)
    (run / "train.log").write_bytes(b"epoch 0 \xff\xfe start\n" + GOOD_LOG.encode() + b"loss is nan\n")
    return Case(run, "train.log", "")


def _tb_file(run: Path) -> Path:
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(run / "tb"))
    for i in range(60):
        w.add_scalar("loss", float("nan") if i == 40 else 2.5 - i / 40, i)
    w.close()
    return next((run / "tb").glob("events.out.tfevents*"))


def tb_truncated(tmp: Path) -> Case:
    run = _run(tmp, log=False)
    f = _tb_file(run)
    data = f.read_bytes()
    f.write_bytes(data[: len(data) - 30])
    return Case(run, "tb/" + f.name, "damaged")


def tb_bad_crc(tmp: Path) -> Case:
    run = _run(tmp, log=False)
    f = _tb_file(run)
    data = bytearray(f.read_bytes())
    data[len(data) * 3 // 4] ^= 0xFF
    f.write_bytes(bytes(data))
    return Case(run, "tb/" + f.name, "damaged")


CASES = {f.__name__: f for f in (
    shard_index_outside, shard_index_symlink, shard_index_list, shard_index_unhashable, shard_index_deep,
    deep_folder, mlflow_symlinks, yaml_alias_bomb, stride0_pt, zip_pt_big_pickle, safetensors_wide_mlp,
    safetensors_shape_lies, big_code, oom_long_line, tokenizer_json, jsonl_deep_line, csv_big_cell,
    csv_repeated_column, log_with_ff_bytes, tb_truncated, tb_bad_crc)}


def remove_tree(top: Path) -> None:
    """rmtree without recursion: shutil.rmtree (and pytest's cleanup) recurse once per level."""
    stack, folders = [str(top)], []
    while stack:
        d = stack.pop()
        folders.append(d)
        for e in os.scandir(d):
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
            else:
                os.unlink(e.path)
    for d in reversed(folders):
        os.rmdir(d)


# --- the harness ------------------------------------------------------------------------------

# Runs in a fresh interpreter, so that RUSAGE_CHILDREN is the one child's peak RSS. The child is
# killed past `kill_after` seconds or 3 GB of RSS (to protect the machine when a case fails).
_WRAPPER = textwrap.dedent("""
    import json, resource, subprocess, sys, threading, time
    kill_after, cmd = float(sys.argv[1]), sys.argv[2:]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed = []
    def watch():
        while p.poll() is None:
            try:
                rss = int(open(f"/proc/{p.pid}/statm").read().split()[1]) * 4096
            except (OSError, ValueError, IndexError):
                rss = 0
            if rss > 3 << 30 or time.monotonic() - t0 > kill_after:
                killed.append("rss" if rss > 3 << 30 else "time")
                p.kill()
                return
            time.sleep(0.02)
    threading.Thread(target=watch, daemon=True).start()
    out, err = p.communicate()
    wall = time.monotonic() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    json.dump({"rc": p.returncode, "wall_s": wall, "peak_mb": peak, "killed": killed,
               "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace")}, sys.stdout)
""")


@dataclass
class Outcome:
    rc: int
    wall_s: float
    peak_mb: float
    killed: list[str]
    stdout: str
    stderr: str


def mltd_command() -> list[str]:
    if os.environ.get("MLTD_TREE"):       # another checkout (to measure the code before a fix)
        return [sys.executable, "-m", "handlers.cli"]
    script = Path(sys.executable).with_name("mltd")
    return [str(script)] if script.exists() else [sys.executable, "-m", "handlers.cli"]


def diagnose_in_child(path: Path, kill_after: float = 2 * TIME_LIMIT_S) -> Outcome:
    cmd = [sys.executable, "-c", _WRAPPER, str(kill_after), *mltd_command(), "diagnose", str(path), "--format", "json"]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    tree = os.environ.get("MLTD_TREE") or Path(__file__).parents[1]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree, check=True)
    return Outcome(**json.loads(done.stdout))


def reason_for(doc: dict, artifact: str) -> str | None:
    """What the report says about `artifact`: its problem, skipped lines, or the notes naming it."""
    said = []
    for a in doc["run"]["artifacts"]:
        if a["path"] == artifact or a["path"].startswith(artifact):
            if a.get("problem"):
                said.append(a["problem"])
            if a.get("skipped_lines"):
                said.append(f"{a['skipped_lines']} records skipped")
    said += [n for n in doc["engine"].get("notes", []) if artifact in n]
    return " | ".join(said) if said else None


if __name__ == "__main__":              # python -m tests.hostile NAME...: one line per case
    import tempfile

    for name in sys.argv[1:] or CASES:
        with tempfile.TemporaryDirectory() as d:
            plant_canary(Path(d) / "outside")
            case = CASES[name](Path(d))
            o = diagnose_in_child(case.run, kill_after=float(os.environ.get("KILL_AFTER", 30)))
            try:
                said = reason_for(json.loads(o.stdout), case.artifact)
            except ValueError:
                said = "no JSON"
            remove_tree(case.run)
            print(f"{name:24} rc={o.rc:>4} {o.wall_s:6.1f}s {o.peak_mb:7.0f}MB killed={o.killed} "
                  f"err={o.stderr.strip()[-80:]!r} said={str(said)[:150]!r}", flush=True)
