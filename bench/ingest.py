"""Throughput and peak memory of the plain-text log reader, next to `grep -c` on the same file.

    python bench/ingest.py                 # a 300 MB log
    python bench/ingest.py --size-mb 1024  # the 1 GB case
    python bench/ingest.py --size-mb 20 --python   # the pure-Python scanner (an install without a compiler)

The log mixes what real runs print: timestamped key=value metric lines, nanoGPT-style lines,
mmdet, fairseq validation and YOLO table lines, info noise, tqdm bars rewritten with carriage
returns, ANSI colour, warnings and a final traceback.
The reader runs in a child process so that its peak RSS is its own.
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generate(path: Path, size_mb: int, seed: int = 0) -> int:
    rnd = random.Random(seed)
    target = size_mb << 20
    written = step = 0
    loss = 4.0
    with open(path, "w") as f:
        while written < target:
            block = []
            for _ in range(2000):
                step += 1
                loss = max(0.5, loss * 0.99995 + rnd.gauss(0, 0.01))
                r = rnd.random()
                ts = f"2026-03-01 09:{(step // 60) % 60:02d}:{step % 60:02d},{step % 1000:03d}"
                if r < 0.70:
                    block.append(f"{ts} INFO trainer.py:212 epoch={step // 5000} step={step} loss={loss:.4f} "
                                 f"lr={3e-4:.2e} grad_norm={abs(rnd.gauss(1, 0.2)):.3f} tokens/s={rnd.uniform(9e4, 1e5):.1f}")
                elif r < 0.82:
                    block.append(f"iter {step}: loss {loss:.4f}, time {rnd.uniform(80, 120):.2f}ms, mfu {rnd.uniform(30, 40):.2f}%")
                elif r < 0.89:
                    block.append(f"{ts} INFO data.py:88 loaded shard {step % 97} of 97 from /data/shard-{step % 97:05d}.bin")
                elif r < 0.90:       # other dialects: mmdet, a fairseq validation row, a YOLO table
                    block.append(f"{ts} - mmdet - INFO - Epoch [{step // 5000 + 1}][{step % 5000}/5000]\tlr: 2.000e-02, "
                                 f"eta: 1 day, 6:35:57, time: 0.391, memory: 3946, loss_cls: {loss / 3:.4f}, loss: {loss:.4f}")
                elif r < 0.91:
                    block.append(f"{ts} | INFO | valid | epoch {step // 5000:03d} | valid on 'valid' subset | loss "
                                 f"{loss * 1.05:.3f} | nll_loss {loss:.3f} | ppl 321.26 | wps 84912.1 | num_updates {step}")
                elif r < 0.92:
                    block.append("      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
                                 f"      {step // 5000}/300      9.95G     {loss / 3:.4f}       {loss / 3:.3f}      "
                                 f"{loss / 3:.3f}         12        640: 100%|##########| 787/787 [09:07<00:00,  1.44it/s]")
                elif r < 0.97:
                    block.append(f"\x1b[32m{ts}\x1b[0m INFO eval.py:40 val_loss={loss * 1.05:.4f} val_acc={rnd.random():.3f}")
                elif r < 0.995:
                    block.append("".join(f"Epoch {step // 5000}: {p:3d}%|{'#' * (p // 10):10s}| {p * 10}/1000 "
                                         f"[00:{p // 10:02d}<00:10, 43.21it/s, loss={loss:.3f}]\r" for p in range(0, 100, 25)))
                else:
                    block.append(f"{ts} WARNING py.warnings: /opt/venv/lib/python3.11/site-packages/torch/utils/data/"
                                 "dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total.")
            text = "\n".join(block) + "\n"
            f.write(text)
            written += len(text)
        tb = ("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n"
              "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
              "79.15 GiB of which 1.23 GiB is free.\n")
        f.write(tb)
        written += len(tb)
    return written


CHILD = """
import resource, sys, time
if sys.argv[2] == "python":
    sys.modules["analysis.ingest._logscan"] = None      # as if built without a compiler
from pathlib import Path
from analysis.ingest.textlog import parse_text_log
t = time.perf_counter()
r = parse_text_log(Path(sys.argv[1]), "bench.log")
dt = time.perf_counter() - t
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, r.lines, r.metric_lines, len(r.events),
      sum(len(s) for s in r.series))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=300)
    ap.add_argument("--keep", metavar="PATH", help="write the log here and keep it")
    ap.add_argument("--python", action="store_true", help="time the pure-Python scanner instead of the C one")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "bench.log"
        t = time.perf_counter()
        size = generate(path, args.size_mb)
        gen_s = time.perf_counter() - t
        t = time.perf_counter()
        grep = subprocess.run(["grep", "-c", "loss", str(path)], capture_output=True, text=True)
        grep_s = time.perf_counter() - t
        base = subprocess.run([sys.executable, "-c", "import resource, numpy; from analysis.ingest import textlog; "
                               "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)"],
                              capture_output=True, text=True, cwd=ROOT, check=True)
        scanner = "python" if args.python else "c"
        out = subprocess.run([sys.executable, "-c", CHILD, str(path), scanner], capture_output=True, text=True, cwd=ROOT,
                             check=True)
        dt, rss, lines, metric_lines, events, points = out.stdout.split()
        dt, rss, base_rss = float(dt), int(rss), int(base.stdout)
        mb = size / 2**20
        print(f"log: {mb:,.0f} MB, {int(lines):,} lines ({int(metric_lines):,} with metrics), generated in {gen_s:.1f}s")
        print(f"mltd text-log reader ({scanner} scanner): {dt:.2f}s  {mb / dt:,.0f} MB/s  peak RSS {rss / 2**20:,.0f} MB "
              f"(interpreter + imports alone: {base_rss / 2**20:,.0f} MB)  points kept: {int(points):,}  events: {events}")
        print(f"grep -c loss:         {grep_s:.2f}s  {mb / grep_s:,.0f} MB/s  ({grep.stdout.strip()} matching lines)")
        if not args.python:             # the fallback has no floor: it only has to give the same numbers
            print(f"floors: >= 100 MB/s -> {'ok' if mb / dt >= 100 else 'BELOW'}; peak RSS < 500 MB -> "
                  f"{'ok' if rss < 500 * 2**20 else 'ABOVE'}")


if __name__ == "__main__":
    main()
