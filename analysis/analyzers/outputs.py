"""Sample outputs: degenerate generations or one class for everything.

Thresholds: collapse = at least 5 samples and either 80% or more identical, or the text of all
samples drawing on 3 or fewer distinct characters/tokens.
"""
from __future__ import annotations

from collections import Counter

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
