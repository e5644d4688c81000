"""A binary classifier on a rare positive class (15%) whose features carry nothing about it answers the
negative class for every sample: precision and recall 0, the accuracy the negative share at every epoch
(a Keras fit committed to a public repository read only "overfitting" before). Real tiny CPU runs, written
as Keras' CSVLogger and its fit's printed lines write them; the same run with one informative feature is
the healthy twin."""
import pytest
import torch
import torch.nn.functional as F

from analysis import diagnose

EPOCHS = 8
_COLUMNS = ("accuracy", "loss", "precision", "recall")


def _scores(model, x, y) -> dict:
    with torch.no_grad():
        logits = model(x).squeeze(1)
    pred = logits > 0
    tp = float((pred & (y == 1)).sum())
    return {"accuracy": float((pred == (y == 1)).float().mean()),
            "loss": float(F.binary_cross_entropy_with_logits(logits, y)),
            "precision": tp / float(pred.sum()) if pred.any() else 0.0, "recall": tp / float((y == 1).sum()),
            "counts": (tp, float(pred.sum()), float((y == 1).sum()), float(len(y)))}


def _fit(informative: bool, seed: int) -> list[dict]:
    g = torch.Generator().manual_seed(seed)
    y = (torch.rand(2400, generator=g) < 0.15).float()
    x = torch.randn(2400, 8, generator=g)
    if informative:
        x[:, 0] += 3.0 * y                  # the positives stand out on one feature
    torch.manual_seed(seed)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    rows = []
    for _ in range(EPOCHS):
        for i in range(0, 2000, 200):
            opt.zero_grad()
            F.binary_cross_entropy_with_logits(model(x[i:i + 200]).squeeze(1), y[i:i + 200]).backward()
            opt.step()
        train, val = _scores(model, x[:2000], y[:2000]), _scores(model, x[2000:], y[2000:])
        rows.append(train | {f"val_{k}": v for k, v in val.items()})
    return rows


def _keras_csv(rows: list[dict]) -> str:
    names = [*_COLUMNS, *(f"val_{c}" for c in _COLUMNS)]
    return "epoch," + ",".join(names) + "\n" + "".join(
        f"{e}," + ",".join(repr(r[n]) for n in names) + "\n" for e, r in enumerate(rows))


def _keras_fit(rows: list[dict]) -> str:
    return "".join(f"Epoch {e + 1}/{EPOCHS}\n10/10 [==============================] - 0s 2ms/step - "
                   + " - ".join(f"{n}: {r[n]:.4f}" for n in (*_COLUMNS, *(f"val_{c}" for c in _COLUMNS))) + "\n"
                   for e, r in enumerate(rows))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("layout", ["training_log.csv", "train.log"])
def test_a_classifier_that_answers_one_class_is_a_collapse(tmp_path, seed, layout):
    rows = _fit(informative=False, seed=seed)
    assert all(r["val_recall"] == 0 and r["val_precision"] == 0 for r in rows[EPOCHS // 2:])   # the fault shows
    (tmp_path / layout).write_text((_keras_csv if layout.endswith(".csv") else _keras_fit)(rows))
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert (top.code, top.severity) == ("mode_collapse", "high") and "negative class" in top.issue
    assert any("val_acc" in e.text and "share" in e.text for e in top.evidence)


@pytest.mark.parametrize("layout", ["training_log.csv", "train.log"])
def test_the_same_classifier_with_a_signal_is_no_collapse(tmp_path, layout):
    rows = _fit(informative=True, seed=0)
    assert rows[-1]["val_recall"] > 0.3
    (tmp_path / layout).write_text((_keras_csv if layout.endswith(".csv") else _keras_fit)(rows))
    d, _ = diagnose(tmp_path)
    assert not [c for c in d.root_causes if c.code == "mode_collapse"]


def _classification_report(counts: tuple[float, float, float, float]) -> str:
    """scikit-learn's classification_report for the validation predictions, as it prints it."""
    tp, predicted, positives, n = counts
    tn = n - predicted - positives + tp
    rows = []
    for label, hit, said, real in (("0", tn, n - predicted, n - positives), ("1", tp, predicted, positives)):
        p, r = (hit / said if said else 0.0), hit / real
        f = 2 * p * r / (p + r) if p + r else 0.0
        rows.append(f"{label:>12} {p:>9.2f} {r:>9.2f} {f:>9.2f} {int(real):>9}")
    return ("              precision    recall  f1-score   support\n\n" + "\n".join(rows)
            + f"\n\n    accuracy                         {(tp + tn) / n:>9.2f} {int(n):>9}\n")


@pytest.mark.parametrize("informative", [False, True])
def test_a_classification_report_with_every_sample_in_one_class_is_a_collapse(tmp_path, informative):
    counts = _fit(informative=informative, seed=0)[-1]["val_counts"]
    (tmp_path / "output.txt").write_text(_classification_report(counts))
    d, _ = diagnose(tmp_path)
    collapse = [c for c in d.root_causes if c.code == "mode_collapse"]
    if informative:
        assert counts[0] > 0 and not collapse            # positives found: the report is spread
        return
    assert counts[1] == 0                                 # the fault shows: nothing predicted positive
    assert d.root_causes[0].code == "mode_collapse" and "class 0" in d.root_causes[0].issue
    assert "classification report" in collapse[0].evidence[0].text


def test_a_pasted_report_where_one_class_takes_every_prediction_is_a_collapse(tmp_path):
    # github.com/lmzh123/ships_detection/issues/1, as posted
    (tmp_path / "output.txt").write_text("""Accuracy: 0.7352941176470589
UndefinedMetricWarning: Precision and F-score are ill-defined and being set to 0.0 in labels with no predicted samples.
  'precision', 'predicted', average, warn_for)
              precision    recall  f1-score   support

           0       0.74      1.00      0.85        50
           1       0.00      0.00      0.00        18

    accuracy                           0.74        68
   macro avg       0.37      0.50      0.42        68
weighted avg       0.54      0.74      0.62        68
""")
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert (top.code, top.severity) == ("mode_collapse", "high") and top.evidence[0].locator == "lines 4-7"


def test_a_report_collapsed_at_the_start_of_a_run_that_learned_its_way_out_is_no_collapse(tmp_path):
    # the same uninformative fit's report first (every sample answered 0), then the informative fit's, printed later
    collapsed = _fit(informative=False, seed=0)[-1]["val_counts"]
    learned = _fit(informative=True, seed=0)[-1]["val_counts"]
    assert collapsed[1] == 0 and learned[0] > 0
    (tmp_path / "output.txt").write_text("epoch 1\n" + _classification_report(collapsed)
                                         + "epoch 20\n" + _classification_report(learned))
    d, _ = diagnose(tmp_path)
    assert "mode_collapse" not in [c.code for c in d.root_causes]


@pytest.mark.parametrize("rows,collapsed", [
    ([("cat", 0.00, 0.00, 30), ("dog", 0.40, 1.00, 40), ("bird", 0.00, 0.00, 30)], "dog"),
    # two rare classes never predicted beside two learned ones: no collapse, though their rows read 0
    ([("A", 0.91, 0.88, 400), ("B", 0.85, 0.90, 400), ("C", 0.00, 0.00, 10), ("D", 0.00, 0.00, 5)], None)])
def test_a_report_of_several_classes_is_read_as_the_classes_it_names(tmp_path, rows, collapsed):
    text = "              precision    recall  f1-score   support\n\n" + "".join(
        f"{label:>12} {p:>9.2f} {r:>9.2f} {2 * p * r / (p + r) if p + r else 0:>9.2f} {n:>9}\n"
        for label, p, r, n in rows)
    (tmp_path / "output.txt").write_text(text + "\n    accuracy                           0.40       100\n")
    d, _ = diagnose(tmp_path)
    found = [c for c in d.root_causes if c.code == "mode_collapse"]
    if collapsed is None:
        assert not found
    else:
        assert d.root_causes[0].code == "mode_collapse" and f"class {collapsed}" in d.root_causes[0].issue


def test_a_report_after_progress_bars_rewritten_with_carriage_returns_is_read_at_its_own_lines(tmp_path):
    # tqdm's `\r` rewrites are one line to the ingest: the report's rows must be found at the same line numbers
    bars = "training 10%|#   | 1/10\rtraining 100%|##########| 10/10\n" * 3
    rows = [(0, 0.90, 0.95, 900), (1, 0.50, 0.30, 40), (2, 0.0, 0.0, 30), (3, 0.0, 0.0, 20), (4, 0.0, 0.0, 10)]
    report = "              precision    recall  f1-score   support\n\n" + "".join(
        f"{c:>12} {p:>9.2f} {r:>9.2f} {2 * p * r / (p + r) if p + r else 0:>9.2f} {n:>9}\n" for c, p, r, n in rows)
    (tmp_path / "train.log").write_text(bars + "Epoch 1 loss 0.5\nEpoch 2 loss 0.4\n" + report)
    d, _ = diagnose(tmp_path)
    assert "mode_collapse" not in [c.code for c in d.root_causes]


def test_a_report_whose_every_average_is_zero_predicted_no_label(tmp_path):
    # Bert-Multi-Label-Text-Classification #13 (tests/wild, tune half): the averages of a multi-label report, as
    # posted; the thread settled an LR too high
    averages = ("                micro avg       0.00      0.00      0.00      5635\n"
                "               macro avg       0.00      0.00      0.00      5635\n"
                "            weighted avg       0.00      0.00      0.00      5635\n"
                "             samples avg       0.00      0.00      0.00      5635\n")
    (tmp_path / "output.txt").write_text(averages)
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes[:3]] == ["mode_collapse", "lr_too_high", "data_pipeline_bug"]
    assert d.root_causes[0].evidence[0].locator == "lines 1-4"
    # one average above 0 found some label right
    (tmp_path / "output.txt").write_text(averages.replace("macro avg       0.00", "macro avg       0.12"))
    d, _ = diagnose(tmp_path)
    assert "mode_collapse" not in [c.code for c in d.root_causes]


def test_a_report_at_zero_is_read_against_what_came_after_and_beside_it(tmp_path):
    zeros = "".join(f"{name:>12}       0.00      0.00      0.00      1200\n" for name in ("micro avg", "macro avg",
                                                                                    "weighted avg"))
    # the first epoch's report of an NER model that went on learning
    (tmp_path / "train.log").write_text("epoch 1 loss 2.10\n" + zeros + "".join(
        f"epoch {e} loss {2.0 - 0.2 * e:.2f}\n" for e in range(2, 6)))
    d, _ = diagnose(tmp_path)
    assert "mode_collapse" not in [c.code for c in d.root_causes]
    # a final report above 0 in another file: the zeros were the start (whatever the files' names)
    (tmp_path / "train.log").unlink()
    for first, final in (("b_epoch1.txt", "a_final.txt"), ("a_epoch1.txt", "b_final.txt")):
        for f in tmp_path.iterdir():
            f.unlink()
        (tmp_path / first).write_text(zeros)
        (tmp_path / final).write_text(zeros.replace("0.00      0.00      0.00", "0.81      0.60      0.69"))
        d, _ = diagnose(tmp_path)
        assert "mode_collapse" not in [c.code for c in d.root_causes], (first, final)


def test_a_single_label_report_at_zero_is_labels_that_are_not_the_models_classes(tmp_path):
    rows = "".join(f"{k:>12}       0.00      0.00      0.00        50\n" for k in "012")
    (tmp_path / "output.txt").write_text(
        "              precision    recall  f1-score   support\n\n" + rows + "\n    accuracy                "
        "           0.00       150\n   macro avg       0.00      0.00      0.00       150\n"
        "weighted avg       0.00      0.00      0.00       150\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "data_pipeline_bug" and "not its classes" in d.root_causes[0].issue
