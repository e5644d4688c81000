"""Parameter balance and weight health from the latest readable checkpoint.

Thresholds: imbalance = embedding (and untied output-vocabulary) matrices holding `EMBEDDING_HEAVY`
(60%) or more of the parameters while the rest of the model has under `SMALL_BODY` (50M); non-finite
weights = any NaN/Inf entry, except in an additive attention mask (entries 0 or -inf only).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from analysis.analyzers.common import train_loss
from analysis.ingest.checkpoints import Checkpoint, arrays, is_embedding
from analysis.metrics import fmt
from analysis.model import Evidence, Finding
from analysis.run import Run
from analysis.signals import relative_change

NAME = "parameters"
MIN_VOCAB = 100
EMBEDDING_HEAVY = 0.6             # embeddings holding this share of the parameters or more...
SMALL_BODY = 50_000_000           # ...while the rest of the model is smaller than this: imbalanced
_PREFIXES = ("model.", "module.", "_orig_mod.", "net.", "transformer.")


def group_of(name: str) -> str:
    for p in _PREFIXES:
        if name.startswith(p):
            name = name[len(p):]
    parts = name.split(".")
    if len(parts) > 2 and parts[1].isdigit():
        return parts[0]              # layers.0.attn.weight -> layers
    return parts[0] if len(parts) > 1 else "(top level)"


def vocabulary_matrices(ckpt: Checkpoint) -> list[str]:
    """The embedding matrices and the untied output layers over the same vocabulary: 2-D tensors
    whose rows are the vocabulary an embedding declares (at least MIN_VOCAB rows: a class head of a
    few rows is no vocabulary), whatever their names."""
    names = [t.name for t in ckpt.tensors if is_embedding(t.name, t.shape)]
    vocab = {t.shape[0] for t in ckpt.tensors if t.name in names and t.shape[0] >= MIN_VOCAB}
    # a matrix with a vocabulary's rows, taller than wide: the output head tied to (or mirroring) an embedding
    heads = [t.name for t in ckpt.tensors if t.name not in names and len(t.shape) == 2
             and t.shape[0] in vocab and t.shape[0] > t.shape[1]]
    return names + heads


def balance(ckpt: Checkpoint) -> tuple[int, int, dict[str, int]]:
    """(embedding parameters, total, parameters per module group)."""
    total = emb = 0
    groups: dict[str, int] = defaultdict(int)
    vocab = set(vocabulary_matrices(ckpt))
    for t in ckpt.tensors:
        if t.dtype not in ("F32", "F16", "BF16", "F64", "float32", "float16", "bfloat16", "float64"):
            continue
        total += t.numel
        groups[group_of(t.name)] += t.numel
        if t.name in vocab:
            emb += t.numel
    return emb, total, dict(groups)


def _stalled(run: Run) -> Evidence | None:
    """The loss fell a little, then nothing: flat (under 5%) over the second half of the run."""
    s = train_loss(run)
    if s is None or len(s) < 10:
        return None
    v = s.values[np.isfinite(s.values)]
    half = len(v) // 2
    late = relative_change(v[half:])
    if abs(late) >= 0.05 or relative_change(v) <= 0:
        return None
    return Evidence(f"loss fell from {fmt(float(v[0]))} to {fmt(float(v[half]))}, "
                    f"then moved {abs(late) * 100:.1f}% over the second half of the run",
                    s.artifact, s.span_locator(0, len(s) - 1))


def _latest(run: Run) -> Checkpoint | None:
    loaded = run.loaded_checkpoints()
    if not loaded:
        return None
    return max(loaded, key=lambda c: (c.step if c.step is not None else -1, c.artifact))


def _additive_masks(ckpt: Checkpoint, names) -> set[str]:
    """Of the named tensors, those that are additive attention masks: every entry 0 or -inf (a
    causal mask saved as a buffer). Their -inf is by design, not an overflow."""
    wanted = set(names)
    if not wanted:
        return set()
    masks = set()
    for name, a in arrays(ckpt):
        if name in wanted:
            finite = np.isfinite(a)
            if not np.isnan(a).any() and not (a == np.inf).any() and not a[finite].any():
                masks.add(name)
    return masks


def analyze(run: Run) -> list[Finding]:
    ckpt = _latest(run)
    if ckpt is None:
        return []
    out: list[Finding] = []
    emb, total, groups = balance(ckpt)
    if total:
        share = emb / total
        if share >= EMBEDDING_HEAVY and total - emb < SMALL_BODY:
            top = sorted(groups.items(), key=lambda kv: -kv[1])[:4]
            breakdown = ", ".join(f"{g} {n / total:.0%}" for g, n in top)
            hit = run.config_value("d_model", "n_embd", "hidden_size", "embed_dim", "dim", "emb_dim")
            ev = [Evidence(f"embeddings hold {share:.0%} of parameters ({emb:,} of "
                           f"{total:,}); by module: {breakdown}",
                           ckpt.artifact, "tensors " + ", ".join(vocabulary_matrices(ckpt))[:120])]
            if hit:
                ev.append(hit.evidence())
            conf = 0.65
            stalled = _stalled(run)
            if stalled is not None:
                ev.append(stalled)
                conf += 0.15
            out.append(Finding(code="architecture_imbalance",
                               issue=f"Embeddings hold {share:.0%} of the parameters; "
                                     f"the rest of the model has only {total - emb:,}",
                               severity="high",
                               confidence=conf,
                               evidence=ev,
                               fix="Rebalance: shrink the vocabulary or the embedding width (tie input and "
                                   "output embeddings), and give the layers between them more width/depth so "
                                   "that embeddings hold at most ~50% of the parameters",
                               expected_impact="the loss keeps falling past "
                                               "its plateau and outputs stop degenerating",
                               analyzer=NAME,
                               quick_fix="Tie embeddings and widen the blocks"))
    masks = _additive_masks(ckpt, [t.name for t in ckpt.tensors if t.nonfinite])
    bad = [t for t in ckpt.tensors if t.nonfinite and t.name not in masks]
    if bad:
        worst = max(bad, key=lambda t: t.nonfinite)
        out.append(Finding(code="numerical_instability", issue=f"{len(bad)} tensors in "
                                                               f"{ckpt.artifact} hold NaN/Inf",
                           severity="critical", confidence=0.75,
                           evidence=[Evidence(f"{worst.name}: {worst.nonfinite:,} of "
                                              f"{worst.numel:,} values non-finite",
                                     ckpt.artifact, f"tensor {worst.name}")],
                           fix="Restart from the last checkpoint with finite weights; "
                               "find the first non-finite step in the log",
                           analyzer=NAME, quick_fix="Resume from the last finite checkpoint"))
    return out
