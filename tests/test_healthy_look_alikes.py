"""Healthy runs that look like a fault to a rule that reads one number too literally (found by
running each tuning family's writer on a new seed and format): a noisy early bump the run undid
under the same rate, a curriculum stage that jumps the loss and is trained down, a validation loss
below zero. Each is healthy, with nothing critical, high or medium."""
from __future__ import annotations

import pytest

from analysis.diagnose import diagnose


def _healthy(d) -> bool:
    return d.root_causes[0].code == "healthy" and not any(
        c.severity in ("critical", "high", "medium") for c in d.root_causes)


def test_a_noisy_bump_undone_under_the_same_rate_is_no_divergence(scenario):
    d, _ = diagnose(scenario("warm_restarts_3"))     # momentum SGD at 0.08, batch noise from step 1
    assert _healthy(d)
    # at most a note: a bump inside the batch noise, or one the run undid under the same rate
    assert all(c.severity == "low" for c in d.root_causes if c.code == "lr_too_high")


def test_a_curriculum_jump_trained_down_under_a_constant_rate_is_the_data(scenario):
    d, run = diagnose(scenario("curriculum_3"))      # harder rows from step ~120: the loss jumps 25x
    assert _healthy(d)
    assert float(run.metrics.get("train_loss").values.max()) > 20 * float(run.metrics.get("train_loss").values.min())
    note = next(c for c in d.root_causes if c.code == "lr_too_high")
    assert note.severity == "low" and "came back down under the same learning rate" in note.issue


def test_lightnings_lr_column_named_for_the_optimizer_is_the_lr(scenario):
    d, run = diagnose(scenario("curriculum_4"))      # the curriculum jump, logged by Lightning: lr-RMSprop
    assert "lr" in run.metrics and _healthy(d)


@pytest.mark.parametrize("name", ["unbounded_loss_3"])
def test_a_validation_loss_below_zero_is_measured_on_its_descent(scenario, name):
    d, run = diagnose(scenario(name))                # a Gaussian NLL: the losses end below zero
    assert float(run.metrics.get("val_loss").values.min()) < 0
    assert _healthy(d) and "overfitting" not in [c.code for c in d.root_causes]


@pytest.mark.parametrize("name", ["no_zero_grad_0", "loss_summed_4"])
def test_a_rise_the_gradients_blew_up_over_is_not_called_a_data_change(scenario, name):
    """Gradients never cleared, a summed loss: the loss rises and comes back under the same LR, but
    the gradient norm rose over 100x over that rise; the data did not change, the gradients blew up."""
    d, run = diagnose(scenario(name))
    assert d.root_causes[0].code == "exploding_gradients"
    assert not any("the data changed" in c.issue for c in d.root_causes)


def test_an_accuracy_at_zero_beside_a_falling_loss_is_a_metric_that_does_not_fit(tmp_path):
    # StellarGraph #1843 (tests/wild, tune half): TF 2.2 read `acc` as categorical accuracy on a one-unit output
    losses = [(1.9855, 0.7371), (0.9304, 0.7873), (0.9704, 0.6657), (0.6761, 0.7027), (0.6399, 0.6365)]
    log = "".join(f"Epoch {i}/50\n1/1 - 0s - loss: {a:.4f} - acc: 0.0000e+00 - val_loss: {b:.4f} - "
                  "val_acc: 0.0000e+00\n" for i, (a, b) in enumerate(losses, 1))
    (tmp_path / "train.log").write_text(log)
    d, _ = diagnose(tmp_path)
    assert _healthy(d) and "does not fit" in d.root_causes[0].issue and "binary_accuracy" in d.root_causes[0].fix
    # ...but an accuracy at 0 beside a loss that does not fall is the model's
    flat = "".join(f"Epoch {i}/50\n1/1 - 0s - loss: 0.6931 - acc: 0.0000e+00\n" for i in range(1, 6))
    (tmp_path / "train.log").write_text(flat)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code != "healthy"


def test_an_accuracy_at_zero_is_the_models_where_the_other_split_says_otherwise(tmp_path):
    # a validation accuracy at 0 beside a training one that climbs is the validation data's (the review of session 51)
    log = "".join(f"Epoch {i}/10\n250/250 - 12s - loss: {1.0 - 0.08 * i:.4f} - accuracy: {0.43 + 0.05 * i:.4f} - "
                  f"val_loss: {0.7 + 0.02 * i:.4f} - val_accuracy: 0.0000e+00\n" for i in range(1, 11))
    (tmp_path / "train.log").write_text(log)
    d, _ = diagnose(tmp_path)
    assert any("val_acc is 0 at every one of 10 reports" in c.issue for c in d.root_causes)
    # ...and a sequence's exact match at 0 while its CTC loss falls (PaddleOCR's recognition) is no metric to replace
    ocr = "".join(f"[2022/03/01 10:00:00] ppocr INFO: epoch: [1/500], iter: {200 * i}, lr: 0.001000, "
                  f"loss: {47.0 - 2.0 * i:.2f}, acc: 0.000000, norm_edit_dis: {0.05 + 0.01 * i:.2f}\n"
                  for i in range(1, 16))
    (tmp_path / "train.log").write_text(ocr)
    d, _ = diagnose(tmp_path)
    assert _healthy(d) and "does not fit" not in d.root_causes[0].issue


def test_a_validation_accuracy_at_zero_beside_a_falling_validation_loss_is_no_stuck_model(tmp_path):
    log = "".join(f"epoch {i} train_loss {1.0 - 0.08 * i:.4f} val_loss {0.9 - 0.07 * i:.4f} val_acc 0.0000\n"
                  for i in range(1, 11))
    (tmp_path / "train.log").write_text(log)
    d, _ = diagnose(tmp_path)
    assert not any("is 0 at every one of" in c.issue for c in d.root_causes), [c.issue for c in d.root_causes]
