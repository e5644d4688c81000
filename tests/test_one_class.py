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
            "precision": tp / float(pred.sum()) if pred.any() else 0.0, "recall": tp / float((y == 1).sum())}


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
