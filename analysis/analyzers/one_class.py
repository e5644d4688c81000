"""A binary classifier that answers the negative class for every sample: its precision and its recall are
both 0 at a report (Keras' `val_precision: 0.0000 - val_recall: 0.0000`; torchmetrics and scikit-learn say 0
where nothing was predicted positive), while its accuracy is the negative class's share. Read where that
holds at the last report and at ZERO_SHARE of the reports or more: a classifier that starts there and
learns its way out is not collapsed. The accuracy held at one value across those reports says it most
plainly (it is the share of the class it always answers), and is the evidence beside the zeros.

Also, for any number of classes: a scikit-learn classification report in which one class has recall 1.00 and
precision equal to its share of the samples, and every other class precision and recall 0: every sample was
predicted as that class (`predicts_one_class` reads it as the excerpt's one-column confusion matrix is read)."""
from __future__ import annotations

import re

import numpy as np

from analysis.analyzers.common import pasted_texts, reported_after_line
from analysis.ingest.dressing import undress
from analysis.metrics import Series, fmt
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "one_class"
MIN_REPORTS = 3             # three reports with precision and recall, so that a first epoch alone says nothing
ZERO_SHARE = 0.5            # both 0 at half the reports or more, the last among them
CONFIDENCE, HELD_CONFIDENCE = 0.6, 0.75     # ...the accuracy held at one value across them: the higher
_SPLITS = {"val_": "validation", "": "training", "test_": "test"}
_ACCURACY = {"val_": "val_acc", "": "train_acc", "test_": "test_acc"}


LEARNED_AFTER = 3          # a report at 0 followed by this many falling loss reports was a run's first epoch
IMBALANCED = 0.6            # one class holding 60% or more of the samples is a majority
REPORT_MAX_BYTES = 256 * 1024
_REPORT_HEADER = re.compile(r"^\s*precision\s+recall\s+f1-score\s+support\s*$")
_REPORT_ROW = re.compile(r"^\s*(\S(?:.*?\S)?)\s+(\d*\.\d+)\s+(\d*\.\d+)\s+(\d*\.\d+)\s+(\d+)\s*$")
_REPORT_SUMMARY = ("accuracy", "macro avg", "weighted avg", "micro avg", "samples avg")


def analyze(run: Run) -> list[Finding]:
    # each file's last report with rows; a collapse only where every file's last report shows one (a paste of
    # the first epoch's report beside the final one in another file is a run that learned its way out)
    last = {path: (path, header, rows) for path, header, rows in _reports(run) if rows}
    collapsed = [_report_collapse(*report) for report in last.values()]
    return collapsed[-1] if collapsed and all(collapsed) else _negative_always(run) or _nothing_predicted(run)


def predicts_one_class(label: str, share: np.ndarray, j: int, ev: Evidence, analyzer: str) -> list[Finding]:
    """Every sample predicted as class `label` (index `j` of the classes' shares of the samples, `share`):
    mode collapse, and beside it what the shares suggest: the majority class learned, or, where the classes are
    about balanced, an LR that collapsed the classifier."""
    out = [Finding(code="mode_collapse",
                   issue=f"The model predicts class {label} for every sample",
                   severity="high", confidence=0.7, evidence=[ev],
                   fix="Weight the loss by class or rebalance the sampler, check the output layer has one unit per "
                       "class, and lower the LR if the collapse came after a few good epochs",
                   expected_impact="predictions spread over the classes", analyzer=analyzer,
                   quick_fix="Rebalance the classes")]
    rows_ev = Evidence(f"class {label} holds {share[j]:.0%} of the samples ({1 / len(share):.0%} if balanced)",
                       ev.artifact, ev.locator)
    if share[j] >= IMBALANCED and share[j] == share.max():
        out.append(Finding(code="data_pipeline_bug",
                           issue=f"Class {label} holds {share[j]:.0%} of the samples: the model learned the majority "
                                 "class",
                           severity="medium", confidence=0.45, evidence=[rows_ev],
                           fix="Rebalance the training data (oversample, class weights) and report a per-class metric",
                           analyzer=analyzer, quick_fix="Rebalance the classes"))
    elif share.max() < IMBALANCED:
        out.append(Finding(code="lr_too_high",
                           issue=f"The classes are about balanced, yet every sample goes to class {label}: an LR too "
                                 "high collapses a classifier onto one class",
                           severity="medium", confidence=0.4, evidence=[rows_ev],
                           fix="Lower the learning rate 10x (Adam ~1e-4) and check the output layer and loss match "
                               "the task (one unit per class with cross-entropy)",
                           analyzer=analyzer, quick_fix="Lower the LR 10x"))
    return out


def _reports(run: Run):
    """Every classification report pasted: (artifact path, header line number, per-class rows as (label, precision,
    recall, support, line number)), in the order printed."""
    for a, text in pasted_texts(run, ("log", "traceback", "samples"), REPORT_MAX_BYTES):
        lines = text.split("\n")
        for n, line in enumerate(lines):
            if _REPORT_HEADER.match(undress(line)):
                yield a.path, n + 1, _report_rows(lines, n)


def _in_a_report(run: Run, s: Series) -> bool:
    """Whether a series' values are a classification report's rows (its classes read as a table's steps), in a
    file of any size: read line by line (lines end at `\\n` only, as the ingest counts them), only where a collapse
    would otherwise be named, and only up to the series' first line that is no report row."""
    wanted = sorted({int(n) for n in s.lines}) if s.lines is not None else []
    if not wanted or wanted[0] <= 0:
        return False
    base = run.root if run.root.is_dir() else run.root.parent
    rows: set[int] = set()
    try:
        with open(base / s.artifact, errors="replace", newline="\n") as f:
            lines = iter(enumerate(f, 1))
            for n, line in lines:
                if n > wanted[-1] or n > wanted[0] and wanted[0] not in rows:
                    break
                if _REPORT_HEADER.match(undress(line)):
                    for n, line in lines:
                        if _REPORT_ROW.match(undress(line)):
                            rows.add(n)
                        elif line.strip():
                            break
    except OSError:
        return False
    return set(wanted) <= rows


def _report_rows(lines: list[str], start: int) -> list[tuple[str, float, float, int, int]]:
    """The per-class rows under a report's header at index `start`."""
    rows: list[tuple[str, float, float, int, int]] = []
    for k in range(start + 1, len(lines)):
        line = undress(lines[k])
        if not line.strip():
            if rows:
                break
            continue
        m = _REPORT_ROW.match(line)
        if m is None or m.group(1).lower() in _REPORT_SUMMARY:
            break
        rows.append((m.group(1), float(m.group(2)), float(m.group(3)), int(m.group(5)), k + 1))
    return rows


def _report_collapse(path: str, header: int, rows: list[tuple[str, float, float, int, int]]) -> list[Finding]:
    """The last report pasted, where one class took every prediction: its recall 1 and its precision its share of the
    samples (its own and all the others predicted as it), every other class's precision and recall 0."""
    rows = [r for r in rows if r[3] > 0]
    found = [r for r in rows if r[2] > 0]
    total = sum(r[3] for r in rows)
    if len(rows) < 2 or len(found) != 1 or any(r[1] > 0 for r in rows if r is not found[0]):
        return []
    label, precision, recall, support, _ = found[0]
    if recall < 0.995 or abs(precision - support / total) > 0.006:
        return []
    ev = Evidence(f"classification report: class {label} recall {recall:.2f}, precision {precision:.2f} (its share of "
                  f"the {total} samples); every other class precision and recall 0", path,
                  f"lines {header}-{rows[-1][4]}")
    share = np.array([r[3] / total for r in rows])
    return predicts_one_class(label, share, rows.index(found[0]), ev, NAME)


_AVERAGES = ("micro avg", "macro avg", "weighted avg", "samples avg")
_MULTI_LABEL = ("micro avg", "samples avg")      # what scikit-learn adds for multi-label targets (no accuracy row)
_ACCURACY_ROW = re.compile(r"^\s*accuracy\s+(\d*\.\d+)\s+\d+\s*$")


def _average_blocks(run: Run):
    """Each artifact's last run of a classification report's average rows (`micro avg  0.00  0.00  0.00  5635`):
    (artifact path, [(line number, precision, recall, F1, support, name)], whether an `accuracy` row stood just
    above it)."""
    for a, text in pasted_texts(run, ("log", "traceback", "samples"), REPORT_MAX_BYTES):
        last = None
        block: list[tuple[int, float, float, float, int, str]] = []
        accuracy = above = False
        for n, line in enumerate(text.split("\n"), 1):
            line = undress(line)
            m = _REPORT_ROW.match(line)
            if m and m.group(1).lower() in _AVERAGES:
                if not block:
                    accuracy = above
                block.append((n, float(m.group(2)), float(m.group(3)), float(m.group(4)), int(m.group(5)),
                              m.group(1).lower()))
                continue
            if block:
                last, block = (a.path, block, accuracy), []
            if line.strip():
                above = _ACCURACY_ROW.match(line) is not None
        if block:
            last = (a.path, block, accuracy)
        if last is not None:
            yield last


def _trained_after(run: Run, line: int, path: str) -> bool:
    """Whether the training loss was reported LEARNED_AFTER times or more after `line` of `path`, falling: a report at
    0 from the first epoch of a run that went on learning (an NER model predicting only `O` at first)."""
    after = reported_after_line(run.metrics.get("train_loss"), path, line)
    return len(after) >= LEARNED_AFTER and bool(np.isfinite(after).all()) and after[-1] < after[0]


def _nothing_predicted(run: Run) -> list[Finding]:
    """A classification report whose every average is 0 (precision, recall and F1) over samples that hold labels, in
    every file that prints one, and no training after it: not one label of any class was predicted right. A
    multi-label model does it by answering no label at all (every output under its threshold), which an LR too high
    for fine-tuning collapses it to; a single-label one always answers a class, so every answer wrong is labels that
    are not the model's classes (shifted, re-indexed, another dataset's)."""
    blocks = list(_average_blocks(run))
    if not blocks or not all(len(rows) >= 2 and all(p == r == f == 0 and n > 0 for _, p, r, f, n, _ in rows)
                             for _, rows, _ in blocks):
        return []
    path, rows, accuracy = blocks[-1]
    if _trained_after(run, rows[-1][0], path):
        return []
    ev = [Evidence(f"classification report: precision, recall and F1 0.00 in every average ({len(rows)}) over "
                   f"{rows[0][4]} samples", path, f"lines {rows[0][0]}-{rows[-1][0]}")]
    multi = not accuracy and any(r[5] in _MULTI_LABEL for r in rows)
    return [Finding(code=code, issue=issue, severity=severity, confidence=confidence, evidence=ev, fix=fix,
                    analyzer=NAME, quick_fix=quick)
            for code, severity, confidence, issue, fix, quick in (_NO_LABEL if multi else _WRONG_CLASS)]


# The readings of a report whose every average is 0, the likelier first: (code, severity, confidence, issue, fix,
# quick fix). A multi-label model that answers no label at all...
_NO_LABEL = (
    ("mode_collapse", "high", 0.55,
     "The classifier predicts no label right for any class: every average of its classification report is 0 (a "
     "multi-label model that answers no label at all)",
     "Print the predicted labels for a few samples: none at all means every output sits under the threshold; weight "
     "the rare labels (BCEWithLogitsLoss(pos_weight=...)) and pick the threshold on the validation set",
     "Print the predictions"),
    ("lr_too_high", "medium", 0.45,
     "A fine-tuning LR too high collapses a classifier to one answer for every input (BERT at 1e-3 instead of 2e-5), "
     "here no label at all",
     "Lower the learning rate to the model's fine-tuning range (2e-5 to 5e-5 for BERT) with a warm-up, and watch the "
     "training loss fall", "Lower the LR to 2e-5"),
    ("data_pipeline_bug", "medium", 0.4,
     "Labels in another form than the loss expects (class indices where multi-hot vectors are due, a threshold on "
     "logits instead of probabilities) leave every prediction wrong",
     "Check one batch: the targets' shape and values against the outputs' (multi-hot 0/1 per label for BCE), and "
     "apply the threshold to sigmoid(logits)", "Check one batch's targets"))
# ...and a single-label one, which always answers some class
_WRONG_CLASS = (
    ("data_pipeline_bug", "high", 0.55,
     "Every sample's predicted class is wrong: every average of the classification report is 0, which a classifier "
     "that always answers some class reaches only when the labels scored are not its classes (shifted by one, "
     "re-indexed, another dataset's)",
     "Print a few (prediction, label) pairs and the class order of the model's output against the label encoder's; a "
     "constant offset or a permutation is the mapping to fix", "Print (prediction, label) pairs"),
    ("mode_collapse", "medium", 0.4,
     "A classifier that answers one class for every sample scores 0 wherever that class is absent from the set",
     "Count the predicted classes: one class for every sample is a collapse (rebalance, lower the LR)",
     "Count the predicted classes"))


def _negative_always(run: Run) -> list[Finding]:
    for split, said in _SPLITS.items():
        precision, recall = run.metrics.get(f"{split}precision"), run.metrics.get(f"{split}recall")
        if precision is None or recall is None or len(precision) != len(recall) or len(recall) < MIN_REPORTS:
            continue
        zero = (precision.values == 0) & (recall.values == 0)
        if not zero[-1] or zero.mean() < ZERO_SHARE or _in_a_report(run, recall):
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
