"""A binary classifier that answers the negative class for every sample: its precision and its recall are
both 0 at a report (Keras' `val_precision: 0.0000 - val_recall: 0.0000`; torchmetrics and scikit-learn say 0
where nothing was predicted positive), while its accuracy is the negative class's share. Read where that
holds at the last report and at ZERO_SHARE of the reports or more: a classifier that starts there and
learns its way out is not collapsed. The accuracy held at one value across those reports says it most
plainly (it is the share of the class it always answers), and is the evidence beside the zeros."""
from __future__ import annotations

import numpy as np

from analysis.metrics import fmt
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "one_class"
MIN_REPORTS = 3             # three reports with precision and recall, so that a first epoch alone says nothing
ZERO_SHARE = 0.5            # both 0 at half the reports or more, the last among them
CONFIDENCE, HELD_CONFIDENCE = 0.6, 0.75     # ...the accuracy held at one value across them: the higher
_SPLITS = {"val_": "validation", "": "training", "test_": "test"}
_ACCURACY = {"val_": "val_acc", "": "train_acc", "test_": "test_acc"}


def analyze(run: Run) -> list[Finding]:
    for split, said in _SPLITS.items():
        precision, recall = run.metrics.get(f"{split}precision"), run.metrics.get(f"{split}recall")
        if precision is None or recall is None or len(precision) != len(recall) or len(recall) < MIN_REPORTS:
            continue
        zero = (precision.values == 0) & (recall.values == 0)
        if not zero[-1] or zero.mean() < ZERO_SHARE:
            continue
        at = np.flatnonzero(zero)
        ev = [Evidence(f"{precision.name} and {recall.name} both 0 at {len(at)} of {len(zero)} reports, the last "
                       "among them: not one positive found", recall.artifact,
                       recall.span_locator(int(at[0]), len(recall) - 1))]
        conf = CONFIDENCE
        acc = run.metrics.get(_ACCURACY[split])
        if acc is not None and len(acc) == len(recall):
            last = float(acc.values[-1])
            held = at[np.abs(acc.values[at] - last) <= 1e-4 * max(1.0, abs(last))]
            if len(held) >= max(MIN_REPORTS, ZERO_SHARE * len(acc)):
                ev.append(Evidence(f"{acc.name} {fmt(last)} at {len(held)} of them: the share of the negative "
                                   "class, which the model answers for every sample", acc.artifact,
                                   acc.span_locator(int(held[0]), len(acc) - 1)))
                conf = HELD_CONFIDENCE
        return [Finding(code="mode_collapse",
                        issue=f"The classifier predicts the negative class for every {said} sample: its precision "
                              "and recall are 0, and its accuracy is that class's share",
                        severity="high", confidence=conf, evidence=ev,
                        fix="Weight the rare class in the loss (Keras: fit(class_weight={0: 1.0, 1: n_neg / n_pos}); "
                            "PyTorch: BCEWithLogitsLoss(pos_weight=n_neg / n_pos)) or oversample it; check that the "
                            "positive labels reach the model (their count per batch), and pick the decision "
                            "threshold on the validation set rather than 0.5",
                        expected_impact="recall above 0: the model names some positives",
                        analyzer=NAME, quick_fix="Weight the rare class")]
    return []
