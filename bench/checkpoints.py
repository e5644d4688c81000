"""Checkpoint statistics at the speed of the disk.

    python bench/checkpoints.py                  # a ~3.6 GiB float32 transformer-shaped checkpoint, CPU
    python bench/checkpoints.py --dtype bfloat16 --layers 32
    python bench/checkpoints.py --device cuda    # the same on a GPU machine
    python bench/checkpoints.py --layers 48      # bigger

Generates a safetensors checkpoint of several hundred tensors with realistic shapes (embeddings,
attention and MLP matrices, norms), then, each in a fresh child process with the file's pages
evicted from the page cache first (so both start cold), times (1) merely reading every tensor
and (2) the full statistics pass of `mltd` (norm, NaN/Inf, zero rows), and prints the ratio,
throughput and peak RSS. Floors on the CPU: statistics at most 1.5x the bare read; peak RSS under
1.5x the largest tensor plus 300 MB.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, time
import numpy as np
sys.path.insert(0, sys.argv[3])
from analysis.ingest.checkpoints import load_safetensors, read_safetensors_header
from analysis.tensorstats import BLOCK
path, mode, device = sys.argv[1], sys.argv[2], sys.argv[4]
fd = os.open(path, os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)      # start cold: evict the file's cached pages
os.close(fd)
if mode == "stats":
    import torch                                        # loaded with mltd; not part of the pass
    import analysis.ingest.checkpoints as ck_module
    ck_module.pick_device = lambda largest=0: device
t = time.perf_counter()
if mode == "read":                                      # bring every byte in, block by block
    header, base = read_safetensors_header(__import__("pathlib").Path(path))
    for name, info in header.items():
        if name == "__metadata__":
            continue
        n = int(np.prod([int(x) for x in info["shape"]]))
        dt = {"BF16": np.uint16, "F16": np.float16, "F64": np.float64}.get(info["dtype"], np.float32)
        mm = np.memmap(path, dtype=dt, mode="r", offset=base + int(info["data_offsets"][0]), shape=(n,))
        buf = np.empty(min(n, BLOCK), dtype=dt)
        for i in range(0, n, BLOCK):
            k = min(BLOCK, n - i)
            np.copyto(buf[:k], mm[i:i + k])
        del mm
else:                                                   # mltd's own loader: norms, NaN/Inf, zero rows
    ck = load_safetensors([__import__("pathlib").Path(path)], "model.safetensors")
dt = time.perf_counter() - t
# VmHWM, not ru_maxrss: the latter carries the parent's peak across exec
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) * 1024
print(json.dumps({"seconds": dt, "rss": hwm}))
"""


def generate(path: Path, layers: int, d: int, vocab: int, dtype: str) -> tuple[int, int, int]:
    """(bytes, tensors, largest tensor bytes) of a transformer-shaped checkpoint."""
    import torch
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(0)
    tensors: dict[str, torch.Tensor] = {}

    def add(name, *shape):
        tensors[name] = (torch.randn(*shape, generator=g) * 0.02).to(getattr(torch, dtype))

    add("model.embed_tokens.weight", vocab, d)
    for i in range(layers):
        p = f"model.layers.{i}."
        add(p + "input_layernorm.weight", d)
        add(p + "self_attn.q_proj.weight", d, d)
        add(p + "self_attn.k_proj.weight", d // 4, d)
        add(p + "self_attn.v_proj.weight", d // 4, d)
        add(p + "self_attn.o_proj.weight", d, d)
        add(p + "post_attention_layernorm.weight", d)
        add(p + "mlp.gate_proj.weight", 4 * d, d)
        add(p + "mlp.up_proj.weight", 4 * d, d)
        add(p + "mlp.down_proj.weight", d, 4 * d)
    add("model.norm.weight", d)
    add("lm_head.weight", vocab, d)
    save_file(tensors, path)
    largest = max(t.numel() * t.element_size() for t in tensors.values())
    return path.stat().st_size, len(tensors), largest


def child(path: Path, mode: str, device: str) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", CHILD, str(path), mode, str(ROOT), device],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"),
                    help="float32: a training checkpoint (master weights); bfloat16: a release checkpoint")
    ap.add_argument("--d-model", type=int, default=1536)
    ap.add_argument("--vocab", type=int, default=50_304)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--repeat", type=int, default=2, help="runs of each pass; the best is kept")
    ap.add_argument("--keep", metavar="PATH", help="write the checkpoint here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "model.safetensors"
        t = time.perf_counter()
        size, count, largest = generate(path, args.layers, args.d_model, args.vocab, args.dtype)
        print(f"checkpoint: {size / 2**30:.2f} GiB, {count} tensors ({args.dtype}), largest {largest / 2**20:.0f} MiB, "
              f"written in {time.perf_counter() - t:.0f}s")
        read = min((child(path, "read", args.device) for _ in range(args.repeat)), key=lambda r: r["seconds"])
        stats = min((child(path, "stats", args.device) for _ in range(args.repeat)), key=lambda r: r["seconds"])
        ratio = stats["seconds"] / read["seconds"]
        rss_cap = 1.5 * largest + 300 * 2**20
        print(f"bare read:        {read['seconds']:.2f}s  {size / read['seconds'] / 2**30:.2f} GiB/s  "
              f"peak RSS {read['rss'] / 2**20:.0f} MiB")
        print(f"statistics ({args.device}): {stats['seconds']:.2f}s  {size / stats['seconds'] / 2**30:.2f} GiB/s  "
              f"peak RSS {stats['rss'] / 2**20:.0f} MiB")
        print(f"ratio statistics / read: {ratio:.2f}")
        print(f"floors: ratio <= 1.5 -> {'ok' if ratio <= 1.5 else 'ABOVE'}; peak RSS < 1.5 x largest + 300 MB "
              f"({rss_cap / 2**20:.0f} MiB) -> {'ok' if stats['rss'] < rss_cap else 'ABOVE'}")


if __name__ == "__main__":
    main()
