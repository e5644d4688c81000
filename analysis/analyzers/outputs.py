"""Sample outputs: degenerate generations or one class for everything.

Thresholds: collapse = at least `MIN_SAMPLES` (5) samples and either `IDENTICAL` (80%) or more
identical, or the text of all samples drawing on `FEW_SYMBOLS` (3) or fewer distinct characters.
Generated vectors, when the run also saved samples of the real data, are judged by how much of the
real data they reach (k-NN coverage, Naeem et al. 2020) or, when the real data forms separate
clusters, by the clusters they land on: under `MIN_COVERAGE` of what a matching generator reaches,
or on half the clusters or fewer, is a (partial) collapse. Without real samples only a collapse
onto one point can be told.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from analysis.ingest.samples import Samples
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "outputs"
MIN_SAMPLES = 5
IDENTICAL = 0.8
FEW_SYMBOLS = 3
MIN_COVERAGE = 0.5       # a generator that matches the data reaches ~0.95 at the k chosen below
MAX_POINTS = 1000        # pairwise distances stay at a few MB
_FIX = ("The generator collapsed onto part of the data: regularise the discriminator (R1 or WGAN-GP "
        "gradient penalty, spectral norm), balance the updates (one generator step per "
        "discriminator step, equal learning rates), add minibatch discrimination, and restart from "
        "a checkpoint from before the collapse")

def analyze(run: Run) -> list[Finding]:
    out: list[Finding] = []
    real_sets = [(s, _vectors([t for _, t in s.items])) for s in run.samples if s.role == "real"]
    real = [(s, v) for s, v in real_sets if v is not None]
    for samples in run.samples:
        items = samples.items
        if len(items) < MIN_SAMPLES or samples.role == "real":
            continue
        texts = [t.strip() for _, t in items]
        numeric = _vectors(texts)
        if numeric is not None:
            ref = next(((s, v) for s, v in real if v.shape[1] == numeric.shape[1]), None)
            out += _coverage_collapse(samples, numeric, *ref) if ref else _numeric_collapse(samples, numeric)
            continue
        counts = Counter(texts)
        top, top_n = counts.most_common(1)[0]
        chars = Counter("".join(t for t in texts)).most_common()
        distinct_chars = len([c for c, _ in chars if not c.isspace()])
        identical = top_n / len(texts) >= IDENTICAL
        if identical or distinct_chars <= FEW_SYMBOLS:
            line = next(n for n, t in items if t.strip() == top)
            quote = top if len(top) <= 60 else top[:57] + "..."
            why = (f"{top_n} of {len(texts)} samples are identical" if identical
                   else f"all {len(texts)} samples use only {distinct_chars} distinct characters "
                        f"({''.join(c for c, _ in chars[:3])!r})")
            sample = Evidence(f"sample: {quote!r}; {why}", samples.artifact, f"line {line}")
            out.append(Finding(code="mode_collapse", issue=f"Outputs collapsed: {why}", severity="high",
                               confidence=0.8, evidence=[sample],
                               fix="Check the model's capacity and the loss: a model that cannot fit the "
                                   "data emits its most frequent token; also check sampling temperature and "
                                   "that generation feeds back its own outputs",
                               analyzer=NAME, quick_fix="Check capacity and sampling"))
    return out


def _vectors(texts: list[str]) -> np.ndarray | None:
    """The samples as rows of numbers, when every one is a vector of the same length."""
    rows = []
    for t in texts:
        try:
            rows.append([float(x) for x in t.replace(",", " ").strip("[]() ").split()])
        except ValueError:
            return None
    if not rows or len({len(r) for r in rows}) != 1 or len(rows[0]) < 2:   # one number is a class: text rules
        return None
    return np.asarray(rows, dtype=np.float64)


def _numeric_collapse(samples, x: np.ndarray) -> list[Finding]:
    if len(x) < 5 or not np.isfinite(x).all():
        return []
    spread = float(np.sqrt(x.var(axis=0).sum()))
    centre = x.mean(axis=0)
    reach = float(np.sqrt((x ** 2).sum(axis=1).mean()))
    if reach == 0 or spread >= 0.1 * reach:
        return []
    first = samples.items[0]
    return [Finding(code="mode_collapse",
                    issue=f"All {len(x)} generated samples sit at one point: spread {spread:.3g} around "
                          f"({', '.join(f'{c:.3g}' for c in centre)}), "
                          f"{spread / reach:.1%} of their distance from the origin",
                    severity="high",
                    confidence=0.85,
                    evidence=[Evidence(f"sample {first[1].strip()!r}; {len(x)} samples, spread {spread:.3g}, "
                                       f"mean ({', '.join(f'{c:.3g}' for c in centre)})", samples.artifact,
                                       f"line {first[0]}")],
                    fix=_FIX,
                    expected_impact="samples spread over the data's modes",
                    analyzer=NAME,
                    quick_fix="Balance generator and discriminator updates")]


def _even(x: np.ndarray, n: int) -> np.ndarray:
    return x if len(x) <= n else x[np.linspace(0, len(x) - 1, n).astype(int)]


def knn_coverage(real: np.ndarray, fake: np.ndarray, k: int) -> float:
    """The share of real points whose k-nearest-neighbour ball (among the real points) holds at
    least one generated sample."""
    rr = np.linalg.norm(real[:, None, :] - real[None, :, :], axis=2)
    radius = np.partition(rr, k, axis=1)[:, k]          # column 0 is the point itself
    rf = np.linalg.norm(real[:, None, :] - fake[None, :, :], axis=2)
    return float((rf < radius[:, None]).any(axis=1).mean())


def clusters(real: np.ndarray, k: int = 5, min_share: float = 0.03) -> np.ndarray | None:
    """A cluster label per real point (-1 for stragglers) from the connected parts of its
    k-nearest-neighbour graph, or None when the data is not made of a few separate clusters (2-32
    of them, each at least `min_share` of the points, together at least 90%)."""
    n = len(real)
    if n < 4 * k:
        return None
    rr = np.linalg.norm(real[:, None, :] - real[None, :, :], axis=2)
    nbrs = np.argpartition(rr, k, axis=1)[:, 1: k + 1]
    parent = np.arange(n)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in nbrs[i]:
            a, b = root(i), root(int(j))
            if a != b:
                parent[a] = b
    labels = np.array([root(i) for i in range(n)])
    ids, counts = np.unique(labels, return_counts=True)
    big = ids[counts >= min_share * n]
    if not 2 <= len(big) <= 32 or counts[np.isin(ids, big)].sum() < 0.9 * n:
        return None
    return np.where(np.isin(labels, big), np.searchsorted(big, labels), -1)


def clusters_reached(real: np.ndarray, labels: np.ndarray, fake: np.ndarray) -> np.ndarray:
    """Generated samples per real cluster: a sample counts for the cluster of its nearest real point
    when it lies within half the gap that separates that cluster from its nearest neighbour cluster."""
    n_clusters = int(labels.max()) + 1
    gap = np.full(n_clusters, np.inf)
    for c in range(n_clusters):
        inside, outside = real[labels == c], real[(labels != c) & (labels >= 0)]
        gap[c] = np.linalg.norm(inside[:, None, :] - outside[None, :, :], axis=2).min()
    rf = np.linalg.norm(fake[:, None, :] - real[None, :, :], axis=2)
    nearest = rf.argmin(axis=1)
    label = labels[nearest]
    ok = (label >= 0) & (rf[np.arange(len(fake)), nearest] < 0.5 * gap[np.maximum(label, 0)])
    return np.bincount(label[ok], minlength=n_clusters)


def _coverage_collapse(samples: Samples, fake: np.ndarray, real_samples: Samples,
                       real: np.ndarray) -> list[Finding]:
    fake = _even(fake[np.isfinite(fake).all(axis=1)], MAX_POINTS)
    real = _even(real[np.isfinite(real).all(axis=1)], MAX_POINTS)
    if len(fake) < 5 or len(real) < 20:
        return []
    spread = float(np.sqrt(fake.var(axis=0).sum()) / max(np.sqrt(real.var(axis=0).sum()), 1e-12))
    labels = clusters(real)
    if labels is not None:
        # data made of separate clusters (modes): count the modes the generator reaches
        per = clusters_reached(real, labels, fake)
        reached, total = int((per >= max(2, 0.02 * len(fake))).sum()), len(per)
        if reached > total // 2:
            return []
        where = (f"far from all {total} clusters of the real data" if not reached
                 else f"on {reached} of the {total} clusters of the real data")
        ev = [Evidence(f"{len(fake)} generated samples land on {reached} of the {total} clusters "
                       f"of the real data ({', '.join(str(int(c)) for c in per)} samples per "
                       "cluster; within half the gap between clusters); their spread is "
                       f"{spread:.0%} of the real data's", samples.artifact,
                       f"line {samples.items[0][0]}"),
              Evidence(f"the {len(real)} real samples form {total} separate clusters", real_samples.artifact,
                       f"line {real_samples.items[0][0]}")]
        whole = reached <= 1
    else:
        # k such that a generator drawing from the data itself would reach ~95% coverage: 1 - exp(-k M / N)
        k = int(min(max(5, np.ceil(3 * len(real) / len(fake))), len(real) // 4))
        coverage = knn_coverage(real, fake, k)
        expected = 1 - (1 - k / len(real)) ** len(fake)
        if coverage >= MIN_COVERAGE * expected:
            return []
        where = f"over {coverage:.0%} of the real data"
        ev = [Evidence(f"{len(fake)} generated samples reach {coverage:.0%} of the real data (k-NN coverage, "
                       f"k={k}; a generator matching the data would reach ~{expected:.0%}); their spread is "
                       f"{spread:.0%} of the real data's", samples.artifact, f"line {samples.items[0][0]}")]
        whole = coverage < 0.25 * expected
    issue = "Mode collapse: " if whole else "Partial mode collapse: "
    issue += "the generated samples sit "
    return [Finding(code="mode_collapse",
                    issue=issue + where,
                    severity="high",
                    confidence=0.9 if whole else 0.82,
                    evidence=ev,
                    fix=_FIX,
                    expected_impact="samples spread over all the data's modes",
                    analyzer=NAME,
                    quick_fix="Regularise the discriminator (gradient penalty)")]
