"""Healthy runs in shapes that look alarming (tests/scenarios/grid_healthy2.py): each mechanism that
raised a false alarm there, in a few lines, beside the fault it must not hide."""
from __future__ import annotations

import math
import shutil

import numpy as np

from analysis.diagnose import diagnose
from tests.scenarios import cached

ALARM = ("critical", "high")


def _diagnose(tmp_path, rows: list[dict], name: str = "train.log"):
    (tmp_path / name).write_text("".join(" ".join(f"{k}={v}" for k, v in r.items()) + "\n" for r in rows))
    d, _ = diagnose(tmp_path)
    return d


def _alarms(d) -> list[str]:
    return [c.code for c in d.root_causes if c.severity in ALARM and c.code != "healthy"]


def _falling(n: int, start: float = 1.4, end: float = 0.3) -> list[float]:
    return [end + (start - end) * math.exp(-4 * i / n) for i in range(n)]


def test_a_loss_scaler_skipping_its_first_steps_is_no_overflow(tmp_path):
    # AMP: GradScaler's first scale is too high, so the first steps' gradients overflow (norm nan or
    # inf), the steps are skipped and the scale halves; the loss never leaves finite values
    rows = [{"step": i + 1, "loss": round(x, 4), "lr": 0.002,
             "grad_norm": "nan" if i < 3 else "inf" if i < 5 else round(0.5 - 0.002 * i, 4),
             "loss_scale": 2.0 ** (24 - min(i, 5))} for i, x in enumerate(_falling(120))]
    d = _diagnose(tmp_path, rows)
    assert _alarms(d) == [] and d.root_causes[0].code == "healthy"


def test_a_gradient_norm_that_stays_non_finite_is_still_read(tmp_path):
    # the same first steps, but the norm never comes back: the overflow is the run's, not a skip
    rows = [{"step": i + 1, "loss": round(x, 4), "lr": 0.002, "grad_norm": "nan" if i >= 60 else 0.5}
            for i, x in enumerate(_falling(120))]
    d = _diagnose(tmp_path, rows)
    assert _alarms(d)


def _curriculum(lr_after: float) -> list[dict]:
    # two easy classes first (the loss falls near 0), then every class from step 120: the loss jumps,
    # then falls again to a level above the easy one
    easy, hard = _falling(120, 0.7, 0.02), _falling(180, 1.6, 0.3)
    return [{"step": i + 1, "loss": round(x, 4), "lr": 0.002 if i < 120 else lr_after,
             "grad_norm": 0.4} for i, x in enumerate(easy + hard)]


def test_a_rise_that_comes_back_under_the_same_lr_is_no_divergence(tmp_path):
    d = _diagnose(tmp_path, _curriculum(0.002))
    assert _alarms(d) == [] and d.root_causes[0].code == "healthy"


def test_the_same_rise_under_a_raised_lr_stays_the_lrs(tmp_path):
    d = _diagnose(tmp_path, _curriculum(0.08))
    assert d.root_causes[0].code == "lr_too_high" and d.root_causes[0].severity in ALARM


def _one_example_steps(batch: int, tmp_path):
    # a real run of batches of one row (tests/scenarios/grid_healthy2.py, tiny_batches_1): most steps'
    # losses near 0, the few mislabeled or hard examples' at 2-3.4, above where training started
    run = cached("tiny_batches_1")
    shutil.copy(run / "train.log", tmp_path / "train.log")
    config = (run / "config.yaml").read_text()
    (tmp_path / "config.yaml").write_text(config.replace("batch_size: 1", f"batch_size: {batch}"))
    d, _ = diagnose(tmp_path)
    return d


def test_a_high_loss_in_a_batch_of_one_is_one_examples_not_a_bad_batch(tmp_path):
    d = _one_example_steps(1, tmp_path)
    assert d.root_causes[0].code == "healthy"
    assert all(c.severity == "low" for c in d.root_causes if c.code == "loss_spikes")


def test_the_same_spikes_in_batches_of_32_stay_bad_batches(tmp_path):
    d = _one_example_steps(32, tmp_path)
    assert d.root_causes[0].code == "loss_spikes" and d.root_causes[0].severity == "medium"


def test_a_pasted_trainer_log_whose_first_norms_overflowed_is_healthy(tmp_path):
    # HF Trainer with fp16 prints its dict lines; the scaler's first skipped steps log grad_norm nan/inf
    lines = [{"loss": round(2.3 * math.exp(-i / 8) + 0.4, 4),
              "grad_norm": "nan" if i < 2 else "inf" if i < 3 else round(2.1 - 0.1 * i, 4),
              "learning_rate": 2e-05, "epoch": round(0.05 * (i + 1), 2)} for i in range(12)]
    (tmp_path / "train.log").write_text("".join(
        "{" + ", ".join(f"'{k}': {v}" for k, v in r.items()) + "}\n" for r in lines))
    d, _ = diagnose(tmp_path)
    assert _alarms(d) == [] and d.root_causes[0].code == "healthy"


def _diverge_then_part_back(s: int) -> float:
    # falls to 0.5, diverges to 4.0 (8x its best, above its 3.0 start), comes back only to 1.6
    wobble = 1 + 0.03 * math.sin(s * 1.7)
    if s < 150:
        return (0.5 + 2.5 * math.exp(-s / 30)) * wobble
    if s < 220:
        return (0.5 + 3.5 * (s - 150) / 70) * wobble
    if s < 260:
        return 4.0 * wobble
    return max(1.6, 4.0 - (s - 260) * 0.05) * wobble


def test_a_divergence_past_the_start_that_comes_back_part_way_under_a_constant_lr_stays_an_alarm(tmp_path):
    # a constant LR is no sign of a data change: the rise went above where training started and the
    # loss ended 3x its best, not back at its pre-rise level
    d = _diagnose(tmp_path, [{"step": s, "loss": f"{_diverge_then_part_back(s):.4f}", "lr": 0.01}
                             for s in range(400)])
    assert d.root_causes[0].code == "lr_too_high" and d.root_causes[0].severity in ALARM


def test_spikes_in_batches_of_one_accumulated_64_times_are_bad_batches(tmp_path):
    # gradient accumulation: each logged loss averages 64 examples, so a 6x spike is no one example's
    def loss(s: int) -> float:
        v = (0.4 + 1.6 * math.exp(-s / 60)) * (1 + 0.03 * math.sin(s * 2.3))
        return v * (6 if s in (60, 130, 190, 250, 330) else 1)

    rows = [{"step": s, "loss": f"{loss(s):.4f}", "lr": 0.001} for s in range(400)]
    (tmp_path / "config.yaml").write_text("per_device_train_batch_size: 1\ngradient_accumulation_steps: 64\n")
    d = _diagnose(tmp_path, rows)
    assert d.root_causes[0].code == "loss_spikes" and d.root_causes[0].severity == "medium"


def test_an_inf_gradient_where_the_loss_jumped_and_stayed_is_no_skipped_step(tmp_path):
    # a scaler's skipped step leaves the loss where it was; here it jumped 14x and never came back
    loss = [0.52, 0.50, 0.49, 6.8, 7.1, 6.9, 7.0, 6.95]
    norm = [1.1, 1.0, 1.0, "inf", "inf", 45.0, 38.0, 40.0]
    d = _diagnose(tmp_path, [{"step": 100 * (i + 1), "loss": x, "grad_norm": g}
                             for i, (x, g) in enumerate(zip(loss, norm))])
    assert d.root_causes and _alarms(d)


def test_a_dip_inside_the_batch_noise_is_no_descent_to_diverge_from():
    """A loss pinned at chance and thrown around batch to batch (a rate far above range) dips and
    rises by chance: a dip within three times that noise is not a descent, so the rise after it is no
    divergence. The same curve after a real descent, rising past its noise, is one."""
    import numpy as np

    from analysis.signals import divergence

    rng = np.random.default_rng(0)
    noise = rng.normal(0.0, 0.1, 240)
    pinned = np.full(240, 1.22) + noise
    pinned[:20] = 1.3 + noise[:20]                       # a dip of 0.08 (6%) from its start, a third of 3x noise
    pinned[210:] += 0.5                                  # then a late rise by 5x the noise
    assert divergence(pinned) is None
    learned = np.concatenate([np.linspace(2.5, 0.3, 120), np.full(120, 0.3)]) + 0.02 * noise
    learned[200:] += 1.0
    d = divergence(learned)
    assert d is not None and 190 <= d.onset <= 205


def test_spikes_after_which_the_loss_never_came_back_are_no_recovered_spikes(tmp_path):
    # a CSDN post (blog.csdn.net/xu380393916/article/details/102788359): a CIFAR-10 net at 0.6 jumps to 4e7, then to
    # 5e11; between more such values it sits at 2.3 (ln 10), and the test accuracy fell to 10%. Each value fell
    # back from its own height, but the run never returned to where it was
    before = [0.82, 0.61, 0.55, 0.67, 0.83, 0.61, 0.70, 0.81, 0.60, 0.56, 0.64, 0.64] * 2
    after = [4.4e7, 4.1e9, 5.0e11, 5.7e11, 3.2e11, 2.7e11, 2.32, 2.24, 2.16, 2.14, 2.36, 1.05e11, 2.31, 2.28, 8e10,
             2.30, 2.29, 2.33, 3e10, 2.30]
    (tmp_path / "train.log").write_text("".join(f"step {i * 100} loss {v}\n" for i, v in enumerate(before + after)))
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and top.severity == "high" and "never came back" in top.issue
    assert "loss_spikes" not in [c.code for c in d.root_causes]


def _regimes(val: list[float]) -> str:
    train = [0.5972, 0.5927, 0.5325, 0.5416, 0.5292, 0.5069, 0.4951, 0.4664, 0.4775, 0.4629, 0.4386]
    acc = [0.9525, 0.9583, 0.9636, 0.9637, 0.9651, 0.9662, 0.9675, 0.9687, 0.9685, 0.9691, 0.9706]
    val_acc = [0.9743, 0.9787, 0.9731, 0.9766, 0.9746, 0.9822, 0.9776, 0.9773, 0.9771, 0.9787, 0.9766]
    return "".join(f"Epoch {i % 5 + 1}/5\n718/718 [==============================] - 177s - loss: {t:.4f} - "
                   f"acc: {a:.4f} - val_loss: {v:.4f} - val_acc: {va:.4f}\n"
                   for i, (t, a, v, va) in enumerate(zip(train, acc, val, val_acc)))


def test_a_validation_loss_that_wanders_at_one_level_after_one_dip_is_no_overfitting(tmp_path):
    # a fast.ai forum thread (forums.fast.ai/t/validation-loss-lower-than-training-loss/4581): three LR regimes of a
    # Keras fine-tune, the validation loss wandering at ~0.33 (one dip to 0.2572) below a falling training loss,
    # the validation accuracy at ~0.977 throughout; "rose 38% after its best" read overfitting 0.85 and hid health
    val = [0.3264, 0.3138, 0.3742, 0.3526, 0.3817, 0.2572, 0.3179, 0.3260, 0.3465, 0.3090, 0.3539]
    (tmp_path / "train.log").write_text(_regimes(val))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "healthy"
    over = next(c for c in d.root_causes if c.code == "overfitting")
    assert over.severity == "low" and "one dip" in over.issue and "do not climb" in over.issue
    # the same validation loss climbing from its dip at each report after it stays overfitting
    (tmp_path / "train.log").write_text(_regimes(val[:6] + [0.30, 0.34, 0.38, 0.42, 0.46]))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "overfitting" and d.root_causes[0].severity == "medium"


def test_a_validation_loss_climbing_at_each_report_after_its_best_stays_overfitting(tmp_path):
    # review of session 47: a V whose fall is longer than its climb (the climb small against the fall's steps)
    val = [1.00, 0.80, 0.65, 0.55, 0.50, 0.48, 0.50, 0.53, 0.57, 0.62]
    train = [1.20 - 0.09 * i for i in range(10)]
    (tmp_path / "train.log").write_text("".join(
        f"Epoch {i + 1}/10\n10/10 - 1s - loss: {t:.4f} - acc: {0.7 + 0.01 * i:.4f} - val_loss: {v:.4f} - "
        f"val_acc: {0.81 - 0.002 * i:.4f}\n" for i, (t, v) in enumerate(zip(train, val))))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "overfitting" and d.root_causes[0].severity == "medium"


def test_a_spike_over_a_loss_near_zero_that_doubles_its_level_is_no_divergence(tmp_path):
    # review of session 47: 2.3 -> 0.004, one spike to 0.9, then ~0.009: twice a level near 0 undoes nothing
    noise = np.random.default_rng(0).uniform(0.75, 1.25, 400)
    losses = [(0.004 + 2.3 * math.exp(-i / 12)) * noise[i] for i in range(250)] + [0.9] + [
        0.009 * noise[250 + i] for i in range(149)]
    (tmp_path / "train.log").write_text("".join(f"step {i * 10} loss {v:.6f}\n" for i, v in enumerate(losses)))
    d, _ = diagnose(tmp_path)
    assert not any("never came back" in c.issue for c in d.root_causes)


def test_a_loss_that_ends_at_its_blow_up_is_no_recovered_spike(tmp_path):
    # tensorflow/models #5817: TF1's object detection logs each step twice; the loss at 0.15-0.54 ends at 3417.76
    losses = [0.39, 0.21, 0.18, 0.30, 0.25, 0.19, 0.54, 0.15, 0.22, 0.28, 0.17, 0.39, 0.15, 0.54, 0.2, 0.31, 0.19, 0.2,
              0.39, 0.15, 0.54]
    lines = [f"INFO:tensorflow:global step {307 + i}: loss = {v:.4f} (1.2 sec/step)\n" for i, v in enumerate(losses)]
    lines.append("INFO:tensorflow:global step 328: loss = 3417.7632 (1.193 sec/step)\n")
    (tmp_path / "train.log").write_text("".join(line * 2 for line in lines))
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and "its last report" in top.issue and top.severity == "high"

    # (review of session 47) a summary after the loop (an epoch's summed loss, a run's total) is no blow-up
    for name, tail in (("sum", "Epoch 1 finished, loss: 412.7361\n"), ("total", "Training done. Total loss: 96.53\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_text("".join(f"Epoch 1, batch {i}, loss: {1.1 - 0.03 * i:.4f}\n"
                                                           for i in range(20)) + tail)
        d, _ = diagnose(tmp_path / name)
        assert not any("its last report" in c.issue for c in d.root_causes), name

    # (review) the same jump on a tqdm line redrawn with \r, or under padding that shrinks as the number grows
    (tmp_path / "padded").mkdir()
    (tmp_path / "padded" / "train.log").write_text("".join(f"epoch {e:4d} | train loss {v:10.4f}\n" for e, v in
                                                         enumerate(losses + [3417.7632])))
    d, _ = diagnose(tmp_path / "padded")
    assert "its last report" in d.root_causes[0].issue
