"""Sample outputs: degenerate generations or one class for everything.

Thresholds: collapse = at least 5 samples and either 80% or more identical, or the text of all
samples drawing on 3 or fewer distinct characters/tokens.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "outputs"


def analyze(run: Run) -> list[Finding]:
    out: list[Finding] = []
    for samples in run.samples:
        items = samples.items
        if len(items) < 5:
            continue
        texts = [t.strip() for _, t in items]
        numeric = _vectors(texts)
        if numeric is not None:
            out += _numeric_collapse(samples, numeric)
            continue
        counts = Counter(texts)
        top, top_n = counts.most_common(1)[0]
        chars = Counter("".join(t for t in texts)).most_common()
        distinct_chars = len([c for c, _ in chars if not c.isspace()])
        if top_n / len(texts) >= 0.8 or distinct_chars <= 3:
            line = next(n for n, t in items if t.strip() == top)
            quote = top if len(top) <= 60 else top[:57] + "..."
            why = (f"{top_n} of {len(texts)} samples are identical" if top_n / len(texts) >= 0.8
                   else f"all {len(texts)} samples use only {distinct_chars} distinct characters ({''.join(c for c, _ in chars[:3])!r})")
            out.append(Finding("mode_collapse", f"Outputs collapsed: {why}", "high", 0.8,
                               [Evidence(f"sample: {quote!r}; {why}", samples.artifact, f"line {line}")],
                               fix="Check the model's capacity and the loss: a model that cannot fit the data emits its "
                                   "most frequent token; also check sampling temperature and that generation feeds back "
                                   "its own outputs", analyzer=NAME, quick_fix="Check capacity and sampling"))
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
    return [Finding("mode_collapse", f"All {len(x)} generated samples sit at one point: spread {spread:.3g} around "
                    f"({', '.join(f'{c:.3g}' for c in centre)}), {spread / reach:.1%} of their distance from the origin",
                    "high", 0.85,
                    [Evidence(f"sample {first[1].strip()!r}; {len(x)} samples, spread {spread:.3g}, mean "
                              f"({', '.join(f'{c:.3g}' for c in centre)})", samples.artifact, f"line {first[0]}")],
                    fix="The generator collapsed to one mode: balance the updates (one generator step per "
                        "discriminator step, equal learning rates), add minibatch discrimination or a gradient "
                        "penalty (WGAN-GP), and restart from a checkpoint from before the collapse",
                    expected_impact="samples spread over the data's modes", analyzer=NAME,
                    quick_fix="Balance generator and discriminator updates")]
