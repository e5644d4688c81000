"""Metric tables, configs, code and checkpoints, in the layouts the real tools write."""
import json
import os
import pickle
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from analysis.diagnose import diagnose_run
from analysis.ingest import load_run
from analysis.ingest.checkpoints import load_safetensors, load_torch, read_safetensors_header, unsafe_globals
from analysis.ingest.configs import parse_code, parse_config
from analysis.ingest.tables import parse_csv, parse_jsonl, parse_mlflow_run, parse_tensorboard, parse_trainer_state
from analysis.names import canonical
from handlers.cli import main


@pytest.mark.parametrize("raw,canon", [
    ("loss", "train_loss"), ("train/loss", "train_loss"), ("training_loss", "train_loss"),
    ("eval_loss", "val_loss"), ("val/loss", "val_loss"), ("total_norm", "grad_norm"),
    ("learning_rate", "lr"), ("lr-AdamW", "lr"), ("grad_2.0_norm/fc1.weight", "grad_norm/fc1.weight"),
    ("val/f1", "val_f1"),
])
def test_metric_names(raw, canon):
    assert canonical(raw) == canon


def _series(result):
    return {s.name: s for s in result.series}


def test_lightning_csv_with_gaps(tmp_path):
    p = tmp_path / "metrics.csv"
    p.write_text("epoch,step,train_loss_step,val_loss\n0,9,2.31,\n0,19,2.10,\n0,19,,2.20\n1,29,1.90,\n1,39,1.80,1.95\n"
                 "1,40,1.7,1.9,extra,cells\n")
    r = parse_csv(p, "metrics.csv")
    s = _series(r)
    assert s["train_loss"].values.tolist() == [2.31, 2.10, 1.90, 1.80]
    assert s["train_loss"].lines.tolist() == [2, 3, 5, 6]
    assert s["val_loss"].steps.tolist() == [19, 39]
    assert r.skipped == 1


def test_dashboard_csv_exports_name_their_metric(tmp_path):
    # TensorBoard's export takes the tag from its file name; W&B's names each column `<run> - <metric>`, with bounds
    tb = tmp_path / "run-train-tag-train_loss.csv"
    tb.write_text("Wall time,Step,Value\n1709380933.12,100,2.412\n1709380963.45,200,2.101\n1709381023.99,400,nan\n")
    s = _series(parse_csv(tb, tb.name))
    assert set(s) == {"train_loss"} and s["train_loss"].steps.tolist() == [100, 200, 400]
    wb = tmp_path / "wandb_export.csv"
    wb.write_text('"Step","glowing-sun-12 - train/loss","glowing-sun-12 - train/loss__MIN",'
                  '"glowing-sun-12 - train/loss__MAX"\n"100","2.412","2.401","2.433"\n"200","2.101","2.088","2.120"\n')
    s = _series(parse_csv(wb, wb.name))
    assert set(s) == {"train_loss"} and s["train_loss"].values.tolist() == [2.412, 2.101]
    plain = tmp_path / "metrics.csv"
    plain.write_text("Wall time,Step,Value\n1.0,1,0.5\n")
    assert "train_loss" not in _series(parse_csv(plain, plain.name))


def test_jsonl_with_any_column_names(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_text('{"_step": 0, "train/loss": 2.5, "optimizer": {"lr": 0.001}}\n'
                 'not json\n'
                 '{"_step": 1, "train/loss": 2.4}\n')
    r = parse_jsonl(p, "metrics.jsonl")
    s = _series(r)
    assert s["train_loss"].values.tolist() == [2.5, 2.4] and s["train_loss"].lines.tolist() == [1, 3]
    assert s["lr"].values.tolist() == [0.001]
    assert r.skipped == 1


def test_hf_trainer_state(tmp_path):
    state = {"global_step": 20, "log_history": [
        {"epoch": 0.5, "grad_norm": 1.5, "learning_rate": 5e-05, "loss": 2.3, "step": 10},
        {"epoch": 0.5, "eval_loss": 2.4, "eval_runtime": 1.0, "eval_samples_per_second": 10.0, "step": 10},
        {"epoch": 1.0, "grad_norm": 1.2, "learning_rate": 4e-05, "loss": 2.1, "step": 20},
        {"epoch": 1.0, "step": 20, "total_flos": 1.0, "train_loss": 2.2, "train_runtime": 9.0}]}
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    s = _series(parse_trainer_state(p, "trainer_state.json"))
    assert s["train_loss"].values.tolist()[:2] == [2.3, 2.1]
    assert s["val_loss"].values.tolist() == [2.4]
    assert s["lr"].steps.tolist() == [10, 20]
    assert p.read_text().splitlines()[s["grad_norm"].lines[1] - 1].strip() == "{"


def test_tensorboard_summary_writer(tmp_path):
    from torch.utils.tensorboard import SummaryWriter
    w = SummaryWriter(log_dir=str(tmp_path))
    for step in range(5):
        w.add_scalar("train/loss", 2.0 - step * 0.1, step)
        w.add_scalar("grad_norm/fc1.weight", 0.5, step)
        w.add_scalar("lr-AdamW", 1e-3, step)
    w.close()
    files = list(tmp_path.glob("events.out.tfevents.*"))
    s = _series(parse_tensorboard(files, lambda p: p.name))
    assert s["train_loss"].values.round(4).tolist() == [2.0, 1.9, 1.8, 1.7, 1.6]
    assert s["grad_norm/fc1.weight"].steps.tolist() == [0, 1, 2, 3, 4]
    assert s["lr"].locator(2) == "step 2"


def test_mlflow_file_store(tmp_path):
    run = tmp_path / "mlruns" / "0" / "0a1b2c"
    (run / "metrics" / "train").mkdir(parents=True)
    (run / "params").mkdir()
    (run / "meta.yaml").write_text("run_id: 0a1b2c\nstatus: 3\n")
    (run / "metrics" / "train" / "loss").write_text("1700000000000 2.5 0\n1700000001000 2.25 1\nbroken\n")
    (run / "metrics" / "val_loss").write_text("1700000001000 2.6 1\n")
    (run / "params" / "lr").write_text("0.001")
    r = parse_mlflow_run(run, lambda p: p.relative_to(tmp_path).as_posix())
    s = _series(r)
    assert s["train_loss"].values.tolist() == [2.5, 2.25] and s["train_loss"].locator(1) == "line 2"
    assert r.params == {"lr": "0.001"} and r.skipped == 1
    whole = load_run(tmp_path)
    assert any(a.format == "mlflow" for a in whole.artifacts) and "val_loss" in whole.metrics


def test_configs_with_line_numbers(tmp_path):
    (tmp_path / "c.yaml").write_text("model:\n  d_model: 64\noptim:\n  lr: 0.001\n  warmup_steps: 0\n")
    (tmp_path / "c.toml").write_text("[optim]\nlr = 0.01\n")
    (tmp_path / "c.json").write_text(json.dumps({"learning_rate": 5e-5, "fp16": True}, indent=2))
    (tmp_path / "args.txt").write_text("Namespace(batch_size=32, lr=0.1, model='gpt')\n")
    y = parse_config(tmp_path / "c.yaml", "c.yaml")
    assert y.values["optim.lr"] == 0.001 and y.lines["optim.lr"] == 4
    t = parse_config(tmp_path / "c.toml", "c.toml")
    assert t.values["optim.lr"] == 0.01 and t.lines["optim.lr"] == 2
    j = parse_config(tmp_path / "c.json", "c.json")
    assert j.lines["fp16"] == 3
    a = parse_config(tmp_path / "args.txt", "args.txt")
    assert a.values == {"batch_size": 32, "lr": 0.1, "model": "gpt"}
    (tmp_path / "bad.yaml").write_text("a: [1, 2\n")
    with pytest.raises(ValueError, match="invalid YAML"):
        parse_config(tmp_path / "bad.yaml", "bad.yaml")


def test_code_is_parsed_not_run(tmp_path):
    p = tmp_path / "train.py"
    p.write_text("import os\nos.system('touch PWNED')\n"
                 "for b in data:\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n")
    code = parse_code(p, "train.py")
    assert code.calls["step"] == [6] and code.first_line("zero_grad") == 4
    assert not (tmp_path / "PWNED").exists()


def test_safetensors_stats_and_truncation(tmp_path):
    p = tmp_path / "model.safetensors"
    save_file({"emb.weight": torch.ones(10, 4), "fc.weight": torch.full((2, 4), float("nan")),
               "h.weight": torch.ones(3, 3, dtype=torch.bfloat16)}, p)
    ck = load_safetensors([p], "model.safetensors")
    by = {t.name: t for t in ck.tensors}
    assert by["emb.weight"].norm == pytest.approx(40 ** 0.5) and by["fc.weight"].nonfinite == 8
    assert by["h.weight"].norm == pytest.approx(3.0)
    data = p.read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[: len(data) - 40])
    with pytest.raises(ValueError, match="truncated"):
        read_safetensors_header(tmp_path / "cut.safetensors")


def test_sharded_safetensors_via_index(tmp_path):
    save_file({"a.weight": torch.ones(2, 2)}, tmp_path / "model-00001-of-00002.safetensors")
    save_file({"b.weight": torch.ones(3, 2)}, tmp_path / "model-00002-of-00002.safetensors")
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": {
        "a.weight": "model-00001-of-00002.safetensors", "b.weight": "model-00002-of-00002.safetensors"}}))
    run = load_run(tmp_path)
    assert [c.numel for c in run.checkpoints] == [10]
    assert {a.format for a in run.artifacts} >= {"safetensors-index", "safetensors-shard"}


def test_torch_and_lightning_checkpoints_load_weights_only(tmp_path):
    torch.save({"fc.weight": torch.ones(2, 2)}, tmp_path / "w.pt")
    torch.save({"state_dict": {"model.fc.weight": torch.ones(3, 3)}, "global_step": 40, "epoch": 1,
                "pytorch-lightning_version": "2.4.0", "optimizer_states": [], "lr_schedulers": []},
               tmp_path / "epoch=1-step=40.ckpt")
    assert load_torch(tmp_path / "w.pt", "w.pt").numel == 4
    ck = load_torch(tmp_path / "epoch=1-step=40.ckpt", "x.ckpt")
    assert ck.numel == 9 and ck.step == 40 and ck.format == "lightning-ckpt"


class Payload:
    def __reduce__(self):
        return (os.system, ("touch " + str(Path(__file__).parent / "PWNED_BY_PICKLE"),))


def test_pickle_that_would_run_code_is_refused_unrun(tmp_path):
    p = tmp_path / "model.pt"
    torch.save({"w": torch.ones(1), "x": Payload()}, p)
    assert any("system" in g for g in unsafe_globals(p))
    ck = load_torch(p, "model.pt")
    assert ck.problem.startswith("refused") and "system" in ck.problem
    raw = tmp_path / "legacy.pkl"
    raw.write_bytes(pickle.dumps(Payload()))
    assert load_torch(raw, "legacy.pkl").problem.startswith("refused")
    assert not (Path(__file__).parent / "PWNED_BY_PICKLE").exists()


def test_discovery_by_name_and_content(tmp_path):
    (tmp_path / "stdout").write_text("step=1 loss=2\n")
    (tmp_path / "crash").write_text("Traceback (most recent call last):\n"
                                    "  File \"a.py\", line 1, in <module>\nValueError: x\n")
    torch.save({"w": torch.ones(1)}, tmp_path / "blob")
    run = load_run(tmp_path)
    kinds = {a.path: (a.kind, a.format) for a in run.artifacts}
    assert kinds["stdout"] == ("log", "plain_text")
    assert kinds["crash"][0] == "traceback"
    assert kinds["blob"][0] == "checkpoint"


def test_one_pandas_table_per_run_keyed_by_step(tmp_path):
    (tmp_path / "train.log").write_text("step=1 loss=2.0 lr=0.1\nstep=2 loss=1.5 lr=0.1\n")
    (tmp_path / "metrics.csv").write_text("step,val_loss\n2,1.7\n")
    frame = load_run(tmp_path).metrics.frame()
    assert frame.index.name == "step" and list(frame.index) == [1.0, 2.0]
    assert frame.loc[2.0, "train_loss"] == 1.5 and frame.loc[2.0, "val_loss"] == 1.7


def test_console_output_named_like_samples_is_read_as_a_log(tmp_path, capsys):
    """`output.txt` is as often the console of a run as a file of generations: its content decides."""
    (tmp_path / "output.txt").write_text("RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; "
                                         "7.93 GiB total capacity; 6.19 GiB already allocated; 340.00 MiB free)\n")
    (tmp_path / "generated_samples.txt").write_text("::::\n::::\n::::\n::::\n::::\n::::\n")
    assert main(["diagnose", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    kinds = {a["path"]: a["kind"] for a in doc["run"]["artifacts"]}
    assert kinds == {"output.txt": "log", "generated_samples.txt": "samples"}
    assert {c["code"] for c in doc["root_causes"]} >= {"out_of_memory", "mode_collapse"}


def test_mlflow_params_are_the_runs_config(tmp_path, capsys):
    """A tuning generator's run (an LR 1e-4 of SGD's usual one) written as an MLflow file store: its
    logged `params/` are the run's config, so the optimizer and its LR are judged as from a YAML."""
    from tests.scenarios.grid import Variant
    from tests.scenarios.grid_optim import BASE_LR, lr_ten_thousand_times_small

    lr_ten_thousand_times_small(tmp_path, Variant("mlp", "sgd", fmt="mlflow", seed=111))
    assert not (tmp_path / "config.yaml").exists()
    run = load_run(tmp_path)
    assert run.config_value("optimizer")[2] == "sgd"
    assert run.config_value("lr")[2] == pytest.approx(BASE_LR["sgd"] * 1e-4)
    assert any(a.format == "mlflow_param" and a.path.endswith("params/lr") for a in run.artifacts)
    assert main(["diagnose", str(tmp_path), "--format", "json"]) == 0
    top = json.loads(capsys.readouterr().out)["root_causes"][0]
    assert top["code"] == "lr_too_low"
    assert any(e["artifact"].endswith("params/optimizer") for e in top["evidence"])


@pytest.mark.parametrize("text", [
    # tests/wild rllib-episode-reward-nan-no-done-10416: RLlib's result dump prints YAML's `.nan`
    "episode_len_mean: .nan\nepisode_reward_max: .nan\nepisode_reward_mean: .nan\n",
    # tests/wild hhmarl-rllib-categorical-logits-nan-lower-lr-15: the rows of a printed tensor of NaN logits
    "        [nan, nan, nan,  ..., nan, nan, nan],\n        [nan, nan, nan,  ..., nan, nan, nan]], "
    "grad_fn=<SubBackward0>)\n\nIn tower 0 on device cpu\n",
    # tests/wild yolov7-ciou-box-loss-nan-142: a table's row of numbers with NaN among them, bare or stamped
    "box         obj              cls     total    labels  img_size\n"
    "nan       0.007422         0       nan        22   1280\n",
    "2024-03-01 10:22:30,809 - INFO - box         obj              cls     total    labels  img_size\n",
    # tests/wild xgboost-r-cv-rmse-nan-dataframe-dmatrix-194: XGBoost's evaluation rounds
    "[0]\ttrain-rmse:NaN+NA\ttest-rmse:NaN+NA\n[1]\ttrain-rmse:NaN+NA\ttest-rmse:NaN+NA\n",
    # tests/wild x-vits-disc-gen-nan-fp16-5: a print loop's pairs, the first one finite
    "b=3.985, disc=nan, gen=nan, fm=nan,\n",
])
def test_nan_values_in_output_txt_are_read_as_a_log(tmp_path, text):
    (tmp_path / "output.txt").write_text(text)
    (tmp_path / "predictions.txt").write_text("the cat sat on the mat\nlabel: 3 score: 0.93\n")
    kinds = {a.path: a.kind for a in load_run(tmp_path).artifacts}
    assert kinds == {"output.txt": "log", "predictions.txt": "samples"}


def test_results_named_by_perplexity_in_output_txt_are_a_log(tmp_path):
    # tests/wild cntk-brainscript-errs-rise-500-epochs-lr-per-sample-0.1-1347 (tune half): CNTK's results after 100
    # and after 500 epochs, the second far worse (learningRatesPerSample .1); as a model's outputs it read nothing
    (tmp_path / "output.txt").write_text(
        "Final Results: Minibatch[1-1]: errs = 7.143% * 14; ce = 0.12205110 * 14; perplexity = 1.12981184\n\n"
        "Final Results: Minibatch[1-1]: errs = 78.571% * 14; ce = 1.88566235 * 14; perplexity = 6.59071837\n")
    run = load_run(tmp_path)
    assert [(a.path, a.kind) for a in run.artifacts] == [("output.txt", "log")]
    assert run.metrics.get("perplexity").values.tolist() == [1.12981184, 6.59071837]


@pytest.mark.parametrize("text", [
    # CNTK's results line alone, and a perplexity by name with its number: a log
    "Final Results: Minibatch[1-1]: errs = 7.143% * 14; ce = 0.12205110 * 14\n",
    "epoch 3 | valid perplexity 23.41\n",
])
def test_results_by_minibatch_or_perplexity_are_a_log(tmp_path, text):
    (tmp_path / "output.txt").write_text(text)
    assert [a.kind for a in load_run(tmp_path).artifacts] == ["log"]


@pytest.mark.parametrize("name, text", [
    # (the session's review) ids of 11 digits and more, and a float's fraction digits, beside a NaN label
    ("output.txt", "1617181920123 0.8731 1\n1617181921456 0.4410 0\n1617181921678 0.3301 nan\n"),
    ("output.txt", "0.8731234567890123 1.0\n0.3301234567890123 nan\n"),
    # one non-finite pair after a comma: a prediction's missing target, an answer's limit
    ("predictions.txt", "id=5, pred=0.912, target=nan\nid=6, pred=0.118, target=0\n"),
    ("generations.txt", "The sequence grows without bound, limit = inf\n"),
    # the words a generation or an answer about a crash may use
    ("generations.txt", "lol ppl are so funny\n" * 6),
])
def test_model_outputs_with_numbers_or_words_of_a_log_stay_outputs(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    run = load_run(tmp_path)
    assert [a.kind for a in run.artifacts] == ["samples"]
    d = diagnose_run(run)
    assert not [c for c in d.root_causes if c.code != "mode_collapse" and c.severity in ("critical", "high")]


def test_an_answer_that_names_the_oom_killer_is_no_oom(tmp_path):
    # (the session's review) prose, not PAI's `The job has been killed by "OOM Killer"`
    (tmp_path / "samples.txt").write_text("A: It was most likely killed by the OOM killer; check dmesg.\n"
                                          "it was not killed by the OOM killer (dmesg shows nothing)\n")
    d = diagnose_run(load_run(tmp_path))
    assert not [c for c in d.root_causes if c.severity in ("critical", "high")]


def test_a_log_that_opens_with_a_lua_table_is_no_json_config(tmp_path):
    # tests/wild namas-err-nan-lr-21 cut at Lua Torch's `{` table of tensors
    (tmp_path / "train.log").write_text("{\n  1 : CudaTensor - size: 64x291\n}\nerr     nan\n")
    (tmp_path / "settings.log").write_text('{\n  "lr": 0.001,\n  "batch_size": 32\n}\n')
    kinds = {a.path: (a.kind, a.format) for a in load_run(tmp_path).artifacts}
    assert kinds == {"train.log": ("log", "plain_text"), "settings.log": ("config", "json")}


def test_a_yaml_lr_written_without_a_dot_is_a_number(tmp_path):
    # YAML 1.1 (PyYAML) reads `lr: 1e-7` as the string '1e-7': it is still the run's LR
    (tmp_path / "config.yaml").write_text("optimizer: adamw\nlr: 1e-7\nepochs: 40\n")
    (tmp_path / "train.log").write_text("".join(f"epoch {e} loss {1.9945 - 0.001 * (e % 3):.4f}\n"
                                                for e in range(1, 41)))
    run = load_run(tmp_path)
    assert run.config_value("lr").number == 1e-7
    top = diagnose_run(run).root_causes[0]
    assert top.code == "lr_too_low" and "config.yaml" in {e.artifact for e in top.evidence}
