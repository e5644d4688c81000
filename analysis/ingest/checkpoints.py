"""Checkpoints, read without trusting them.

safetensors files are parsed from their header and memory-mapped tensor by tensor (sharded ones
through their index). `torch.save` files and Lightning `.ckpt` files load only with
`weights_only=True`; before that, the pickle's opcodes are listed (never run) so that a file which
would import arbitrary objects can be named with the globals it asks for.
"""
from __future__ import annotations

import io
import json
import pickletools
import re
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analysis.budget import DEFAULT, Budget
from analysis.ingest.inside import OutsideRun, inside_run
from analysis.metrics import clip
from analysis.tensorstats import FLOAT_KINDS, pick_device, stream_file_stats, tensor_stats

_ST_ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
                "BOOL": 1, "U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1, "F8_E5M2": 1}
_ST_DTYPES: dict[str, type[np.generic] | str] = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
    "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_, "BF16": "bf16"}
# Globals a plain state dict or Lightning checkpoint may reference; anything else is reported.
_BENIGN_GLOBALS = re.compile(r"^(torch\b|collections (OrderedDict|defaultdict)"
                             r"|builtins (set|frozenset|slice|complex|bytearray)"
                             r"|numpy\.core\.multiarray (scalar|_reconstruct)|numpy (dtype|ndarray)"
                             r"|_codecs encode|pathlib)")
_EMBED_NAME = re.compile(r"(^|[._])(embed\w*|wte|wpe|tok_emb\w*|pos_emb\w*|word_embeddings|position_embeddings"
                         r"|token_embedding\w*|shared|lm_head|output_projection|decoder\.weight$)", re.I)
_STEP_IN_NAME = re.compile(r"(?:checkpoint|step|iter|global_step|ckpt)[-_=]?(\d+)", re.I)


@dataclass
class TensorStat:
    name: str
    shape: tuple[int, ...]
    dtype: str
    numel: int
    norm: float | None = None
    nonfinite: int = 0
    zero_rows: int | None = None          # 2-D tensors: rows whose norm is ~0 (never-used embeddings, dead units)


@dataclass
class Checkpoint:
    artifact: str
    format: str
    tensors: list[TensorStat] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)
    problem: str | None = None
    step: int | None = None
    sources: list[Path] = field(default_factory=list)

    @property
    def numel(self) -> int:
        return sum(t.numel for t in self.tensors)


def arrays(ckpt: Checkpoint):
    """(name, float array) for each floating-point tensor, one at a time: safetensors stay
    memory-mapped; torch files are re-opened with weights_only=True (memory-mapped when zipped)."""
    if ckpt.problem or not ckpt.sources:
        return
    if ckpt.format.startswith("safetensors"):
        for path in ckpt.sources:
            header, base = read_safetensors_header(path)
            mm = np.memmap(path, dtype=np.uint8, mode="r")
            for name, info in header.items():
                if name == "__metadata__" or info.get("dtype") not in ("F64", "F32", "F16", "BF16"):
                    continue
                arr = _tensor_array(mm, base, info)
                if arr is not None:
                    yield name, arr.reshape(tuple(int(x) for x in info["shape"]))
            del mm
        return
    obj = _load_checked(ckpt.sources[0])
    tensors, _ = _state_dict(obj)
    for name, t in tensors.items():
        if t.is_floating_point():
            yield name, t.detach().float().numpy()


def step_from_name(path: str) -> int | None:
    m = None
    for m in _STEP_IN_NAME.finditer(path):
        pass
    return int(m.group(1)) if m else None


def is_embedding(name: str, shape: tuple[int, ...]) -> bool:
    return len(shape) == 2 and bool(_EMBED_NAME.search(name))


# --- safetensors ------------------------------------------------------------------------------

def read_safetensors_header(path: Path, budget: Budget = DEFAULT) -> tuple[dict, int]:
    """The header dict and the offset where tensor data starts. Raises ValueError if malformed:
    every entry's shape, dtype and offsets are checked against each other and the file, so no
    reader trusts a declared size."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError(f"truncated: {size} bytes, too short to hold a safetensors header")
        (n,) = struct.unpack("<Q", head)
        if n > min(size - 8, budget.header_bytes):
            raise ValueError(f"the header's declared length exceeds the file ({size:,} bytes) or the "
                             f"{budget.mb(budget.header_bytes)} cap: truncated or not safetensors")
        try:
            header = json.loads(f.read(n))
        except (ValueError, RecursionError):
            raise ValueError("header is not valid JSON: corrupt or not safetensors") from None
    if not isinstance(header, dict):
        raise ValueError("header is not a JSON object")
    if len(header) > budget.tensors + 1:
        raise ValueError(f"header lists {len(header):,} tensors, over the {budget.tensors:,} cap")
    if not isinstance(header.get("__metadata__", {}), dict):
        header["__metadata__"] = {}
    for name, info in header.items():
        if name != "__metadata__":
            _check_entry(name, info)
    data_bytes = size - 8 - n
    need = max((int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0)
    if need > data_bytes:
        raise ValueError(f"truncated: the header describes {need:,} bytes of tensor data, "
                         f"the file holds {data_bytes:,}")
    return header, 8 + n


def _check_entry(name: str, info) -> None:
    """One header entry: a dtype, a shape of non-negative ints, and offsets spanning exactly the
    bytes that shape needs."""
    if not isinstance(info, dict):
        raise ValueError(f"tensor {name[:80]!r}: entry is not a JSON object")
    shape, offsets, dtype = info.get("shape"), info.get("data_offsets"), info.get("dtype")
    if not isinstance(dtype, str) or not isinstance(shape, list) or len(shape) > 16 \
            or not all(type(x) is int and x >= 0 for x in shape):
        raise ValueError(f"tensor {name[:80]!r}: dtype or shape is malformed")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(x) is int for x in offsets)
            and 0 <= offsets[0] <= offsets[1]):
        raise ValueError(f"tensor {name[:80]!r}: data_offsets are malformed")
    item = _ST_ITEMSIZE.get(dtype)
    numel = int(np.prod(shape, dtype=object)) if shape else 1
    if item is not None and numel * item != offsets[1] - offsets[0]:
        raise ValueError(f"tensor {name[:80]!r}: its shape {shape} needs {numel * item:,} bytes, its data "
                         f"holds {offsets[1] - offsets[0]:,}")


def _tensor_array(mm: np.ndarray, base: int, info: dict) -> np.ndarray | None:
    start, end = (int(x) for x in info["data_offsets"])
    raw = mm[base + start: base + end]
    dtype = info["dtype"]
    if dtype == "BF16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    np_dtype = _ST_DTYPES.get(dtype)
    if np_dtype is None:
        return None
    return raw.view(np_dtype)


def load_safetensors(paths: list[Path], artifact: str, with_stats: bool = True, budget: Budget = DEFAULT) -> Checkpoint:
    """Headers first, then statistics streamed tensor by tensor (analysis/tensorstats.py)."""
    ckpt = Checkpoint(artifact, "safetensors", step=step_from_name(artifact), sources=list(paths))
    headers = [(path, *read_safetensors_header(path, budget)) for path in paths]
    largest = max((int(i["data_offsets"][1]) - int(i["data_offsets"][0]) for _, h, _ in headers
                   for k, i in h.items() if k != "__metadata__"), default=0)
    device = pick_device(largest) if with_stats else "cpu"
    for path, header, base in headers:
        ckpt.meta.update(header.get("__metadata__") or {})
        stats: dict[str, TensorStat] = {}
        wanted = []
        for name, info in header.items():
            if name == "__metadata__":
                continue
            shape = tuple(int(x) for x in info["shape"])
            stat = TensorStat(name, shape, info["dtype"], int(np.prod(shape, dtype=np.int64)) if shape else 1)
            stats[name] = stat
            ckpt.tensors.append(stat)
            if with_stats and stat.numel and info["dtype"] in FLOAT_KINDS:
                wanted.append((name, shape, info["dtype"], base + int(info["data_offsets"][0])))
        wanted.sort(key=lambda t: t[3])                # file order: one sequential pass over the disk
        for name, st in stream_file_stats(path, wanted, device):
            stats[name].norm, stats[name].nonfinite, stats[name].zero_rows = st.norm, st.nonfinite, st.zero_rows
    return ckpt


def shard_paths(index_path: Path, root: Path, budget: Budget = DEFAULT) -> list[Path]:
    """The shard files a `*.safetensors.index.json` names, each checked to lie inside `root`
    (never through a symlink). ValueError, naming what is wrong with the index, not its targets."""
    if index_path.stat().st_size > budget.config_bytes:
        raise ValueError(f"index is over the {budget.mb(budget.config_bytes)} cap")
    try:
        index = json.loads(index_path.read_text(encoding="utf-8", errors="replace"))
    except RecursionError:
        raise ValueError("index is nested too deeply to be a shard index") from None
    except ValueError:
        raise ValueError("index is not valid JSON") from None
    if not isinstance(index, dict):
        raise ValueError("index is not a JSON object")
    weight_map = index.get("weight_map") or {}
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise ValueError("index's weight_map is not a mapping of tensor names to shard files")
    if len(weight_map) > budget.tensors:
        raise ValueError(f"index's weight_map lists {len(weight_map):,} tensors, over the {budget.tensors:,} cap")
    paths, outside = [], 0
    for name in sorted(set(weight_map.values())):
        try:
            paths.append(inside_run(root, index_path.parent, name))
        except OutsideRun:
            outside += 1
    if outside:
        raise OutsideRun(f"refused: the index names {outside} shard file(s) outside the run folder "
                         "(an absolute path, `..` or a symlink); none was opened")
    return paths


def load_sharded_safetensors(index_path: Path, artifact: str, root: Path | None = None,
                             budget: Budget = DEFAULT) -> Checkpoint:
    shards = shard_paths(index_path, root or index_path.parent, budget)
    missing = [p.name for p in shards if not p.is_file()]
    if missing:
        raise ValueError(f"index names {len(shards)} shards, {len(missing)} not in the run: {', '.join(missing[:5])}")
    ckpt = load_safetensors(shards, artifact, budget=budget)
    ckpt.format = "safetensors-sharded"
    return ckpt


# --- torch.save / Lightning -------------------------------------------------------------------

def _pickle_bytes(path: Path, budget: Budget = DEFAULT) -> bytes | None:
    """The pickle of a torch file, read only when its declared (zip) size is within the cap; the
    zip reader stops at the declared size, so a member that lies cannot inflate further."""
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic.startswith(b"PK"):
        try:
            with zipfile.ZipFile(path) as z:
                pkl = [i for i in z.infolist() if i.filename.endswith("data.pkl")]
                if not pkl:
                    return None
                if pkl[0].file_size > budget.pickle_bytes:
                    raise ValueError(f"its data.pkl inflates to {budget.mb(pkl[0].file_size)}, over the "
                                     f"{budget.mb(budget.pickle_bytes)} cap for a checkpoint's pickle")
                return z.read(pkl[0])
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError) as exc:
            raise ValueError(f"damaged zip archive ({exc})") from None
    if magic[:1] == b"\x80":
        with open(path, "rb") as f:
            return f.read(budget.pickle_bytes)
    return None


def declared_storage_bytes(data: bytes) -> int:
    """A lower bound of the bytes the pickle's tensor storages declare (one per element), read
    from its opcodes without running it: each persistent id is a tuple ending in the storage's
    element count (`('storage', type, key, location, numel[, view])`)."""
    total = 0
    ints: list[int] = []
    try:
        for op, arg, _ in pickletools.genops(io.BytesIO(data)):
            if op.name == "MARK":
                ints = []
            elif op.name in ("BININT", "BININT1", "BININT2", "LONG1", "LONG4", "INT", "LONG") and isinstance(arg, int):
                ints.append(arg)
            elif op.name in ("BINPERSID", "PERSID") and ints:
                total += max(ints[-1], 0)
                ints = []
            elif op.name == "STOP":
                break
    except Exception:   # a damaged pickle: torch.load will say so
        pass
    return total


def _load_checked(path: Path, budget: Budget = DEFAULT):
    """torch.load with weights_only=True, after the declared storages are checked against the
    file, then every tensor against its storage: a view that reads more elements than its storage
    holds (stride 0, overlapping strides) would turn a few bytes into gigabytes."""
    import torch

    data = _pickle_bytes(path, budget)
    size = path.stat().st_size
    declared = declared_storage_bytes(data) if data else 0
    if declared > size:
        raise ValueError(f"its tensors declare {declared:,} bytes of storage, the file holds {size:,}")
    is_zip = zipfile.is_zipfile(path)
    if not is_zip and declared > budget.artifact_bytes:     # a legacy file's storages are read into memory
        raise ValueError(f"its tensors declare {budget.mb(declared)} of storage, over the "
                         f"{budget.mb(budget.artifact_bytes)} budget for one artifact")
    obj = torch.load(path, map_location="cpu", weights_only=True, mmap=is_zip)
    tensors, _ = _state_dict(obj)
    for name, t in tensors.items():
        if t.layout != torch.strided:
            raise ValueError(f"tensor {str(name)[:80]!r} is not a dense tensor")
        held = t.untyped_storage().nbytes()
        if t.numel() * t.element_size() > max(held, size):
            raise ValueError(f"tensor {str(name)[:80]!r} views {held:,} bytes of storage as {t.numel():,} elements "
                             f"(stride {tuple(t.stride())}): refused before reading")
    return obj


def pickle_globals(data: bytes) -> list[str]:
    """The `module name` globals a pickle asks for, read from its opcodes without running it."""
    found: list[str] = []
    strings: list[str] = []
    try:
        for op, arg, _ in pickletools.genops(io.BytesIO(data)):
            if op.name in ("GLOBAL", "INST") and isinstance(arg, str):
                found.append(arg.replace("\n", " ").strip())
            elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8") and isinstance(arg, str):
                strings.append(arg)
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.append(f"{strings[-2]} {strings[-1]}")
            if op.name == "STOP":
                break
    except Exception:   # a truncated pickle still tells what it asked for so far
        pass
    return found


def unsafe_globals(path: Path, budget: Budget = DEFAULT) -> list[str]:
    data = _pickle_bytes(path, budget)
    if not data:
        return []
    return sorted({g for g in pickle_globals(data) if not _BENIGN_GLOBALS.match(g)})


def _state_dict(obj) -> tuple[dict, dict]:
    """(tensors by name, meta) from whatever a torch.save file holds."""
    import torch

    meta: dict[str, object] = {}
    if isinstance(obj, dict):
        for k in ("global_step", "epoch", "step", "pytorch-lightning_version", "iteration"):
            if k in obj and isinstance(obj[k], (int, float, str)):
                meta[k] = obj[k]
        if "optimizer_states" in obj or "optimizer" in obj or "optimizer_state_dict" in obj:
            meta["has_optimizer_state"] = True
        for key in ("state_dict", "model_state_dict", "model", "module", "net", "params", "ema"):
            inner = obj.get(key)
            if isinstance(inner, dict) and any(isinstance(v, torch.Tensor) for v in inner.values()):
                return {k: v for k, v in inner.items() if isinstance(v, torch.Tensor)}, meta
        tensors = {k: v for k, v in obj.items() if isinstance(k, str) and isinstance(v, torch.Tensor)}
        return tensors, meta
    return {}, meta


def load_torch(path: Path, artifact: str, budget: Budget = DEFAULT) -> Checkpoint:
    fmt = "lightning-ckpt" if path.suffix == ".ckpt" else "torch"
    ckpt = Checkpoint(artifact, fmt, step=step_from_name(artifact), sources=[path])
    try:
        import torch
    except ImportError:           # the core install reads logs, metrics and safetensors without torch
        ckpt.problem = "not read: a torch checkpoint needs torch (pip install 'mltd[torch]')"
        return ckpt
    refused = unsafe_globals(path, budget)
    if refused:
        ckpt.problem = ("refused: loading needs arbitrary unpickling (it references "
                        + ", ".join(refused[:5]) + "); mltd loads checkpoints with weights_only=True only")
        return ckpt
    try:
        obj = _load_checked(path, budget)
    except ValueError as exc:
        ckpt.problem = f"refused: {exc}"
        return ckpt
    except Exception as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "weights_only" in str(exc) or "Unsupported global" in str(exc):
            ckpt.problem = f"refused: not loadable with weights_only=True ({clip(msg, 160)})"
        else:
            ckpt.problem = f"unreadable: {clip(msg, 200)}"
        return ckpt
    tensors, ckpt.meta = _state_dict(obj)
    if ckpt.step is None:
        for k in ("global_step", "step", "iteration"):
            value = ckpt.meta.get(k)
            if isinstance(value, int):
                ckpt.step = int(value)
                break
    kinds = {torch.float32: "F32", torch.float16: "F16", torch.float64: "F64", torch.bfloat16: "BF16"}
    device = pick_device(max((t.numel() * t.element_size() for t in tensors.values()), default=0))
    for name, t in tensors.items():
        stat = TensorStat(name, tuple(t.shape), str(t.dtype).replace("torch.", ""), int(t.numel()))
        kind = kinds.get(t.dtype)
        if kind and t.numel():
            flat = t.detach().contiguous().reshape(-1)
            raw = flat.view(torch.int16).numpy().view(np.uint16) if kind == "BF16" else flat.numpy()
            st = tensor_stats(raw, tuple(t.shape), kind, device)
            stat.norm, stat.nonfinite, stat.zero_rows = st.norm, st.nonfinite, st.zero_rows
        ckpt.tensors.append(stat)
    if not tensors:
        ckpt.problem = "no tensors found in the checkpoint"
    return ckpt


_BUFFERS = re.compile(r"running_(mean|var)$|num_batches_tracked$|(^|\.)(mask|bias_mask|inv_freq)$")


def second_moments(ckpt: Checkpoint) -> list[tuple[str, float]] | None:
    """Per parameter, in the model's order: sqrt(mean(exp_avg_sq)) from the Adam-family optimizer
    state saved inside a torch or Lightning checkpoint (a running RMS of that parameter's
    gradient). Parameters are matched to the optimizer's indices by order, buffers skipped; None
    when there is no such state or the counts disagree."""
    if ckpt.problem or ckpt.format not in ("torch", "lightning-ckpt") or not ckpt.meta.get("has_optimizer_state"):
        return None
    import torch

    obj = _load_checked(ckpt.sources[0])
    opt = obj.get("optimizer") or obj.get("optimizer_state_dict") or (obj.get("optimizer_states") or [None])[0]
    if not isinstance(opt, dict) or not isinstance(opt.get("state"), dict):
        return None
    ids = [i for g in opt.get("param_groups", []) for i in g.get("params", [])]
    tensors, _ = _state_dict(obj)
    names = [n for n in tensors if not _BUFFERS.search(n)]
    if len(names) != len(ids):
        return None
    out = []
    for name, i in zip(names, ids):
        v = (opt["state"].get(i) or {}).get("exp_avg_sq")
        if isinstance(v, torch.Tensor) and v.numel():
            out.append((name, float(v.float().mean().sqrt())))
    return out
