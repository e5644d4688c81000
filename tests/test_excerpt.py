"""Short pasted excerpts: a few lines must give the best answer they support."""
from __future__ import annotations

from analysis.diagnose import diagnose


def _top(tmp_path, text: str, name: str = "train.log"):
    (tmp_path / name).write_text(text)
    d, _ = diagnose(tmp_path)
    return d


def test_one_keras_epoch_with_a_wide_train_val_gap_is_overfitting(tmp_path):
    # kerastuner #167 (tests/wild, tune half): one epoch line is the whole paste
    d = _top(tmp_path, "Epoch 50/50\n45000/45000 [==========================] - 449s 10ms/samplr - loss: 0.0350  - "
                       "accuracy: 0.9882 - val_loss: 2.6765 - val_accuracy: 0.5934\n")
    top = d.root_causes[0]
    assert top.code == "overfitting" and top.confidence < 0.8 and d.status == "needs_more_data"
    assert {e.locator for e in top.evidence} == {"line 2"}


def test_a_small_gap_is_not_overfitting(tmp_path):
    d = _top(tmp_path, "Epoch 3/10\n100/100 - 4s - loss: 0.3100 - accuracy: 0.9000 - val_loss: 0.3500 - val_accuracy: 0.8800\n")
    assert "overfitting" not in [c.code for c in d.root_causes]


def test_an_lr_above_every_optimizers_range(tmp_path):
    # OpenNMT #869 (tests/wild, tune half): Adam with lr 2 under a Noam schedule
    line = ("[2018-08-01 18:29:48,221 INFO] Step 50/100000000; acc:   0.00; ppl: 26881171418161356094253400435962903554686976.00; "
            "xent: 6776.20; lr: 2.00000; 4132/2064 tok/s;     52 sec\n")
    d = _top(tmp_path, line)
    assert d.root_causes[0].code == "lr_too_high" and "2" in d.root_causes[0].issue


def test_accuracy_stuck_at_one_value_lists_why(tmp_path):
    lines = "".join(f"Epoch {i}/5\n10/10 - 1s - loss: {0.69 - i * 0.0001:.4f} - accuracy: 0.5000\n" for i in range(1, 6))
    d = _top(tmp_path, lines)
    top = next(c for c in d.root_causes if c.code == "data_pipeline_bug")
    assert "labels" in top.fix and "one class" in top.fix
