"""Issue 14's floor, enforced in general: no short excerpt (2 to 50 lines) holding a NaN, an
out-of-memory error, a distributed error or a rising loss gets "no cause".

The excerpts are cut, line for line, from text that real runs printed: the logs of the tuning
scenarios (real tiny CPU trainings with injected faults, tests/scenarios) and the pasted blocks of
the tuning half of tests/wild (never the measuring half). Windows of several sizes slide over each
file; a window qualifies by what a reader would see in it, judged here by plain patterns that know
nothing of mltd's scanner or signatures. Every qualifying window must get a cause that is not
"healthy" at the top.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from analysis.diagnose import diagnose
from tests.scenarios import SCENARIOS, SPLIT

WILD = Path(__file__).resolve().parent / "wild"
SIZES = (2, 3, 5, 12, 30, 50)
PER_SIZE = 3             # windows kept per file and size: the first, the middle and the last that qualify

TEXT_SUFFIXES = (".log", ".txt", ".out", ".err")
# every hand-written tuning scenario with a fault: the windows of its text files that qualify are tried
SCENARIO_RUNS = tuple(name for name, (_, code) in SCENARIOS.items() if code != "healthy")

# (a name or a call such as RecBole's `self._check_nan(loss)` in a traceback frame prints no value)
_NONFINITE = re.compile(r"(?<![A-Za-z_])-?(?:nan|inf)(?![A-Za-z_(])|1\.#(?:INF|IND|QNAN)", re.I)
# a count of NaN steps that is 0 (Megatron's `number of nan iterations:   0`) shows no NaN
_ZERO_COUNT = re.compile(r"(?<![A-Za-z_])(?:nan|inf)[ _](?:iterations?|iters?|steps?|batches|count)"
                         r"[ \t]*[:=][ \t]*0(?![\d.])", re.I)
_OOM = re.compile(r"out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|DefaultCPUAllocator|^\s*Killed\s*$|"
                  r"exit code 137|SIGKILL|\bMemoryError\b|OOM when allocating", re.I)
_DIST = re.compile(r"(?:nccl|gloo|processgroup|c10d|torch\.distributed|rendezvous|store based barrier|\brank\b)"
                   r".*(?:error|timeout|timed out|fail|exit|abort|WARN)|Address already in use|ChildFailedError|"
                   r"Watchdog caught", re.I)
_LOSS = re.compile(r"(?i)\bloss\b\W{0,3}\s*([-+]?\d+\.?\d*(?:e[-+]?\d+)?)")


def _rising(lines: list[str]) -> bool:
    """Four or more loss readings, each above the one before, the last 20% above the first."""
    v = [float(m.group(1)) for line in lines if (m := _LOSS.search(line))]
    return len(v) >= 4 and all(b > a for a, b in zip(v, v[1:])) and v[0] > 0 and v[-1] >= 1.2 * v[0]


def qualifies(lines: list[str]) -> str | None:
    """What in these lines calls for a cause, or None."""
    if any("loss" in line.lower() and _NONFINITE.search(_ZERO_COUNT.sub("", line)) for line in lines):
        return "nan"
    if any(_OOM.search(line) for line in lines):
        return "oom"
    if any(_DIST.search(line) for line in lines):
        return "distributed"
    return "rising loss" if _rising(lines) else None


def windows(lines: list[str]):
    """(start, size, why) of the qualifying windows: a few per size, spread over the file."""
    for size in SIZES:
        if size > len(lines):
            continue
        found = [(i, why) for i in range(len(lines) - size + 1) if (why := qualifies(lines[i:i + size]))]
        for k in sorted({0, len(found) // 2, len(found) - 1} if found else set())[:PER_SIZE]:
            yield found[k][0], size, found[k][1]


def _no_cause(tmp_path: Path, name: str, excerpt: list[str]) -> str | None:
    folder = tmp_path / "excerpt"
    folder.mkdir(exist_ok=True)
    for f in folder.iterdir():
        f.unlink()
    (folder / name).write_text("\n".join(excerpt) + "\n")
    d, _ = diagnose(folder)
    if not d.root_causes or d.root_causes[0].code == "healthy":
        return d.root_causes[0].code if d.root_causes else "no cause"
    return None


def _check(tmp_path: Path, files: list[Path]) -> list[str]:
    failures = []
    for f in files:
        lines = f.read_text(errors="replace").splitlines()
        for start, size, why in windows(lines):
            got = _no_cause(tmp_path, f.name, lines[start:start + size])
            if got is not None:
                failures.append(f"{f.name} lines {start + 1}-{start + size} ({why}): {got}")
    return failures


def _tune_cases() -> list[dict]:
    return [c for c in json.loads((WILD / "labels.json").read_text())
            if c["split"] == "tune" and c["code"] != "healthy"]


@pytest.mark.parametrize("name", SCENARIO_RUNS)
def test_excerpts_of_a_faulty_scenario_run_always_get_a_cause(scenario, tmp_path, name):
    assert SPLIT[name] == "tuning"
    folder = scenario(name)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES)
    assert not _check(tmp_path, files)


@pytest.mark.parametrize("case", [c["id"] for c in _tune_cases()])
def test_excerpts_of_a_tuning_half_paste_always_get_a_cause(tmp_path, case):
    files = sorted(p for p in (WILD / "cases" / case).iterdir() if p.suffix in TEXT_SUFFIXES)
    assert not _check(tmp_path, files)


def test_the_window_rule_sees_each_kind():
    # the patterns above are the floor's own definition: each kind is seen, and a calm log is not
    assert qualifies(["step 40 | loss 2.31", "step 50 | loss nan"]) == "nan"
    assert qualifies(["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]) == "oom"
    assert qualifies(["[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout"]) == \
        "distributed"
    assert qualifies([f"epoch {i} loss {v}" for i, v in enumerate((1.0, 1.3, 1.9, 2.8))]) == "rising loss"
    assert qualifies([f"epoch {i} loss {v}" for i, v in enumerate((2.8, 1.9, 1.3, 1.0))]) is None
    # Megatron's count of NaN iterations at 0 is no NaN; at 1 it is
    line = " iteration 2/ 9 | lm loss: 7.4E+00 | loss scale: 16384.0 | number of nan iterations: {} |"
    assert qualifies([line.format("  0")]) is None and qualifies([line.format("  1")]) == "nan"


def test_the_probes_loss_pattern_skips_a_bracketed_step_and_reads_a_bracketed_value():
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "bench" / "excerpts.py"
    spec = importlib.util.spec_from_file_location("bench_excerpts", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_excerpts"] = mod           # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    read = [mod.LOSS_NUM.search(t).group(1) for t in ("train_batch_loss[ 6510 ]:  1.57", "loss: [0.523]",
                                                      "loss=[2.3]", "'loss': [0.41, 0.4]", "Loss 3.1")]
    assert read == ["1.57", "0.523", "2.3", "0.41", "3.1"]
    assert not mod._rising("train_batch_loss[ 6510 ]:  1.5\ntrain_batch_loss[ 6520 ]:  1.4\n"
                           "train_batch_loss[ 6530 ]:  1.45\ntrain_batch_loss[ 6540 ]:  1.3\n")
