"""What the weights themselves say, tensor by tensor: whether they moved between checkpoints and
by how much per step, which embedding rows never moved (tokens absent from the data), and how many
ReLU units of an MLP or a plain CNN can still fire.

Thresholds: no updates = every tensor bit-identical between two checkpoints some steps apart;
too small = a median relative change per step under 1e-6, or under 1e-5 with a loss that moved
under 10% over the run (healthy runs move ~1e-4 to 1e-2 of a weight's norm per step; a late, decayed
LR moves them slowly too, but after the loss fell); dead units = at least 40% of a hidden layer's
units that never activate for 4096 standard-normal inputs propagated through the checkpoint's own layers.
"""
from __future__ import annotations

import re

import numpy as np

from analysis.analyzers.common import train_loss
from analysis.ingest.checkpoints import Checkpoint, arrays, is_embedding
from analysis.metrics import fmt
from analysis.model import Evidence, Finding
from analysis.patches import set_config_value
from analysis.run import ConfigHit, Run
from analysis.signals import relative_change

NAME = "weights"
PER_STEP_TOO_SMALL = 1e-6
PER_STEP_SLOW = 1e-5       # ten times under the healthy band: too slow when the loss did not move either
LOSS_FLAT = 0.1            # the loss moved under 10% over the whole run
DEAD_SHARE = 0.4
SAMPLES = 4096
# Activations held at once, in float32 elements (64 MB): a layer wider than this allows gets fewer
# samples, down to MIN_SAMPLES; wider still, the check is not made (a 200 KB file can declare a
# 50,000-wide input that 4096 samples would make 800 MB).
ACTIVATION_ELEMENTS = 16 << 20
MIN_SAMPLES = 256
CONV_SIDE = 8          # a convolution is probed on 8x8 inputs: a unit that fires anywhere fires there
RELU = re.compile(r"\brelu\b|ReLU\(", re.I)
_BIAS_INIT = re.compile(r"(init\.\w+_\(|\.fill_\(|\.constant_\().*bias|bias.*(\.fill_\(|init\.\w+_\()")
_OTHER_ACT = re.compile(r"Sigmoid|Tanh|GELU|SiLU|ELU\(|tanh\(|sigmoid\(|gelu\(")


def _loss_flat(run: Run) -> bool:
    s = train_loss(run)
    return s is not None and len(s) >= 10 and abs(relative_change(s.values)) < LOSS_FLAT


def _ordered(run: Run) -> list[Checkpoint]:
    """One checkpoint per step, oldest first: a trainer's own checkpoint-N beside a step_N copy of
    the same weights is one point in time, not two."""
    by_step: dict[int, Checkpoint] = {}
    for c in sorted(run.loaded_checkpoints(), key=lambda c: c.artifact):
        if c.step is not None:
            by_step.setdefault(c.step, c)
    return [by_step[s] for s in sorted(by_step)]


def _movement(a: Checkpoint, b: Checkpoint) -> tuple[int, int, list[float], dict[str, tuple[int, int]]]:
    """(tensors compared, tensors identical, relative change of each non-identical tensor, and per
    embedding matrix that moved: (rows that did not move, rows))."""
    first = dict(arrays(a))
    compared = same = 0
    ratios = []
    still_rows: dict[str, tuple[int, int]] = {}
    for name, wb in arrays(b):
        wa = first.get(name)
        if wa is None or wa.shape != wb.shape:
            continue
        compared += 1
        if np.array_equal(wa, wb, equal_nan=True):
            same += 1
            continue
        if not (np.isfinite(wa).all() and np.isfinite(wb).all()):
            continue           # a tensor that changed into or out of NaN/Inf has no finite rate
        delta = wb.astype(np.float64) - wa
        diff = float(np.linalg.norm(delta.ravel()))
        ratios.append(diff / max(float(np.linalg.norm(wa.ravel().astype(np.float64))), 1e-12))
        if is_embedding(name, wb.shape):
            # "still": under 10% of the movement of the row that moved most (weight decay alone
            # shrinks an unused row by about 1% of what a used row moves)
            row = np.linalg.norm(delta, axis=1)
            still_rows[name] = (int((row < 0.1 * row.max()).sum()), wb.shape[0])
    return compared, same, ratios, still_rows


def _updates(run: Run) -> list[Finding]:
    ckpts = _ordered(run)
    if len(ckpts) < 2:
        return []
    a, b = ckpts[-2], ckpts[-1]
    assert a.step is not None and b.step is not None     # _ordered keeps only checkpoints with a step
    steps = b.step - a.step
    compared, same, ratios, still_rows = _movement(a, b)
    if not compared or steps <= 0:
        return []
    where = f"{a.artifact} (step {a.step}) vs {b.artifact} (step {b.step})"
    if same == compared:
        identical = Evidence(f"all {compared} tensors bit-identical after {steps} steps", b.artifact,
                             f"tensors of {a.artifact} and {b.artifact}")
        return [Finding(code="no_parameter_updates",
                        issue=f"The weights did not change at all between step {a.step} and step {b.step}",
                        severity="critical", confidence=0.85, evidence=[identical],
                        fix="Make sure optimizer.step() runs, the optimizer was built over "
                            "model.parameters() after any re-wrapping, requires_grad is True, and lr > 0",
                        expected_impact="the weights change between checkpoints and the loss falls",
                        analyzer=NAME, quick_fix="Verify optimizer.step() runs on the model's parameters")]
    if not ratios:
        return []
    per_step = float(np.median(ratios)) / steps
    out = []
    for name, (still, rows) in still_rows.items():
        if rows >= 100 and still >= 0.3 * rows:
            out.append(Finding(code="architecture_imbalance",
                               issue=f"{still:,} of the {rows:,} rows of {name} barely moved between step "
                                     f"{a.step} and step {b.step}: those tokens never occur in the data",
                               severity="low",
                               confidence=0.5,
                               evidence=[Evidence(f"{name}: {still:,} of {rows:,} rows moved under 10% as "
                                                  f"far as the busiest row in {steps} steps", b.artifact,
                                                  f"tensor {name}")],
                               fix="Shrink the vocabulary to the tokens the data uses (or tie and shrink the "
                                   "embeddings); the parameters freed can go to the layers between them",
                               analyzer=NAME,
                               quick_fix="Shrink the vocabulary to the tokens used"))
    if per_step < PER_STEP_TOO_SMALL or (per_step < PER_STEP_SLOW and _loss_flat(run)):
        return [Finding(code="lr_too_low",
                        issue=f"The weights barely move: a median relative change of {fmt(per_step)} per "
                              f"step between step {a.step} and step {b.step}",
                        severity="high",
                        confidence=0.7,
                        evidence=[Evidence(f"median |dW|/|W| {fmt(float(np.median(ratios)))} "
                                           f"over {steps} steps ({fmt(per_step)} per step; "
                                           "healthy runs move ~1e-4 to 1e-2)",
                                           b.artifact, where)],
                        fix="Raise the learning rate 10-100x (a short LR range test finds the edge)",
                        expected_impact="the loss falls within a few hundred steps",
                        analyzer=NAME,
                        quick_fix="Raise the LR 10x")] + out
    return out


def _module_order(name: str) -> tuple:
    """A parameter name as a sort key in module order: numeric parts compared as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in name.split("."))


Layer = tuple[str, np.ndarray, np.ndarray | None]       # a layer's name, weight and bias


def _orders(ckpt: Checkpoint, names: list[str]) -> list[list[str]]:
    """The orders to try the names in. Safetensors stores names sorted as text (`10.weight` before
    `2.weight`, `decoder` before `encoder`), so only module order means anything there, and equal
    widths would chain in the wrong one too; a torch pickle keeps module order as written, with
    module order by name as the fallback."""
    by_module = sorted(names, key=_module_order)
    return [by_module] if ".safetensors" in ckpt.artifact else [names, by_module]


def _chained(tensors: dict[str, np.ndarray], weights: list[str]) -> list[Layer]:
    """The weights in this order as a chain (each layer's inputs are the previous one's outputs),
    each with its bias; empty where a shape does not chain."""
    chain: list[Layer] = []
    for n in weights:
        w = tensors[n]
        if chain and chain[-1][1].shape[0] != w.shape[1]:
            return []
        b = tensors.get(n[: -len("weight")] + "bias")
        if b is not None and b.shape != (w.shape[0],):      # a bias that would broadcast is no layer's
            return []
        chain.append((n[: -len(".weight")], w, b))
    return chain


def _mlp_chain(ckpt: Checkpoint) -> list[Layer]:
    """The checkpoint as a plain MLP: 2-D weights whose shapes chain in module order (`_orders`),
    each with its bias; empty when any other kind of tensor is present (convolutions, norms,
    embeddings)."""
    tensors = dict(arrays(ckpt))
    weights = [n for n in tensors if n.endswith("weight")]
    if len(weights) < 2 or any(tensors[n].ndim != 2 for n in weights):
        return []
    if any(not (n.endswith(".weight") or n.endswith(".bias")) for n in tensors):
        return []
    return next((c for c in (_chained(tensors, order) for order in _orders(ckpt, weights)) if c), [])


def _conv_chain(ckpt: Checkpoint) -> list[Layer]:
    """The checkpoint's convolutions as a plain CNN: 4-D weights whose channels chain in module order
    (`_orders`), each with its bias; any 2-D head is left out; empty when any other kind of tensor
    is present."""
    tensors = dict(arrays(ckpt))
    if any(not (n.endswith(".weight") or n.endswith(".bias")) for n in tensors):
        return []
    convs = [n for n, w in tensors.items() if n.endswith(".weight") and w.ndim == 4]
    return next((c for c in (_chained(tensors, order) for order in _orders(ckpt, convs)) if c), [])


def kernel_area(chain: list[Layer]) -> int:
    """The largest kernel's area in a conv chain: its windows hold that many values per channel."""
    return max(int(np.prod(w.shape[2:])) for _, w, _ in chain)


def _conv_same(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """A stride-1 convolution with the padding that keeps the size (kernel // 2), in numpy."""
    kh, kw = w.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
    win = windows[:, :, : x.shape[2], : x.shape[3]]
    out = np.einsum("nchwij,ocij->nohw", win, w, optimize=True)
    return out + (b[None, :, None, None] if b is not None else 0.0)


def _worst_layer(chain, samples: int, conv: bool):
    """(layer, dead share, dead units, units, bias) of the hidden layer with the largest share of
    ReLU units that never activate for standard-normal inputs propagated through the checkpoint's
    own layers (a conv unit is a channel, dead when it is at or below 0 at every position)."""
    rng = np.random.default_rng(0)
    shape = (samples, chain[0][1].shape[1], CONV_SIDE, CONV_SIDE) if conv else (samples, chain[0][1].shape[1])
    h = rng.standard_normal(shape, dtype=np.float32)
    worst = None
    for i, (name, w, b) in enumerate(chain if conv else chain[:-1]):
        h = _conv_same(h, w, b) if conv else h @ w.T + (b if b is not None else 0.0)
        alive = (h > 0).any(axis=(0, 2, 3) if conv else 0)
        if i == 0:
            # the data's inputs are often nonnegative (pixels, counts, one-hots): a first-layer unit
            # whose weights and bias are all <= 0 never fires on them, whatever a normal probe says
            flat = w.reshape(w.shape[0], -1)
            alive &= ~((flat <= 0).all(axis=1) & ((b <= 0) if b is not None else True))
        share = 1.0 - float(alive.mean())
        if worst is None or share > worst[1]:
            worst = (name, share, int((~alive).sum()), int(alive.size), b)
        h = np.maximum(h, 0.0)
    return worst


def forward_spread(chain, samples: int, conv: bool, f) -> list[float]:
    """Per hidden layer of a plain MLP or convolution stack, how much its output depends on the input:
    the RMS over units of each unit's std across standard-normal inputs propagated through the
    checkpoint's own layers with the activation `f` (a layer's output that barely varies with its
    input carries no signal forward, and its weights pass as little back)."""
    rng = np.random.default_rng(0)
    shape = (samples, chain[0][1].shape[1], CONV_SIDE, CONV_SIDE) if conv else (samples, chain[0][1].shape[1])
    h = rng.standard_normal(shape).astype(np.float64)
    spreads = []
    for _, w, b in chain if conv else chain[:-1]:
        w64 = w.astype(np.float64)
        h = f(_conv_same(h, w64, b) if conv else h @ w64.T + (0.0 if b is None else b))
        spreads.append(float(np.sqrt(np.mean(h.std(axis=0) ** 2))))
    return spreads


def _dead_units(run: Run) -> list[Finding]:
    texts = [c.text for c in run.code]
    if not texts or not any(RELU.search(t) for t in texts) or any(_OTHER_ACT.search(t) for t in texts):
        return []
    if any(isinstance(v, str) and (_OTHER_ACT.search(v + "(") or _OTHER_ACT.search(v.capitalize() + "("))
           for c in run.configs for v in c.values.values()):
        return []          # the config names another activation (activation: sigmoid): no ReLU units to probe
    latest = max(run.loaded_checkpoints(), key=lambda c: (c.step or -1, c.artifact), default=None)
    if latest is None:
        return []
    chain, conv = _mlp_chain(latest), False
    if not chain:
        chain, conv = _conv_chain(latest), True
    if not chain:
        return []
    if not all(np.isfinite(t).all() for _, w, b in chain for t in (w, b) if t is not None):
        return []          # NaN/Inf weights fire no unit: that is the numerical fault, not dead units
    window = CONV_SIDE * CONV_SIDE * kernel_area(chain) if conv else 1
    widest = max(max(w.shape[:2]) for _, w, _ in chain) * window
    samples = min(SAMPLES, ACTIVATION_ELEMENTS // max(widest, 1))
    if samples < MIN_SAMPLES:
        return []
    worst = _worst_layer(chain, samples, conv)
    if worst is None or worst[1] < DEAD_SHARE:
        return []
    name, share, dead, total, bias = worst
    silent = (f"{name}: {dead} of {total} ReLU units never activate for {samples} standard-normal inputs "
              "propagated through the checkpoint's layers")
    ev = [Evidence(silent, latest.artifact, f"tensor {name}.weight")]
    if bias is not None:
        ev.append(Evidence(f"{name}.bias: median {fmt(float(np.median(bias)))}, "
                           f"{int((bias < 0).sum())} of {len(bias)} negative",
                           latest.artifact, f"tensor {name}.bias"))
    for code in run.code:
        for n, line in enumerate(code.text.splitlines(), start=1):
            if _BIAS_INIT.search(line):
                ev.append(Evidence(f"{line.strip()}: biases set by hand", code.artifact, f"line {n}"))
    patch = None
    for cfg in run.configs:
        for key, value in cfg.values.items():
            if ("bias" in key.rsplit(".", 1)[-1] and isinstance(value, (int, float))
                    and not isinstance(value, bool) and value < 0):
                ev.append(ConfigHit(cfg, key, value).evidence(f"{key} = {value}: the biases start negative"))
                patch = patch or set_config_value(cfg, key, 0.0)
    return [Finding(code="dead_relu",
                    issue=f"{share:.0%} of the ReLU units in {name} are dead ({dead} of {total}): they "
                          "output 0 for every input, so they pass no gradient and cannot recover",
                    severity="high",
                    confidence=0.8,
                    evidence=ev,
                    fix="Initialise biases at 0 (or a small positive value), use LeakyReLU/GELU, lower the "
                        "LR or clip gradients so that one large step cannot push units into the dead zone, "
                        "and restart from a checkpoint before the units died",
                    expected_impact="most units fire again and the loss resumes falling",
                    analyzer=NAME,
                    patch=patch,
                    quick_fix="Use LeakyReLU and zero-initialised biases")]


def analyze(run: Run) -> list[Finding]:
    return _updates(run) + _dead_units(run)
