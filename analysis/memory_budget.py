"""Where a training step's memory goes, estimated from what the run shows: parameters (a
checkpoint), their dtype, the optimizer family (config or code), mixed precision (config), and the
activations from micro-batch, sequence length, width and depth (config). Each part says where
its numbers came from, and each remedy says how much it frees."""
from __future__ import annotations

from dataclasses import dataclass, field

GIB = 2 ** 30
_BYTES = {"F32": 4, "float32": 4, "F16": 2, "float16": 2, "BF16": 2, "bfloat16": 2, "F64": 8, "float64": 8}
# optimizer state bytes per parameter (fp32 states): Adam/AdamW keep two, SGD with momentum one
_STATE = {"adam": 8, "lion": 4, "sgd": 4, "rmsprop": 4, "adafactor": 4, "muon": 4}


@dataclass
class Budget:
    params: int
    parts: dict[str, float] = field(default_factory=dict)      # name -> bytes
    sources: list[str] = field(default_factory=list)
    remedies: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(self.parts.values())


def _first(run, *keys):
    hit = run.config_value(*keys)
    if hit is None or hit.number is None or hit.number <= 0:
        return None, None
    return int(hit.number), f"{hit.key} = {hit.value} ({hit.config.artifact} {hit.locator})"


def estimate(run, family: str | None = None) -> Budget | None:
    ckpts = run.loaded_checkpoints()
    if not ckpts:
        return None
    ck = max(ckpts, key=lambda c: c.numel)
    floats = [t for t in ck.tensors if t.dtype in _BYTES]
    params = sum(t.numel for t in floats)
    if not params:
        return None
    width = sum(t.numel * _BYTES[t.dtype] for t in floats) / params
    b = Budget(params, sources=[f"{params:,} parameters at {width:g} bytes each ({ck.artifact})"])
    mixed = any((hit := run.config_value(k)) and hit.value is True
                for k in ("fp16", "bf16", "amp", "mixed_precision"))
    b.parts["weights"] = params * (2 if mixed else width)
    b.parts["gradients"] = params * (2 if mixed else width)
    if mixed:
        b.parts["fp32 master weights"] = params * 4
    if family in _STATE:
        b.parts[f"{family} optimizer states"] = params * _STATE[family]
    batch, bsrc = _first(run, "per_device_train_batch_size", "micro_batch_size", "batch_size", "train_batch_size")
    seq, ssrc = _first(run, "seq_len", "max_seq_length", "block_size", "seq_length", "max_length", "context_length")
    hidden, hsrc = _first(run, "hidden_size", "d_model", "n_embd", "dim")
    layers, lsrc = _first(run, "num_hidden_layers", "n_layer", "num_layers", "n_layers", "depth")
    if batch and seq and hidden and layers:
        # per layer ~34 * b * s * h bytes of saved activations in 16-bit (Korthikanti et al., 2022)
        b.parts["activations"] = 34.0 * batch * seq * hidden * layers * (1 if mixed else 2)
        b.sources += [s for s in (bsrc, ssrc, hsrc, lsrc) if s]
        act = b.parts["activations"]
        b.remedies.append(f"halving the micro-batch frees ~{act / 2 / GIB:.1f} GiB of activations")
        freed = act * (1 - 1 / layers) / GIB
        b.remedies.append(f"gradient checkpointing keeps ~1/{layers} of them: frees ~{freed:.1f} GiB")
    if not mixed and width >= 4:
        b.remedies.append(f"bf16 weights and gradients free ~{params * 4 / GIB:.1f} GiB")
    if family == "adam":
        b.remedies.append(f"an 8-bit Adam frees ~{params * 6 / GIB:.1f} GiB of optimizer state")
        b.remedies.append("ZeRO/FSDP across N GPUs divides weights, gradients and optimizer state by N")
    return b
