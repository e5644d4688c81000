"""Short pasted excerpts: a few lines must give the best answer they support."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from analysis.diagnose import diagnose
from analysis.ingest import load_run


def _top(tmp_path, text: str, name: str = "train.log"):
    (tmp_path / name).write_text(text)
    d, _ = diagnose(tmp_path)
    return d


def _read(d) -> list[str]:
    """The causes the analyzers read from the lines, without the look-alikes listed beside them."""
    return [c.code for c in d.root_causes if c.analyzer != "rivals"]


def test_one_keras_epoch_with_a_wide_train_val_gap_is_overfitting(tmp_path):
    # kerastuner #167 (tests/wild, tune half): one epoch line is the whole paste
    d = _top(tmp_path, "Epoch 50/50\n45000/45000 [==========================] - 449s 10ms/samplr - loss: 0.0350  - "
                       "accuracy: 0.9882 - val_loss: 2.6765 - val_accuracy: 0.5934\n")
    top = d.root_causes[0]
    assert top.code == "overfitting" and top.confidence < 0.8 and d.status == "needs_more_data"
    assert {e.locator for e in top.evidence} == {"line 2"}


def test_a_small_gap_is_not_overfitting(tmp_path):
    d = _top(tmp_path, "Epoch 3/10\n"
                       "100/100 - 4s - loss: 0.3100 - accuracy: 0.9000 - val_loss: 0.3500 - val_accuracy: 0.8800\n")
    assert "overfitting" not in [c.code for c in d.root_causes]


def test_an_lr_above_every_optimizers_range(tmp_path):
    # OpenNMT #869 (tests/wild, tune half): Adam with lr 2 under a Noam schedule
    line = ("[2018-08-01 18:29:48,221 INFO] Step 50/100000000; acc:   0.00; "
            "ppl: 26881171418161356094253400435962903554686976.00; "
            "xent: 6776.20; lr: 2.00000; 4132/2064 tok/s;     52 sec\n")
    d = _top(tmp_path, line)
    assert d.root_causes[0].code == "lr_too_high" and "2" in d.root_causes[0].issue
    assert d.root_causes[0].severity == "high"      # one report, but a perplexity of 1e43 is harm shown


def test_an_lr_above_every_range_over_a_loss_that_falls_at_each_report_is_a_note(tmp_path):
    # fairseq #85 (tests/wild fairseq-wmt14-enfr-train-log-fine-test-lowercase-mismatch-85, tune half): fconv's NAG
    # at lr 1.25, the loss falling at each epoch; a maintainer called the log fine
    d = _top(tmp_path, "| epoch 001 | train loss 2.24 | train ppl 4.73 | lr 1.25 | clip 18% | gnorm 0.0936811\n"
                       "| epoch 001 | valid on 'valid' subset | valid loss 1.75 | valid ppl 3.37\n"
                       "| epoch 002 | train loss 1.76 | train ppl 3.38 | lr 1.25 | clip 0% | gnorm 0.0558167\n"
                       "| epoch 002 | valid on 'valid' subset | valid loss 1.63 | valid ppl 3.11\n")
    assert [c.code for c in d.root_causes][:2] == ["healthy", "lr_too_high"]
    note = d.root_causes[1]
    assert note.severity == "low" and "falls under it" in note.issue
    # ...but not over a loss that holds where it started (a ten-thousandth down is no fall)
    d = _top(tmp_path, "step 1 lr 100.0 loss 2.3026\nstep 2 lr 100.0 loss 2.3025\n")
    assert d.root_causes[0].code == "lr_too_high" and d.root_causes[0].severity == "high"
    # the same rate over a loss that rises is the fault
    d = _top(tmp_path, "| epoch 001 | train loss 2.24 | lr 1.25\n| epoch 002 | train loss 2.90 | lr 1.25\n")
    assert d.root_causes[0].code == "lr_too_high" and d.root_causes[0].severity == "high"
    # one report, finite, beside a lower validation loss (the excerpt probe's three-line window of #85): a suspect
    # to check, never an alarm
    d = _top(tmp_path, "| epoch 001 | train loss 2.24 | train ppl 4.73 | lr 1.25 | clip 18% | gnorm 0.0936811\n"
                       "| epoch 001 | valid on 'valid' subset | valid loss 1.75 | valid ppl 3.37\n")
    top = d.root_causes[0]
    assert (top.code, top.severity) == ("lr_too_high", "medium") and "suspect" in top.issue
    # ...unless something beside it is not finite (a gradient norm gone NaN is harm)
    d = _top(tmp_path, "| epoch 001 | train loss 2.24 | lr 1.25 | gnorm nan\n")
    assert not any(c.code == "lr_too_high" and c.severity == "medium" for c in d.root_causes)


def test_accuracy_stuck_at_one_value_lists_why(tmp_path):
    lines = "".join(f"Epoch {i}/5\n10/10 - 1s - loss: {0.69 - i * 0.0001:.4f} - accuracy: 0.5000\n"
                    for i in range(1, 6))
    d = _top(tmp_path, lines)
    top = next(c for c in d.root_causes if c.code == "data_pipeline_bug")
    assert "not learning" in top.issue and "labels" in top.fix and "one class" in top.fix
    # the other readings of the same lines stay listed, each saying what in them points to it
    assert {"mode_collapse", "lr_too_high"} <= {c.code for c in d.root_causes[:4]}
    assert d.status == "needs_more_data" and d.tell_apart.startswith("To tell data_pipeline_bug from")


def test_keras_accuracies_named_for_their_metric_class_are_accuracies(tmp_path):
    # a Stack Overflow question (make_circles, Dense(1) with softmax): Keras names the metric for its class,
    # `binary_accuracy`, and it sat at 0.5067 / 0.4400 at every epoch while the loss fell; it read healthy
    lines = "".join(f"Epoch {i}/10\n45/45 [==============================] - 0s 4ms/step - loss: {0.78 - i * 0.01:.4f} "
                    f"- binary_accuracy: 0.5067 - val_loss: {0.75 - i * 0.005:.4f} - val_binary_accuracy: 0.4400\n"
                    for i in range(1, 9))
    d = _top(tmp_path, lines)
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and "val_acc is 0.44 at every one of 8" in top.issue
    for name in ("binary_accuracy", "sparse_categorical_accuracy"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "train.log").write_text(f"Epoch 1/2\n9/9 - loss: 0.5 - {name}: 0.8 - val_loss: 0.6 - "
                                          f"val_{name}: 0.7\n")
        run = load_run(folder)
        assert run.metrics.get("train_acc").values[0] == 0.8 and run.metrics.get("val_acc").values[0] == 0.7


def test_a_loss_that_fell_to_ln2_and_stayed_there_is_at_chance(tmp_path):
    # discuss.pytorch.org/t/72713 (a binary classifier): the training loss falls from 16.4 to 0.6933 and sits at
    # ln(2) for nine epochs; the loss analyzer read "loss fell 96%" and called the run healthy
    losses = [16.43517, 5.16361, 0.69327, 0.69327, 0.69319, 0.69314, 0.69310, 0.69302, 0.69291, 0.69270, 0.69020]
    d = _top(tmp_path, "".join(f"Epoch {i:02}: | Train Loss: {v:.5f} | Val Loss: 0.05330\n"
                               for i, v in enumerate(losses, 1)))
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and "last 9 reports, ln(2)" in top.issue
    # a loss that fell below ln(2) and settled there learned: no chance reading
    d = _top(tmp_path, "".join(f"Epoch {i:02}: | Train Loss: {v:.5f}\n"
                               for i, v in enumerate([16.4, 5.1, 0.41, 0.40, 0.40, 0.40, 0.40, 0.40], 1)))
    assert not any("ln(2)" in c.issue for c in d.root_causes)
    # (review of session 47) a char-RNN converged near ln(4) at 58% accuracy learned: no uniform guess
    losses = [2.6712, 1.9934, 1.6920, 1.5411, 1.4602, 1.4123, 1.3891, 1.3870, 1.3881, 1.3859, 1.3862, 1.3855]
    d = _top(tmp_path, "".join(f"Epoch {i}/12\n172/172 [====] - 9s - loss: {v:.4f} - "
                               f"accuracy: {0.28 + 0.3 * (1 - 0.6 ** i):.4f}\n"
                               for i, v in enumerate(losses, 1)))
    assert not any("ln(4)" in c.issue or "falls at every one" in c.issue for c in d.root_causes)


def test_a_test_accuracy_stuck_at_every_step_lists_why(tmp_path):
    # LSTM-Human-Activity-Recognition #8 (tests/wild lstm-har-tf1-swapped-logits-labels-8, tune half):
    # logits and labels swapped in the loss; a test accuracy printed each iteration never moves
    lines = ("traing iter: 194, test accuracy : 0.18052256107330322, loss : -0.07819265872240067\n"
             "traing iter: 195, test accuracy : 0.18052256107330322, loss : -0.07812502235174179\n"
             "traing iter: 196, test accuracy : 0.18052256107330322, loss : -0.07801615446805954\n"
             "traing iter: 197, test accuracy : 0.18052256107330322, loss : -0.07786814868450165\n"
             "traing iter: 198, test accuracy : 0.18052256107330322, loss : -0.07768278568983078\n")
    d = _top(tmp_path, lines)
    assert d.root_causes[0].code == "data_pipeline_bug" and "test_acc is 0.1805" in d.root_causes[0].issue


def test_an_accuracy_frozen_after_the_loss_turned_nan_is_the_nans_consequence(tmp_path):
    # Keras: accuracy 0 at every epoch after the NaN (tests/wild cnn-sentence-keras-nan-7, tune half)
    lines = "Epoch 1/3\n9595/9595 - 1s - loss: 0.6242 - acc: 0.6295\n" + "".join(
        f"Epoch {i}/3\n9595/9595 - 1s - loss: nan - acc: 0.0000e+00\n" for i in (2, 3, 4))
    d = _top(tmp_path, lines)
    assert _read(d) == ["numerical_instability", "lr_too_high", "data_pipeline_bug"]


@pytest.mark.parametrize("text,line", [
    ("Epoch 3/10 - loss: nan - accuracy: 0.1000\n", "line 1"),
    ("step 40 | loss 2.31 | lr 3e-4\nstep 50 | loss nan | lr 3e-4\n", "line 2"),
])
def test_the_line_where_the_loss_turns_nan_names_its_three_readings(tmp_path, text, line):
    d = _top(tmp_path, text)
    # the overflow is the mechanism and leads; the LR and bad data are the causes the threads settle on;
    # with no gradient norm in the lines, gradients blowing up stay open below them
    assert _read(d) == ["numerical_instability", "lr_too_high", "data_pipeline_bug"]
    assert [c.code for c in d.root_causes if c.analyzer == "rivals"] == ["exploding_gradients"]
    assert all(c.evidence[0].locator == line for c in d.root_causes)
    assert max(c.confidence for c in d.root_causes) < 0.8
    assert "1e-3" in d.tell_apart and d.status == "needs_more_data"


def test_a_loss_that_climbs_before_the_nan_puts_the_lr_first(tmp_path):
    text = "".join(f"iter {i * 100}: loss {v}\n" for i, v in enumerate(["2.10", "2.40", "3.90", "8.70", "nan"], 1))
    d = _top(tmp_path, text)
    assert [c.code for c in d.root_causes[:2]] == ["lr_too_high", "numerical_instability"]
    assert any("from 2.1 to 8.7" in e.text for e in d.root_causes[0].evidence)


def test_a_nan_in_the_validation_loss_alone_points_to_the_evaluation_data(tmp_path):
    text = "".join(f"epoch {e} train_loss {t} val_loss {v}\n" for e, t, v in
                   [(1, "1.52", "1.61"), (2, "1.41", "nan"), (3, "1.36", "nan")])
    d = _top(tmp_path, text)
    assert [c.code for c in d.root_causes] == ["data_pipeline_bug", "numerical_instability"]
    assert any("training loss stays finite" in e.text for e in d.root_causes[0].evidence)


def test_a_loss_growing_epoch_over_epoch_is_a_divergence_with_four_points(tmp_path):
    reports = [("0.4523", "0.8712"), ("0.6134", "0.8101"), ("1.2245", "0.6312"), ("3.5512", "0.2013")]
    text = "".join(f"Epoch {i}/10\n60000/60000 - 5s - loss: {v} - acc: {a}\n" for i, (v, a) in enumerate(reports, 1))
    d = _top(tmp_path, text)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and top.evidence[0].locator == "lines 2-8" and top.confidence < 0.8


def test_a_loss_that_falls_is_not_a_divergence(tmp_path):
    text = "".join(f"Epoch {i}/10\n60000/60000 - 5s - loss: {v}\n" for i, v in
                   enumerate(["3.5512", "1.2245", "0.6134", "0.4523"], 1))
    d = _top(tmp_path, text)
    assert "lr_too_high" not in [c.code for c in d.root_causes] and d.root_causes[0].code == "healthy"


def test_a_loss_near_zero_with_perfect_accuracy_from_the_first_epoch_is_too_good_to_be_true(tmp_path):
    text = ("Epoch 1/5\n - 2s - loss: 1.2e-04 - accuracy: 1.0000 - val_loss: 8.1e-05 - val_accuracy: 1.0000\n"
            "Epoch 2/5\n - 2s - loss: 3.1e-05 - accuracy: 1.0000 - val_loss: 2.0e-05 - val_accuracy: 1.0000\n")
    top = _top(tmp_path, text).root_causes[0]
    assert top.code == "data_pipeline_bug" and "Too good to be true" in top.issue and "leak" in top.fix


def test_a_confusion_matrix_with_one_nonzero_column_is_a_collapse_to_one_class(tmp_path):
    d = _top(tmp_path, "Test accuracy: 0.5\nConfusion matrix:\n[[  0 500]\n [  0 500]]\n", "output.txt")
    top = d.root_causes[0]
    assert top.code == "mode_collapse" and "class 1" in top.issue and top.evidence[0].locator == "lines 3-4"
    assert d.root_causes[1].code == "lr_too_high"             # balanced classes: not the majority class
    imbalanced = _top(tmp_path, "[[  0 900]\n [  0 100]]\n", "output.txt")
    assert [c.code for c in imbalanced.root_causes] == ["mode_collapse"]   # column 1, yet class 0 is the majority


def test_two_bare_rows_of_counts_are_no_confusion_matrix(tmp_path):
    d = _top(tmp_path, "0 5\n0 7\n", "output.txt")
    assert "mode_collapse" not in [c.code for c in d.root_causes]
    named = _top(tmp_path, "Confusion matrix:\n0 5\n0 7\n", "output.txt")
    assert named.root_causes[0].code == "mode_collapse"


def test_a_spread_confusion_matrix_is_no_collapse(tmp_path):
    d = _top(tmp_path, "[[480  20]\n [ 35 465]]\n", "output.txt")
    assert "mode_collapse" not in [c.code for c in d.root_causes]


def test_a_flat_loss_at_chance_lists_the_causes_of_not_learning(tmp_path):
    text = "".join(f"[{e}, {i * 2000:5d}] loss: {v}\n" for e, i, v in
                   [(1, 1, "2.304"), (1, 2, "2.303"), (1, 3, "2.304"), (2, 1, "2.303"), (2, 2, "2.304")])
    d = _top(tmp_path, text)
    codes = [c.code for c in d.root_causes]
    assert codes[0] == "data_pipeline_bug" and "ln(10)" in d.root_causes[0].issue and "lr_too_high" in codes[:3]


def test_a_nan_while_the_warm_up_still_raises_the_lr_puts_the_lr_first(tmp_path):
    # github.com/facebookresearch/maskrcnn-benchmark/issues/721 (settled: the LR): NaN at iter 40 of the warm-up
    head = "2019-04-27 12:59:06,432 maskrcnn_benchmark.trainer INFO: eta: 6:07:52  "
    text = (head + "iter: 20  loss: 5.6908 (5.6908)  loss_mask: 3.5805 (3.5805)  time: 0.7274 (0.7362)  lr: 0.001793\n"
            + head + "iter: 40  loss: nan (nan)  loss_mask: nan (nan)  time: 0.7273 (0.7264)  lr: 0.001927\n"
            + head + "iter: 60  loss: nan (nan)  loss_mask: nan (nan)  time: 0.6303 (0.6973)  lr: 0.002060\n")
    d = _top(tmp_path, text)
    assert d.root_causes[0].code == "lr_too_high"
    assert any("warm-up" in e.text for e in d.root_causes[0].evidence)
    # the same NaN under an LR that holds still: the overflow reading leads
    (tmp_path / "s").mkdir()
    steady = text.replace("0.001793", "0.002").replace("0.001927", "0.002").replace("0.002060", "0.002")
    assert _top(tmp_path / "s", steady).root_causes[0].code == "numerical_instability"


def test_a_policy_gradient_loss_at_zero_beside_its_rewards_is_no_fault(tmp_path):
    # github.com/huggingface/open-r1/issues/239 (maintainer: GRPO's loss is 0 at the start by construction)
    rows = [("0.0", "0.95", "0.896", "8.5e-05"), ("0.0", "0.49", "0.711", "0.0001")]
    text = "".join(f"{{'loss': {lo}, 'grad_norm': {g}, 'learning_rate': 5.5e-07, 'reward': {r}, 'kl': {k}, "
                   f"'epoch': 0.0}}\n" for lo, g, r, k in rows)
    assert all(c.code == "healthy" for c in _top(tmp_path, text).root_causes)
    # without the rewards, a loss of exactly 0 is nothing being scored
    (tmp_path / "s").mkdir()
    plain = "".join(f"{{'loss': {lo}, 'grad_norm': {g}, 'learning_rate': 5.5e-07, 'epoch': 0.0}}\n"
                    for lo, g, _, _ in rows)
    assert _top(tmp_path / "s", plain).root_causes[0].code == "data_pipeline_bug"


def test_a_nan_that_is_a_word_of_a_harmless_message_is_no_value(tmp_path):
    # github.com/allenai/allennlp/issues/3116: tensorboardX's warning, quoted in the reporter's sentence and
    # printed alone; `Warning: NaN` reads like a value named `warning`, but it is the message's words
    text = ('When I am training my model, the message "Warning: NaN or Inf found in input tensor" is output to the '
            "console.\n\nWarning: NaN or Inf found in input tensor.\n")
    d = _top(tmp_path, text, "output.txt")
    assert d.root_causes[0].code == "healthy" and all(c.severity in ("info", "low") for c in d.root_causes)
    # a NaN printed under an unknown name on a line of its own is still a value
    (tmp_path / "v").mkdir()
    assert _top(tmp_path / "v", "lb=nan\nlb=nan\n", "output.txt").root_causes[0].code != "healthy"


def test_a_loss_held_still_over_whole_epochs_is_not_being_trained(tmp_path):
    # github.com/pytorch/pytorch/issues/2293 (a CIFAR run whose LR was 0): every epoch's mean loss within
    # 0.05% of 2.331, 1.2% off ln(10), so neither the chance nor the exact-repeat reading fires
    losses = ["2.33110598225", "2.33058553279", "2.33120793699", "2.33072890223", "2.33064097578",
              "2.33016999603", "2.33080320681", "2.33087820165", "2.33066928387"]
    text = "".join(f"[TRAIN Epoch {e}] Loss: {v}, Error: 44996/50000\n" for e, v in enumerate(losses, 1))
    d = _top(tmp_path, text)
    assert d.root_causes[0].code == "no_parameter_updates" and "over 9 epochs" in d.root_causes[0].issue
    assert "lr_too_low" in [c.code for c in d.root_causes[:3]]
    # a loss that still falls 0.5% an epoch is being trained, however slowly
    falling = "".join(f"[TRAIN Epoch {e}] Loss: {2.33 * 0.995 ** e:.5f}\n" for e in range(1, 10))
    (tmp_path / "f").mkdir(), (tmp_path / "s").mkdir()
    assert "no_parameter_updates" not in [c.code for c in _top(tmp_path / "f", falling).root_causes]
    # and four epochs are too few to call it
    short = "".join(f"[TRAIN Epoch {e}] Loss: {v}\n" for e, v in enumerate(losses[:4], 1))
    assert "no_parameter_updates" not in [c.code for c in _top(tmp_path / "s", short).root_causes]


@pytest.mark.parametrize("text,code", [
    ("Epoch 2/10 - loss: nan - accuracy: 0.1000\n", "numerical_instability"),
    ("RuntimeError: CUDA error: out of memory\n", "out_of_memory"),
    ("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, "
     "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.\n", "distributed_failure"),
    ("epoch 1 loss 0.52\nepoch 2 loss 0.61\nepoch 3 loss 0.83\nepoch 4 loss 1.40\n", "lr_too_high"),
])
def test_no_short_excerpt_with_a_fault_gets_no_cause(tmp_path, text, code):
    d = _top(tmp_path, text)
    assert d.root_causes and d.root_causes[0].code == code


def test_the_question_is_a_symptom_never_evidence(tmp_path):
    (tmp_path / "train.log").write_text("Starting training\nloading data from /data/train\n")
    d, _ = diagnose(tmp_path, ["the loss is nan and it diverged, out of memory?"])
    assert d.root_causes == [] and d.status == "needs_more_data" and d.tell_apart == ""


def test_a_loss_that_drops_to_exactly_zero_mid_run_is_the_precision_then_nothing_scored(tmp_path):
    # the threads with a real loss falling to exactly 0 settle the precision: fp16 LoRA SFT (LlamaFactory #506,
    # one report is enough after 2.7), an NPU run (#5627), a 1.67 then 0.0 (cut-online-alignment #2), tune half
    text = "".join(f"{{'loss': {v}, 'learning_rate': 4.9e-05, 'epoch': {e}}}\n" for v, e in
                   [("2.1234", 0.1), ("0.0", 0.2), ("0.0", 0.3), ("0.0", 0.4)])
    d = _top(tmp_path, text)
    assert [c.code for c in d.root_causes[:2]] == ["numerical_instability", "data_pipeline_bug"]
    assert "-100" in d.root_causes[1].fix and d.status == "needs_more_data"
    one = ('{"current_steps": 4440, "loss": 2.7044, "learning_rate": 2.966e-05, "epoch": 1.37}\n'
           '{"current_steps": 4450, "loss": 0.0, "learning_rate": 2.966e-05, "epoch": 1.37}\n')
    assert _top(tmp_path, one).root_causes[0].code == "numerical_instability"
    # ...but one printed 0.0 after a loss already small is rounding
    assert "numerical_instability" not in [c.code for c in _top(tmp_path, one.replace("2.7044", "0.3")).root_causes]


def test_a_loss_at_zero_from_the_first_report_may_be_a_loop_that_ran_no_batch(tmp_path):
    # pytorch-tabnet #537 (tests/wild, tune half): drop_last=True dropped the only batch
    d = _top(tmp_path, "".join(f"epoch {e} | loss: 0.0     |  0:00:00s\n" for e in range(85, 100)))
    codes = [c.code for c in d.root_causes]
    assert codes[:3] == ["data_pipeline_bug", "numerical_instability", "no_parameter_updates"]
    assert "drop_last" in d.root_causes[2].fix
    # a gradient norm printed, or an epoch counted in fractions, says batches ran
    hf = "".join(f"{{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1.8e-05, 'epoch': {e / 100}}}\n"
                 for e in range(5, 13))
    assert "no_parameter_updates" not in [c.code for c in _top(tmp_path, hf).root_causes]
    # a loss that was non-zero first is no empty loop
    d = _top(tmp_path, "epoch 1 loss 2.1234\n" + "".join(f"epoch {e} loss 0.0\n" for e in range(2, 6)))
    assert "no_parameter_updates" not in [c.code for c in d.root_causes]


def test_one_caption_for_every_video_is_a_collapse_and_then_the_inputs(tmp_path):
    # Video-Cap #3 (tests/wild, tune half): broken OpenCV features gave every video the same caption
    text = "".join(f"....\nvideo => {v}\ngenerated_sentence => a man is playing a flute\nreference => {r}\n"
                   for v, r in [("rl1rVk_xIOs_1_16.avi", "Children are dancing."),
                                ("dfOuTx66bJU_34_39.avi", "A man walking down the street turns around."),
                                ("f9Won2JpOEU_60_80.avi", "A cat is laying down licking it's paw.")])
    d = _top(tmp_path, text, "output.txt")
    assert [c.code for c in d.root_causes[:2]] == ["mode_collapse", "data_pipeline_bug"]
    assert "Children are dancing." in d.root_causes[0].evidence[1].text
    # the same captions under the same references, or an output folder printed per sample, are no collapse
    same = text.replace("Children are dancing.", "x").replace("A man walking down the street turns around.", "x")
    d = _top(tmp_path, same.replace("A cat is laying down licking it's paw.", "x"), "output.txt")
    assert "mode_collapse" not in [c.code for c in d.root_causes]
    folders = "".join(f"input file: img_{i}.png\noutput dir: runs/exp1\noutput: runs/exp1/pred\n" for i in range(6))
    d = _top(tmp_path, folders, "output.txt")
    assert "mode_collapse" not in [c.code for c in d.root_causes]


def test_an_evaluation_that_is_too_good_is_read_against_its_own_loss(tmp_path):
    # PaddleSeg #372 (tests/wild, tune half): masks of 0/255 for classes 0/1, so every pixel is background
    text = "".join(f"[EVAL]step={i} loss=0.0002{i} acc=1.0000 IoU=0.5000 step/sec=2.59 | ETA 00:00:01\n"
                   for i in range(1, 6)) + "[EVAL]#image=18 acc=1.0000 IoU=0.5000\n"
    d = _top(tmp_path, text)
    assert d.root_causes[0].code == "data_pipeline_bug" and "Too good" in d.root_causes[0].issue


@pytest.mark.parametrize("text", [
    "".join(f"File: clip_00{i}.wav\nSample rate: 16000\nChannels: 1\n" for i in range(6)),      # a dataset listing
    "".join(f"image: dog_00{i}.jpg\nprediction: dog\n" for i in range(6)),                       # one class, no label
    "".join(f"input: sample_00{i}.wav\noutput: saved\n" for i in range(6)),                     # a status
    "".join(f"epoch {i} step {i * 100} loss {3.0 - 0.25 * i:.2f}\nInput: dev sentence {i}\nOutput: written to disk\n"
            for i in range(8)),
])
def test_a_field_printed_the_same_beside_no_true_answers_is_no_collapse(tmp_path, text):
    d = _top(tmp_path, text, "output.txt")
    assert "mode_collapse" not in [c.code for c in d.root_causes]


def test_a_loss_that_creeps_down_to_a_printed_zero_converged(tmp_path):
    text = "".join(f"epoch {i} loss {v}\n" for i, v in enumerate(["0.5000", "0.0200", "0.0010", "0.0000", "0.0000"], 1))
    d = _top(tmp_path, text)
    assert "data_pipeline_bug" not in [c.code for c in d.root_causes]


def test_an_sgd_sized_lr_is_no_evidence_when_the_optimizer_is_unknown(tmp_path):
    # mmdet's default SGD LR of 0.02 is above Adam's range, not above every optimizer's
    text = ("Epoch [1][50/1000]\tlr: 2.000e-02, loss_cls: 1.2301, loss: 2.4348\n"
            "Epoch [1][100/1000]\tlr: 2.000e-02, loss_cls: nan, loss: nan\n")
    d = _top(tmp_path, text)
    lr = next(c for c in d.root_causes if c.code == "lr_too_high")
    assert lr.confidence < 0.8 and not any(e.text.startswith("lr") for e in lr.evidence)


def test_a_loss_that_explodes_in_two_reports_is_a_divergence(tmp_path):
    d = _top(tmp_path, "iter 10 loss 2.31\niter 20 loss 8.9e+07\n")
    assert d.root_causes[0].code == "lr_too_high" and "exploded" in d.root_causes[0].evidence[0].text



def test_a_gradient_norm_growing_100x_with_the_loss_is_an_explosion(tmp_path):
    text = "".join(f"step {s} loss {loss} grad_norm {g}\n" for s, loss, g in
                   [(10, 2.3, 1.2), (20, 2.2, 15.4), (30, 2.6, 480.1), (40, 7.9, 25123.0)])
    assert _top(tmp_path, text).root_causes[0].code == "exploding_gradients"


def test_a_gradient_norm_growing_while_the_loss_falls_is_a_warm_up(tmp_path):
    text = "".join(f"step {s} loss {loss} grad_norm {g}\n" for s, loss, g in
                   [(10, 2.3, 0.01), (20, 1.9, 0.2), (30, 1.5, 0.9), (40, 1.2, 1.4)])
    d = _top(tmp_path, text)
    assert "exploding_gradients" not in [c.code for c in d.root_causes] and d.root_causes[0].code == "healthy"


def test_a_short_spike_that_comes_back(tmp_path):
    losses = ["1.20", "1.05", "9.80", "0.98", "0.93", "0.90"]
    text = "".join(f"step {i * 10} loss {v}\n" for i, v in enumerate(losses, 1))
    top = _top(tmp_path, text).root_causes[0]
    assert top.code == "loss_spikes" and top.evidence[0].locator == "line 3"


@pytest.mark.parametrize("losses", [
    # tests/wild multi-agent-imitation-overfit-owner-15: epochs 0-100 of a loss that starts at 424
    ["424.64", "13.52", "3.62", "3.08", "2.90", "2.79", "2.70", "2.63", "2.57", "2.50", "2.43"],
    # the same shape, any scale: a fast first fall through one report, then a slow one
    [f"{80 * 0.04 ** min(i, 2) * 0.97 ** i:.4f}" for i in range(8)],
])
def test_a_fast_early_fall_is_no_spike(tmp_path, losses):
    text = "".join(f"Epoch {i * 10} | loss: {v}\n" for i, v in enumerate(losses))
    assert "loss_spikes" not in [c.code for c in _top(tmp_path, text).root_causes]


def test_a_short_curve_that_falls_then_climbs_at_every_report_diverged(tmp_path):
    text = "".join(f"epoch {i} loss {v}\n" for i, v in enumerate(["1.00", "0.80", "0.60", "0.90", "1.50", "2.40"], 1))
    top = _top(tmp_path, text).root_causes[0]
    assert top.code == "lr_too_high" and "climbed at each of the last 3 reports" in top.issue
    noisy = "".join(f"epoch {i} loss {v}\n" for i, v in enumerate(["1.00", "0.80", "0.60", "0.70", "0.62", "0.58"], 1))
    assert "lr_too_high" not in [c.code for c in _top(tmp_path, noisy).root_causes]


def test_three_epochs_of_a_rising_validation_loss_under_a_falling_training_loss_is_overfitting(tmp_path):
    text = "".join(f"epoch {e} train_loss {t} val_loss {v}\n" for e, t, v in
                   [(1, "0.40", "0.50"), (2, "0.30", "0.60"), (3, "0.20", "0.80")])
    assert _top(tmp_path, text).root_causes[0].code == "overfitting"


def test_a_low_loss_that_settled_converged(tmp_path):
    text = "".join(f"epoch {i} loss {v}\n" for i, v in enumerate(["0.0512", "0.0511", "0.0510", "0.0511"], 1))
    assert "data_pipeline_bug" not in [c.code for c in _top(tmp_path, text).root_causes]


def test_a_loss_at_chance_under_an_lr_far_above_its_optimizers_range_lists_the_lr(tmp_path):
    (tmp_path / "config.yaml").write_text("optimizer: adam\nlr: 0.5\n")
    wobble = [0.004, -0.003, 0.002, -0.004, 0.001]
    text = "".join(f"step {i * 10} loss {2.3026 + wobble[i % 5]:.4f} lr 0.5\n" for i in range(30))
    d = _top(tmp_path, text)
    codes = [c.code for c in d.root_causes]
    # a rate fifty times its optimizer's range explains the pinned loss by itself: it leads, and the
    # data bug stays listed as the alternative with its own evidence (the loss at ln(10))
    assert codes[0] == "lr_too_high" and "data_pipeline_bug" in codes[1:3]
    lr = next(c for c in d.root_causes if c.code == "lr_too_high")
    assert any(e.text.endswith("lr 0.5") for e in lr.evidence) and "50x" in lr.issue
    data = next(c for c in d.root_causes if c.code == "data_pipeline_bug")
    assert any("ln(10)" in e.text for e in data.evidence)


def test_an_accuracy_hovering_at_one_half_is_a_guess(tmp_path):
    text = "epoch 0, loss 0.6941, acc 0.5012\nepoch 1, loss 0.6925, acc 0.4988\nepoch 2, loss 0.6938, acc 0.5000\n"
    top = _top(tmp_path, text).root_causes[0]
    assert top.code == "data_pipeline_bug" and "1/2" in top.issue


CAFFE_OK = """I0815 22:23:39.197793 52129 solver.cpp:232] Iteration 2380, loss = 2.04238
I0815 22:23:39.198057 52129 solver.cpp:631] Iteration 2380, lr = 0.001
I0815 22:26:28.971088 52129 solver.cpp:232] Iteration 2400, loss = 2.00524
I0815 22:26:28.971369 52129 solver.cpp:631] Iteration 2400, lr = 0.001
"""


def test_a_short_paste_with_no_fault_in_its_numbers_is_healthy_modestly(tmp_path):
    # TSN #2 (tests/wild, tune half): a maintainer called this slow-looking loss normal
    d = _top(tmp_path, CAFFE_OK)
    top = d.root_causes[0]
    # modestly: four numbers are no proof of health (the calibrated confidence stays well under 0.8)
    assert top.code == "healthy" and d.status == "no_failure_found" and top.confidence <= 0.6
    assert "train_loss fell from 2.042 to 2.005" in [e.text for e in top.evidence]


@pytest.mark.parametrize("fault", [
    "I0815 22:29:10.000000 52129 solver.cpp:232] Iteration 2420, loss = nan\n",
    "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    step()\nValueError: bad\n",
])
def test_a_healthy_reading_never_hides_a_fault(tmp_path, fault):
    d = _top(tmp_path, CAFFE_OK + fault)
    assert "healthy" not in [c.code for c in d.root_causes] and d.status != "no_failure_found"


def test_a_detector_validated_on_images_with_no_labels(tmp_path):
    # multiyolov5 #7 (tests/wild, tune half): "reading the log, the labels were not loaded"
    d = _top(tmp_path, "    39/999     5.31G    0.1613   0.03633         0    0.1977   0.02364         9       832\n"
                       "               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95\n"
                       "                 all          10           0           0           0           0           0\n")
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and top.severity == "high" and top.evidence[0].locator == "line 3"
    ok = _top(tmp_path, "                 all        5000       36335       0.672       0.541"
                        "       0.586        0.37\n")
    assert "data_pipeline_bug" not in [c.code for c in ok.root_causes]


@pytest.mark.parametrize("losses", [(0.69, 0.95), (0.69, 0.70, 0.72, 0.80)])
def test_a_short_loss_that_goes_up_at_every_report_is_never_no_cause(tmp_path, losses):
    d = _top(tmp_path, "".join(f"Epoch {i}/10 loss: {v}\n" for i, v in enumerate(losses, 1)))
    assert _read(d) == ["lr_too_high"] and d.root_causes[0].confidence < 0.5
    assert [c.code for c in d.root_causes][1:] == ["exploding_gradients"]      # no grad norm to exclude it
    assert d.tell_apart


def test_a_longer_rise_is_read_more_surely_than_two_reports(tmp_path):
    confidence = {}
    for losses in [(0.69, 0.95), (0.69, 0.70, 0.72, 0.80)]:
        (tmp_path / str(len(losses))).mkdir()
        text = "".join(f"Epoch {i}/10 loss: {v}\n" for i, v in enumerate(losses, 1))
        confidence[len(losses)] = _top(tmp_path / str(len(losses)), text).root_causes[0].confidence
    assert confidence[4] >= confidence[2]


def test_a_keras_csvlogger_file_under_a_log_name_is_read_as_a_table(tmp_path):
    # Keras' CSVLogger('training.log') (keras.io/api/callbacks/csv_logger/) writes a CSV under a log's
    # name; these rows are the MNIST example's as printed in a public Keras callbacks tutorial
    d = _top(tmp_path, "epoch,acc,loss,val_acc,val_loss\n"
                       "0,0.789916666667,0.858214442666,0.8796,0.464201840687\n"
                       "1,0.88625,0.424075638851,0.9025,0.361021899486\n"
                       "2,0.900333333333,0.357753000212,0.9127,0.321085527372\n"
                       "3,0.909233333333,0.324181920926,0.9206,0.295257022667\n"
                       "4,0.9154,0.301182911809,0.9231,0.278953828871\n", name="training.log")
    assert [(a["path"], a["kind"], a["format"]) for a in d.run["artifacts"]] == [("training.log", "metrics", "csv")]
    assert d.root_causes[0].code == "healthy"


def test_a_tab_separated_table_under_a_log_name_is_read_as_a_table(tmp_path):
    # a print loop's table committed to a public repository (an optical-flow trainer's header
    # `train_loss<TAB>train_EPE<TAB>EPE`, then one row per epoch); values ours: falling, then rising
    falling = [2.5 * 0.9 ** e for e in range(12)]
    rows = "".join(f"{v:.4f}\t{3 * v:.3f}\t{3.3 * v:.3f}\n" for v in falling)
    (tmp_path / "a").mkdir()
    d = _top(tmp_path / "a", "train_loss\ttrain_EPE\tEPE\n" + rows)
    assert [(a["kind"], a["format"]) for a in d.run["artifacts"]] == [("metrics", "csv")]
    assert d.root_causes[0].code == "healthy"
    assert "indices 0-11" in d.root_causes[0].evidence[0].text
    (tmp_path / "b").mkdir()
    rising = "".join(f"{v:.4f}\t{3 * v:.3f}\t{3.3 * v:.3f}\n" for v in falling[::-1])
    d = _top(tmp_path / "b", "train_loss\ttrain_EPE\tEPE\n" + rising)
    assert d.root_causes[0].code == "lr_too_high" and d.root_causes[0].severity in ("critical", "high")
    # ...but a table that goes on into a traceback is a log: the crash is read (it was lost as a table's)
    (tmp_path / "c").mkdir()
    d = _top(tmp_path / "c", "train_loss\ttrain_EPE\tEPE\n" + rows + "Traceback (most recent call last):\n"
             '  File "train.py", line 3, in <module>\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n')
    assert d.root_causes[0].code == "out_of_memory"


def test_a_log_whose_first_line_has_commas_is_still_a_log(tmp_path):
    d = _top(tmp_path, "loss, accuracy and lr are printed below\nepoch 1 loss 0.5\n")
    assert [(a["kind"], a["format"]) for a in d.run["artifacts"]] == [("log", "plain_text")]


# Excerpts as posted in public threads (not in tests/wild): each must give the answer its lines support.
REAL_EXCERPTS = [
    # github.com/karpathy/nanoGPT/issues/215: the one line where the loss turns NaN (fp16 on a V100)
    ("2023-03-22 09:32:41 iter 3000: loss 4.2490, time 35392.33ms, mfu 13.85%\n"
     "2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%\n", {"numerical_instability", "lr_too_high"}),
    # github.com/keras-team/keras/issues/21: four epochs of a loss that grows
    ("".join(f"Epoch {e}\n61878/61878 [==============================] - 5s - loss: {v}     \n"
             for e, v in [(9, "0.7407"), (10, "13.3614"), (11, "26.6396"), (12, "26.6453")]), {"lr_too_high"}),
    # github.com/bigscience-workshop/Megatron-DeepSpeed/issues/396: a gradient norm that is NaN, no loss printed
    (" iteration     5426/  250000 | consumed samples:        43408 | elapsed time per iteration (ms): 4247.9 | "
     "learning rate: 2.999E-04 | global batch size:     8 | loss scale: 1.0 | grad norm: nan | number of skipped "
     "iterations:   0 |\n", {"numerical_instability", "lr_too_high"}),
    # github.com/jiecaoyu/pytorch-nin-cifar10/issues/1: the loss pinned at ln(10) and accuracy at 10% every epoch
    ("".join(f"Train Epoch: {e} [0/50000 (0%)]\tLoss: 2.302585\tLR: 0.1\n"
             f"Train Epoch: {e} [12800/50000 (26%)]\tLoss: 2.302585\tLR: 0.1\n\n"
             "Test set: Average loss: 2.9473, Accuracy: 1000/10000 (10.00%)\n\n" for e in (2, 3)),
     {"data_pipeline_bug", "lr_too_high", "no_parameter_updates"}),
]


@pytest.mark.parametrize("text,codes", REAL_EXCERPTS, ids=["nan-line", "rising-4", "grad-norm-nan", "stuck-chance"])
def test_a_real_short_paste_gets_the_answer_its_lines_support(tmp_path, text, codes):
    d = _top(tmp_path, text, "output.txt")
    assert d.root_causes and d.root_causes[0].code in codes, [c.code for c in d.root_causes]
    if d.root_causes[0].confidence < 0.8:      # a differential: ranked readings and what would settle them
        assert d.status == "needs_more_data" and d.tell_apart


# github.com/yitu-opensource/T2T-ViT/issues/26: timm's summary rows (epoch, train loss, eval loss, top-1,
# top-5) pasted without their header; the training loss turns nan at epoch 209
T2T_ROWS = ("206,4.359750032424927,4.154387146377563,7.619999943542481,24.040000201416017\n"
            "207,4.37085485458374,4.158743778991699,7.820000009155273,24.019999743652345\n"
            "208,4.367704391479492,4.161868629837036,7.62000002746582,23.86000018310547\n"
            "209,nan,4.160795520019532,7.7200000274658205,24.01999976196289\n"
            "210,nan,nan,1.0,5.0\n")


@pytest.mark.parametrize("name", ["train.log", "summary.csv"])
def test_a_headerless_table_whose_column_turns_nan_names_the_nan(tmp_path, name):
    d = _top(tmp_path, T2T_ROWS, name=name)
    codes = [c.code for c in d.root_causes]
    assert codes[0] == "numerical_instability" and {"lr_too_high", "data_pipeline_bug"} <= set(codes[:3])
    top = d.root_causes[0]
    assert top.confidence < 0.8 and "column_2" in top.issue and "209" in top.issue
    assert "line 4" in {e.locator for e in top.evidence}


HEALTHY = "".join(f"epoch {i} loss {1 / (i + 1):.4f}\n" for i in range(5))


@pytest.mark.parametrize("rows", [4, 6])
def test_a_missing_cell_in_a_numbered_listing_is_no_nan(tmp_path, rows):
    # a per-class precision/recall listing after a healthy log: a NaN cell followed by finite ones is a
    # class with no sample, not a computation that overflowed (4 rows: no counted table at all)
    listing = "".join(f"{k} 0.{90 - k} {'nan' if k == 1 else f'0.{80 + k}'}\n" for k in range(rows))
    d = _top(tmp_path, HEALTHY + "per-class precision recall:\n" + listing)
    assert "numerical_instability" not in [c.code for c in d.root_causes]


@pytest.mark.parametrize("values", [
    [2.10, 1.50, 1.10, 0.90, 0.80, 0.75, 0.74, 0.73, 0.74, 0.74, 0.74, 0.74],    # converged, 2 decimals
    [0.005123, 0.002201, 0.000913, 0.000204, 0.000312, 0.000301, 0.000325, 0.000309],   # still moving
])
def test_a_loss_that_converged_or_still_moves_is_not_frozen(tmp_path, values):
    d = _top(tmp_path, "".join(f"Epoch {i}/{len(values)} - loss: {v} - acc: 0.5\n" for i, v in enumerate(values, 1)))
    assert not {"no_parameter_updates", "dead_relu"} & {c.code for c in d.root_causes}


def test_rows_of_another_loop_keep_out_of_the_named_rows(tmp_path):
    # an image size printed bare has the width of `train_on_batch`'s values: not the loss
    (tmp_path / "train.log").write_text("Using image size\n" + "224 224\n" * 3 + "Epoch 1/3\n"
                                        "loss: 0.6931 - acc: 0.5000\n0.6931 0.5\n0.5012 0.7500\n0.4011 0.8125\n"
                                        "loss: 0.3000 - acc: 0.9000\n")
    loss = load_run(tmp_path).metrics.get("train_loss")
    assert loss is not None and len(loss) == 5 and float(loss.values.max()) < 1


def test_an_accuracy_above_100_names_no_row(tmp_path):
    (tmp_path / "train.log").write_text("loss: 0.6931 - acc: 0.5000\n0.6931 0.5\n0.5012 140\n0.4011 160\n")
    assert len(load_run(tmp_path).metrics.get("train_loss")) == 1


def test_two_counted_tables_keep_their_own_columns(tmp_path):
    first = "".join(f"{i} 0.{50 - i} 0.4{i}\n" for i in range(1, 6))
    second = "".join(f"{i} 0.9 {'nan' if i >= 3 else '0.8'} 0.7\n" for i in range(1, 6))
    (tmp_path / "train.log").write_text(first + "other\n" + second)
    metrics = load_run(tmp_path).metrics
    assert {"column_2", "column_3", "column_2_table2", "column_3_table2", "column_4_table2"} <= set(metrics.names())
    assert np.isnan(metrics.get("column_3_table2").values[-1]) and np.isfinite(metrics.get("column_3").values).all()


def test_bare_rows_of_whole_numbers_are_no_metrics_table(tmp_path):
    # a counter, then counts: a confusion matrix or a histogram, not metrics with a NaN to read
    (tmp_path / "train.log").write_text("0 5 0 0\n1 3 0 2\n2 4 1 0\n3 6 0 1\n4 2 0 1\nloss: 0.5\n")
    assert load_run(tmp_path).metrics.names() == ["train_loss"]
    # the same rows with a fraction among them are a table
    (tmp_path / "train.log").write_text("0 5 0.5 0\n1 3 0 2\n2 4 1 0\n3 6 0 1\n4 2 0 1\nloss: 0.5\n")
    assert "column_3" in load_run(tmp_path).metrics.names()


# github.com/keras-team/keras/issues/255: `x / 255` on an int array zeroed every pixel; the values of
# `train_on_batch` printed bare, once by the progress bar with their names
KERAS_FROZEN = ("0.2355973707751222 0.96875\n" + "17.269388197455335 0.5\n" * 4
                + "32/32 [==============================] - 5s - loss: 17.2694 - acc.: 0.5000\n"
                + "17.269388197455335 0.5\n" * 2)


def test_a_loss_frozen_to_the_last_digit_lists_why_nothing_is_learned(tmp_path):
    d = _top(tmp_path, KERAS_FROZEN)
    codes = [c.code for c in d.root_causes]
    assert codes[0] == "data_pipeline_bug" and "healthy" not in codes
    assert {"no_parameter_updates", "dead_relu", "lr_too_high"} <= set(codes[:4])
    top = d.root_causes[0]
    assert top.confidence < 0.8 and "17.27" in top.issue and "lines 2-8" in {e.locator for e in top.evidence}


def test_bare_rows_without_a_named_line_to_name_them_stay_unread(tmp_path):
    d = _top(tmp_path, "0.2355973707751222 0.96875\n" + "17.269388197455335 0.5\n" * 4)
    assert d.root_causes == [] or d.root_causes[0].code != "data_pipeline_bug"


def test_a_loss_that_falls_to_a_printed_level_and_stays_converged(tmp_path):
    lines = [0.9, 0.4, 0.1, 0.0123, 0.0123, 0.0123, 0.0123, 0.0123]
    d = _top(tmp_path, "".join(f"Epoch {i}/8\n10/10 - 1s - loss: {v:.4f} - accuracy: 0.99\n"
                               for i, v in enumerate(lines, 1)))
    assert not {"no_parameter_updates", "dead_relu"} & {c.code for c in d.root_causes}


# github.com/apache/mxnet/issues/2308: batch size 1 under the example's LR; accuracy at chance after 10 epochs
MXNET_CHANCE = ("2016-06-01 20:17:57,235 Node[0] Epoch[9] Validation-accuracy=0.097400\n"
                "2016-06-01 20:17:57,235 Node[0] Epoch[9] Validation-top_k_accuracy_5=0.483200\n"
                "2016-06-01 20:17:57,235 Node[0] Epoch[9] Validation-top_k_accuracy_10=1.000000\n"
                "2016-06-01 20:17:57,236 Node[0] Epoch[9] Validation-top_k_accuracy_20=1.000000\n")


def test_an_accuracy_at_chance_for_the_class_count_its_top_k_give_is_a_guess(tmp_path):
    d = _top(tmp_path, MXNET_CHANCE)
    codes = [c.code for c in d.root_causes]
    assert codes[:3] == ["data_pipeline_bug", "mode_collapse", "lr_too_high"]
    top = d.root_causes[0]
    assert "chance for 10 classes" in top.issue and {"line 1", "line 3"} <= {e.locator for e in top.evidence}


@pytest.mark.parametrize("acc,top5", [("0.912300", "0.483200"), ("0.097400", "1.000000")])
def test_top_k_that_do_not_pin_the_class_count_to_chance_are_no_guess(tmp_path, acc, top5):
    # a learned top-1; or only a top-5 of 1.0 (at most 5 classes, but no lower bound: 0.0974 is no 1/K there)
    text = MXNET_CHANCE.replace("0.097400", acc).replace("0.483200", top5)
    d = _top(tmp_path, text)
    assert "mode_collapse" not in [c.code for c in d.root_causes]


# the form rasbt/deeplearning-models' notebooks print after each epoch (`Epoch: %03d/%03d | Train: %.3f%%`); a
# previous probe's paste at chance for 10 classes (the thread itself was not found again: the form is public)
RASBT_CHANCE = ("Epoch: 001/010 | Train: 10.000% | Loss: 2.303\nTime elapsed: 0.25 min\n"
                "Epoch: 002/010 | Train: 10.000% | Loss: 2.303\nTime elapsed: 0.50 min\n")


def test_a_split_accuracy_at_chance_beside_a_loss_at_ln_k_is_a_guess(tmp_path):
    d = _top(tmp_path, RASBT_CHANCE)
    assert [c.code for c in d.root_causes][:3] == ["data_pipeline_bug", "mode_collapse", "lr_too_high"]
    assert "chance for 10 classes" in d.root_causes[0].issue and "ln(10)" in d.root_causes[0].issue


def test_a_learning_split_accuracy_and_a_data_split_are_no_guess(tmp_path):
    healthy = RASBT_CHANCE.replace("10.000%", "79.130%").replace("Loss: 2.303", "Loss: 0.612")
    assert "healthy" == _top(tmp_path, healthy).root_causes[0].code
    (tmp_path / "train.log").write_text("Train: 80% Test: 20%\nEpoch 1 Train:  45%|####  | 450/1000\n")
    assert "train_acc" not in load_run(tmp_path).metrics.names()


@pytest.mark.parametrize("text", [
    # tests/wild adgm-batchnorm-nan-epoch133-1: the lower bound `lb` turns NaN while the test error reads as an
    # accuracy that "rose"
    "epoch=0131; time=115.93; lb=196.7493; lb-labeled=54.7495; test=2.53%; validation=2.52%;\n"
    "epoch=0132; time=115.77; lb=196.7117; lb-labeled=54.7303; test=2.48%; validation=2.51%;\n"
    "epoch=0133; time=115.43; lb=nan; lb-labeled=nan; test=90.20%; validation=90.09%;\n",
    # the same mechanism under other names, separators and lengths: a long run whose `elbo` overflows
    "".join(f"iter {i}: elbo: {-300 + i:.2f}, kl_term: {3 + i / 100:.3f}, val_acc: {0.5 + i / 200:.3f}\n"
            for i in range(60)) + "iter 60: elbo: -inf, kl_term: nan, val_acc: 0.811\n",
    # tests/wild namas-err-nan-lr-21: Lua Torch prints the training error and its value apart by blanks
    "err     nan\nNaN\n{\n  1 : CudaTensor - size: 64x291\n  2 : CudaTensor - size: 64x291\n}\nerr     nan\n",
])
def test_a_nan_under_a_name_no_alias_knows_is_never_healthy(tmp_path, text):
    d = _top(tmp_path, text)
    assert d.root_causes[0].code == "numerical_instability", d.root_causes[0]
    assert all(c.code != "healthy" for c in d.root_causes)
    assert d.root_causes[0].evidence[0].locator.startswith("line")


@pytest.mark.parametrize("text", [
    # tests/wild namas-err-nan-lr-21 cut where a paste often starts: at Lua's `{` table of tensors (no JSON)
    "{\n  1 : CudaTensor - size: 64x291\n  2 : CudaTensor - size: 64x291\n  3 : CudaTensor - size: 64x5\n}\n"
    "err     nan\nNaN\n",
    # ...behind a timestamp and a rank prefix the scanner does not take off
    "[2024-03-01 10:22:42] err     nan\n[2024-03-01 10:22:43] NaN\n[2024-03-01 10:22:44] {\n",
    "[rank0]:err     nan\n[rank0]:NaN\n[rank0]:{\n",
    # ...and with the epoch's `LOSS: 0.000000` after it: a loss of exactly 0 scored no batch
    "err     nan\nNaN\n{\n  1 : CudaTensor - size: 64x291\n}\n"
    "[EPOCH : 20 LOSS: 0.000000 TOTAL: 850461 BATCHES: 13683]\n",
    # tests/wild scatlasvae-normal-loc-nan-lr-13, the rows of the printed tensor without the error above them
    "        [nan, nan, nan,  ..., nan, nan, nan],\n        ...,\n        [nan, nan, nan,  ..., nan, nan, nan]], "
    "device='cuda:0',\n       grad_fn=<AddmmBackward0>)\n",
    # numpy's print of the same
    "[[nan nan nan]\n [nan nan nan]]\n",
    # tests/wild lasagne-nolearn-loss-nan-epoch12-241 and t2tvit-timm-csv-nan-amp-26: three rows cut from a
    # table printed without its header, one finite row before the NaN
    "        11       0.29002       0.28839      1.00566      0.62501  419.37s\n"
    "        12           nan           nan          nan      0.62500  419.85s\n"
    "        13           nan           nan          nan      0.62500  419.30s\n",
    "208,4.367704391479492,4.161868629837036,7.62000002746582,23.86000018310547\n"
    "209,nan,4.160795520019532,7.7200000274658205,24.01999976196289\n210,nan,nan,1.0,5.0\n",
    # ...cut after the NaN: every loss column NaN at every row, the valid accuracy and the time still numbers
    "     13           nan           nan          nan      0.62500  419.30s\n"
    "     14           nan           nan          nan      0.62500  421.47s\n"
    "     15           nan           nan          nan      0.62500  420.63s\n",
    # a value printed alone: Lua's `print(err)` (namas), Python's `print(loss.item())`
    "NaN\n{\n  1 : CudaTensor - size: 64x291\n",
    "0.693\n0.689\n0.652\nnan\n",
    # timm's summary rows cut after the NaN: the finite cells are whole numbers, printed as floats (`1.0`)
    "210,nan,nan,1.0,5.0\n211,nan,nan,1.0,5.0\n212,nan,nan,1.0,5.0\n213,nan,nan,1.0,5.0\n",
])
def test_a_short_paste_of_nan_rows_or_lone_pairs_gets_the_nan_readings(tmp_path, text):
    d = _top(tmp_path, text)
    codes = [c.code for c in d.root_causes]
    assert codes[0] == "numerical_instability" and {"lr_too_high", "data_pipeline_bug"} <= set(codes[:3]), codes


@pytest.mark.parametrize("text", [
    # rows numbered from 0 or 1 are a listing per class, not three reports of a run
    "0 0.512 0.611\n1 nan nan\n2 nan nan\n",
    # one column NaN at every row of a headerless table is a metric never computed
    "     13       0.29002           nan      0.62500  419.30s\n"
    "     14       0.28839           nan      0.62500  421.47s\n"
    "     15       0.28712           nan      0.62500  420.63s\n",
])
def test_nan_looking_rows_that_are_no_run_get_no_nan_reading(tmp_path, text):
    d = _top(tmp_path, text)
    assert not [c for c in d.root_causes if c.code == "numerical_instability"], d.root_causes


def test_a_mask_with_a_row_of_minus_inf_gets_no_nan_reading_only_the_low_softmax_note(tmp_path):
    # an attention mask's rows hold -inf beside finite cells; a row of -inf alone holds no NaN, though a
    # softmax over it would make one: listed low, never as a NaN the run showed
    d = _top(tmp_path, "tensor([[0., -inf, -inf],\n        [0., 0., -inf],\n        [-inf, -inf, -inf]])\n")
    num = [c for c in d.root_causes if c.code == "numerical_instability"]
    assert [c.severity for c in num] == ["low"] and "softmax" in num[0].issue
    assert not [c for c in d.root_causes if c.code in ("lr_too_high", "data_pipeline_bug")]


def test_a_name_no_alias_knows_that_stays_finite_adds_no_series(tmp_path):
    (tmp_path / "train.log").write_text("epoch=1; lb=196.7; validation=2.5%;\n"
                                        "epoch=2; lb=nanometre; validation=2.4%;\n"
                                        # a name and a NaN on a line of prose are no such pair
                                        "NaN or Inf found in input tensor.\n"
                                        # a rate over a zero duration is no overflow of the model's
                                        "{'eval_runtime': 0.0, 'eval_steps_per_second': inf, 'fwd_ms': nan}\n")
    run = load_run(tmp_path)
    assert not [n for n in run.metrics.names() if n.startswith("nonfinite/")]


def _alarms(d) -> list[str]:
    return [c.code for c in d.root_causes if c.severity in ("critical", "high") and c.code != "healthy"]


def _healthy_epochs(first_line_extra: str, n: int = 10) -> str:
    return "".join(f"epoch {e} step {e * 100} loss={2.3 * np.exp(-0.25 * e) + 0.1:.4f} "
                   f"acc={min(0.95, 0.1 + 0.09 * e):.3f}{' ' + first_line_extra if e == 1 else ''}\n"
                   for e in range(1, n + 1))


@pytest.mark.parametrize("pair", ["best_val=inf", "best_score=-inf", "best=inf", "best_metric=inf",
                                  "max_grad_norm=inf", "clip_grad=inf", "threshold=inf", "min_delta=-inf",
                                  "auc=nan", "val_f1=nan", "reward_std=nan", "best_episode_reward=-inf"])
def test_a_bookkeeping_inf_or_a_nan_the_loss_outlives_is_no_nan_of_the_model(tmp_path, pair):
    # a best-so-far, a clip or a threshold starts at inf; an AUC of a one-class batch is NaN: the loss
    # stays finite for nine more epochs, so the weights never held a NaN
    d = _top(tmp_path, _healthy_epochs(pair))
    assert _alarms(d) == [] and d.root_causes[0].code == "healthy"


def test_rllibs_nan_reward_before_the_first_episode_ends_is_healthy(tmp_path):
    # RLlib prints episode_reward_mean/episode_len_mean as nan until an episode completes
    lines = []
    for it in range(1, 16):
        r = "nan" if it < 3 else f"{10 + 5 * it:.1f}"
        lines += [f"training_iteration: {it}\n", f"episode_reward_mean: {r}\n", f"episode_len_mean: {r}\n",
                  f"policy_loss: {-0.01 * it:.4f}\n", f"vf_loss: {50 / it:.3f}\n",
                  f"total_loss: {50 / it - 0.01 * it:.3f}\n"]
    assert _alarms(_top(tmp_path, "".join(lines))) == []


def test_a_nameless_nan_whose_value_is_finite_again_is_no_nan_of_the_model(tmp_path):
    # no loss is printed: the value itself coming back finite says the weights were never NaN
    text = "".join(f"iteration: {it}\nreward_ema: {'nan' if it < 3 else f'{it * 1.5:.2f}'}\n"
                   for it in range(1, 12))
    assert _alarms(_top(tmp_path, text)) == []


@pytest.mark.parametrize("nameless", [lambda e: " best_val=inf" if e == 1 else "",
                                      lambda e: f" lb={'inf' if e == 1 else 0.5}",
                                      lambda e: f" lb={'nan' if e >= 7 else 0.5}"],   # one line before the loss
                         ids=["best_val-inf-first", "lb-inf-first-then-finite", "lb-nan-a-line-before"])
def test_a_nameless_nan_before_a_loss_nan_does_not_take_the_loss_nans_place(tmp_path, nameless):
    text = "".join(f"epoch {e} step {e * 100} "
                   f"loss={f'{2.3 * np.exp(-0.25 * e) + 0.1:.4f}' if e < 8 else 'nan'} acc=0.5{nameless(e)}\n"
                   for e in range(1, 11))
    top = _top(tmp_path, text).root_causes[0]
    assert "train_loss" in top.issue and "step 800" in top.issue, top.issue


@pytest.mark.parametrize("key", ["bits_per_dim", "kl_per_dim", "theta", "beta", "intersection"])
def test_a_nan_whose_name_holds_a_timing_word_is_still_a_nan(tmp_path, key):
    # bits_per_dim is a flow's loss; `per_`, `sec`, `eta` inside a name are no duration
    text = "".join(f"epoch={e}; {key}={f'{3.5 - 0.1 * e:.3f}' if e < 7 else 'nan'}; test=2.5%;\n"
                   for e in range(1, 9))
    assert _top(tmp_path, text).root_causes[0].code != "healthy"


def test_unknown_nan_names_cost_bounded_series(tmp_path):
    # one family per key printed nan: 1M keys in 34 MB cost ~8 GB; a hostile paste costs bounded memory
    (tmp_path / "train.log").write_text("".join(f"step {i} loss=0.5 q{i:06d}=nan loss_p{i:06d}=0.1\n"
                                                for i in range(3000)))
    names = load_run(tmp_path).metrics.names()
    assert len([n for n in names if n.startswith("nonfinite/")]) <= 256
    assert len([n for n in names if n.startswith("train_loss/")]) <= 256


def test_a_spike_at_the_second_report_after_a_high_first_one_is_still_a_spike(tmp_path):
    # only a fast fall (each report under the one before) is excluded; 2.0 -> 40 -> 0.9 is a spike
    v = [2.0, 40.0, 0.9, 0.8, 0.75, 0.7, 0.68]
    d = _top(tmp_path, "".join(f"epoch {i + 1} loss={x}\n" for i, x in enumerate(v)))
    assert "loss_spikes" in [c.code for c in d.root_causes]


def test_a_logged_and_retried_error_followed_by_more_training_is_no_crash(tmp_path):
    # a logger's `- ERROR - ConnectionError ... retrying` at epoch 5, then 25 more epochs of training
    lines = []
    for e in range(1, 31):
        lines.append(f"2024-03-01 10:{e:02d}:03,120 - INFO - epoch {e} step {e * 100} "
                     f"loss={2.3 * np.exp(-0.1 * e) + 0.1:.4f} acc={min(0.95, 0.1 + 0.03 * e):.3f}\n")
        if e == 5:
            lines.append("2024-03-01 10:05:04,000 - ERROR - ConnectionError: wandb upload failed, retrying\n")
    assert _top(tmp_path, "".join(lines)).root_causes[0].code == "healthy"


# The eighth round's tune-half cases (tests/wild), each a mechanism rather than a case.

def test_a_yaml_nan_episode_reward_is_no_episode_ended_not_a_nan_in_the_model(tmp_path):
    # tests/wild rllib-episode-reward-nan-no-done-10416 (ray #10416), as posted: no episode ended, so the
    # reward means are over nothing; the thread settled it with done=True in the env
    text = ("episode_len_mean: .nan\nepisode_reward_max: .nan\nepisode_reward_mean: .nan\n"
            "episode_reward_min: .nan\nepisodes_this_iter: 0\nepisodes_total: 0\n")
    d = _top(tmp_path, text, "output.txt")
    assert d.root_causes[0].code == "data_pipeline_bug", _read(d)
    assert "episode" in d.root_causes[0].issue
    assert all(c.code != "numerical_instability" for c in d.root_causes)


def test_an_sb3_table_with_a_nan_episode_reward_reads_the_same(tmp_path):
    # stable-baselines3's logger table prints the same statistic as `| ep_rew_mean | nan |` until an
    # episode ends (its `rollout/` block, sb3 common/logger.py HumanOutputFormat)
    text = ("-----------------------------\n| rollout/           |      |\n|    ep_len_mean     | nan  |\n"
            "|    ep_rew_mean     | nan  |\n| time/              |      |\n|    fps             | 1021 |\n"
            "|    total_timesteps | 2048 |\n-----------------------------\n")
    assert _top(tmp_path, text).root_causes[0].code == "data_pipeline_bug"


def test_a_keras_epoch_line_at_ln10_on_both_sides_is_at_chance(tmp_path):
    # tests/wild keras-tcn-mnist-pixel-chance-unnormalized-27 (keras-tcn #27): one full epoch, training and
    # validation losses at ln(10) = 2.3026, accuracies at the commonest digit's share; fixed by normalising
    text = ("55000/55000 [==============================] - 164s 3ms/step - loss: 2.3037 - accuracy: 0.1120 - "
            "val_loss: 2.3015 - val_accuracy: 0.1135\n")
    d = _top(tmp_path, text)
    assert d.root_causes[0].code == "data_pipeline_bug", _read(d)
    assert "ln(10)" in d.root_causes[0].issue


def test_a_single_report_at_ln_k_without_validation_is_no_verdict_of_chance(tmp_path):
    # the same numbers at step 0 of a print loop are an untrained model's, as they should be
    d = _top(tmp_path, "step 0 loss 2.3037 acc 0.1120\n")
    assert all(c.code != "data_pipeline_bug" for c in d.root_causes), _read(d)


def test_an_accuracy_of_one_at_step_zero_is_too_good_whatever_the_loss(tmp_path):
    # tests/wild kittiseg-acc-one-label-colour-off-155 (KittiSeg #155): label colours off by one (254 for
    # 255) left one class; the total loss is a weight-decay term, the cross-entropy prints 0.00
    text = ("2018-01-26 21:11:36,775 INFO Step 0/2000: loss = 0.46; lr = 1.00e-03; 0.082 sec (per Batch); "
            "12.2 imgs/sec\n"
            "2018-01-26 21:11:37,892 INFO       (raw)  Acc. : 1.00, xentropy: 0.00, weight_loss: 0.38\n"
            "2018-01-26 21:11:37,892 INFO    (smooth)  Acc. : 1.00, xentropy: 0.00, weight_loss: 0.38\n")
    d = _top(tmp_path, text)
    assert d.root_causes[0].code == "data_pipeline_bug", _read(d)
    assert "step 0" in d.root_causes[0].issue


def test_an_objective_is_a_loss(tmp_path):
    # tests/wild ssd-pytorch-bs1-lr-nan-275's numbers under the name optimisation code gives its loss
    losses = ["3.2635", "14.6995", "12.2860", "14.0080", "20.0848", "29821698048.0", "nan", "nan"]
    text = "".join(f"iter {i * 10} || objective: {v}\n" for i, v in enumerate(losses))
    d = _top(tmp_path, text)
    assert d.root_causes[0].code == "lr_too_high", _read(d)


def test_lightnings_wording_of_unused_ddp_parameters(tmp_path):
    # the RuntimeError Lightning 2.x raises in place of torch's "Expected to have finished reduction",
    # as quoted verbatim in public repositories' comments and issue notes
    text = ("RuntimeError: It looks like your LightningModule has parameters that were not used in producing "
            "the loss returned by training_step. If this is intentional, you must enable the detection of "
            "unused parameters in DDP, either by setting the string value "
            "`strategy='ddp_find_unused_parameters_true'` or by setting the flag in the strategy with "
            "`strategy=DDPStrategy(find_unused_parameters=True)`.\n")
    assert _top(tmp_path, text, "output.txt").root_causes[0].code == "distributed_failure"


def test_espnets_grad_norm_of_inf_reads_as_its_nan(tmp_path):
    # espnet2/train/trainer.py logs f"The grad norm is {grad_norm}. Skipping updating the model." for nan
    # and inf alike (tests/wild espnet-ctc-nan-grad-3630 shows the nan wording)
    d = _top(tmp_path, "(trainer:582) WARNING: The grad norm is inf. Skipping updating the model.\n", "output.txt")
    assert d.root_causes and d.root_causes[0].code in ("numerical_instability", "data_pipeline_bug"), _read(d)


@pytest.mark.parametrize("tail, oom", [("Current allocation summary follows.", True),
                                       ("The caller indicates that this is not a failure, but may mean that "
                                        "there could be performance gains if more memory were available.", False)])
def test_tfs_bfc_allocator_running_out_is_an_oom_unless_it_says_it_is_not_a_failure(tmp_path, tail, oom):
    # tensorflow/core/common_runtime/bfc_allocator.cc's two endings of the same announcement
    line = ("2019-01-01 12:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator "
            f"(GPU_0_bfc) ran out of memory trying to allocate 2.00GiB.  {tail}\n")
    codes = [c.code for c in _top(tmp_path, line, "output.txt").root_causes]
    assert (codes[:1] == ["out_of_memory"]) if oom else ("out_of_memory" not in codes), codes


@pytest.mark.parametrize("line, code", [
    # torch/nn/functional.py _verify_spatial_size (InstanceNorm on a 1x1 map): BatchNorm's batch-of-one twin
    ("ValueError: Expected more than 1 spatial element when training, got input size torch.Size([1, 512, 1, 1])",
     "zero_variance"),
    # numpy/core/_exceptions.py _ArrayMemoryError: the host has no room for the array
    ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.20 GiB for an array with shape "
     "(50000, 128, 128, 1) and data type float32", "out_of_memory"),
    # TensorFlow's conv op when cuDNN cannot get its handle: the GPU memory is gone (allow_growth fixes it)
    ("tensorflow.python.framework.errors_impl.UnknownError:  Failed to get convolution algorithm. This is "
     "probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed "
     "above.", "out_of_memory"),
    # sklearn/utils/validation.py _assert_all_finite, old and new wordings: the features hold the NaN
    ("ValueError: Input contains NaN, infinity or a value too large for dtype('float32').", "data_pipeline_bug"),
    ("ValueError: Input X contains NaN.", "data_pipeline_bug"),
])
def test_library_wordings_of_known_failures(tmp_path, line, code):
    d = _top(tmp_path, line + "\n", "output.txt")
    assert d.root_causes and d.root_causes[0].code == code, _read(d)


def test_a_printed_loss_tensor_is_the_training_loss(tmp_path):
    # `print(loss)` every 200 epochs of a PyG GCN, as a public notebook shows its output (code search)
    text = ("tensor(1.9477, device='cuda:0', grad_fn=<NllLossBackward0>)\n"
            "tensor(0.7640, device='cuda:0', grad_fn=<NllLossBackward0>)\n"
            "tensor(0.5391, device='cuda:0', grad_fn=<NllLossBackward0>)\n"
            "tensor(0.5730, device='cuda:0', grad_fn=<NllLossBackward0>)\n"
            "tensor(0.5447, device='cuda:0', grad_fn=<NllLossBackward0>)\n")
    run = load_run(_write(tmp_path, text))
    assert list(run.metrics.get("train_loss").values) == [1.9477, 0.764, 0.5391, 0.573, 0.5447]
    assert _top(tmp_path, text).root_causes[0].code == "healthy"


def test_dashes_drawn_around_a_loss_name_are_no_part_of_it(tmp_path):
    # a public repository's training notes (code search) print `-----Step N --LOSS-- tensor(...)`, and
    # BHui97/PLeak#2 `-----------loss------------:  tensor(nan, ...)`: both went NaN
    steps = ["21.2340", "4.0840", "2.3075", "0.9804", "23.8030", "nan", "nan"]
    text = "".join(f"-----Step {i} --LOSS-- tensor({v}, device='cuda:0', grad_fn=<AddBackward0>)\n"
                   for i, v in enumerate(steps, 1))
    d = _top(tmp_path, text)
    assert d.root_causes[0].code in ("numerical_instability", "lr_too_high"), _read(d)
    pleak = "".join(f"-----------loss------------:  tensor({v}, device='cuda:3', dtype=torch.float16)\n"
                    for v in ("0.1054", "nan", "nan"))
    assert list(load_run(_write(tmp_path, pleak)).metrics.get("train_loss").values[:1]) == [0.1054]


def _write(tmp_path, text: str):
    (tmp_path / "train.log").write_text(text)
    return tmp_path


def test_apex_numbering_its_loss_scaler_is_no_loss_at_zero(tmp_path):
    # lasnet #3 (tests/wild, tune half): apex's first skipped steps, "loss scaler 0" is the scaler's index
    d = _top(tmp_path, "Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 1024.0\n"
                       "Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 512.0\n")
    assert d.root_causes[0].code == "healthy" and d.status == "no_failure_found"


# mar #69 (tests/wild, tune half): a MetricLogger line with its LR, the loop's NaN, then torchrun's report
MAR_LINES = ("[11:41:33.534863] Epoch: [8]  [ 200/2293]  eta: 1:52:52  lr: 0.000004  loss: 0.2606 (0.2654)  time: "
             "3.0808  data: 0.0002  max mem: 32637\n"
             "[11:41:59.064379] Loss is nan, stopping training\n")
MAR_LAUNCHER = ("E1030 11:42:16.325000 140014536193856 torch/distributed/elastic/multiprocessing/api.py:833] failed "
                "(exitcode: 1) local_rank: 0 (pid: 155690) of binary: /data/taohu/anaconda3/envs/vae/bin/python3.10\n")


def test_a_nan_under_an_lr_too_small_to_overflow_the_weights_is_not_read_as_the_lr(tmp_path):
    d = _top(tmp_path, MAR_LINES)
    codes = _read(d)
    assert codes[0] == "numerical_instability", codes
    lr = next(c for c in d.root_causes if c.code == "lr_too_high")
    assert lr.confidence <= 0.3 and any("too small" in e.text for e in lr.evidence)
    # the same lines with an LR of 0.04: the LR reading is not held down
    d = _top(tmp_path, MAR_LINES.replace("lr: 0.000004", "lr: 0.040000"))
    assert next(c for c in d.root_causes if c.code == "lr_too_high").confidence > 0.3


def test_a_nan_under_an_lr_too_small_is_not_read_as_the_lr_on_a_long_curve_either(tmp_path):
    # the same MetricLogger lines, forty of them before the NaN: the trend analyzers read the curve,
    # and the LR reading this analyzer adds is held down as on a short one
    line = MAR_LINES.splitlines()[0] + "\n"
    lines = "".join(line.replace("loss: 0.2606", f"loss: {0.2606 - 0.001 * k:.4f}") for k in range(40))
    d = _top(tmp_path, lines + line.replace("loss: 0.2606 (0.2654)", "loss: nan (nan)"))
    lr = next(c for c in d.root_causes if c.code == "lr_too_high")
    assert lr.confidence <= 0.3 and any("too small" in e.text for e in lr.evidence)


def test_the_launchers_report_of_a_failed_rank_is_the_rank_errors_consequence(tmp_path):
    d = _top(tmp_path, MAR_LINES + MAR_LAUNCHER)
    assert "distributed_failure" not in _read(d) and _read(d)[0] == "numerical_instability"
    # alone, it is still the failure the paste shows
    d = _top(tmp_path, MAR_LAUNCHER)
    assert _read(d)[0] == "distributed_failure"


def test_a_warning_that_names_no_fault_does_not_silence_the_launchers_report(tmp_path):
    # a target-size warning whose shapes hold one element each is dropped as saying nothing: it is no
    # rank's own error either, so torchrun's report of the failed rank stays the failure the paste shows
    warning = ("/usr/lib/python3/site-packages/torch/nn/modules/loss.py:536: UserWarning: Using a target size "
               "(torch.Size([1, 1])) that is different to the input size (torch.Size([1])). This will likely lead "
               "to incorrect results due to broadcasting.\n")
    assert _read(_top(tmp_path, warning + MAR_LAUNCHER))[:1] == ["distributed_failure"]


HOROVOD_SHUTDOWN = ("[1,3]<stderr>:Horovod has been shut down. This was caused by an exception on one of the ranks "
                    "or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished "
                    "execution. If the shutdown was caused by an exception, you should see the exception in the log "
                    "before the first shutdown message.\n")


def test_horovods_shutdown_is_a_distributed_failure_unless_a_ranks_own_error_names_the_cause(tmp_path):
    # OpenNMT-tf #985 (tests/wild, tune half): one rank stopped early, the others still called allreduce
    assert _read(_top(tmp_path, HOROVOD_SHUTDOWN))[:1] == ["distributed_failure"]
    oom = "[1,0]<stderr>:RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
    d = _top(tmp_path, oom + HOROVOD_SHUTDOWN)
    assert _read(d)[0] == "out_of_memory" and "distributed_failure" not in _read(d)


def test_a_nan_accuracy_beside_a_nan_loss_is_no_sample_counted(tmp_path):
    # Hands-On-Deep-Learning-for-Finance #11 (tests/wild, tune half): validation set smaller than one batch
    d = _top(tmp_path, "Epoch: 79/100 Iteration: 80 Validation loss:    nan Validation acc: nan\n")
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and any("0/0" in e.text for e in top.evidence)
    # a finite accuracy beside it says nothing of the kind
    d = _top(tmp_path, "Epoch: 79/100 Iteration: 80 Validation loss:    nan Validation acc: 0.51\n")
    assert not any("0/0" in e.text for c in d.root_causes for e in c.evidence)


def test_a_nan_accuracy_beside_a_nan_loss_after_a_long_curve_is_no_sample_counted_too(tmp_path):
    # forty evaluations first: the 0/0 reading holds as on one line, and no LR reading is added
    lines = "".join(f"Epoch: {k}/100 Iteration: {k} Validation loss:    {0.9 - 0.005 * k:.4f} Validation acc: "
                    f"{0.5 + 0.005 * k:.3f}\n" for k in range(1, 41))
    d = _top(tmp_path, lines + "Epoch: 41/100 Iteration: 41 Validation loss:    nan Validation acc: nan\n")
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and any("0/0" in e.text for e in top.evidence)
    assert "lr_too_high" not in _read(d)


def test_a_loss_growing_under_an_accuracy_that_holds_is_no_divergence(tmp_path):
    # LNL-SR #1 (tests/wild, tune half): the maintainer's own healthy log, its loss (with a growing norm term)
    # rising ~2% per iteration while the test accuracy holds near 0.53
    loss = [4526359.4326 * 1.02 ** k for k in range(30)]
    acc = [0.5439, 0.5391, 0.5572, 0.5359, 0.5347, 0.5240, 0.5387, 0.5320, 0.5358, 0.5492] * 3
    held = "".join(f"Iter {126 + k}: loss={v:.4f}, test_acc={a:.4f}\n" for k, (v, a) in enumerate(zip(loss, acc)))
    d = _top(tmp_path, held)
    assert "lr_too_high" not in _read(d), _read(d)
    # the same loss with the accuracy falling away: the updates overshoot
    falling = "".join(f"Iter {126 + k}: loss={v:.4f}, test_acc={0.54 - 0.01 * k:.4f}\n" for k, v in enumerate(loss))
    assert _read(_top(tmp_path, falling))[:1] == ["lr_too_high"]


MMDET_NO_CLASSES = (  # tests/wild mmdet-custom-classes-unset-bbox-loss-zero-2744: `classes=` left out of data.train
    "2020-05-16 14:56:28,250 - mmdet - INFO - Epoch [1][50/534]      lr: 0.00198, eta: 0:38:23, time: 0.362, "
    "data_time: 0.013, memory: 3274, loss_rpn_cls: 0.2651, loss_rpn_bbox: 0.0000, loss_cls: 0.4077, acc: 91.1543, "
    "loss_bbox: 0.0000, loss: 0.6728\n"
    "2020-05-16 14:56:42,271 - mmdet - INFO - Epoch [1][100/534]     lr: 0.00398, eta: 0:33:46, time: 0.280, "
    "data_time: 0.006, memory: 3274, loss_rpn_cls: 0.0000, loss_rpn_bbox: 0.0000, loss_cls: 0.4531, acc: 100.0000, "
    "loss_bbox: 0.0000, loss: 0.4531\n"
    "2020-05-16 14:56:57,230 - mmdet - INFO - Epoch [1][150/534]     lr: 0.00597, eta: 0:32:44, time: 0.299, "
    "data_time: 0.007, memory: 3274, loss_rpn_cls: 0.0000, loss_rpn_bbox: 0.0000, loss_cls: 0.1650, acc: 100.0000, "
    "loss_bbox: 0.0000, loss: 0.1650\n")


def test_a_box_loss_at_exactly_zero_at_every_report_is_no_object_matched(tmp_path):
    d = _top(tmp_path, MMDET_NO_CLASSES)
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and "no ground-truth object" in top.issue, top
    # the same run with its boxes matched: a box loss that is small but not 0 is no such reading
    matched = MMDET_NO_CLASSES.replace("loss_bbox: 0.0000", "loss_bbox: 0.1312").replace("loss_rpn_bbox: 0.0000",
                                                                                         "loss_rpn_bbox: 0.0213")
    assert not [c for c in _top(tmp_path, matched).root_causes if "no ground-truth object" in c.issue]


FRCNN_ZERO_BASED = (  # tests/wild pytorch-faster-rcnn-zero-based-boxes-nan-105: 0-based boxes, the code wants 1-based
    "iter: 100 / 10000, total loss: 1.232251\n >>> rpn_loss_cls: 0.071523\n >>> rpn_loss_box: 1.027229\n"
    " >>> loss_cls: 0.096656\n >>> loss_box: 0.036843\n >>> lr: 0.001000\nspeed: 0.270s / iter\n"
    "iter: 120 / 10000, total loss: 2.593077\n >>> rpn_loss_cls: 1.008498\n >>> rpn_loss_box: 1.346431\n"
    " >>> loss_cls: 0.186908\n >>> loss_box: 0.051240\n >>> lr: 0.000100\nspeed: 0.270s / iter\n"
    "iter: 140 / 10000, total loss: nan\n >>> rpn_loss_cls: 0.682706\n >>> rpn_loss_box: nan\n"
    " >>> loss_cls: 0.000110\n >>> loss_box: 0.000000\n >>> lr: 0.000100\nspeed: 0.270s / iter\n")


def test_a_nan_held_to_the_box_part_of_the_loss_puts_the_boxes_first(tmp_path):
    codes = [c.code for c in _top(tmp_path, FRCNN_ZERO_BASED).root_causes]
    assert codes[0] == "data_pipeline_bug" and "lr_too_high" in codes[:3], codes
    # every part gone NaN at once is what an LR too high does: the climb before it keeps the LR first
    spread = FRCNN_ZERO_BASED.replace("rpn_loss_cls: 0.682706", "rpn_loss_cls: nan").replace(
        "loss_cls: 0.000110", "loss_cls: nan")
    assert _top(tmp_path, spread).root_causes[0].code == "lr_too_high"
    # the tail of the paste alone (one report): the box part's NaN still gets the readings
    tail = FRCNN_ZERO_BASED.split("iter: 140 / 10000, total loss: nan\n")[1]
    assert _top(tmp_path, tail).root_causes[0].code == "data_pipeline_bug"


def test_an_rl_episode_statistics_min_printed_nan_is_no_episode_ended(tmp_path):
    # tests/wild rllib-episode-reward-nan-no-done-10416 cut to its last three lines: a min of episode rewards is
    # a statistic over the episodes that ended, not a limit that starts at inf
    d = _top(tmp_path, "episode_reward_min: .nan\nepisodes_this_iter: 0\nepisodes_total: 0\n", "output.txt")
    assert d.root_causes[0].code == "data_pipeline_bug" and "no finished episodes" in d.root_causes[0].issue


def test_a_loss_and_accuracy_identical_to_the_last_digit_every_epoch_are_weights_that_do_not_move(tmp_path):
    """keras-team/keras#4784 (tests/wild, tune half): loss 4.4380 and acc 0.7247 for 13 epochs. ln(81) is near
    4.438, but a uniform guess over 81 classes scores ~1/81, not 0.72: no chance level, and a loss identical to
    the last digit for five reports or more leads with the weights not being updated (here an output layer that
    saturated), the stuck accuracy's readings after it."""
    rows = "".join(f"Epoch {i}/100\n10131566/10131566 [==============================] - 338s - loss: 4.4380 - "
                   "acc: 0.7247\n" for i in range(1, 14))
    d = _top(tmp_path, rows)
    assert [c.code for c in d.root_causes[:2]] == ["no_parameter_updates", "data_pipeline_bug"]
    assert "ln(81)" not in d.root_causes[0].issue


def test_a_testing_accuracy_far_under_a_perfect_training_accuracy_is_overfitting(tmp_path):
    """An Inception fine-tune printing `Testing Accuracy` (tests/wild tf-finetune-flickr-style-overfitting-13):
    `Testing` opens the test section of the name, and a test set stands in for a missing validation set."""
    d = _top(tmp_path, "2019-05-21 16:26:02.627367 Iter 5040: Training Loss = 0.0148, Accuracy = 1.0000\n"
                       "2019-05-21 16:26:17.227455 Iter 5100: Training Loss = 0.0552, Accuracy = 0.9800\n"
                       "2019-05-21 16:26:27.450521 Iter 5120: Testing Accuracy = 0.4336\n")
    assert d.root_causes[0].code == "overfitting" and "test set" in d.root_causes[0].issue


def test_a_loss_that_falls_by_a_sliver_at_every_report_learns_too_slowly(tmp_path):
    """Near ln(10), but falling at each of six epochs with the accuracy rising: not stuck at chance, the
    steps are too small."""
    rows = "".join(f"Epoch {i + 1} loss {2.3021 - 0.00085 * i:.4f} acc {0.112 + 0.003 * i:.3f}\n" for i in range(6))
    d = _top(tmp_path, rows)
    assert [c.code for c in d.root_causes[:2]] == ["lr_too_low", "data_pipeline_bug"]


def test_a_test_set_far_under_a_validation_set_close_to_training_is_the_test_data(tmp_path):
    d = _top(tmp_path, "Epoch 1: train_acc=0.98 val_acc=0.97 test_acc=0.12\n")
    assert d.root_causes[0].code == "data_pipeline_bug" and "test data" in d.root_causes[0].issue
    d = _top(tmp_path, "Epoch 1: train_acc=0.98 val_acc=0.97 test_acc=0.95\n")
    assert "data_pipeline_bug" not in [c.code for c in d.root_causes]


def test_a_loss_printed_as_fastai_tensors_that_explodes_and_wavers_is_read(tmp_path):
    """AutoGluon's FastAI model printing its validation loss as bare `TensorBase(...)` lines between epoch
    numbers (tests/wild autogluon-fastai-regression-unscaled-target-1158): read as the loss, and a loss
    1e4 times its start by the end diverged, though it wavered after its peak."""
    values = [5.7082e+08, 1.3430e+10, 2.8899e+11, 3.9408e+12, 3.4854e+13, 2.3243e+14, 6.1357e+14, 8.1096e+14,
              4.5594e+13, 5.2544e+13, 1.4245e+13, 1.0146e+14, 2.2767e+14, 8.1047e+12, 1.3270e+14]
    d = _top(tmp_path, "".join(f"{i}\nTensorBase({v:.4e})\n" for i, v in enumerate(values)), "output.txt")
    assert d.root_causes and d.root_causes[0].code == "lr_too_high"


def test_an_accuracy_of_zero_over_the_first_steps_of_an_epoch_is_too_early_to_judge(tmp_path):
    """ArcFace on thousands of identities scores 0 for its first dozens of steps (tests/wild face-recognition-
    tf2-arcface-accuracy-zero-early-2: 'You need to wait for more iterations'). Over several epochs it is stuck."""
    early = "".join(f"Epoch 1, Step {s}, Loss: {62 + s % 7}.92216, Accuracy: 0.00000\n" for s in (10, 20, 30, 40))
    assert "data_pipeline_bug" not in [c.code for c in _top(tmp_path, early).root_causes]
    late = "".join(f"Epoch {e}, Step {e * 1000}, Loss: 6{e}.92216, Accuracy: 0.00000\n" for e in (1, 2, 3, 4))
    assert _top(tmp_path, late).root_causes[0].code == "data_pipeline_bug"


@pytest.mark.parametrize("paste", [
    "python train.py --lr 1.0 --optimizer adam --batch_size 32\n",
    "Namespace(batch_size=32, epochs=100, lr=0.5, optimizer='adam', weight_decay=0.0)\n",
    "$ CUDA_VISIBLE_DEVICES=0 python3 main.py --optimizer=AdamW --learning-rate=0.3 --epochs 90\n",
])
def test_settings_alone_with_an_lr_far_above_its_optimizers_range_name_the_lr(tmp_path, paste):
    """A launch command or an argparse dump, and no loss: the LR far above its optimizer's range is the first
    suspect, said without confidence, with the loss per step as what would settle it."""
    top = _top(tmp_path, paste, "output.txt").root_causes[0]
    assert top.code == "lr_too_high" and top.severity == "medium" and "no loss" in top.issue


def test_a_launch_command_with_a_sound_lr_names_nothing(tmp_path):
    assert not [c for c in _top(tmp_path, "python train.py --lr 3e-4 --optimizer adam\n", "output.txt").root_causes
                if c.code.startswith("lr_")]


def test_a_detectors_map_at_zero_at_every_evaluation_is_its_labels(tmp_path):
    d = _top(tmp_path, "Epoch 10: mAP 0.000, precision 0.000, recall 0.000\n"
                       "Epoch 20: mAP 0.000, precision 0.000, recall 0.000\n")
    assert [c.code for c in d.root_causes[:2]] == ["data_pipeline_bug", "lr_too_high"]
    summary = (" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = {}\n"
               " Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = {}\n")
    assert _top(tmp_path, summary.format("0.000", "0.000")).root_causes[0].code == "data_pipeline_bug"
    assert "data_pipeline_bug" not in [c.code for c in _top(tmp_path, summary.format("0.372", "0.581")).root_causes]
    assert "data_pipeline_bug" not in [c.code for c in _top(tmp_path, "Epoch 1: mAP 0.000\nEpoch 2: mAP 0.000\n")
                                       .root_causes]


def test_a_validation_loss_identical_at_three_evaluations_is_weights_that_did_not_change(tmp_path):
    """torchMoji's fine-tune printing the same validation loss and accuracy each epoch (tests/wild torchmoji-
    finetune-outputs-data-rewrapped-loss-21): computed on the same data, an identical loss means the same weights."""
    d = _top(tmp_path, "".join(f"{e} Epoch val acc 62.54 val loss 0.67718\n" for e in (1, 2, 3)))
    assert d.root_causes[0].code == "no_parameter_updates" and "to the last digit" in d.root_causes[0].issue
    d = _top(tmp_path, "".join(f"{e} Epoch val acc 62.54 val loss 0.6{7 - e}718\n" for e in (1, 2, 3)))
    assert "no_parameter_updates" not in [c.code for c in d.root_causes[:1]]


def test_a_dice_score_above_one_is_masks_that_are_not_zero_one(tmp_path):
    """Pytorch-UNet with masks loaded 0/255 (tests/wild pytorch-unet-bce-negative-loss-masks-0-255-78): a negative
    BCE loss and a validation Dice of 1.97, which the formula cannot reach for 0/1 masks."""
    d = _top(tmp_path, "Starting epoch 10/10.\n0.0000 --- loss: -1086.891846\n0.0526 --- loss: -2474.710449\n"
                       "Epoch finished ! Loss: -1980.159640842014\nValidation Dice Coeff: 1.9720964431762695\n")
    assert d.root_causes[0].code == "data_pipeline_bug" and "not 0/1" in d.root_causes[0].issue
    d = _top(tmp_path, "Epoch finished ! Loss: 0.1801\nValidation Dice Coeff: 0.8720964431762695\n")
    assert "data_pipeline_bug" not in [c.code for c in d.root_causes]


def test_a_dice_score_no_scale_allows_is_what_reaches_the_metric(tmp_path):
    """nnU-Net region training (tests/wild nnunet-pseudodice-regions-2369, tune half): a pseudo Dice of -94.47 and
    220.67, neither a share nor a percentage, after a label-to-region conversion changed the targets."""
    lines = ("2024-07-12 20:42:14.514886: train_loss -0.7843\n2024-07-12 20:42:14.517647: val_loss -0.7418\n"
             "2024-07-12 20:42:14.518608: Pseudo dice [{}, -1000.154, 49.0404, -48.9845]\n")
    d = _top(tmp_path, lines.format("220.6748") + lines.format("-94.4669"))
    assert d.root_causes[0].code == "data_pipeline_bug" and "no Dice score can be" in d.root_causes[0].issue
    # percentages are a Dice too, and a Dice printed negated (the loss term it is in nnU-Net, AccSeg-Net) is one
    d = _top(tmp_path, lines.replace("-1000.154, 49.0404, -48.9845", "81.2, 77.0, 90.1").format("85.3"))
    assert "data_pipeline_bug" not in [c.code for c in d.root_causes]
    d = _top(tmp_path, "".join(f"[Epoch {e}/100] loss: {0.9 - 0.08 * e:.3f} | dice: {-0.3 - 0.05 * e:.4f}\n"
                               for e in range(1, 11)))
    assert "data_pipeline_bug" not in [c.code for c in d.root_causes]


def test_readings_added_for_thin_pastes_stay_quiet_on_sound_ones(tmp_path):
    """Accuracies printed in percent compare as shares; a converged tail that creeps down is no LR too low; a
    validation loss printed to two decimals that repeats while the accuracy moves is no frozen model; a
    garbled pycocotools value loses nothing else; a CI log's pip line is no launch command."""
    healthy = _top(tmp_path, "Epoch 9: train_acc 91.2 val_acc 90.8\nEpoch 10: train_acc 91.3 val_acc 90.9\n"
                             "Test accuracy: 90.3\n")
    assert {c.code for c in healthy.root_causes} <= {"healthy"}
    tail = "".join(f"Epoch {e} loss {0.2510 - 0.0003 * (e - 96):.4f} acc {0.912 + 0.001 * (e > 97):.3f}\n"
                   for e in range(96, 101))
    assert "lr_too_low" not in [c.code for c in _top(tmp_path, tail).root_causes]
    val = "".join(f"epoch {e} val_loss=0.21 val_acc={0.93 + 0.01 * (e % 2):.2f}\n" for e in range(1, 5))
    assert "no_parameter_updates" not in [c.code for c in _top(tmp_path, val).root_causes]
    coco = "loss: 0.5\nloss: 0.4\n Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.1.2\n"
    d, run = diagnose(_write(tmp_path, coco))
    assert "train_loss" in run.metrics.names()
    ci = "Run python -m pip install --upgrade pip\n$ python train.py --optimizer adam --lr 0.5 --epochs 3\n"
    assert _top(tmp_path, ci, "output.txt").root_causes[0].code == "lr_too_high"


def _write(tmp_path, text: str, name: str = "train.log"):
    (tmp_path / name).write_text(text)
    return tmp_path


def test_a_trainers_bare_loss_is_nan_message_puts_the_lr_first_and_the_overflow_next(tmp_path):
    # RecBole #679 (tests/wild, tune half; the overflow settled it) beside the probes' yolov3 #1123, ssd_keras #136
    # and age-gender-estimation #97 (the LR settled them): a trainer's NaN message with nothing around it reads both
    d = _top(tmp_path, "ValueError: Training loss is nan\n\ndataset: ml-100k\nmodel: Caser\n", name="output.txt")
    assert [c.code for c in d.root_causes[:2]] == ["lr_too_high", "numerical_instability"]


def test_a_warm_up_under_way_or_a_loss_of_zero_is_no_rate_too_low(tmp_path):
    # trl #1473 (tests/wild, tune half): ORPO's first log dicts, the LR rising 2.5e-08, 5e-08, 7.5e-08 (a warm-up,
    # its top yet to come) over a loss of 0.0 with grad_norm nan; each of the two alone is no rate too low
    def rows(loss, lrs):
        return "".join(f"{{'loss': {loss(i)}, 'learning_rate': {lr}, 'epoch': {i / 10}}}\n" for i, lr in enumerate(lrs))
    rising = ("2.5e-08", "5e-08", "7.5e-08")
    flat = lambda i: 1.2345 + 0.0001 * (i % 2)           # noqa: E731  (not at chance: that reading lists a low LR)
    cases = {"warming": rows(flat, rising), "zero": rows(lambda i: 0.0, ["7.5e-08"] * 12),
             "held": rows(flat, ["7.5e-08"] * 12), "rising all run": rows(flat, [f"{1e-10 * 1.03 ** i:.3e}"
                                                                                 for i in range(200)])}
    got = {}
    for name, text in cases.items():
        (tmp_path / name).mkdir()
        got[name] = "lr_too_low" in _read(_top(tmp_path / name, text))
    # a rate held at 7.5e-08 over a loss that does not move is too low, and so is a warm-up longer than the run
    assert got == {"warming": False, "zero": False, "held": True, "rising all run": True}


def test_a_paste_quoted_in_markdown_or_prefixed_by_a_launcher_reads_as_itself(tmp_path):
    # GluonTS #608 and llama-cookbook #133 (tests/wild, tune half) quoted with `> ` or behind `[rank0]:` (the
    # excerpt probe's dressings): a file named like model outputs still reads as a log
    for k, dress in enumerate(("> ", "[rank0]: ", "10:22:33 ")):
        lines = "".join(f"{dress}[2020-02-08 12:04:19 +0100] [59599] [INFO] #test_score (local, "
                        f"wQuantileLoss[0.{q}]): inf\n" for q in (1, 2))
        (tmp_path / str(k)).mkdir()
        assert _read(_top(tmp_path / str(k), lines, name="output.txt"))[0] == "numerical_instability", dress
    (tmp_path / "t").mkdir()
    assert _read(_top(tmp_path / "t", "\ntensor(nan)\n", name="output.txt"))[0] == "numerical_instability"


def test_tensorboards_dropped_nan_alone_is_healthy_with_the_loss_as_the_low_alternative(tmp_path):
    # xgboost #7586 (a NaN MAPE, tune half) and wenet #1472 (harmless, tune half) paste the same line: healthy
    # first, and a low note naming the number that would tell; a finite loss beside it leaves no note
    d = _top(tmp_path, "WARNING:root:NaN or Inf found in input tensor.\n", name="output.txt")
    assert [(c.code, c.severity) for c in d.root_causes[:2]] == [("healthy", "info"), ("numerical_instability", "low")]
    (tmp_path / "f").mkdir()
    d = _top(tmp_path / "f", "WARNING:tensorboardX.x2num:NaN or Inf found in input tensor.\n"
                             + "".join(f"Train Epoch: 1 [{i}/5000]\tLoss: {0.03 / (i + 1):.6f}\n" for i in range(4)))
    assert "numerical_instability" not in [c.code for c in d.root_causes]


def test_darknets_nan_averages_over_no_object_are_no_nan(tmp_path):
    # darknet #1082 / #2540 (tests/wild, tune half): `count: 0` at a scale makes its averages 0/0; with objects
    # counted, the same NaN is a value gone NaN
    line = ("Region 23 Avg IOU: nan, Class: nan, Obj: nan, No Obj: 0.514100, .5R: nan, .75R: nan,  count: {}\n")
    assert _top(tmp_path, line.format(0), name="output.txt").root_causes[0].code == "healthy"
    (tmp_path / "c").mkdir()
    assert _read(_top(tmp_path / "c", line.format(5), name="output.txt"))[0] == "numerical_instability"
    # a scale with objects between two without (the probe's three-line window of #1082): its finite Class does not
    # make the empty scales' nan a value gone NaN
    ok = ("Region 16 Avg IOU: 0.328728, Class: 0.514288, Obj: 0.592841, No Obj: 0.498886, .5R: 0.086207, "
          ".75R: 0.0,  count: 58\n")
    (tmp_path / "m").mkdir()
    assert _top(tmp_path / "m", line.format(0) + ok + line.format(0), name="train.log").root_causes[0].code == "healthy"
    # ...in a long log too: every line of a folded harmless message is kept, not the first thousands
    (tmp_path / "long").mkdir()
    long = (line.format(0) + ok + line.format(0)) * 6000
    assert _top(tmp_path / "long", long, name="train.log").root_causes[0].code == "healthy"


def test_a_boosting_metric_nan_from_its_first_round_is_the_datas(tmp_path):
    # dmlc/xgboost #194 (tests/wild xgboost-r-cv-rmse-nan-dataframe-dmatrix-194, tune half): a data frame
    # passed to xgb.DMatrix as it was; R's xgb.cv prints NaN from round 0
    d = _top(tmp_path, "".join(f"[{i}]\ttrain-rmse:NaN+NA\ttest-rmse:NaN+NA\n" for i in range(3)), "output.txt")
    assert d.root_causes[0].code == "data_pipeline_bug"
    assert "lr_too_high" not in [c.code for c in d.root_causes if c.analyzer == "excerpt"]
    assert any("gradient-boosting" in e.text for e in d.root_causes[0].evidence)


def test_a_lightgbm_valid_line_counts_as_boosting_too(tmp_path):
    d = _top(tmp_path, "[1]\tvalid_0's l2: 0.93\n[2]\tvalid_0's l2: nan\n[3]\tvalid_0's l2: nan\n")
    assert d.root_causes[0].code == "data_pipeline_bug"
    assert "lr_too_high" not in [c.code for c in d.root_causes if c.analyzer == "excerpt"]


@pytest.mark.parametrize("text", ["Mean iou =  0.046470389101241724\n",
                                  "mIoU:  3.464414239463952\nmIoU:  4.031567725489401 total_data:  135\n",
                                  "Eval result: mIoU/mAcc/allAcc 0.0038/0.0150/0.0069.\n"])
def test_a_segmentation_miou_near_zero_points_at_the_ground_truths_encoding(tmp_path, text):
    # deeplab-resnet #41, AdapNet++ #18, semseg #17 (tests/wild, tune half): ground truth read as RGB, ids not
    # mapped to train ids
    d = _top(tmp_path, text, "output.txt")
    assert d.root_causes[0].code == "data_pipeline_bug" and "train ids" in d.root_causes[0].fix


def test_a_fair_miou_or_one_inside_a_training_log_is_no_data_bug(tmp_path):
    d = _top(tmp_path, "mIoU: 0.62\n", "output.txt")
    assert "data_pipeline_bug" not in _read(d)
    d = _top(tmp_path, "".join(f"epoch {i} loss: {2.0 - i * 0.1:.2f}\n" for i in range(1, 4)) + "mIoU: 0.02\n")
    assert "data_pipeline_bug" not in _read(d)


def test_a_row_masked_whole_is_listed_low_as_where_a_softmax_nan_comes_from(tmp_path):
    # allennlp #890 (tests/wild allennlp-masked-log-softmax-all-masked-row-nan-890, tune half): the mask's
    # block alone, before the NaN it caused is printed
    d = _top(tmp_path, "Variable containing:\n  0   0   0   0   0   0\n-inf -inf -inf -inf -inf -inf\n"
                       "[torch.cuda.FloatTensor of size 2x6 (GPU 0)]\n", "output.txt")
    top = d.root_causes[0]
    assert top.code == "numerical_instability" and top.severity == "low" and top.evidence[0].locator == "line 3"


def test_a_causal_mask_printed_is_no_masked_row(tmp_path):
    d = _top(tmp_path, "tensor([[0., -inf, -inf],\n        [0., 0., -inf],\n        [0., 0., 0.]])\n", "output.txt")
    assert "numerical_instability" not in _read(d)


@pytest.mark.parametrize("text", [
    # a network's own `[epoch] name-name: value` lines: no boosting library's (no tab, a blank after the colon)
    "lr=0.5, batch=64, model=ResNet18\n[1] train-loss: 2.30 val-loss: 2.31\n[2] train-loss: 2.10 val-loss: 2.15\n"
    "[3] train-loss: 1.95 val-loss: 2.01\n[4] train-loss: nan val-loss: nan\n[5] train-loss: nan val-loss: nan\n",
    # a LightGBM baseline's lines before the network that diverged: the NaN is not on them
    "[1]\tvalid_0's auc: 0.71\n[2]\tvalid_0's auc: 0.72\n"
    + "".join(f"epoch {i} loss: {v}\n" for i, v in enumerate([0.9, 1.4, 2.2, 3.9, 7.5, "nan"], 1)),
])
def test_only_a_nan_on_a_boosting_line_is_read_as_boostings(tmp_path, text):
    d = _top(tmp_path, text)
    assert "lr_too_high" in _read(d)[:2]
    assert not any("gradient-boosting" in e.text for c in d.root_causes for e in c.evidence)


def test_lightgbms_best_gain_of_minus_inf_is_no_value_gone_bad(tmp_path):
    text = "".join(f"[LightGBM] [Warning] No further splits with positive gain, best gain: -inf\n"
                   f"[{i}]\tvalid_0's auc: {0.70 + i / 100:.2f}\n" for i in range(1, 6))
    assert _read(_top(tmp_path, text)) in ([], ["healthy"])


def test_a_segmenters_first_evaluations_are_not_a_data_bug(tmp_path):
    d = _top(tmp_path, "Epoch 1 validation: mIoU: 0.021\nEpoch 2 validation: mIoU: 0.034\n"
                       "Epoch 3 validation: mIoU: 0.048\n")
    assert "data_pipeline_bug" not in _read(d)


def _megatron(scales, skipped, loss: bool = False) -> str:
    def lm(i: int) -> str:
        return f"lm loss: {8 - i / 4:.6E} | " if loss else ""
    return "".join(f" iteration {i:8d}/ 2753818 | consumed samples: {8 * i:12d} | elapsed time per iteration (ms): "
                   f"1152.3 | learning rate: 1.000E-07 | global batch size:     8 | {lm(i)}loss scale: {sc} | "
                   f"number of skipped iterations: {sk:3d} | number of nan iterations:   0 |\n"
                   for i, (sc, sk) in enumerate(zip(scales, skipped), 1))


def test_every_megatron_iteration_skipped_under_a_scale_that_holds_is_no_update(tmp_path):
    # NVIDIA/Megatron-LM #602 (tests/wild, tune half): `number of skipped iterations: 1` at every iteration, the
    # scale held at 16384 and no lm loss: the optimizer never stepped (its saved state has no exp_avg)
    d = _top(tmp_path, _megatron([16384.0] * 4, [1] * 4))
    assert _read(d)[:2] == ["no_parameter_updates", "numerical_instability"]
    assert d.root_causes[0].severity == "high" and d.root_causes[0].evidence[0].locator == "line 1"


@pytest.mark.parametrize("scales, skipped, loss", [
    ([2.0 ** (32 - i) for i in range(6)], [1] * 6, False),       # the dynamic scaler's search at a start: halving
    ([65536.0] * 4, [1] * 4, True),                              # iterations that printed a loss ran
    ([16384.0] * 4, [1, 1, 0, 1], False),                        # one report stepped
])
def test_skipped_iterations_that_are_a_scalers_search_or_not_all_are_no_finding(tmp_path, scales, skipped, loss):
    assert "no_parameter_updates" not in _read(_top(tmp_path, _megatron(scales, skipped, loss)))


@pytest.mark.parametrize("first, name, lead", [(-1e18, "output.txt", "lr_too_high"),
                                               (-3.0, "train.log", "numerical_instability")])
def test_values_at_1e10_beside_a_column_that_turns_nan_put_the_lr_first(tmp_path, first, name, lead):
    # 222464/HTSL #1 (tests/wild, tune half): a Q value printed at -5e19 before the third column turned NaN is a
    # run that diverged (the maintainer: lower the Q learning rate); the same rows at -3 read as an overflow.
    # (An `output.txt` of small values with a NaN is a model's outputs, not read as a log: a train.log is.)
    rows = [f"{first * (i + 7):g} 0 {0.95 + i / 1000:g}\n" for i in range(8)] + [f"{first * 11:g} 0 nan\n"] * 3
    d = _top(tmp_path, "".join(rows), name)
    assert _read(d)[0] == lead and "lr_too_high" in _read(d)[:2]


def test_one_task_at_zero_beside_tasks_that_score_is_its_ground_truth(tmp_path):
    # facebookresearch/detectron2 #2957 (tests/wild, tune half): bbox AP 0.0 at every threshold while the same
    # model's keypoints score 89 and masks 25: boxes registered as XYXY_ABS in a dataset that holds XYWH
    res = ("OrderedDict([('bbox', {'AP': 0.0, 'AP50': 0.0, 'AP75': 0.0, 'APs': 0.0, 'APm': 0.0, 'APl': 0.0}), "
           "('keypoints', {'AP': 89.12167762924479, 'AP50': 90.35358249754294}), ('segm', {'AP': 25.232762212600246, "
           "'AP50': 63.972208860200396, 'AP75': 15.620111291937434})])\n")
    d = _top(tmp_path, res, "output.txt")
    assert _read(d)[0] == "data_pipeline_bug" and "BoxMode" in d.root_causes[0].fix
    # a size with no object (nan) and per-class keys with spaces (`'AP-traffic light'`) are read through
    d = _top(tmp_path, res.replace("'APl': 0.0", "'APl': nan, 'AP-traffic light': 0.0"), "output.txt")
    assert _read(d)[0] == "data_pipeline_bug"
    # every task low but not 0, a lone task at 0 (an untrained model), a keypoint head at 0 beside boxes at 12 early
    # on, and a value no float reads (`0.1.0`): not this reading, and no analyzer fails
    for text in (res.replace("'AP': 0.0, 'AP50': 0.0", "'AP': 0.1, 'AP50': 0.3"),
                 "OrderedDict([('bbox', {'AP': 0.0, 'AP50': 0.0, 'AP75': 0.0})])\n",
                 "Evaluation results at iter 499: OrderedDict([('bbox', {'AP': 12.3, 'AP50': 30.1}), "
                 "('keypoints', {'AP': 0.0, 'AP50': 0.0})])\n",
                 "step 1 loss 2.31\nstep 2 loss 2.2\nstep 3 loss 2.1\nstep 4 loss nan\n[('pkgs', {'APEX': 0.1.0})]\n"):
        (tmp_path / "output.txt").write_text(text)
        d, _ = diagnose(tmp_path)
        assert not any("every threshold" in c.issue for c in d.root_causes) and not d.failed_analyzers


@pytest.mark.parametrize("tps, severity", [("0.00", "medium"), ("1843.20", "critical")])
def test_a_zero_gradient_norm_beside_a_zero_throughput_is_a_placeholder_maybe(tmp_path, tps, severity):
    # NVIDIA-NeMo/Automodel #780 (tests/wild, tune half, healthy): the sequence-classification recipe printed
    # grad_norm 0.0000 and tps 0.00 at every step because it computed neither; a throughput of 0 is no step
    # that ran, so the zero norm is said with less weight. With a real throughput it stays critical.
    text = "".join(f"2025-11-07 17:20:43 | INFO | root | step {i} | epoch 0 | loss {v} | grad_norm 0.0000 | "
                   f"lr 3.00e-04 | mem 4.63 GiB | tps {tps}({tps}/gpu) | num_label_tokens 0\n"
                   for i, v in enumerate((0.8371, 0.6606, 0.8939, 0.6635, 0.6588)))
    d = _top(tmp_path, text)
    zero = next(c for c in d.root_causes if c.code == "no_parameter_updates")
    assert zero.severity == severity


@pytest.mark.parametrize("rows", [
    "-1.71805e+19 0 -nan\n-1.72727e+19 9.20951e+15 -nan\n-1.69868e+19 3.12143e+17 -nan\n",   # NaN at every row
    "-1.04449e+19 0 1\n-1.13727e+19 0 nan\n-1.4182e+19 0 -nan\n",                           # whole-valued cells
    "-5.40889e+19 0 0.971343\n-1.03274e+19 0 0\n-1.04449e+19 0 1\n-1.13727e+19 0 nan\n",     # cut at its first NaN
    # a first column that rises in whole floats at 1e19 is no step counter
    "-1.80037e+19 4.48716e+17 -nan\n-1.29962e+19 4.09293e+18 -nan\n-1.01659e+19 2.32697e+18 -nan\n",
    # the value printed in full, not in e-notation
    "-4.25776e+19 9.5e+18 0.958\n-10444900000000000000.00000 0 1\n-11372700000000000000.00000 0 nan\n",
])
def test_three_rows_of_the_diverged_print_loop_are_enough(tmp_path, rows):
    # the HTSL paste cut to three rows (the excerpt probe's windows): the NaN column beside one at 1e19
    assert _read(_top(tmp_path, rows, "output.txt"))[0] == "lr_too_high"
    # one NaN column beside ordinary values is a metric never computed, not this reading
    (tmp_path / "o").mkdir()
    assert "lr_too_high" not in _read(_top(tmp_path / "o", "0.5 0.1 nan\n0.4 0.2 nan\n0.3 0.3 nan\n", "output.txt"))


def test_a_count_at_1e10_or_a_loss_large_from_its_start_is_no_divergence(tmp_path):
    # (the session's review) a token count beside a loss column that turns NaN, and a Keras regression on
    # unscaled prices whose loss sits at 4e10 and falls: neither says the weights diverged
    rows = "".join(f"{2.31 - i / 10:.4f} {8388608000 * (i + 1)}\n" for i in range(6)) + \
        "".join(f"nan {8388608000 * (i + 7)}\n" for i in range(3))
    assert _read(_top(tmp_path, rows))[0] == "numerical_instability"
    (tmp_path / "k").mkdir()
    bar = "120/120 [==============================] - 1s 5ms/step"
    keras = "".join(f"Epoch {i}/9\n{bar} - loss: {4.12e10 - i * 5e8:.4e} - val_loss: {4.33e10 - i * 5e8:.4e}\n"
                    for i in range(1, 6)) + \
        "Epoch 6/9\n120/120 [==============================] - 1s 5ms/step - loss: nan - val_loss: nan\n"
    d = _top(tmp_path / "k", keras)
    assert not any("diverged" in e.text for c in d.root_causes for e in c.evidence)


def test_the_last_lines_of_a_decayed_schedule_are_no_lr_too_low(tmp_path):
    # hiyouga/LLaMA-Factory #774 (tests/wild, tune half, healthy): trainer_log.jsonl's last lines, the cosine's
    # rate near 0 at 99% of the run. `current_steps` is the step: the paste is the run's tail, not its rate.
    lines = [(3200, 4.4671, 1.4439610072863874e-08, 98.92), (3210, 4.4577, 7.367495402210711e-09, 99.23),
             (3220, 4.4458, 2.6523817248214068e-09, 99.54), (3230, 4.4598, 2.9471371284783834e-10, 99.85)]
    text = "".join(json.dumps({"current_steps": s, "total_steps": 3235, "loss": v, "eval_loss": None,
                               "learning_rate": lr, "epoch": 0.99, "percentage": p}) + "\n" for s, v, lr, p in lines)
    d = _top(tmp_path, text, "trainer_log.jsonl")
    assert not [c for c in d.root_causes if c.code == "lr_too_low" and c.severity in ("critical", "high")]
    # printed with six decimals the tiny rates read 0, in no falling order; the log's own total_steps still puts
    # every line in the run's last 2%
    rates = ("0.000000", "0.000000", "2.65e-09", "0.000000")
    text = "".join(f'{{"current_steps": {s}, "total_steps": 3235, "loss": {v}, "learning_rate": {r}, '
                   f'"percentage": {p}}}\n' for (s, v, _, p), r in zip(lines, rates))
    (tmp_path / "r").mkdir()
    d = _top(tmp_path / "r", text, "trainer_log.jsonl")
    assert not [c for c in d.root_causes if c.code == "lr_too_low" and c.severity in ("critical", "high")]
    # the same rates early in a run (step 200 of 3235) are a rate too low
    early = text.replace('"current_steps": 32', '"current_steps": 2')
    (tmp_path / "e").mkdir()
    assert _top(tmp_path / "e", early, "trainer_log.jsonl").root_causes[0].code == "lr_too_low"
    # a rate held flat that late is a rate, not a schedule's end
    flat = "".join(f'{{"current_steps": {s}, "total_steps": 3235, "loss": {2.5 - s * 1e-7:.7f}, '
                   f'"learning_rate": 3e-07}}\n' for s in range(1700, 3201, 100))
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "config.yaml").write_text("optimizer: adamw\n")    # 3e-7 below AdamW's range, not far
    assert _top(tmp_path / "f", flat, "trainer_log.jsonl").root_causes[0].code == "lr_too_low"


def test_round_two_pastes_of_session_47(tmp_path):
    """Forum and issue pastes a session 47 helper ran mltd on, each read wrongly on its own text."""
    def top(name: str, files: dict[str, str]):
        (tmp_path / name).mkdir()
        for f, text in files.items():
            (tmp_path / name / f).write_text(text)
        d, _ = diagnose(tmp_path / name)
        return d.root_causes
    # chenzhang.org: Keras, loss and accuracy identical at 9 epochs; the epoch header sits on the line above the
    # metrics, so the epochs it spanned were counted as 0 and the still loss went unread ("healthy")
    keras = "".join(f"Epoch {i}/10\n2499007/2499007 [======] - 0s - loss: {1.9112 if i == 1 else 1.9105:.4f} - "
                    f"acc: {0.5325 if i == 1 else 0.5378:.4f}\n" for i in range(1, 11))
    assert top("still", {"train.log": keras})[0].code == "no_parameter_updates"
    # (review) a converged tail lower at every epoch than at the one before is no still loss, however little it moves
    tail = "".join(f"Epoch {i}/50\n404/404 [======] - 1s - loss: {12.3571 - 0.003 * (i - 41):.4f} - mae: "
                   f"{2.61 - 0.001 * (i - 41):.4f}\n" for i in range(41, 51))
    assert "no_parameter_updates" not in [c.code for c in top("converged", {"train.log": tail})]
    # ...nor where two epochs print the same 4 decimals
    tied = tail.replace(f"{12.3571 - 0.003 * 3:.4f}", f"{12.3571 - 0.003 * 2:.4f}")
    assert "no_parameter_updates" not in [c.code for c in top("tied", {"train.log": tied})]
    # (review) a prediction file with a NaN among its numbers stays a model's outputs
    assert not any(c.severity == "critical" for c in top("preds", {"predictions.txt": "0.5321\nnan\n0.6112\n0.4987\n"}))
    # ...and a long console of them is read whole lines at a time (4 KB cut mid-line)
    assert top("long", {"output_log.txt": "0.1234\n" + "nan\n" * 3000})[0].code in (
        "numerical_instability", "lr_too_high")
    # docs.fast.ai: a training loss 38 -> 839 beside a validation loss above it is a divergence, no fitted gap
    causes = top("fastai", {"train.log": "| epoch | train_loss | valid_loss | time |\n|---|---|---|---|\n"
                                         "| 0 | 38.214138 | 25.269005 | 00:00 |\n"
                                         "| 1 | 377.145508 | 890.010376 | 00:00 |\n"
                                         "| 2 | 839.392883 | 9965.747070 | 00:00 |\n"})
    assert causes[0].code == "lr_too_high" and "overfitting" not in [c.code for c in causes]
    # a TF1 cost printed alone, then NaN alone, in a file named output.txt: a console, not a model's outputs
    assert top("cost", {"output.txt": "0.69314718056\nnan\nnan\nnan\n"})[0].code in (
        "numerical_instability", "lr_too_high")
    # stable-baselines #178: OpenAI Baselines' `eplenmean` NaN before any episode ended is no overflow
    table = ("--------------------------------------\n| approxkl           | 6.6e-05       |\n"
             "| ep_rewmean         | nan           |\n| eplenmean          | nan           |\n"
             "| policy_loss        | 0.0006248371  |\n| value_loss         | 63.725853     |\n"
             "--------------------------------------\n")
    causes = top("rl", {"train.log": table})
    assert not any(c.code == "numerical_instability" and c.severity == "critical" for c in causes)
    # LlamaFactory #9298: two reports of a warm-up's first LRs (0, then 3.3e-10) are no LR too low ("moved 0.0%")
    causes = top("warmup", {"train.log": "{'loss': 3.5249, 'grad_norm': 100.69, 'learning_rate': 0.0, 'epoch': 1.0}\n"
                                         "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 3.333333333333333e-10, "
                                         "'epoch': 2.0}\n"})
    assert "lr_too_low" not in [c.code for c in causes]
    # ModernBERT #233: a Trainer's grad_norm NaN from the paste's first line, at epoch 0.53, is no "nothing was
    # learned yet": the paste starts half an epoch in
    causes = top("midway", {"train.log": "".join(f"{{'loss': {v}, 'grad_norm': nan, 'learning_rate': 9.77e-06, "
                                                 f"'epoch': 0.53}}\n" for v in (0.2051, 0.0, 0.0))})
    assert not any("nothing was learned yet" in e.text for c in causes for e in c.evidence)


def test_an_auc_of_exactly_half_at_every_round_is_one_score_for_every_example(tmp_path):
    # dmlc/xgboost #64 ("dont actually learn ... constant prediction"): the higgs demo's train-auc at 0.500000 every
    # round; no AUC was read at all, and the paste answered "nothing shows a fault"
    lines = "".join(f"[{i}]\ttrain-auc:0.500000\ttrain-ams@0.15:0.620265\n" for i in range(13))
    d = _top(tmp_path, "loading data end, start to boost trees\n" + lines)
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and "auc is exactly 0.5 at every one of 13 reports" in top.issue
    # a boosting library's learning rate only shrinks each tree: no LR reading, the trees that never split instead
    assert _read(d)[:2] == ["data_pipeline_bug", "no_parameter_updates"] and "lr_too_high" not in _read(d)
    # RecBole's end-of-run dict (a tune case's dialect): validation and test AUC both 0.5
    d = _top(tmp_path, "{'best_valid_result': OrderedDict([('auc', 0.5), ('logloss', 15.5394)]),\n"
                       " 'test_result': OrderedDict([('auc', 0.5), ('logloss', 15.5843)])}\n")
    assert d.root_causes[0].code == "data_pipeline_bug" and "exactly 0.5 at every one of 2" in d.root_causes[0].issue
    # dmlc/xgboost #5993: 0.5 over the first two rounds, then the AUC moves: trees that began to split
    d = _top(tmp_path, "[1]\tvalidation_0-auc:0.5\tvalidation_0-logloss:0.960257\tvalidation_1-auc:0.5\n"
                       "[2]\tvalidation_0-auc:0.5\tvalidation_0-logloss:0.890832\tvalidation_1-auc:0.5\n"
                       "[3]\tvalidation_0-auc:0.489583\tvalidation_0-logloss:0.862967\tvalidation_1-auc:0.663866\n"
                       "[6]\tvalidation_0-auc:0.592882\tvalidation_0-logloss:0.763457\tvalidation_1-auc:0.655462\n")
    assert not any("AUC" in c.issue for c in d.root_causes)


def test_an_auc_of_1_from_the_first_round_is_too_good_to_be_true(tmp_path):
    # LightGBM #127 (a Kaggle set, "I keep getting test auc of 1"; the reply: "something is wrong with your code")
    head = ("[LightGBM] [Info] Number of data: 6245039, number of used features: 73\n"
            "[LightGBM] [Info] Start training from score -0.001081\n")
    d = _top(tmp_path, head + "[1]:\ttest's auc:1 \n[2]:\ttest's auc:1 \n")
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and top.issue.startswith("Too good to be true: test_auc is 1")
    # the same AUC from round 57 on is a model that got there: no leak read
    d = _top(tmp_path, head + "[57]:\ttest's auc:1 \n[58]:\ttest's auc:1 \n")
    assert not any(c.issue.startswith("Too good") for c in d.root_causes)


_BERTGCN = """\
Epoch: 1  Train acc: 0.5904 loss: 0.6174  Val acc: 0.5828 loss: 0.6347  Test acc: 0.5469 loss: 0.7232
New checkpoint
Epoch: 2  Train acc: 0.5018 loss: 0.7964  Val acc: 0.5045 loss: 0.7927  Test acc: 0.5044 loss: 0.7967
Epoch: 3  Train acc: 0.6035 loss: 0.6463  Val acc: 0.5923 loss: 0.6950  Test acc: 0.6178 loss: 0.7489
New checkpoint
Epoch: 4  Train acc: 0.5031 loss: 0.7293  Val acc: 0.4991 loss: 0.7661  Test acc: 0.5031 loss: 0.8364
Epoch: 5  Train acc: 0.5006 loss: 0.7919  Val acc: 0.4973 loss: 0.8167  Test acc: 0.5010 loss: 0.8850
Epoch: 6  Train acc: 0.5021 loss: 0.6507  Val acc: 0.4991 loss: 0.6769  Test acc: 0.5029 loss: 0.6873
Epoch: 7  Train acc: 0.5299 loss: 0.6656  Val acc: 0.5272 loss: 0.6932  Test acc: 0.5445 loss: 0.6999
Epoch: 8  Train acc: 0.5003 loss: 1.0031  Val acc: 0.4973 loss: 0.9910  Test acc: 0.5000 loss: 1.0739
Epoch: 9  Train acc: 0.5003 loss: 0.6611  Val acc: 0.4973 loss: 0.7451  Test acc: 0.5000 loss: 0.7582
Epoch: 10  Train acc: 0.5003 loss: 0.6498  Val acc: 0.4973 loss: 0.6794  Test acc: 0.5000 loss: 0.6771
Epoch: 11  Train acc: 0.5003 loss: 0.8106  Val acc: 0.4973 loss: 1.0257  Test acc: 0.5000 loss: 1.1180
Epoch: 12  Train acc: 0.5003 loss: 0.6220  Val acc: 0.4973 loss: 0.7097  Test acc: 0.5000 loss: 0.7125
"""


def test_an_accuracy_that_fell_and_froze_to_the_digit_is_a_collapse(tmp_path):
    # ZeroRin/BertGCN #5 (a BERT+GCN fine-tune on the asker's data): accuracy near 0.6 in the first epochs, then
    # train, val and test accuracy identical to four digits from epoch 8 on; it read no cause at all
    d = _top(tmp_path, _BERTGCN)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and "val_acc fell from 0.5923 to 0.4973" in top.issue
    assert "last 5 reports (train_acc and test_acc too)" in top.issue
    assert _read(d)[:3] == ["lr_too_high", "mode_collapse", "data_pipeline_bug"]
    # a running best printed each epoch sits at its own maximum: no collapse; nor a converged accuracy at its best
    best = "".join(f"Epoch: {i}  loss: {1 / i:.4f}  test acc: {a:.4f}  best test acc: 0.9120\n"
                   for i, a in enumerate([0.85, 0.9120, 0.90, 0.89, 0.905, 0.90, 0.91], 1))
    assert not any("collapsed" in c.issue for c in _top(tmp_path, best).root_causes)
    done = "".join(f"Epoch: {i}  Train acc: {a:.4f} loss: {0.5 / i:.4f}\n"
                   for i, a in enumerate([0.80, 0.95, 0.97, 0.9812, 0.9812, 0.9812, 0.9812], 1))
    assert not any("collapsed" in c.issue for c in _top(tmp_path, done).root_causes)


def test_a_validation_loss_at_ln_k_beside_a_still_accuracy_is_a_uniform_guess(tmp_path):
    # LingxiaoShawn/PairNorm #1 (Cora, 7 classes): the validation loss sits at ln(7) and its accuracy at 0.16 for
    # twelve epochs while the training loss drifts down 7%; it read healthy at 0.99
    text = "".join(f"Epoch {i}: train loss {t} train acc: {ta}, val loss: {v} val acc {va}.\n" for i, (t, ta, v, va) in
                   enumerate([("2.023", "0.157", "1.963", "0.156"), ("2.050", "0.200", "1.962", "0.158"),
                              ("2.033", "0.179", "1.960", "0.158"), ("1.983", "0.186", "1.958", "0.158"),
                              ("1.957", "0.171", "1.958", "0.160"), ("1.958", "0.186", "1.957", "0.160"),
                              ("1.943", "0.207", "1.957", "0.160"), ("1.936", "0.157", "1.956", "0.160"),
                              ("1.931", "0.186", "1.955", "0.160"), ("1.908", "0.157", "1.954", "0.160"),
                              ("1.926", "0.186", "1.953", "0.160"), ("1.884", "0.193", "1.952", "0.160")]))
    d = _top(tmp_path, text)
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and "ln(7) = 1.946 at every one of 12 reports" in top.issue
    assert d.status != "no_failure_found"
    # the same validation loss beside a training accuracy that climbs: the held-out data, not the model
    text = "".join(f"Epoch {i}: train loss {2.0 - 0.15 * i:.3f} train acc: {0.3 + 0.06 * i:.3f}, val loss: "
                   f"{1.95 + 0.001 * (i % 3):.3f} val acc 0.143.\n" for i in range(10))
    top = _top(tmp_path, text).root_causes[0]
    assert top.code == "data_pipeline_bug" and "the held-out data is not what the model learned from" in top.issue
    # a validation loss that falls through ln(2) as its accuracy climbs learns: no reading
    text = "".join(f"Epoch {i}: train loss {0.70 - 0.02 * i:.3f} train acc: {0.5 + 0.03 * i:.3f}, val loss: "
                   f"{0.697 - 0.001 * i:.3f} val acc {0.50 + 0.02 * i:.3f}.\n" for i in range(8))
    assert not any("uniform guess" in c.issue for c in _top(tmp_path, text).root_causes)


@pytest.mark.parametrize("name", ["keras_small", "carried", "multirun", "rte", "cifar100", "initcarry2"])
def test_ties_plateaus_and_reprints_are_no_collapse_nor_uniform_guess(tmp_path, name):
    # (review of the collapse and held-out readings) a 40-sample validation set ties at 0.8750 while its loss
    # falls; a loop carries its last val_acc between evaluations; two Keras runs pasted one after the other; BERT
    # on RTE at eval_loss ~ln(2) with 66% accuracy; a converged CIFAR-100 whose val_loss sits near ln(3) at 71%;
    # the untrained model's test metrics printed again at every step
    epoch = "5/5 [==============================] - 0s 12ms/step - loss: {:.4f} - accuracy: {:.4f} - val_loss: " \
            "{:.4f} - val_accuracy: {:.4f}\n"
    texts = {
        "keras_small": "".join(f"Epoch {i}/10\n" + epoch.format(0.69 - 0.04 * i, 0.51 + 0.05 * i, 0.67 - 0.03 * i, va)
                               for i, va in enumerate([0.625, 0.875, 0.925, 0.875, 0.875, 0.875, 0.875], 1)),
        "carried": "".join(f"[epoch {e} | step {s}] loss {0.41 - s / 1e4:.4f} | acc {0.83 + s / 3e4:.4f} | "
                           f"val_acc {va}\n" for e, s, va in [(1, 500, 0.8906), (2, 1000, 0.9123)] +
                           [(3, s, 0.8537) for s in range(1500, 2000, 100)]),
        "multirun": "=== lr = 0.001 ===\n" + "".join(f"Epoch {i}/4\n" + epoch.format(0.65 - 0.1 * i, 0.6 + 0.08 * i,
                                                                                     0.6 - 0.08 * i, va)
                                                     for i, va in enumerate([0.75, 0.875, 0.925, 0.925], 1))
        + "=== lr = 0.0001 ===\n" + "".join(f"Epoch {i}/7\n" + epoch.format(0.69 - 0.04 * i, 0.53 + 0.04 * i,
                                                                            0.68 - 0.04 * i, va)
                                            for i, va in enumerate([0.6, 0.7, 0.825, 0.825, 0.825, 0.825, 0.825], 1)),
        "rte": "".join(f"{{'loss': {t}, 'learning_rate': 1e-05, 'epoch': {i}.0}}\n{{'eval_loss': {v}, 'eval_accuracy': "
                       f"{a}, 'eval_runtime': 1.2, 'epoch': {i}.0}}\n" for i, (t, v, a) in
                       enumerate([(0.6921, 0.6912, 0.6643), (0.6105, 0.6958, 0.6679), (0.4811, 0.6985, 0.6715),
                                  (0.3902, 0.6941, 0.6679), (0.3511, 0.6963, 0.6643)], 1)),
        "cifar100": "".join(f"Epoch {i}/200\n" + epoch.format(0.0121, 0.9991, v, a) for i, (v, a) in
                            enumerate([(1.1021, 0.7112), (1.0987, 0.7125), (1.1004, 0.7131), (1.0995, 0.7118),
                                       (1.1010, 0.7122)], 196)),
        "initcarry2": "".join(f"Iter {i} | train_loss {2.3 - 0.002 * i:.4f} | train_acc {0.09 + 0.001 * i:.4f} | "
                              "test_loss 2.3027 | test_acc 0.1000\n" for i in range(0, 600, 100)),
    }
    d = _top(tmp_path, texts[name])
    assert not any("collapsed" in c.issue or "uniform guess over" in c.issue and "held-out" in c.issue
                   for c in d.root_causes)
    if name == "cifar100":
        assert d.root_causes[0].code == "overfitting"


def test_a_fine_tune_that_fell_to_one_class_on_a_balanced_set_is_a_collapse(tmp_path):
    # (review) BERT above 5e-5: 88% after one epoch, then exactly 0.5000 on a balanced binary set; the value 0.5
    # is no "finely printed" tie, but one class's share of a balanced set is chance's level
    rows = [(0.3802, 0.8312, 0.2911, 0.8804), (0.6235, 0.6120, 0.6934, 0.5), (0.6942, 0.4987, 0.6932, 0.5),
            (0.6938, 0.5011, 0.6935, 0.5), (0.6936, 0.4996, 0.6931, 0.5)]
    d = _top(tmp_path, "".join(f"Epoch {i}/6\n782/782 [==============================] - 405s 518ms/step - loss: "
                               f"{t:.4f} - accuracy: {a:.4f} - val_loss: {v:.4f} - val_accuracy: {va:.4f}\n"
                               for i, (t, a, v, va) in enumerate(rows, 1)))
    assert _read(d)[:2] == ["lr_too_high", "mode_collapse"] and "fell from 0.8804 to 0.5" in d.root_causes[0].issue


@pytest.mark.parametrize("text, reading", [
    # (review) the eval set's AUC pinned while training ranks: the held-out rows, not the model
    ("".join(f"[{i}]\ttrain-auc:{0.84 + 0.01 * i:.6f}\teval-auc:0.500000\n" for i in range(5)), "held-out rows"),
    # LightGBM's training set at 1 beside a valid set at 0.81 on the same line: a deep first tree, no leak
    ("".join(f"[{i}]\ttraining's auc: 1\ttraining's binary_logloss: 0.5{i}\tvalid_1's auc: 0.81{i}\t"
             f"valid_1's binary_logloss: 0.6{i}\n" for i in range(1, 4)), None),
    # XGBoost's sklearn API: validation_0 is the training set when eval_set lists it first
    ("".join(f"[{i}]\tvalidation_0-auc:1.00000\tvalidation_1-auc:0.8351{i}\n" for i in range(3)), None),
    # one round, or AUCs that move about 0.5 (no signal on a large set), or near 1 and climbing: none pinned
    ("[0]\ttrain-auc:0.500000\teval-auc:0.500000\n", None),
    ("".join(f"[{i}]\teval-auc:{v}\n" for i, v in enumerate(["0.500213", "0.499841", "0.500377", "0.499652"])), None),
    ("".join(f"[{i}]\ttrain-auc:{t}\teval-auc:{e}\n" for i, (t, e) in
             enumerate([("0.999612", "0.999538"), ("0.999701", "0.999620"), ("0.999802", "0.999741")])), None),
])
def test_a_pinned_auc_is_read_per_set_and_to_its_printed_digits(tmp_path, text, reading):
    d = _top(tmp_path, text)
    if reading is None:
        assert not any("0.5 at every" in c.issue or c.issue.startswith("Too good") for c in d.root_causes)
    else:
        assert d.root_causes[0].code == "data_pipeline_bug" and reading in d.root_causes[0].issue


def test_a_nan_at_step_0_came_before_any_update(tmp_path):
    # BVLC/caffe #5986: the loss is NaN at iteration 0, the first forward pass, with the solver printing lr = 0
    # there; no learning rate made it, yet the LR reading sat beside the overflow's at 0.50, above the data's
    d = _top(tmp_path, "> 1508138445  INFO: src/caffe/solver.cpp : line 218 : Iteration 0 (-0.382098 iter/s, "
                       "183.199s/1 iters), loss = nan   \n"
                       "> 1508138445  INFO: src/caffe/solver.cpp : line 237 :     Train net output #0: loss = nan "
                       "(* 1 = nan loss)\n"
                       "> 1508138445  INFO: src/caffe/solvers/sgd_solver.cpp : line 105 : Iteration 0, lr = 0\n"
                       "> 1508138506  INFO: src/caffe/solver.cpp : line 218 : Iteration 1 (0.0163991 iter/s, "
                       "60.979s/1 iters), loss = nan\n")
    # the first batch's data or a log of 0 in the loss (llm.c #68, a probe: an epsilon in its cross-entropy fixed it)
    assert _read(d)[:2] == ["numerical_instability", "data_pipeline_bug"]
    lr = next(c for c in d.root_causes if c.code == "lr_too_high")
    assert lr.confidence <= 0.3 and any("before any update" in e.text for e in d.root_causes[1].evidence)
    # an epoch 0's loss is a mean over many updates: no first forward pass
    d = _top(tmp_path, "Epoch 0: loss nan\nEpoch 1: loss nan\n")
    assert not any("before any update" in e.text for c in d.root_causes for e in c.evidence)


def test_a_reward_that_fell_as_it_trained_is_a_policy_undone(tmp_path):
    # Unity-Technologies/ml-agents #805: the mean reward falls from 1.3 to -88 over six summaries; it read "too few
    # reports to judge" and healthy
    d = _top(tmp_path, "".join(f"INFO:unityagents: Brain: Step: {s}. Mean Reward: {r}. Std of Reward: {sd}.\n"
                               for s, r, sd in [(2000, "1.175", "0.000"), (4000, "1.320", "0.000"),
                                                (12000, "-3.601", "6.692"), (24000, "-3.902", "0.000"),
                                                (46000, "-31.675", "0.000"), (48000, "-88.323", "125.581")]))
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and top.issue.startswith("reward fell from 1.248 to -60")
    # vwxyzjn/cleanrl #11: one episode's reward per line (`episode_reward=`) is read, and it rose
    d = _top(tmp_path, "".join(f"global_step={s}, episode_reward={r}\n" for s, r in
                               [(3442, 15.527101137763129), (3456, 23.907788285943155), (3472, 19.012161566288178),
                                (3483, 15.243738651275635), (3500, 16.92202377319336), (3521, 30.636850357055664),
                                (3540, 28.046363830566406)]))
    assert d.root_causes[0].code == "healthy" and "reward rose" in d.root_causes[0].issue
    # a reward that dipped and came back is no fall
    d = _top(tmp_path, "".join(f"Step: {1000 * i}. Mean Reward: {r}.\n" for i, r in
                               enumerate([5.0, 3.0, 1.0, 2.0, 6.0, 8.0], 1)))
    assert not any("reward fell" in c.issue for c in d.root_causes)


def test_a_held_out_accuracy_beside_a_long_training_one_is_read_for_its_gap(tmp_path):
    # apache/mxnet #15962 (resnet18 at epoch 101): batch lines of accuracy=1.000000, `Train-accuracy=1.000000` and
    # `Validation-accuracy=0.808193`; twelve training reports made the paste too long for the excerpt's gap and
    # no trend analyzer reads accuracies, so it named nothing
    text = (
        "> 2019-08-21 14:56:44,024 INFO Epoch[101] Batch [250]\tSpeed: 581.56 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:56:54,971 INFO Epoch[101] Batch [300]\tSpeed: 584.65 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:57:05,945 INFO Epoch[101] Batch [350]\tSpeed: 583.26 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:57:14,472 INFO Epoch[101] Train-accuracy=1.000000\n"
        "> 2019-08-21 14:57:14,472 INFO Epoch[101] Time cost=85.508\n"
        "> 2019-08-21 14:57:14,947 INFO Saved checkpoint to \"image-classifier-resnet18_v2-0102.params\"\n"
        "> 2019-08-21 14:57:18,638 INFO Epoch[101] Validation-accuracy=0.808193\n"
        "> 2019-08-21 14:57:29,825 INFO Epoch[102] Batch [50]\tSpeed: 580.51 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:57:40,758 INFO Epoch[102] Batch [100]\tSpeed: 585.36 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:57:51,796 INFO Epoch[102] Batch [150]\tSpeed: 579.85 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:58:02,704 INFO Epoch[102] Batch [200]\tSpeed: 586.77 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:58:13,743 INFO Epoch[102] Batch [250]\tSpeed: 579.75 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:58:24,687 INFO Epoch[102] Batch [300]\tSpeed: 584.82 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:58:35,649 INFO Epoch[102] Batch [350]\tSpeed: 583.88 samples/sec\taccuracy=1.000000\n"
        "> 2019-08-21 14:58:44,386 INFO Epoch[102] Train-accuracy=1.000000\n"
    )
    top = _top(tmp_path, text).root_causes[0]
    assert top.code == "overfitting" and "training accuracy 1 against 0.8082 on validation" in top.issue
    # one batch at 1.0 at the end of batches near 0.85 is no fit: the median of the last reports is read
    noisy = text.replace("accuracy=1.000000", "accuracy=0.850000")
    d = _top(tmp_path, noisy[:noisy.rindex("accuracy=0.850000")] + "accuracy=1.000000\n")
    assert "overfitting" not in _read(d)


@pytest.mark.parametrize("text, first", [
    # (review of the step-0 reading) a loop whose step restarts each epoch, pasted from epoch 3's NaN on
    ("".join(f"Epoch [3/10], Step [{s}/938], Loss: nan\n" for s in range(0, 400, 100)), False),
    # a gradient norm at step 0 is the backward pass's, the loss beside it finite
    ("".join(f"step {s} | loss 2.3026 | grad_norm inf | lr 1.0e-03\n" for s in range(3)), False),
    # a run resumed from a checkpoint starts its counter at 0 on trained weights
    ("=> loading checkpoint 'checkpoints/ckpt_epoch_30.pth'\n=> loaded checkpoint 'checkpoints/ckpt_epoch_30.pth' "
     "(epoch 30)\n" + "".join(f"step {s} | loss nan | lr 0.1\n" for s in range(0, 30, 10)), False),
    # `epoch 0 | step 0` names the first forward pass too (the epoch equal to the step only at 0 says nothing)
    ("".join(f"epoch 0 | step {s} | loss nan | lr 3.0e-04\n" for s in range(0, 150, 50)), True),
])
def test_step_0_is_the_first_forward_pass_only_at_the_runs_start(tmp_path, text, first):
    d = _top(tmp_path, text)
    said = any("before any update" in e.text for c in d.root_causes for e in c.evidence)
    assert said == first
    if first:
        assert set(_read(d)[:2]) == {"numerical_instability", "data_pipeline_bug"}


def test_a_collapse_whose_validation_loss_settles_onto_ln2_is_still_a_collapse(tmp_path):
    # (review) the balanced-set fine-tune again, its val_loss easing down to ln(2) after the fall: settling at the
    # uniform guess, not learning
    rows = [(0.3802, 0.8312, 0.2911, 0.8804), (0.6235, 0.6120, 0.6991, 0.5), (0.6942, 0.4987, 0.6952, 0.5),
            (0.6938, 0.5011, 0.6941, 0.5), (0.6936, 0.4996, 0.6935, 0.5), (0.6934, 0.5003, 0.6932, 0.5)]
    d = _top(tmp_path, "".join(f"Epoch {i}/6\n782/782 [==============================] - 405s 518ms/step - loss: "
                               f"{t:.4f} - accuracy: {a:.4f} - val_loss: {v:.4f} - val_accuracy: {va:.4f}\n"
                               for i, (t, a, v, va) in enumerate(rows, 1)))
    assert _read(d)[0] == "lr_too_high" and "fell from 0.8804 to 0.5" in d.root_causes[0].issue


@pytest.mark.parametrize("text", [
    # (review) LightGBM's R package and its command-line build print their rounds their own way
    "[LightGBM] [Warning] Stopped training because there are no more leaves that meet the split requirements\n"
    + "".join(f"[{i}]:  test's auc:0.5\n" for i in range(1, 4)),
    "[LightGBM] [Warning] No further splits with positive gain, best gain: -inf\n"
    + "".join(f"[LightGBM] [Info] Iteration:{i}, training auc : 0.5\n[LightGBM] [Info] Iteration:{i}, valid_1 auc : "
              "0.5\n" for i in range(1, 4)),
])
def test_lightgbms_other_printers_are_boosting_rounds(tmp_path, text):
    d = _top(tmp_path, text)
    assert _read(d)[:2] == ["data_pipeline_bug", "no_parameter_updates"] and "lr_too_high" not in _read(d)


_YOLOV5_8 = """\
     Epoch   gpu_mem      GIoU       obj       cls     total   targets  img_size
    14/299      6.4G   0.02273  0.002925 0.0003764   0.02603        11       640: 100%|###| 6960/6960 [54:20<00:00]
               Class      Images     Targets           P           R      mAP@.5  mAP@.5:.95: 100%|###| 6960/6960
                 all    5.57e+04    1.74e+05    0.000332     0.00039     2.4e-06    8.59e-07
"""


def test_yolos_validation_row_of_all_classes_is_read(tmp_path):
    # ultralytics/yolov5 #8 ("training actually can not work"): P, R and mAP near 0 at epoch 14 under YOLO's
    # validation header; the row was never read and the paste read healthy
    d = _top(tmp_path, _YOLOV5_8)
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and top.issue.startswith("map and map50 are under")
    # the same row at the first epoch is a detector still learning to localise: no reading
    d = _top(tmp_path, _YOLOV5_8.replace("14/299", "0/299"))
    assert "data_pipeline_bug" not in _read(d)
    # ultralytics/ultralytics #21765 (YOLOv8's `Box(P ... mAP50-95)` header): the rows are read, mAP 0.54 to 0.56
    (tmp_path / "train.log").write_text("".join(
        f"      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
        f"      {e}/55      9.95G     0.{e}38       5.07      2.977         12        640: 100%|####| 787/787\n"
        f"                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|####| 66/66\n"
        f"                   all       1049       1186      0.929      0.872      0.933      {m}\n"
        for e, m in [(20, "0.543"), (21, "0.559"), (22, "0.563")]))
    assert list(load_run(tmp_path).metrics.get("map").values) == [0.543, 0.559, 0.563]


def test_yolos_own_row_gives_way_to_the_pycocotools_summary_beside_it(tmp_path):
    # (tune half: yolov7 #1701) YOLO's row reads mAP 0.476 while pycocotools, scoring the same predictions, prints
    # 0.000 (category ids off by one): the summary's zeros are the reading, not YOLO's estimate beside them
    d = _top(tmp_path, "               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95\n"
                       "                 all         500        1100       0.82       0.817        0.86       0.476\n"
                       " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.000\n"
                       " Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.000\n")
    assert d.root_causes[0].code == "data_pipeline_bug" and "map and map50 are 0" in d.root_causes[0].issue


_CARTPOLE_COLLAPSE = [500.0, 396.2, 439.2, 500.0, 419.0, 475.7, 490.8, 430.1, 401.5, 491.6, 500.0, 441.2, 460.0, 500.0,
                      446.5, 449.2, 500.0, 388.1, 500.0, 359.8, 444.2, 500.0, 500.0, 350.9, 352.8, 359.8, 254.5, 338.1,
                      413.7, 173.7, 111.1, 222.3, 172.9, 263.3, 120.4, 102.0, 68.5, 9.0, 70.4, 9.0, 100.0, 30.5, 60.2,
                      9.0, 9.0, 138.0, 58.1, 102.4, 41.2, 186.7, 51.5, 9.0, 76.1, 55.5, 9.0, 23.0, 88.8, 78.1, 9.6, 9.0]


def test_a_reward_falls_by_its_medians_and_not_where_it_falls_by_design(tmp_path):
    # (review of the reward reading) one episode's return is noisy: CartPole's collapse from ~480 to ~9 over 60
    # episodes falls at fewer than half its steps, yet every third's median is under the one before
    d = _top(tmp_path, "".join(f"global_step={500 * i}, episodic_return={r}\n"
                               for i, r in enumerate(_CARTPOLE_COLLAPSE, 1)))
    assert d.root_causes[0].issue.startswith("reward fell from 454.6 to 53.5")
    # self-play against ever stronger snapshots (ml-agents prints ELO), a curriculum's harder lesson, and
    # MountainCar sinking to its floor of -200 as epsilon decays: no policy unlearned
    selfplay = "".join(f"[INFO] SoccerTwos. Step: {50000 * i}. Time Elapsed: {310.2 * i:.3f} s. Mean Reward: {r}. "
                       f"Std of Reward: 0.561. Training. ELO: {1203.1 + 16 * i:.3f}.\n"
                       for i, r in enumerate(["0.812", "0.744", "0.538", "0.402", "0.215", "0.096", "0.031"], 1))
    curriculum = "".join(f"INFO:mlagents.trainers: wall-jump: BigWallJumpLearning: Step: {1000 * i}. Time Elapsed: "
                         f"{20 * i}.000 s Mean Reward: {r}. Std of Reward: 0.512. Training.\n" + (
                             "INFO:mlagents.trainers: BigWallJumpLearning lesson changed. Now in lesson 1: "
                             "big_wall_min_height -> 4.0, big_wall_max_height -> 7.0\n" if i == 3 else "")
                         for i, r in enumerate(["0.210", "0.550", "0.810", "0.120", "-0.180", "-0.410"], 1))
    mountaincar = "".join(f"Episode {40 * i}\tepsilon: {0.6 ** i:.3f}\tAverage reward: {r}\n" for i, r in enumerate(
        ["-178.40", "-181.20", "-186.90", "-190.30", "-194.80", "-197.10", "-198.90", "-199.60", "-200.00"]))
    for text in (selfplay, curriculum, mountaincar):
        assert not any("reward fell" in c.issue for c in _top(tmp_path, text).root_causes)


def test_a_long_training_accuracys_gap_is_its_mean_up_to_the_held_out_report(tmp_path):
    # (review of the long-accuracy gap) a batch of 8 scores 1.0 often: the median of its last five read 1.0
    # against a validation accuracy of 0.852 that the epoch's mean (0.89) is no gap to
    accs = ["0.8750", "0.7500", "1.0000", "0.8750", "0.8750", "1.0000", "0.7500", "0.8750", "1.0000", "0.8750",
            "0.7500", "0.8750", "1.0000", "1.0000", "0.8750", "1.0000"]
    d = _top(tmp_path, "".join(f"Epoch: 4 | Step: {50 * i}/1000 | Loss: 0.3625 | Acc: {a}\n"
                               for i, a in enumerate(accs, 1))
             + "Epoch: 4 | Validation Loss: 0.3712 | Validation Acc: 0.8520\n")
    assert "overfitting" not in _read(d)
    # an evaluation before training has no training report before it to be compared with
    d = _top(tmp_path, "Evaluating before training...\nEpoch 0 | val_loss: 2.3026 | val_acc: 0.1012\n" + "".join(
        f"Epoch {1 + i // 5} | batch {100 * (1 + i % 5)}/500 | loss: {max(1.3 - 0.1 * i, 0.08):.4f} | acc: "
        f"{min(0.35 + 0.05 * i, 0.97):.4f}\n" for i in range(15)))
    assert "overfitting" not in _read(d)
    # where it reads, the evidence says what the training figure is
    d = _top(tmp_path, "".join(f"Epoch: 4 | Step: {50 * i}/1000 | Loss: 0.01 | Acc: 1.0000\n" for i in range(1, 17))
             + "Epoch: 4 | Validation Loss: 0.9712 | Validation Acc: 0.7520\n")
    top = d.root_causes[0]
    assert top.code == "overfitting" and "the mean of its 16 reports up to the validation one" in top.evidence[0].text


def test_lightgbms_cross_entropy_is_read_for_its_set(tmp_path):
    # (review) LightGBM's built-in xentropy metric prints as `cross_entropy`: the valid set's is the held-out loss
    (tmp_path / "train.log").write_text(
        "[1]\ttraining's cross_entropy: 0.61\tvalid_1's cross_entropy: 0.63\n"
        "[2]\ttraining's cross_entropy: 0.55\tvalid_1's cross_entropy: 0.60\n")
    metrics = load_run(tmp_path).metrics
    assert list(metrics.get("train_loss").values) == [0.61, 0.55]
    assert list(metrics.get("val_loss").values) == [0.63, 0.6]


def test_an_accuracy_under_ten_percent_from_the_start_that_never_climbs_is_not_learning(tmp_path):
    # frereit/TensorflowHandwritingRecognition #3: 0.025 to 0.065 over 2,400 steps from step 0; it named nothing
    accs = ["0.065", "0.039999995", "0.065", "0.024999999", "0.06", "0.054999996", "0.044999994", "0.059999995",
            "0.049999997", "0.065", "0.054999992", "0.06", "0.04"]
    text = "".join(f"2018-04-14T05:56:02.271397 Step: {200 * i}; Accuracy: {a}; Time (200 Steps): 37.79\n"
                   for i, a in enumerate(accs))
    top = _top(tmp_path, text).root_causes[0]
    assert top.code == "data_pipeline_bug" and top.issue.startswith("train_acc stays under 10% at every one of 13")
    # a language model's token accuracy that climbs from 2% to 9%, or a low accuracy beside a falling loss, learns
    climbing = "".join(f"Step: {200 * i}; Accuracy: {0.02 + 0.006 * i:.3f};\n" for i in range(13))
    falling = "".join(f"Step: {200 * i}; loss: {4.6 - 0.2 * i:.2f}; Accuracy: {a}\n" for i, a in enumerate(accs))
    for text in (climbing, falling):
        assert not any("stays under 10%" in c.issue for c in _top(tmp_path, text).root_causes)


def _yolo(header: str, rows: list[str], first: int = 0) -> str:
    return "".join(f"      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size\n"
                   f"        {first + i}/99      3.55G    0.0{460 - 7 * i}    0.04423    0.01937        193     640: "
                   f"100%|##########| 8/8 [00:05<00:00,  1.51it/s]\n{header}: 100%|##########| 4/4 [00:01<00:00]\n"
                   f"                   all        128        929{row}\n" for i, row in enumerate(rows))


def test_yolo_rows_under_every_header_read_their_box_map(tmp_path):
    # (review of the YOLO rows) yolov5 v7.0's header ends `mAP50-95: 100%|...`: the scanner read its progress
    # bar as map=100 at every epoch and the row's mAP50-95 was dropped
    v5 = "                 Class     Images  Instances          P          R      mAP50   mAP50-95"
    (tmp_path / "train.log").write_text(_yolo(v5, ["      0.512      0.433      0.452      0.281",
                                                   "      0.601      0.498      0.523      0.334"]))
    metrics = load_run(tmp_path).metrics
    assert list(metrics.get("map").values) == [0.281, 0.334] and list(metrics.get("map50").values) == [0.452, 0.523]
    # a segmentation model's row holds Box(...) and Mask(...): 8 figures, the box's read; zero through epoch 9
    seg = ("                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95)     Mask(P"
           "          R      mAP50  mAP50-95)")
    d = _top(tmp_path, _yolo(seg, ["          0" * 8] * 10))
    assert d.root_causes[0].code == "data_pipeline_bug" and "map is 0 at every one of 10" in d.root_causes[0].issue
    # P and R at 0 are a detector's, not a classifier's predicting one class
    assert "mode_collapse" not in _read(d)[:1]
    # a from-scratch detector whose mAP50-95 is still under 1e-4 while its mAP50 is not matches some boxes
    d = _top(tmp_path, _yolo(v5, [f"      0.00{i}      0.0{i}    0.000{i + 1}    {1.9 + i}e-05" for i in range(7)]))
    assert "data_pipeline_bug" not in _read(d)


def test_a_per_epoch_training_accuracy_is_compared_in_the_held_out_reports_epoch(tmp_path):
    # (review) one report per epoch, then the test accuracy: the last epoch's 0.99 against 0.70, not a mean reaching
    # back to epoch 1
    accs = [0.3120, 0.4871, 0.5912, 0.66, 0.72, 0.77, 0.81, 0.85, 0.88, 0.91, 0.93, 0.95, 0.97, 0.98, 0.9912]
    d = _top(tmp_path, "".join(f"Epoch [{i}/15], Loss: {1.9 / i:.4f}, Accuracy: {a:.4f}\n"
                               for i, a in enumerate(accs, 1)) + "Test Accuracy: 0.7034\n")
    assert d.root_causes[0].code == "overfitting" and "0.9912 against 0.7034" in d.root_causes[0].issue


def test_a_reward_at_its_cap_then_collapsing_fell_and_an_unused_curriculum_option_is_no_lesson(tmp_path):
    # (review) CartPole at its cap of 500 for two thirds, then the fall: the thirds' medians 500, 500, 72
    rewards = [500.0] * 14 + [410.0, 260.0, 133.0, 72.4, 41.2, 25.3, 18.1]
    d = _top(tmp_path, "".join(f"Step: {2048 * i}. Mean Reward: {r}. Std of Reward: 0.0. Training.\n"
                               for i, r in enumerate(rewards, 1)))
    assert d.root_causes[0].issue.startswith("reward fell from 500.0 to 72.4")
    # ml-agents 0.x logs its options at the start, `'--curriculum': 'None'` among them: no lesson changed
    d = _top(tmp_path, "INFO:mlagents.trainers:{'--curriculum': 'None', '--lesson': '0'}\n" + "".join(
        f"INFO:mlagents.trainers: firstRun-0: CrawlerLearning: Step: {1000 * i}. Mean Reward: {r}. Training.\n"
        for i, r in enumerate([1.32, 1.51, 1.19, 0.90, -2.41, -10.2, -35.1, -61.9, -88.3], 1)))
    assert d.root_causes[0].issue.startswith("reward fell")


@pytest.mark.parametrize("text", [
    # (review of the low-accuracy reading) ArcFace over 85k identities scores 0 for its first hundreds of batches
    "".join(f"INFO:root:Epoch[0] Batch [{b}]\tSpeed: 411.34 samples/sec\tacc=0.000000\t"
            f"lossvalue={46.2 - b / 2000:.6f}\n" for b in range(0, 420, 20)),
    # ImageNet's top-1 tripling from 0.1% to 0.3% over its first 500 steps
    "Epoch 1/90\n" + "".join(f" {s}/5005 [..............................] - ETA: 40:12 - loss: {6.9 - s / 5000:.4f} - "
                             f"accuracy: {0.001 + s * 4.2e-6:.4f}\n" for s in range(50, 550, 50)),
    # a window with no counter whose loss falls at every line: not the run's start, and learning
    "".join(f"train loss: {3.912 - 0.004 * i:.4f}, train acc: {0.081 + (-1) ** i * 0.002:.4f}\n" for i in range(9)),
])
def test_a_low_accuracy_early_in_many_classes_or_beside_a_falling_loss_is_no_failure_to_learn(tmp_path, text):
    assert not any("stays under 10%" in c.issue for c in _top(tmp_path, text).root_causes)


def test_an_epoch_printed_only_on_its_validation_line_still_pairs_it_with_its_batches(tmp_path):
    # (review) each epoch's batches print no epoch; the epoch appears on its validation line after them
    text = "".join("".join(f"iter {1000 * e + 100 * b:5} | loss {0.58 - 0.02 * (10 * e + b):.4f} | acc "
                           f"{min(0.82 + 0.02 * (10 * e + b), 0.995):.4f}\n" for b in range(1, 11))
                   + f"Epoch {e + 1} | val_acc {0.71 - 0.01 * e:.4f}\n" for e in range(3))
    top = _top(tmp_path, text).root_causes[0]
    assert top.code == "overfitting" and "0.995 against 0.69 on validation" in top.issue


DETR_CUT = ('{"train_lr": 9.999999999998996e-05, "train_class_error": 100.0, "train_loss": 0.0, "train_loss_ce": 0.0, '
            '"train_loss_bbox": 0.0, "train_loss_giou": 0.0, "train_loss_ce_0": 0.0, "train_loss_bbox_0": 0.0, '
            '"train_loss_giou_0": 0.0, "train_loss_ce_1": 0.0, "train_loss_bbo')


def test_one_logged_record_cut_short_is_read_and_its_loss_at_zero_with_every_part_is_no_loss(tmp_path):
    # DETR #258 (tests/wild, tune half): one line of log.txt, cut mid-key where the paste ended; it was taken for a
    # config that would not parse ("none of the files could be read"). Its loss and every part of it print 0.0 at
    # once: no rounding zeroes every term, nothing is scored (the labels were strings)
    d = _top(tmp_path, DETR_CUT + "\n")
    assert d.root_causes[0].code == "data_pipeline_bug" and d.root_causes[0].severity == "high"
    assert "with 7 of its parts on the same line" in d.root_causes[0].issue
    run = load_run(tmp_path)
    assert run.metrics.get("train_class_error").values.tolist() == [100.0]


def test_one_report_at_zero_beside_parts_that_are_not_is_no_reading(tmp_path):
    # two parts at 0 are a detector with no box that batch; a loss of 0 needs ZERO_PARTS of its parts at 0 beside it
    line = '{"train_loss": 0.0, "train_loss_ce": 0.0, "train_loss_bbox": 0.0, "train_loss_giou": 0.31, "train_lo'
    d = _top(tmp_path, line + "\n")
    assert "data_pipeline_bug" not in _read(d)


def test_a_top5_five_times_the_top1_is_a_uniform_guess_shares_or_percents(tmp_path):
    # DynamicViT #17 (tests/wild, tune half): the whole paste; 0.08% and 0.58% over ImageNet's 1000 classes (the
    # validation folders were not named by wnid). Read either way (8% and 58% over ~10 classes) it is a guess
    d = _top(tmp_path, "Acc@1 0.080 Acc@5 0.582", name="output.txt")
    assert d.root_causes[0].code == "data_pipeline_bug" and "7.3x" in d.root_causes[0].issue
    # a trained model's evaluation (DeiT's summary) and the ImageNet example's first batches are no guess
    for text in (" * Acc@1 81.234 Acc@5 95.512 loss 0.812\n",
                 "Epoch: [0][10/5005]\tLoss 6.9 (6.9)\tPrec@1 0.100 (0.100)\tPrec@5 0.500 (0.355)\n",
                 "Epoch: [0][4000/5005]\tLoss 6.9 (6.9)\tPrec@1 0.100 (0.100)\tPrec@5 0.500 (0.355)\n",
                 "Epoch: [3][200/5005]\tLoss 3.1 (3.2)\tPrec@1 31.250 (30.1)\tPrec@5 58.203 (57.2)\n"):
        sub = tmp_path / str(abs(hash(text)))
        sub.mkdir()
        assert "data_pipeline_bug" not in _read(_top(sub, text)), text
    # beside a training loss: three reports past the first epoch, the top-1 not climbing and the loss not falling
    (tmp_path / "late").mkdir()
    late = _top(tmp_path / "late", "".join(f"Epoch: [5][{i}/5005]\tLoss 6.9 (6.9)\tPrec@1 {a} ({a})\tPrec@5 {b} ({b})\n"
                                           for i, a, b in ((1000, "0.100", "0.500"), (1100, "0.098", "0.520"),
                                                           (1200, "0.102", "0.496"))))
    assert late.root_causes[0].code == "data_pipeline_bug"
    (tmp_path / "learning").mkdir()
    learning = _top(tmp_path / "learning", "".join(
        f"Epoch: [5][{i}/5005]\tLoss {x} ({x})\tPrec@1 {a} ({a})\tPrec@5 {b} ({b})\n"
        for i, x, a, b in ((1000, "6.90", "0.100", "0.500"), (1100, "6.86", "0.160", "0.780"),
                           (1200, "6.81", "0.210", "1.030"))))
    assert "data_pipeline_bug" not in _read(learning)


def test_top_k_accuracies_under_at_k_names_are_read_in_their_split(tmp_path):
    # timm's validate.py and the ImageNet example name their top-k accuracies `Acc@1`/`Prec@1`, which no key took
    (tmp_path / "train.log").write_text(
        "Test: [ 390/390]  Time: 0.1  Loss:  0.8022 (0.8022)  Acc@1: 81.2500 ( 80.3640)  Acc@5: 95.0000 ( 95.1180)\n"
        "Epoch: [1][10/5005]\tLoss 6.9 (6.9)\tPrec@1 0.391 (0.100)\tPrec@5 1.172 (0.355)\n")
    m = load_run(tmp_path).metrics
    # the running average in brackets, not the one batch's value before it
    assert m.get("val_acc").values.tolist() == [80.364] and m.get("val_acc_top5").values.tolist() == [95.118]
    assert m.get("train_acc").values.tolist() == [0.1] and m.get("train_acc_top5").values.tolist() == [0.355]
    # TensorFlow's cifar10_eval/inception_eval print only this, and only when they evaluate
    (tmp_path / "train.log").write_text("2016-06-07 22:32:50.391206: precision @ 1 = 0.862\n"
                                        "2016-06-10 14:25:40.100805: step 890, loss = 0.71 (0.4 examples/sec)\n")
    m = load_run(tmp_path).metrics
    assert m.get("val_acc").values.tolist() == [0.862] and m.get("train_acc") is None


def test_a_loss_that_is_the_clipped_log_times_the_share_wrong_is_saturated_outputs(tmp_path):
    # Keras clips a probability at 1e-7: an answer wrong with full confidence costs -ln(1e-7) = 16.1181, so
    # `loss: 14.5063 - acc: 0.1000` is every output pinned at 0 or 1 (16.1181 x 0.9); Caffe's SoftmaxWithLoss
    # clamps at FLT_MIN, so `loss = 87.3365` at every iteration is every answer wrong so
    keras = _top(tmp_path, "Epoch 5/20\n60000/60000 [==============================] - 12s - loss: 14.5063 - "
                           "acc: 0.1000 - val_loss: 14.5385 - val_acc: 0.0980\n")
    top = keras.root_causes[0]
    assert top.code == "lr_too_high" and "16.12 x (1 - train_acc 0.1)" in top.issue and top.severity == "medium"
    assert "data_pipeline_bug" in _read(keras)[:2]
    (tmp_path / "start").mkdir()    # saturated from the run's first epoch: nothing had been learned to blow up
    start = _top(tmp_path / "start", "".join(f"Epoch {e}/10\n1000/1000 [==============================] - 2s - "
                                             "loss: 8.0590 - acc: 0.5000\n" for e in (1, 2)))
    assert start.root_causes[0].code == "data_pipeline_bug" and "lr_too_high" in _read(start)
    (tmp_path / "caffe").mkdir()
    caffe = _top(tmp_path / "caffe", "".join(f"I0831 13:50:{s:02d}.266077 2093961216 solver.cpp:229] Iteration {i}, "
                                             "loss = 87.3365\n" for s, i in ((16, 100), (20, 120), (24, 140))))
    assert caffe.root_causes[0].code == "lr_too_high" and "SoftmaxWithLoss" in caffe.root_causes[0].issue


def test_a_loss_near_a_clipped_log_by_chance_is_no_saturation(tmp_path):
    # a fit at 90% whose loss happens to be 16.1 x 0.1, and a Caffe loss at 87.3 once, say nothing of saturation
    for i, text in enumerate(("Epoch 40/50\n100/100 - 4s - loss: 1.6118 - acc: 0.9000\n",
                              "I0831 13:50:16.266077 2093961216 solver.cpp:229] Iteration 100, loss = 87.3365\n"
                              "I0831 13:50:20.377394 2093961216 solver.cpp:229] Iteration 120, loss = 12.1020\n")):
        (tmp_path / str(i)).mkdir()
        assert not any("full confidence" in c.issue for c in _top(tmp_path / str(i), text).root_causes)


def test_a_language_model_held_at_ln_of_its_vocabulary_is_a_uniform_guess(tmp_path):
    # nanoGPT's evaluation lines at ln(50257) = 10.825 for 300 steps: the model outputs the uniform distribution
    # over GPT-2's tokens; its first steps of warm-up from 0 sit there too and say nothing yet
    d = _top(tmp_path, "step 100: train loss 10.8253, val loss 10.8249\nstep 200: train loss 10.8251, val loss "
                       "10.8250\nstep 300: train loss 10.8250, val loss 10.8252\n")
    assert "ln(50257) = 10.825" in d.root_causes[0].issue
    (tmp_path / "warmup").mkdir()
    warm = _top(tmp_path / "warmup", "".join(f"step {i}: train loss {v}, val loss {v}\n"
                                             for i, v in ((0, 10.8253), (10, 10.8251), (20, 10.8250))))
    assert not any("ln(50257)" in c.issue for c in warm.root_causes)


def test_saturation_after_a_sound_start_is_the_lr_and_a_coincidence_at_one_report_is_nothing(tmp_path):
    # Caffe's FAQ shape: ln(10) at iteration 0, then 87.3365 from iteration 100 on: the weights blew up in training
    caffe = _top(tmp_path, "".join(f"I0831 13:50:16.266077 2093961216 solver.cpp:229] Iteration {i}, loss = {v}\n"
                                   for i, v in ((0, "2.30259"), (100, "87.3365"), (200, "87.3365"))))
    assert caffe.root_causes[0].code == "lr_too_high" and "after 1 sound report" in caffe.root_causes[0].issue
    # a Keras loss with an L2 penalty that happens to sit at 16.12 x (1 - acc) at its one report, its validation
    # pair far off; a regression's MAPE at exactly 100 (a constant output at 0) is no BCELoss
    for i, text in enumerate(("Epoch 12/250\n390/390 [==============================] - 21s 54ms/step - loss: 3.2215 - "
                              "acc: 0.8001 - val_loss: 3.3012 - val_acc: 0.7712\n",
                              "".join(f"Epoch {e}/100\n32/32 [==============================] - loss: 100.0000 - "
                                      "mean_absolute_error: 182.3411 - val_loss: 100.0000\n" for e in (1, 2, 3)))):
        (tmp_path / str(i)).mkdir()
        assert not any("full confidence" in c.issue for c in _top(tmp_path / str(i), text).root_causes), text


def test_a_held_out_guess_beside_a_falling_training_loss_and_a_perfect_fit_at_zero(tmp_path):
    # DeiT prints its evaluation's loss on the summary line, and its training loss falls beside a validation set at
    # chance (folders not named as training's): the held-out guess stands
    d = _top(tmp_path, "".join(f"Epoch: [{e}]  [1250/1251]  eta: 0:00:00  lr: 0.000500  loss: {x}\n"
                               f"* Acc@1 {a} Acc@5 {b} loss 6.970\n"
                               for e, x, a, b in ((5, "5.6000", "0.080", "0.582"), (6, "5.1000", "0.120", "0.620"),
                                                  (7, "4.6000", "0.060", "0.440"))))
    assert d.root_causes[0].code == "data_pipeline_bug" and "val_acc" in d.root_causes[0].issue
    # a Keras model fit to its 8 samples at epoch 500: every loss exactly 0 beside accuracies of 1.0 is a perfect fit
    (tmp_path / "fit").mkdir()
    fit = _top(tmp_path / "fit", "Epoch 500/500\n8/8 [==============================] - 0s 3ms/step - loss: 0.0000e+00 "
                                 "- out_a_loss: 0.0000e+00 - out_b_loss: 0.0000e+00 - out_c_loss: 0.0000e+00 - "
                                 "out_a_accuracy: 1.0000 - out_b_accuracy: 1.0000 - out_c_accuracy: 1.0000\n")
    assert "data_pipeline_bug" not in _read(fit)


def test_records_an_array_writer_ended_with_a_comma_keep_every_key(tmp_path):
    (tmp_path / "log.jsonl").write_text('{"epoch": 1, "train_loss": 0.9, "val_acc": 0.5},\n'
                                        '{"epoch": 2, "train_loss": 0.7, "val_acc": 0.6},\n')
    m = load_run(tmp_path).metrics
    assert m.get("val_acc").values.tolist() == [0.5, 0.6] and m.get("train_loss").values.tolist() == [0.9, 0.7]


# Eesen's CTC trainer (srvk/eesen #73, tests/wild, tune half), its token accuracy as posted
_EESEN = "".join(
    f"VLOG[1](train-ctc-parallel:EvalParallel%28%29:ctc-loss.cc:182) After {n}000 sequences ({h}Hr): "
    f"Obj(log[Pzx]) = {obj}   TokenAcc = {acc}%\n"
    for n, h, obj, acc in ((62, "33.1789", "-8.45854", "97.4986"), (63, "34.1167", "-8.56525", "97.4942"),
                           (64, "35.0689", "-8.71485", "97.4921"), (65, "36.0363", "-8.6e+29", "19.0128"),
                           (66, "37.0192", "-1e+30", "4.44885")))


def test_a_training_accuracy_that_falls_from_its_best_and_stays_down_is_a_blow_up(tmp_path):
    d = _top(tmp_path, _EESEN)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and top.severity == "medium" and top.confidence < 0.8
    assert [e.locator for e in top.evidence] == ["line 3", "line 4", "line 5"]


@pytest.mark.parametrize("accs, losses", [
    ((0.91, 0.93, 0.35, 0.92, 0.94), None),                  # a dip it came back from
    ((0.95, 0.85, 0.75, 0.6, 0.45, 0.40), None),             # a slide, not a fall
    ((0.91, 0.93, 0.30, 0.32, 0.35), (0.40, 0.35, 0.30, 0.28, 0.25)),   # the loss beside it still falls
    ((0.30, 0.40, 0.10, 0.08), None),                        # it had not learned
    ((0.66, 0.85, 0.96, 0.30, 0.36, 0.42), None),            # a curriculum's next stage, learning again
    ((0.90, 0.93, 0.95, 0.20), None),                        # one report down is no "stayed down"
])
def test_an_accuracy_that_recovers_slides_or_falls_beside_a_falling_loss_is_no_blow_up(tmp_path, accs, losses):
    text = "".join(f"Epoch {i + 1}: " + (f"loss {losses[i]:.3f} " if losses else "") + f"acc {a:.3f}\n"
                   for i, a in enumerate(accs))
    d = _top(tmp_path, text)
    assert not any("stayed down" in c.issue for c in d.root_causes), [c.issue for c in d.root_causes]


def test_a_gan_discriminator_settling_at_half_is_no_blow_up(tmp_path):
    # the Keras-GAN examples' line: the discriminator's accuracy falls to ~50% as the generator catches up
    accs = (50.0, 100.0, 98.44, 45.31, 42.19, 48.44, 46.88)
    text = "".join(f"{i} [D loss: {0.69 - i * 0.01:.6f}, acc.: {a:.2f}%] [G loss: {0.7 + i * 0.02:.6f}]\n"
                   for i, a in enumerate(accs))
    d = _top(tmp_path, text)
    assert not any("stayed down" in c.issue for c in d.root_causes), [c.issue for c in d.root_causes]


def test_a_keras_summary_before_three_sound_epochs_leaves_them_to_speak(tmp_path):
    # a model summary's count of trainable parameters is no fault (its count of 0 is another test's)
    d = _top(tmp_path, "Model: \"sequential\"\n Layer (type)    Output Shape     Param #\n"
                       " dense (Dense)   (None, 128)      100480\nTotal params: 101,770\nTrainable params: 101,770\n"
                       "Non-trainable params: 0\n" + "".join(
                           f"Epoch {e}/3\n1875/1875 [==============================] - 3s 1ms/step - loss: {x} - "
                           f"accuracy: {a}\n" for e, x, a in ((1, 0.2601, 0.9254), (2, 0.1142, 0.9662),
                                                             (3, 0.0789, 0.9761))))
    assert d.root_causes and d.root_causes[0].code == "healthy" and d.root_causes[0].severity == "info"


def test_a_loss_pinned_at_chance_under_an_lr_below_every_range_is_the_lr_too_low(tmp_path):
    # an LR far too high is the other reading of a loss at chance: not where the LR read is ~1e-9
    d = _top(tmp_path, "".join(f"step {100 * k} lr {1.2e-9 * k:.1e} loss {2.4121 - 0.0001 * (k % 2)}\n"
                               for k in range(1, 7)))
    codes = _read(d)
    assert codes[0] == "lr_too_low" and "lr_too_high" not in codes, codes


def test_a_raise_of_an_lr_below_every_range_names_a_rate_inside_it(tmp_path):
    d = _top(tmp_path, "".join(f"step {100 * k} | lr 1.00e-09 | loss {1.7342 - 0.0001 * (k % 2):.4f}\n"
                               for k in range(1, 9)))
    top = d.root_causes[0]
    assert top.code == "lr_too_low"
    floor = float(top.issue.split("(from ~")[1].split(")")[0])
    target = float(top.fix.split("to ~")[1].split(" ")[0])
    assert target >= floor, (top.issue, top.fix)


def test_a_validation_accuracy_fallen_to_chance_and_frozen_three_times_is_a_collapse(tmp_path):
    # three identical reports at 1/K after learning (four elsewhere: a small set's tie lands anywhere but at chance)
    d = _top(tmp_path, "".join(f"epoch {e} train_loss {x} val_acc {a}\n" for e, x, a in (
        (1, 0.812, 0.712), (2, 0.601, 0.781), (3, 0.512, 0.100), (4, 0.455, 0.100), (5, 0.401, 0.100))))
    codes = _read(d)
    assert "healthy" not in codes[:1] and {"lr_too_high", "mode_collapse", "data_pipeline_bug"} <= set(codes[:3])
    d = _top(tmp_path, "".join(f"epoch {e} train_loss {x} val_acc {a}\n" for e, x, a in (
        (1, 0.812, 0.712), (2, 0.601, 0.781), (3, 0.512, 0.700), (4, 0.455, 0.700), (5, 0.401, 0.700))))
    assert "mode_collapse" not in _read(d)


def test_a_schedules_tail_below_every_range_is_no_lr_too_low_at_chance(tmp_path):
    # the last reports of a cosine decay (LLaMA-Factory's trainer_log.jsonl, tests/wild tune half): the LR the run
    # trained at came before these lines
    d = _top(tmp_path, "".join(f'{{"current_steps": {3200 + 10 * k}, "loss": {x}, "learning_rate": {lr}}}\n'
                               for k, (x, lr) in enumerate(((4.4671, 1.44e-08), (4.4577, 7.4e-09), (4.4458, 2.7e-09),
                                                            (4.4598, 2.9e-10)))), "trainer_log.jsonl")
    assert "lr_too_low" not in _read(d)[:1]


def test_a_loss_at_chance_names_the_nearest_class_count(tmp_path):
    # ln(100) = 4.605 is within the tolerance of ln(85) and ln(96) too: the reading names the nearest
    for k in (100, 1000):
        level = math.log(k)
        d = _top(tmp_path, "".join(f"step {10 * i} loss {level + 0.002 * (i % 3 - 1):.4f}\n" for i in range(40)))
        said = " ".join(c.issue for c in d.root_causes)
        assert f"ln({k})" in said, said
