"""Per-tensor statistics at the speed of the disk: L2 norm, NaN/Inf count and, for matrices, the
rows that are (near) zero.

A tensor is consumed in blocks of up to 16M elements (whole rows for a matrix), so peak memory
stays near a few blocks, not the tensor, let alone the checkpoint. For a safetensors file a
reader thread streams the blocks from disk into a small pool of buffers while the main thread
computes on the previous one, so the disk and the arithmetic overlap (a page-faulting memory map
serialises them). Each block goes to the chosen device (CUDA when present with room, else the
CPU) and through torch's fused norm kernels; a block whose sum of squares is not finite takes the
exact slow path, so a NaN or an overflow is counted, never missed."""
from __future__ import annotations

import math
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

BLOCK = 16 << 20                   # elements per block
FLOAT_KINDS = ("F64", "F32", "F16", "BF16")
_NUMPY = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16}


@dataclass
class Stats:
    norm: float | None
    nonfinite: int
    zero_rows: int | None = None   # rows whose norm is under 1e-6 of the median row's (2-D tensors)
    rows: int | None = None


def pick_device(largest_bytes: int = 0) -> str:
    """CUDA when torch sees a GPU with room for a few blocks beside the largest tensor, else CPU.
    A machine with no NVIDIA device node is a CPU machine without importing torch (1.4 s)."""
    if not any(Path("/dev").glob("nvidia[0-9]*")):
        return "cpu"
    try:
        import torch

        if torch.cuda.is_available():
            free, _ = torch.cuda.mem_get_info()
            if free > 4 * BLOCK * 4 + largest_bytes // 8:
                return "cuda"
    except Exception:              # a broken driver is a CPU machine
        pass
    return "cpu"


def block_elements(shape: tuple[int, ...]) -> int:
    """Elements per block: whole rows for a matrix."""
    if len(shape) == 2 and shape[1]:
        return max(1, BLOCK // int(shape[1])) * int(shape[1])
    return BLOCK


class Accumulator:
    """Statistics of one tensor, fed block by block (raw numpy blocks of its own dtype)."""

    def __init__(self, shape: tuple[int, ...], dtype: str, device: str = "cpu") -> None:
        self.shape, self.dtype, self.device = shape, dtype, device
        self.cols = int(shape[1]) if len(shape) == 2 and shape[1] else None
        self.squares, self.bad = 0.0, 0
        self.row_norms: list[np.ndarray] = []

    def add(self, raw: np.ndarray) -> None:
        if self.device == "cpu":        # numpy: a run with a small checkpoint need not import torch
            block = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32) if self.dtype == "BF16" else raw
            block = block if block.dtype in (np.float32, np.float64) else block.astype(np.float32)
            with np.errstate(over="ignore", invalid="ignore"):     # an overflow is counted, not warned
                self._add(block, np)
            return
        import torch

        if self.dtype == "BF16":
            tensor = torch.from_numpy(raw.view(np.int16)).view(torch.bfloat16).float()
        else:
            tensor = torch.from_numpy(raw)
            tensor = tensor if tensor.dtype in (torch.float32, torch.float64) else tensor.float()
        self._add(tensor.to(self.device, non_blocking=True), torch)

    def _add(self, block, xp) -> None:
        """Sums of squares (per row for a matrix) of one block, with `xp` numpy or torch."""
        norm: Callable[..., Any] = np.linalg.norm if xp is np else xp.linalg.vector_norm
        if self.cols:
            rn = norm(block.reshape(-1, self.cols), axis=1) if xp is np else norm(block.view(-1, self.cols), dim=1)
            s = float((rn.astype(np.float64) ** 2).sum()) if xp is np else float(xp.sum(rn.double() ** 2))
        else:
            s = float(norm(block)) ** 2
        if not math.isfinite(s):       # a NaN/Inf, or squares past float32: count and sum exactly
            finite = xp.isfinite(block)
            self.bad += int((~finite).sum())
            clean = xp.where(finite, block.astype(np.float64) if xp is np else block.double(), 0.0)
            s = float((clean * clean).sum())
            if self.cols:
                rn = norm(clean.reshape(-1, self.cols), axis=1) if xp is np else norm(clean.view(-1, self.cols), dim=1)
        self.squares += s
        if self.cols:
            self.row_norms.append(rn.astype(np.float32) if xp is np else rn.float().cpu().numpy())

    def result(self) -> Stats:
        out = Stats(math.sqrt(self.squares), self.bad)
        if self.cols and self.row_norms:
            rows = np.concatenate(self.row_norms)
            med = float(np.median(rows))
            out.zero_rows = int((rows <= 1e-6 * med).sum()) if med > 0 else int((rows == 0).sum())
            out.rows = len(rows)
        return out


def tensor_stats(arr: np.ndarray, shape: tuple[int, ...], dtype: str, device: str = "cpu") -> Stats:
    """Statistics of a tensor already in memory (or mapped): `arr` is its flat raw array."""
    if arr.size == 0:
        return Stats(None, 0)
    acc = Accumulator(shape, dtype, device)
    per = block_elements(shape)
    for i in range(0, int(arr.size), per):
        acc.add(np.ascontiguousarray(arr[i:i + per]))
    return acc.result()


def stream_file_stats(path, tensors: list[tuple[str, tuple[int, ...], str, int]], device: str = "cpu"):
    """Statistics of the float tensors of one file, streamed: `tensors` lists (name, shape, dtype,
    byte offset). Yields (name, Stats) in order. A reader thread fills a pool of three buffers
    ahead of the arithmetic."""
    # buffers as large as the largest block this file needs, not the largest block any file could:
    # a small checkpoint must not cost three zero-filled 64 MB buffers
    size = max((min(block_elements(shape), int(np.prod(shape, dtype=np.int64)) if shape else 1)
                * np.dtype(_NUMPY[dtype]).itemsize for _, shape, dtype, _ in tensors), default=0)
    pool: queue.Queue = queue.Queue()
    for _ in range(3):
        pool.put(bytearray(size))
    ready: queue.Queue = queue.Queue(maxsize=3)

    def read():
        try:
            with open(path, "rb", buffering=0) as f:
                for name, shape, dtype, offset in tensors:
                    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
                    item = np.dtype(_NUMPY[dtype]).itemsize
                    per = block_elements(shape)
                    f.seek(offset)
                    for i in range(0, n, per):
                        k = min(per, n - i) * item
                        buf = pool.get()
                        view = memoryview(buf)[:k]
                        got = f.readinto(view)
                        if got != k:
                            raise ValueError(f"{name}: file ends {k - got} bytes early")
                        ready.put((name, buf, k))
                    ready.put((name, None, 0))          # end of this tensor
        except BaseException as exc:                   # handed to the consumer, raised there
            ready.put((None, exc, 0))

    threading.Thread(target=read, name="mltd-ckpt-reader", daemon=True).start()
    for name, shape, dtype, _ in tensors:
        acc = Accumulator(shape, dtype, device)
        while True:
            got, buf, k = ready.get()
            if got is None:
                raise buf
            if buf is None:
                break
            acc.add(np.frombuffer(buf, dtype=_NUMPY[dtype], count=k // np.dtype(_NUMPY[dtype]).itemsize))
            pool.put(buf)
        yield name, acc.result()
