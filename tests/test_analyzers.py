"""What each analyzer says on the scenario it exists for: the specific cause, the line that proves
it, and the patch text (the generic e2e test checks every scenario's top code)."""
import csv
import json
import shutil

import numpy as np
import pytest

from handlers.cli import main
from tests.scenarios import SCENARIOS


def top(scenario, name, capsys):
    assert main(["diagnose", str(scenario(name)), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return doc["root_causes"][0], doc


def texts(cause):
    return " | ".join(e["text"] for e in cause["evidence"])


def test_identical_checkpoints_and_the_missing_step(scenario, capsys):
    cause, _ = top(scenario, "missing_step_mlp", capsys)
    assert cause["code"] == "no_parameter_updates"
    assert "bit-identical" in texts(cause) and "no optimizer.step()" in texts(cause)
    assert "         loss.backward()\n+        optimizer.step()\n" in cause["patch"]


def test_gradients_never_cleared(scenario, capsys):
    cause, _ = top(scenario, "no_zero_grad_mlp", capsys)
    assert cause["code"] == "exploding_gradients" and "grew" in cause["issue"]
    assert "+        optimizer.zero_grad()\n         loss.backward()" in cause["patch"]


def test_explosion_from_step_one_under_a_calm_lr_rules_the_lr_out(scenario):
    """Gradients growing from the first steps under a constant, in-range LR exclude the LR; growth
    after an LR jump does not."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    def exploding(name):
        return next(f for f in gradients.analyze(load_run(scenario(name))) if f.code == "exploding_gradients")

    calm = exploding("no_zero_grad_0")
    assert calm.rules_out == ("lr_too_high",)
    assert any("inside momentum" in e.text or "inside sgd" in e.text for e in calm.evidence)
    assert exploding("lr_jump_mlp").rules_out == ()


@pytest.mark.parametrize("start,peak,words", [
    (2.0, 50.0, "25x"), (2.0, 19_998.0, "9,999x"), (9024.3, 1.1e14, "10 orders of magnitude"),
    (0.0, 5.0, ""), (3.0, float("inf"), ""), (5.0, 4.0, "")])
def test_a_rise_is_said_as_a_reader_can_check_it(start, peak, words):
    from analysis.analyzers.gradients import rise_in_words
    assert rise_in_words(start, peak) == words


def test_a_norm_huge_before_any_update_rules_the_lr_out(scenario):
    """The first gradient norm comes before the first optimizer step: thousands there (a residual stack
    with no normalisation) is the model's, not the LR's, and the factor is said in orders of magnitude."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    f = next(f for f in gradients.analyze(load_run(scenario("residual_unnormalised_1")))
             if f.code == "exploding_gradients")
    assert f.rules_out == ("lr_too_high",)
    assert any("before any update" in e.text for e in f.evidence)
    assert "orders of magnitude" in f.issue and "(smoothed)" not in f.evidence[0].text


def test_an_adaptive_optimizer_at_an_sgd_rate_pins_the_loss(scenario, capsys):
    """Adam at 0.1 from the first step: the loss never moves off chance, and the LR (30x its range's
    top) leads the data-bug reading. That reading stays listed with its own evidence unless the loss
    hovers batch to batch by 5% or more of its level (weights thrown around, not a model guessing the
    label prior), which the leader then cites, keeping the data reading at most as a medium alternative
    below it (the ranking's contract for a rival the leader's evidence rules out). How widely it
    hovers moves with the CPU's kernels, so the spread is read here from the run's own file and the
    branch checked against it."""
    from analysis.ingest import load_run

    run = scenario("sgd_rate_adaptive_1")
    cause, doc = top(scenario, "sgd_rate_adaptive_1", capsys)
    assert cause["code"] == "lr_too_high" and "from the first step" in cause["issue"]
    loss = load_run(run).metrics.get("train_loss").values
    late = loss[len(loss) // 5:]
    spread = 1.4826 * np.median(np.abs(late - np.median(late))) / np.median(late)
    data = [c for c in doc["root_causes"][1:3] if c["code"] == "data_pipeline_bug"]
    assert ("spread around its level" in texts(cause)) == (spread >= 0.05), spread
    if spread < 0.05:
        assert data, spread
    else:   # ruled out by the leader's evidence: at most an alternative below it, never its rival
        assert all(c["severity"] in ("medium", "low") and c["confidence"] <= cause["confidence"] - 0.1
                   for c in data), data


def test_dead_units_from_the_checkpoint(scenario, capsys):
    cause, _ = top(scenario, "negative_bias_mlp", capsys)
    assert cause["code"] == "dead_relu" and "fc1" in cause["issue"]
    assert "nn.init.constant_(self.fc1.bias, bias0)" in texts(cause)
    assert "-bias0: -4.0\n+bias0: 0" in cause["patch"]


def test_units_killed_by_one_batch_explain_the_rise(scenario, capsys):
    cause, doc = top(scenario, "outlier_batch_relu", capsys)
    assert cause["code"] == "dead_relu" and "model.2" in cause["issue"]
    others = [c for c in doc["root_causes"][1:] if c["severity"] in ("critical", "high")]
    assert not others, others


def test_lr_below_the_range_of_its_optimizer(scenario, capsys):
    cause, _ = top(scenario, "sgd_lr_tiny_lstm", capsys)
    assert cause["code"] == "lr_too_low" and "sgd" in cause["issue"]
    assert '-  "learning_rate": 0.0001,\n+  "learning_rate": 0.003,' in cause["patch"]


def test_lr_above_the_range_of_its_optimizer(scenario, capsys):
    cause, _ = top(scenario, "sgd_no_warmup_cnn", capsys)
    assert cause["code"] == "lr_too_high" and "0.2" in cause["issue"] and "no warm-up" in cause["issue"]
    assert "-lr: 0.2\n+lr: 0.05" in cause["patch"]


@pytest.mark.parametrize("name", ["warmup_peak_high_3", "warmup_peak_high_4"])
def test_a_rate_far_above_range_that_throws_the_loss_back_to_its_start(scenario, capsys, name):
    # Adam(W) warmed up to 0.3: no divergence for good, the loss keeps jumping back above its start
    cause, _ = top(scenario, name, capsys)
    assert cause["code"] == "lr_too_high" and "30x the top of the usual range" in cause["issue"]
    assert "back above its first value" in texts(cause) and "-  lr: 0.3\n+  lr: 0.005" in cause["patch"]


def test_a_rate_far_above_range_under_which_the_loss_stops_improving(scenario, capsys):
    # Adam warmed up to 0.1 on a CNN: it learns during the warm-up, then bounces around a level
    cause, _ = top(scenario, "warmup_peak_high_5", capsys)
    assert cause["code"] == "lr_too_high" and "stopped improving" in cause["issue"]
    assert "10x the top" in cause["issue"] and "bouncing by" in texts(cause)


def test_a_stall_under_a_rate_far_above_range_starts_where_the_rate_got_there(tmp_path):
    # Adam warmed up to 0.1 by step 85 (3x its range's top, 0.03, from step 26): the loss falls until step 60,
    # then hovers. The failure starts where the rate got far above range, not at the first report
    from analysis.diagnose import diagnose

    rng = np.random.default_rng(1)
    steps = np.arange(1, 301)
    lr = np.minimum(0.1, 0.1 * steps / 85)
    loss = np.where(steps < 60, 2.3 - 1.6 * steps / 60, 0.7) * (1 + 0.12 * rng.standard_normal(len(steps)))
    (tmp_path / "config.yaml").write_text("optimizer:\n  name: adam\n  lr: 0.1\n")
    rows = [f"step={s} loss={x:.4f} lr={r:.6g}\n" for s, x, r in zip(steps, loss, lr)]
    (tmp_path / "train.log").write_text("".join(rows))
    d, _ = diagnose(tmp_path)
    cause = d.root_causes[0]
    assert cause.code == "lr_too_high" and "stopped improving" in cause.issue
    assert cause.onset_step == 26


def test_a_large_rate_the_model_tolerates_is_not_stuck(scenario, capsys):
    # SGD at 0.4 with BatchNorm: 4x the range's top, and the loss keeps falling
    cause, doc = top(scenario, "large_rate_bn_0", capsys)
    assert cause["code"] == "healthy"
    assert "lr_too_high" not in [c["code"] for c in doc["root_causes"]]


def test_an_explosion_the_run_came_back_from_is_still_one(scenario, capsys):
    # an L2 coefficient of 1100 under SGD at 1e-3: the norm grows 180x, then comes back down
    cause, _ = top(scenario, "l2_weight_typo_5", capsys)
    assert cause["code"] == "exploding_gradients" and "grew geometrically" in cause["issue"]
    assert "regularization.l2 = 1100.0" in texts(cause)


def test_growth_to_a_peak_the_series_came_back_from():
    """`to_peak` reads growth up to the smoothed peak; without it a series that came back down has
    no growth (it must end high). (A norm that jumped once, an outlier batch, is told apart by the
    gradients analyzer: test_units_killed_by_one_batch_explain_the_rise.)"""
    import numpy as np

    from analysis.signals import geometric_growth

    up = np.logspace(0, 3, 40)                          # 1000x over 40 steps
    back = np.concatenate([up, up[::-1][1:], np.full(60, 1.0)])
    assert geometric_growth(back) is None
    g = geometric_growth(back, to_peak=True)
    assert g is not None and 35 <= g.end <= 42 and g.factor > 100


def test_zero_lr_from_an_integer_warmup(scenario, capsys):
    cause, _ = top(scenario, "lr_zero_lstm", capsys)
    assert cause["code"] == "no_parameter_updates" and "warmup_steps = 500" in texts(cause)


def test_one_class_for_everything(scenario, capsys):
    cause, _ = top(scenario, "one_class_classifier", capsys)
    assert cause["code"] == "mode_collapse" and "identical" in cause["issue"]


GANS = sorted(n for n in SCENARIOS if n.startswith(("gan_collapse", "healthy_gan")))


@pytest.mark.parametrize("name", GANS)
def test_gan_coverage_of_the_real_data(scenario, capsys, name):
    """Whatever the seed makes of the collapse (a point, a segment, a few modes), it is called one; a
    GAN that covers the ring is not. The property, never a value of a chaotic run."""
    cause, doc = top(scenario, name, capsys)
    collapsed = [c for c in doc["root_causes"] if c["code"] == "mode_collapse"]
    if SCENARIOS[name][1] == "healthy":
        assert cause["code"] == "healthy" and not collapsed
    else:
        assert cause["code"] == "mode_collapse" and "clusters of the real data" in texts(cause)


@pytest.mark.parametrize("name", [n for n in GANS if n.startswith("gan_collapse")])
def test_gan_without_real_samples_only_a_point_is_told(scenario, capsys, tmp_path, name):
    run = shutil.copytree(scenario(name), tmp_path / "run")
    (run / "real_samples.csv").unlink()
    rows = np.array([[float(v) for v in r["generated"].split()] for r in csv.DictReader(open(run / "generated.csv"))])
    one_point = np.sqrt(rows.var(axis=0).sum()) < 0.1 * np.sqrt((rows ** 2).sum(axis=1).mean())
    assert main(["diagnose", str(run), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    said = [c for c in doc["root_causes"] if c["code"] == "mode_collapse"]
    assert bool(said) == bool(one_point) and all("one point" in c["issue"] for c in said)


def test_division_by_a_zero_spread(scenario, capsys):
    cause, _ = top(scenario, "zero_std_cnn", capsys)
    assert cause["code"] == "numerical_instability" and "NaN at step" in cause["issue"]
    assert "/ (std + 1e-6)" in cause["patch"]


def test_worker_error_names_the_record(scenario, capsys):
    cause, _ = top(scenario, "worker_exception", capsys)
    assert cause["code"] == "dataloader_failure" and "cannot decode record 300" in cause["issue"]


def test_batch_of_one_patch_drops_the_last_batch(scenario, capsys):
    cause, _ = top(scenario, "batchnorm_batch_of_one", capsys)
    assert cause["code"] == "zero_variance" and "-drop_last: false\n+drop_last: true" in cause["patch"]


def test_spikes_corroborated_by_gradients(scenario, capsys):
    cause, _ = top(scenario, "corrupt_batches_mlp", capsys)
    assert cause["code"] == "loss_spikes" and "70, 150, 240" in cause["issue"]
    assert "grad_norm at the same step" in texts(cause) and cause["confidence"] >= 0.85


def test_vanishing_names_the_saturating_activation(scenario, capsys):
    cause, _ = top(scenario, "deep_sigmoid_mlp", capsys)
    assert cause["code"] == "vanishing_gradients" and "sigmoid" in texts(cause)


def test_chance_level_cites_the_class_count(scenario, capsys):
    cause, _ = top(scenario, "shuffled_labels_mlp", capsys)
    assert cause["code"] == "data_pipeline_bug" and "ln(4)" in cause["issue"]
    assert "num_classes = 4" in texts(cause) and "gradients are not zero" in texts(cause)


def test_embedding_rows_the_data_never_uses(scenario, capsys):
    cause, _ = top(scenario, "wide_vocab_lm", capsys)
    assert cause["code"] == "architecture_imbalance"
    assert "tok_embeddings.weight: 2,500 of 4,000 rows" in texts(cause)      # the corpus uses 1,500 tokens


def test_unscaled_regression_targets(scenario, capsys):
    cause, _ = top(scenario, "unscaled_targets_rnn", capsys)
    assert cause["code"] == "exploding_gradients" and "raw scale" in texts(cause)
    assert cause["fix"].startswith("Standardise the regression targets")


def test_vanishing_read_from_adam_state(scenario, capsys):
    cause, _ = top(scenario, "deep_sigmoid_adam_state", capsys)
    assert cause["code"] == "vanishing_gradients" and "Adam state" in cause["issue"]
    assert cause["evidence"][0]["locator"] == "optimizer state of 0.weight"


def test_a_leak_before_the_crash_is_the_story(scenario, capsys):
    cause, _ = top(scenario, "leak_then_oom_lstm", capsys)
    assert cause["code"] == "out_of_memory" and "per 100 steps" in cause["issue"] and "leak" in cause["issue"]
    assert "retain_graph=True" in texts(cause) and "history.append((out, loss))" in texts(cause)
    assert cause["fix"].startswith("Stop keeping each step's tensors")


def test_the_allocation_that_failed_is_named_by_its_settings(scenario, capsys):
    cause, _ = top(scenario, "host_oom", capsys)
    assert cause["code"] == "out_of_memory"
    product = "eval.eval_batch_size (4,096) x eval.eval_seq_len (8,192) x eval.vocab_size (50,257) x 4 bytes"
    assert product in texts(cause)
    assert "-  eval_batch_size: 4096\n+  eval_batch_size: 2048" in cause["patch"] and "in chunks" in cause["fix"]


def test_memory_budget_from_what_the_run_shows(scenario):
    from analysis.analyzers.common import optimizer_family
    from analysis.ingest import load_run
    from analysis.memory_budget import estimate

    run = load_run(scenario("embedding_lm"))
    fam = optimizer_family(run)
    b = estimate(run, fam[0] if fam else None)
    assert fam[0] == "adam" and b.params == 51_456                       # AdamW in the saved code
    assert b.parts == {"weights": 51_456 * 4, "gradients": 51_456 * 4, "adam optimizer states": 51_456 * 8}
    assert any("8-bit Adam frees" in r for r in b.remedies)


def test_a_slow_input_pipeline_is_reported_with_its_numbers(scenario, capsys):
    cause, doc = top(scenario, "healthy_but_starved", capsys)
    assert cause["code"] == "healthy"
    perf = doc["engine"]["performance"]
    assert perf and perf[0]["text"].startswith("data loading takes") and perf[0]["artifact"] == "train.log"
    share = int(perf[0]["text"].split("takes ")[1].split("%")[0])
    assert share >= 50


def test_knn_coverage_against_a_naive_reference():
    from analysis.analyzers.outputs import knn_coverage
    rng = np.random.default_rng(0)
    real, fake = rng.normal(size=(60, 3)), rng.normal(size=(40, 3))
    k = 4
    naive = []
    for r in real:
        radius = sorted(np.linalg.norm(real - r, axis=1))[k]
        naive.append(any(np.linalg.norm(f - r) < radius for f in fake))
    assert knn_coverage(real, fake, k) == np.mean(naive)
    assert knn_coverage(real, np.zeros((40, 3)), k) < 0.2      # everything on one point reaches almost nothing


# --- fingerprints that generalise (issue 15), on runs of the tuning families ---------------------

def test_a_causal_mask_buffer_is_not_a_nan_weight(scenario, capsys):
    """A transformer LM saves its additive mask (0 and -inf) with the weights: no numerical fault."""
    cause, doc = top(scenario, "plain_3", capsys)
    assert cause["code"] == "healthy"
    assert "numerical_instability" not in [c["code"] for c in doc["root_causes"]]


def test_identical_weights_through_a_mask_buffer(scenario, capsys):
    """Checkpoints holding a -inf mask still compare equal when the weights did not move."""
    cause, _ = top(scenario, "step_missing_2", capsys)
    assert cause["code"] == "no_parameter_updates" and "bit-identical" in texts(cause)


def test_a_trainer_checkpoint_beside_its_copy_is_one_point_in_time(scenario, capsys):
    cause, _ = top(scenario, "step_missing_1", capsys)
    assert cause["code"] == "no_parameter_updates"
    assert "bit-identical after 160 steps" in texts(cause)     # step 80 against step 240, not 240 against 240


def test_dead_channels_of_a_cnn_from_the_checkpoint(scenario, capsys):
    cause, doc = top(scenario, "negative_bias_1", capsys)
    assert cause["code"] == "dead_relu" and "features.0" in cause["issue"]
    assert "data_pipeline_bug" in [c["code"] for c in doc["root_causes"][1:3]]     # the rival stays listed


def test_slow_weights_outweigh_an_lr_logged_as_zero(scenario, capsys):
    cause, doc = top(scenario, "lr_tiny_2", capsys)
    assert cause["code"] == "lr_too_low" and "per step" in texts(cause)
    assert doc["root_causes"][1]["code"] == "no_parameter_updates"


def test_an_lr_below_its_range_reads_a_noisy_rise_as_noise(scenario, capsys):
    cause, doc = top(scenario, "lr_tiny_1", capsys)
    assert cause["code"] == "lr_too_low"
    high = [c for c in doc["root_causes"] if c["code"] == "lr_too_high"]
    assert high and high[0]["severity"] == "low"


def test_gradients_that_explode_under_a_constant_lr_are_not_the_lr(scenario, capsys):
    cause, _ = top(scenario, "no_zero_grad_0", capsys)
    assert cause["code"] == "exploding_gradients" and "grew" in cause["issue"]


def test_a_noisy_loss_at_chance_is_a_plateau(scenario, capsys):
    cause, _ = top(scenario, "labels_permuted_1", capsys)
    assert cause["code"] == "data_pipeline_bug" and "ln(4)" in cause["issue"]


def test_an_output_layer_over_the_vocabulary_counts_with_the_embeddings(tmp_path):
    """An untied output layer is a vocabulary matrix whatever its name: its rows are the vocabulary
    the embedding declares. A small class head (under MIN_VOCAB rows) is not."""
    from safetensors.numpy import save_file

    from analysis.analyzers.parameters import balance
    from analysis.ingest.checkpoints import load_safetensors

    rng = np.random.default_rng(0)
    tensors = {"embed.weight": rng.standard_normal((500, 16), dtype=np.float32),
               "block.weight": rng.standard_normal((16, 16), dtype=np.float32),
               "head.weight": rng.standard_normal((500, 16), dtype=np.float32),
               "classes.weight": rng.standard_normal((10, 16), dtype=np.float32)}
    save_file(tensors, tmp_path / "model.safetensors")
    emb, total, _ = balance(load_safetensors([tmp_path / "model.safetensors"], "model.safetensors"))
    assert (emb, total) == (2 * 500 * 16, 2 * 500 * 16 + 16 * 16 + 10 * 16)


def test_first_layer_units_with_no_positive_weight_are_dead_for_nonnegative_inputs():
    from analysis.analyzers.weights import _worst_layer

    rng = np.random.default_rng(1)
    w1 = -np.abs(rng.standard_normal((8, 4), dtype=np.float32))
    w1[:2] = np.abs(w1[:2])                 # two units keep a positive weight
    chain = [("fc1", w1, np.zeros(8, np.float32)), ("out", rng.standard_normal((3, 8), dtype=np.float32), None)]
    name, share, dead, units, _ = _worst_layer(chain, 512, conv=False)
    assert (name, dead, units) == ("fc1", 6, 8)


def test_weights_gone_non_finite_are_not_dead_units(scenario, capsys):
    """A diverged run's NaN weights fire no unit under the probe; that is the numerical fault the run
    already shows, not ReLU units that died."""
    cause, doc = top(scenario, "lr_above_range_1", capsys)
    assert cause["code"] == "lr_too_high"
    assert "numerical_instability" in [c["code"] for c in doc["root_causes"]]
    assert "dead_relu" not in [c["code"] for c in doc["root_causes"]]


def test_a_rate_decayed_below_its_range_early_is_too_low(scenario):
    """A per-epoch decay stepped per batch: the peak LR is in range, yet the run trained at ~0 from
    its first tenth on; a healthy schedule (a step decay at 60%, cosine to its floor) is not read so."""
    from analysis.analyzers import learning_rate
    from analysis.ingest import load_run

    def too_low(name):
        return [f for f in learning_rate.analyze(load_run(scenario(name))) if f.code == "lr_too_low"]

    found = too_low("decay_per_batch_1")
    assert found and "fell below the useful range for sgd" in found[0].issue
    assert not too_low("restarts_noise_3") and not too_low("restarts_noise_4")


def test_an_adaptive_rate_too_short_for_its_steps_is_too_low(scenario):
    """Adam/RMSprop a hundred times below their usual rate, inside the nominal range: the rates summed
    over the run cannot carry a weight off its init; healthy adaptive runs sum to far more."""
    from analysis.analyzers import learning_rate
    from analysis.ingest import load_run

    def too_low(name):
        return [f for f in learning_rate.analyze(load_run(scenario(name))) if f.code == "lr_too_low"]

    for name in ("lr_short_for_steps_0", "lr_short_for_steps_2", "lr_hundredfold_low_3"):
        found = too_low(name)
        assert found and "rates sum to" in found[0].issue, name
    assert not too_low("restarts_noise_1") and not too_low("restarts_noise_2")


def test_with_no_optimizer_named_the_rate_is_judged_against_every_family(scenario, tmp_path):
    """The config removed (the log alone): a rate decayed below every family's floor is too low
    whichever optimizer ran; no top is read without a family."""
    from analysis.analyzers import learning_rate
    from analysis.ingest import load_run

    def codes(name):
        run = tmp_path / name
        shutil.copytree(scenario(name), run)
        (run / "config.yaml").unlink()
        return [f for f in learning_rate.analyze(load_run(run)) if "any optimizer" in f.issue]

    assert [f.code for f in codes("decay_per_batch_0")] == ["lr_too_low"]
    assert not codes("lr_above_range_1")
    assert not codes("restarts_noise_3")


def test_a_far_rate_pins_the_loss_until_a_schedule_lowers_it(scenario):
    """AdamW at ten times its range with a step decay at 60%: the loss learns a little only after the
    decay; while the rate was far above range it never fell, so the rate is read as the cause."""
    from analysis.analyzers import learning_rate
    from analysis.ingest import load_run

    found = [f for f in learning_rate.analyze(load_run(scenario("sgd_rate_adaptive_4"))) if f.code == "lr_too_high"]
    assert found and "never fell" in found[0].issue


def test_a_recurrent_cells_weights_are_one_depth_step():
    """The gradient profile steps by block: a cell's input and state weights (or a block's sub-layers)
    are one depth, so their ratio is not read as a layer-to-layer fall."""
    from analysis.analyzers.gradients import _depth_step

    assert _depth_step("cells.0.rec.weight") == _depth_step("cells.0.inp.weight") == "cells.0"
    assert _depth_step("features.3.weight") == "features.3" != _depth_step("features.5.weight")
    assert _depth_step("rnn.weight_hh_l0") == "rnn" and _depth_step("head.weight") == "head"


def test_a_rate_far_above_its_range_that_never_let_the_loss_fall(scenario):
    """Momentum SGD at 3.0 on an LSTM: no divergence to date, the loss held above chance all run;
    the rate, thirty times its range, is read as the cause. A rate in range is not."""
    from analysis.analyzers import learning_rate
    from analysis.ingest import load_run

    def too_high(name):
        return [f for f in learning_rate.analyze(load_run(scenario(name))) if f.code == "lr_too_high"]

    found = too_high("lr_pins_chance_0")
    assert found and "never fell" in found[0].issue and found[0].severity == "critical"
    assert not too_high("labels_shuffled_apart_2")


def test_vanishing_read_from_the_checkpoint_alone(scenario):
    """A 12-layer sigmoid MLP logged by the HF Trainer (no per-layer norms, no Adam state): the
    gradient profile is computed by pushing inputs through the checkpoint, and it falls toward the input."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(scenario("sigmoid_through_time_4")))
             if f.code == "vanishing_gradients"]
    assert found and "computed from the checkpoint" in found[0].issue
    assert any(e.artifact.endswith("model.safetensors") for e in found[0].evidence)


def test_checkpoint_layers_in_module_order():
    from analysis.analyzers.weights import _module_order

    names = ["10.weight", "2.weight", "0.weight", "head.weight"]
    assert sorted(names, key=_module_order) == ["0.weight", "2.weight", "10.weight", "head.weight"]


@pytest.mark.parametrize("line, flagged", [
    ("    x = (x - x.mean()) / x.std()", True),
    ("    x = x / torch.sqrt(v)", True),
    ("    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)", False),      # attention's scale: a constant
    ("    w = gain / math.sqrt(fan_in)", False),                           # an init's scale
])
def test_a_division_by_a_plain_number_is_not_a_spread(tmp_path, line, flagged):
    from analysis.analyzers.code import _unguarded_division
    from analysis.ingest.configs import parse_code

    src = tmp_path / "train.py"
    src.write_text(f"import math\nimport torch\n\n\ndef f(x, v, q, k, d_k, gain, fan_in):\n{line}\n    return x\n")
    assert (_unguarded_division(parse_code(src, "train.py")) is not None) == flagged


@pytest.mark.parametrize("optimizer, lr, schedule", [
    ("sgd", 0.001, lambda e, loss: 0.001 * 0.1 ** (e // 7)),          # the transfer-learning tutorial's StepLR
    ("adam", 0.001, lambda e, loss: 0.001 if e < 26 else 1e-7 * 0.1 ** (e - 26)),  # cut after it converged
])
def test_a_rate_that_decays_after_the_loss_converged_is_not_too_low(tmp_path, optimizer, lr, schedule):
    """A schedule that leaves the optimizer's range once the loss has done its falling follows the
    run; the flat loss after it is the convergence, not a rate too low."""
    from analysis.analyzers import learning_rate
    from analysis.ingest import load_run

    (tmp_path / "config.yaml").write_text(f"optimizer: {optimizer}\nlr: {lr}\n")
    lines = []
    for e in range(40):
        loss = 0.2 + 0.35 * 0.7 ** e
        lines.append(f"epoch {e} train loss {loss:.4f} lr {schedule(e, loss):.3g}")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    assert not [f for f in learning_rate.analyze(load_run(tmp_path)) if f.code == "lr_too_low"]


def test_one_overflow_the_run_comes_back_from_is_a_loss_scaler_skip(tmp_path):
    """Mixed precision: the scaler skips a step whose gradients overflowed, and the norm is finite
    again after it. That is the scaler working, not gradients that exploded from the start."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    (tmp_path / "config.yaml").write_text("optimizer: adamw\nlr: 0.0003\n")
    norms = ["320", "340", "inf"] + [f"{290 * 0.99 ** i:.1f}" for i in range(60)]
    (tmp_path / "train.log").write_text("".join(f"step {i + 1} loss {12 - 0.05 * i:.4f} grad_norm {g} lr 0.0003\n"
                                                for i, g in enumerate(norms)))
    assert not [f for f in gradients.analyze(load_run(tmp_path)) if f.code == "exploding_gradients"]


def test_a_large_first_norm_in_a_pasted_excerpt_does_not_rule_out_the_lr(tmp_path):
    """An excerpt counts its lines from 0 wherever it was cut, and Adam at 5x its range is a reading
    of its own: the first norm is not 'before any update' there."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    (tmp_path / "config.yaml").write_text("optimizer: adam\nlr: 0.05\n")
    (tmp_path / "train.log").write_text("".join(f"loss: {2 + 0.5 * i:.3f} grad_norm: {g} lr: 0.05\n"
                                                for i, g in enumerate(["150", "400", "1500", "9000", "nan"])))
    found = [f for f in gradients.analyze(load_run(tmp_path)) if f.code == "exploding_gradients"]
    assert found and "lr_too_high" not in found[0].rules_out
    assert not any("before any update" in e.text for e in found[0].evidence)


def test_a_pickles_module_order_chains_where_sorted_names_would_not(tmp_path):
    """A torch pickle keeps module order (encoder, then decoder); sorted as text the names would not
    chain. Safetensors sorts its names, so `10.weight` before `2.weight` needs module order instead."""
    import torch

    from analysis.analyzers.weights import _mlp_chain
    from analysis.ingest import load_run

    torch.save({"encoder.weight": torch.randn(16, 8), "encoder.bias": torch.zeros(16),
                "decoder.weight": torch.randn(4, 16), "decoder.bias": torch.zeros(4)}, tmp_path / "model.pt")
    ckpt = next(iter(load_run(tmp_path).loaded_checkpoints()))
    assert [name for name, _, _ in _mlp_chain(ckpt)] == ["encoder", "decoder"]


def test_conv_gradient_profile_matches_autograd():
    """The numpy backward pass through a same-padded convolution stack (flipped kernels, channels
    swapped) gives the weight gradients torch's autograd gives for the same signal."""
    import torch

    from analysis.analyzers.gradients import CONV_SAMPLES, CONV_SIDE, _conv_profile

    g = torch.Generator().manual_seed(0)
    chain = [(f"features.{2 * i}", torch.randn(4, 1 if i == 0 else 4, 3, 3, generator=g).numpy() * 0.5,
              torch.randn(4, generator=g).numpy() * 0.1) for i in range(3)]
    got = _conv_profile(chain, np.tanh, lambda a: 1 - a * a)

    rng = np.random.default_rng(0)          # the same inputs and output signal the profile draws
    x = torch.tensor(rng.standard_normal((CONV_SAMPLES, 1, CONV_SIDE, CONV_SIDE)))
    ws = [torch.tensor(w, dtype=torch.float64, requires_grad=True) for _, w, _ in chain]
    h = x
    for w, (_, _, b) in zip(ws, chain):
        h = torch.tanh(torch.nn.functional.conv2d(h, w, torch.tensor(b, dtype=torch.float64), padding=1))
    signal = torch.tensor(rng.standard_normal(h.shape)) / np.sqrt(h[0].numel())
    (h * signal).sum().backward()
    want = [float(w.grad.norm()) / CONV_SAMPLES for w in ws]
    assert np.allclose(got, want, rtol=1e-6)


def test_vanishing_read_from_a_convolution_checkpoint(scenario):
    """A 10-deep sigmoid CNN logged by the HF Trainer (its log has no per-layer norms): the profile
    is computed through the checkpoint's convolutions, in module order (features.18 after features.2)."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(scenario("sigmoid_stack_3")))
             if f.code == "vanishing_gradients"]
    assert found and "computed from the checkpoint" in found[0].issue
    assert "features.0" in found[0].issue and "features.18" in found[0].issue


def _recurrent_run(tmp_path, activation: str, losses: list[float]):
    """A stacked recurrent net's run as a Trainer-style folder would leave it: a config naming the
    activation, a loss log with no per-layer norms, and a checkpoint that is no plain MLP or CNN."""
    from safetensors.numpy import save_file

    (tmp_path / "config.yaml").write_text(f"model:\n  layers: 4\nactivation: {activation}\n")
    (tmp_path / "metrics.csv").write_text("step,loss,grad_norm\n" + "".join(
        f"{i + 1},{x},0.4\n" for i, x in enumerate(losses)))
    rng = np.random.default_rng(0)
    tensors = {"embed.weight": rng.standard_normal((24, 16)).astype(np.float32),
               "head.weight": rng.standard_normal((3, 16)).astype(np.float32)}
    for i in range(4):
        for part in ("inp", "rec"):
            tensors[f"cells.{i}.{part}.weight"] = rng.standard_normal((16, 16)).astype(np.float32)
    save_file(tensors, str(tmp_path / "model.safetensors"))
    return tmp_path


@pytest.mark.parametrize("activation, losses, listed", [
    ("sigmoid", [1.1 - 0.0001 * i for i in range(60)], True),     # a saturating stack that never moved
    ("relu", [1.1 - 0.0001 * i for i in range(60)], False),       # nothing saturates
    ("sigmoid", [1.1 * 0.97 ** i for i in range(60)], False),     # it learns: nothing vanished
])
def test_an_unprofiled_saturating_stall_is_a_low_rival(tmp_path, activation, losses, listed):
    """No per-layer norms and a recurrent checkpoint: vanishing gradients are only suspected, listed
    at a low confidence with the activation, the depth and the flat loss as evidence."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(_recurrent_run(tmp_path, activation, losses)))
             if f.code == "vanishing_gradients"]
    assert bool(found) == listed
    if listed:
        assert found[0].severity == "medium" and found[0].confidence < 0.5
        assert "activation = sigmoid" in found[0].evidence[0].text and "6 weight layers" in found[0].evidence[1].text


def _norms(values) -> "object":
    from analysis.metrics import Series

    return Series("grad_norm", "train.log", np.arange(1, len(values) + 1, dtype=float), np.array(values, float))


@pytest.mark.parametrize("values, burst", [
    ([4e3, 2e4, 8e4, 3e5, 5e7, 2e6] + [1e3] * 94, True),      # huge before any update, 10^4x within the first steps
    ([4e3, 5e3, 4e3, 6e3, 5e3, 4e3] + [1e3] * 94, False),     # huge but never rising: no burst
    ([1.0, 3.0, 30.0, 300.0, 900.0] + [1.0] * 95, False),     # from a sane start: not made before any update
    ([4e3] * 20 + [5e7] + [1e3] * 79, False),                 # the rise comes after the first tenth of the run
])
def test_a_burst_from_the_start(values, burst):
    """A blow-up from a norm already huge at step 1 that the run survives (no Inf/NaN, no growth to
    the end) is still read as growth; not from a sane start, nor late."""
    from analysis.analyzers.gradients import _burst_from_the_start

    assert (_burst_from_the_start(_norms(values)) is not None) == burst


def test_layer_norms_printed_as_zero_still_shrink(tmp_path):
    """A text log rounds the first layers' norms to 0: they lie below every printed layer, so the
    profile still shrinks toward the input; a profile that stops shrinking is not read as vanishing."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    def vanishing(profile):
        lines = [" ".join([f"step={s}", "loss=1.38", *(f"grad_norm/{2 * i}.weight={m}" for i, m in enumerate(profile))])
                 for s in range(1, 41)]
        (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
        return [f for f in gradients.analyze(load_run(tmp_path)) if f.code == "vanishing_gradients"]

    found = vanishing([0, 0, 0, 0, 3e-06, 0.000152, 0.007389, 0.36321])
    assert found and "rounded to 0" in found[0].issue
    assert not vanishing([0, 0, 0, 0, 0.36, 0.35, 0.37, 0.36])


def test_a_resumed_run_at_a_decaying_rate_far_under_its_range_is_still_too_low(tmp_path):
    """A log of a run's tail (steps 6000-10000) whose rate falls at every value reads as a
    schedule's end, but not at 1e-7 for AdamW (10x under its floor) with the loss flat at ln(10)."""
    import math

    from analysis.diagnose import diagnose

    lines = ["optimizer: AdamW\n"] + [f"step {s} loss={2.3026 + 0.002 * math.sin(s):.4f} "
                                       f"lr={1e-7 * (1 - (s - 6000) / 4200):.3e}\n" for s in range(6000, 10001, 100)]
    (tmp_path / "train.log").write_text("".join(lines))
    d, _ = diagnose(tmp_path)
    assert "lr_too_low" in [c.code for c in d.root_causes]


def _growth_then_plateau(tmp_path, jump_at: int | None = None):
    # grad_norm grows e-fold every 60 steps from step 0 to 600, then holds within 5% of e^10
    import math

    lines = []
    for s in range(0, 3000, 10):
        g = math.exp(s / 60) if s < 600 else math.exp(10) * (1 + 0.05 * math.sin(s))
        late = jump_at is not None and s >= jump_at
        loss = 0.3 + (s - jump_at) / 100 if late else 2.0 * math.exp(-s / 500) + 0.3
        lines.append(f"step {s} loss={loss:.4f} grad_norm={g:.4g} lr={1e-2 if late else 1e-3:g}\n")
    (tmp_path / "train.log").write_text("".join(lines))


def test_a_gradient_growth_cites_where_it_reached_its_plateau_not_the_plateaus_top(tmp_path):
    from analysis.diagnose import diagnose

    _growth_then_plateau(tmp_path, jump_at=2000)
    d, _ = diagnose(tmp_path)
    grads = [c for c in d.root_causes if c.code == "exploding_gradients"]
    assert grads and "to 600" in grads[0].issue and "at step 600" in grads[0].evidence[0].text


@pytest.mark.parametrize("name", ["recurrent_radius_2", "l2_weight_typo_2"])
def test_a_loss_that_explodes_from_step_one_under_a_calm_lr_without_grad_norms(scenario, capsys, name):
    """No gradient norm logged: a loss rising geometrically from the first step to Inf/NaN (or by
    orders of magnitude) under a constant LR inside its optimizer's range is the explosion itself,
    read from the loss; the LR is ruled out, and the NaN is where it ended."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    f = next(f for f in gradients.analyze(load_run(scenario(name))) if f.code == "exploding_gradients")
    assert f.rules_out == ("lr_too_high",) and "loss" in f.evidence[0].text
    cause, doc = top(scenario, name, capsys)
    assert cause["code"] == "exploding_gradients"
    assert "lr_too_high" in [c["code"] for c in doc["root_causes"][1:3]]   # the rival stays listed


def test_a_loss_that_explodes_under_an_lr_above_its_range_is_not_read_as_gradients(scenario):
    """The same loss growth under an LR far above its optimizer's range is the LR's story."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    run = load_run(scenario("lr_batch_scaled_0"))
    run.metrics.series.pop("grad_norm", None)
    assert run.metrics.get("lr") is not None or run.config_value("lr") is not None
    assert not [f for f in gradients.analyze(run) if f.code == "exploding_gradients" and f.rules_out]


def test_forward_spread_matches_torch():
    """How much each hidden layer's output varies with the input, as torch computes it for the same
    standard-normal inputs through the same layers."""
    import torch

    from analysis.analyzers.weights import forward_spread

    g = torch.Generator().manual_seed(1)
    chain = [(str(i), torch.randn(8, 6 if i == 0 else 8, generator=g).numpy() * 0.3,
              torch.randn(8, generator=g).numpy() * 0.1) for i in range(4)]
    got = forward_spread(chain, 512, False, np.tanh)
    h = torch.tensor(np.random.default_rng(0).standard_normal((512, 6)))
    want = []
    for _, w, b in chain[:-1]:          # the last layer is the head: no hidden output of its own
        h = torch.tanh(h @ torch.tensor(w, dtype=torch.float64).T + torch.tensor(b, dtype=torch.float64))
        want.append(float(h.std(0, unbiased=False).pow(2).mean().sqrt()))
    assert np.allclose(got, want, rtol=1e-9)


def test_a_signal_faded_by_a_tiny_init_is_vanishing_not_dead_units(scenario):
    """A deep ReLU net initialised at a tenth of He's scale, logged by the HF Trainer (no per-layer
    norms): half its units are off for every input, as dead units are, but because no input signal
    reaches them. The checkpoint shows the fade and the tiny weights; the finding rules dead ReLUs out.
    Units a negative bias switched off (a real dead-ReLU run) are no fade."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(scenario("tiny_init_gain_1")))
             if f.code == "vanishing_gradients"]
    assert found and "fades" in found[0].issue and found[0].rules_out == ("dead_relu",)
    assert "far under a He/Xavier init" in texts(found[0].to_dict()) and found[0].fix.startswith("Initialise")
    for healthy_or_dead in ("negative_bias_mlp", "healthy_noisy_mlp", "activation_penalty_0"):
        assert gradients._faded_signal(load_run(scenario(healthy_or_dead))) is None, healthy_or_dead


def test_a_summed_loss_is_named_as_the_explosion_s_cause(scenario, tmp_path):
    """Gradients that explode because the loss is summed (reduction="sum", or micro-batch losses
    accumulated undivided) get that line as their fix; a loss divided by its accumulation count
    before backward() is no such cause."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    for name, said in (("reduction_sum_2", 'reduction="sum"'), ("accumulate_undivided_1", "undivided")):
        found = [f for f in gradients.analyze(load_run(scenario(name))) if f.code == "exploding_gradients"]
        assert found and said in texts(found[0].to_dict()), name
        assert found[0].fix.startswith(("Average the loss", "Divide each micro-batch's loss by 32")), name
    assert gradients._summed_loss(load_run(scenario("raw_targets_0"))) is None
    (tmp_path / "config.yaml").write_text("gradient_accumulation_steps: 8\noptimizer: {name: sgd, lr: 0.05}\n")
    (tmp_path / "train.py").write_text("for xb, yb in batches:\n    loss = loss_fn(model(xb), yb)\n"
                                       "    (loss / 8).backward()\n")
    assert gradients._summed_loss(load_run(tmp_path)) is None
    (tmp_path / "train.py").write_text("for xb, yb in batches:\n    loss = loss_fn(model(xb), yb)\n"
                                       "    loss.backward()\n")
    assert gradients._summed_loss(load_run(tmp_path)) is not None


def test_an_explosion_under_a_warm_up_inside_the_range_rules_the_lr_out(scenario):
    """Raw regression targets blowing up in the first steps of a warm-up, with no gradient norm
    logged: the loss was ~1e9 before any update and the rate never went above SGD's range, so the LR
    is ruled out and the targets' scale is the fix. A warm-up whose peak is far above its
    optimizer's range is no calm LR."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(scenario("raw_targets_unlogged_0")))
             if f.code == "exploding_gradients"]
    assert found and found[0].rules_out == ("lr_too_high",)
    assert "never above sgd's usual range" in texts(found[0].to_dict()) and found[0].fix.startswith("Standardise")
    run = load_run(scenario("warmup_peak_high_0"))
    lr = run.metrics.get("lr")
    assert gradients._calm_lr(run, lr, 0, len(lr) - 1) is None


def test_a_loss_in_the_hundreds_before_any_update_is_read_as_an_explosion(scenario):
    """A residual stack with no normalisation, logged as a text log with no gradient norm: its
    cross-entropy is ~400 at step 1 (a fresh classifier scores about ln K) and overflows three steps
    later, not rising at every step. The first loss says the model made it, so the LR is ruled out."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(scenario("residual_unlogged_1")))
             if f.code == "exploding_gradients"]
    assert found and found[0].rules_out == ("lr_too_high",) and "before any update" in texts(found[0].to_dict())


def test_a_summed_loss_is_read_only_where_it_trains(tmp_path):
    """`reduction='sum'` in an evaluation's running total (PyTorch's MNIST example) or divided on
    its line, and Accelerate's `accelerator.backward(loss)` (it divides by the accumulation count
    itself), are no summed training loss."""
    from analysis.analyzers.gradients import _summed_loss
    from analysis.ingest import load_run
    (tmp_path / "train.log").write_text("step=1 loss=2.0\nstep=2 loss=1.9\n")
    for source, config in (
            ("test_loss += F.nll_loss(output, target, reduction='sum').item()\n", ""),
            ("loss = F.mse_loss(out, y, reduction='sum') / x.size(0)\nloss.backward()\n", ""),
            ("for batch in loader:\n    loss = model(**batch).loss\n    accelerator.backward(loss)\n",
             "gradient_accumulation_steps: 8\n"),
            ("loss = crit(out, y).div(8)\nloss.backward()\n", "gradient_accumulation_steps: 8\n")):
        (tmp_path / "train.py").write_text(source)
        (tmp_path / "config.yaml").write_text(config or "lr: 0.001\n")
        assert _summed_loss(load_run(tmp_path)) is None, source
    (tmp_path / "train.py").write_text("for batch in loader:\n    loss = crit(model(x), y)\n    loss.backward()\n")
    (tmp_path / "config.yaml").write_text("gradient_accumulation_steps: 8\n")
    assert "undivided" in _summed_loss(load_run(tmp_path))[0].text


@pytest.mark.parametrize("name", ["sparse_grad_norm_0", "sparse_summed_0"])
def test_a_norm_logged_every_few_steps_is_read_at_its_one_finite_point(name, scenario, capsys):
    """Raw targets (the loss at every step) and a summed loss (everything every 5 steps), the
    gradient norm logged every 5 steps: one finite norm, far past any sane level, then Inf/NaN at
    the next logged point. That point is the blow-up caught mid-way, not a NaN out of calm norms and
    not the LR (constant, inside SGD's range)."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(scenario(name))) if f.code == "exploding_gradients"]
    assert found and found[0].rules_out == ("lr_too_high",)
    assert "logged every 5 steps" in texts(found[0].to_dict())
    cause, doc = top(scenario, name, capsys)
    assert cause["code"] == "exploding_gradients"
    assert [c["code"] for c in doc["root_causes"]].index("numerical_instability") > 0


@pytest.mark.parametrize("name, key", [("l2_typo_scheduled_0", "regularization.l2"),
                                       ("weight_decay_typo_0", "optimizer.weight_decay")])
def test_a_penalty_that_overshoots_under_a_cosine_is_the_explosion_s_cause(name, key, scenario):
    """An L2 weight (in the loss) or an SGD weight decay orders too large, under a cosine, with no
    gradient norm logged: the coefficient times the LR is over 1, so the penalty alone pushes every
    weight past zero further than it started; the config's line is the evidence and the fix."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(scenario(name))) if f.code == "exploding_gradients"]
    assert found and found[0].rules_out == ("lr_too_high",)
    assert found[0].fix.startswith(f"Set {key} to its intended scale")
    assert "past zero by more than it started" in texts(found[0].to_dict())


def test_a_turn_after_the_warm_up_with_no_term_in_sight_keeps_the_lr_as_the_rival(scenario, capsys):
    """An L2 typo logged to MLflow (no config names the penalty): the loss starts in the thousands,
    falls through the warm-up and turns after it. The loss's scale was wrong from step 1, but a turn
    after a warm-up is the rate's signature too: the explosion is listed at a lower confidence
    without ruling the LR out, and the LR stays on the list as the alternative."""
    from analysis.analyzers import gradients
    from analysis.ingest import load_run

    found = [f for f in gradients.analyze(load_run(scenario("l2_typo_scheduled_2")))
             if f.code == "exploding_gradients"]
    assert found and found[0].confidence == gradients.LATE_ONSET and found[0].rules_out == ()
    cause, doc = top(scenario, "l2_typo_scheduled_2", capsys)
    assert cause["code"] == "exploding_gradients"
    assert "lr_too_high" in [c["code"] for c in doc["root_causes"]]


def test_a_penalty_is_read_only_where_it_overshoots(tmp_path):
    """A usual coefficient (1e-4 under 1e-3), a coupled decay that overshoots zero but shrinks (lr x wd
    of 1.5), and any coefficient under an adaptive optimizer (it normalises the penalty's gradient;
    AdamW's decay only shrinks) are no typo; SGD's coupled decay of 60 under 0.05 is."""
    from analysis.analyzers.gradients import _penalty_overshoots
    from analysis.ingest import load_run
    (tmp_path / "train.log").write_text("step=1 loss=2.0\nstep=2 loss=1.9\n")
    for config in ("optimizer: {name: sgd, lr: 0.001}\nl2: 0.0001\n",
                   "optimizer: {name: adamw, lr: 0.001, weight_decay: 0.1}\n",
                   "optimizer: {name: sgd, lr: 0.05, weight_decay: 30}\n",
                   "optimizer: {name: adamw, lr: 0.01, weight_decay: 150}\n",
                   "optimizer: {name: adam, lr: 0.01}\nl2: 1000\n"):
        (tmp_path / "config.yaml").write_text(config)
        assert _penalty_overshoots(load_run(tmp_path)) is None, config
    (tmp_path / "config.yaml").write_text("optimizer: {name: sgd, lr: 0.05, weight_decay: 60}\n")
    assert _penalty_overshoots(load_run(tmp_path)) is not None


def test_a_penalty_s_limit_moves_with_the_momentum_the_config_states(tmp_path):
    """On the penalty's quadratic, heavy-ball momentum 0.9 stays stable up to lr x wd = 3.8 (a coupled
    decay of 60 under 0.05, a product of 3, shrinks the weights under torch's SGD), Nesterov's only
    up to 2 x 1.9 / 2.8 = 1.36 (a product of 2, under plain SGD's limit of 2, blows up)."""
    from analysis.analyzers.gradients import _penalty_overshoots
    from analysis.ingest import load_run
    (tmp_path / "train.log").write_text("step=1 loss=2.0\nstep=2 loss=1.9\n")
    (tmp_path / "config.yaml").write_text("optimizer: {name: sgd, lr: 0.05, weight_decay: 60, momentum: 0.9}\n")
    assert _penalty_overshoots(load_run(tmp_path)) is None
    (tmp_path / "config.yaml").write_text("optimizer: {name: sgd, lr: 0.05, weight_decay: 40}\n")
    assert _penalty_overshoots(load_run(tmp_path)) is None
    (tmp_path / "config.yaml").write_text("optimizer: {name: sgd, lr: 0.05, weight_decay: 40, momentum: 0.9, "
                                          "nesterov: true}\n")
    assert _penalty_overshoots(load_run(tmp_path)) is not None
