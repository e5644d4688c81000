"""Logs as people commit or paste them from the middle of a long run (the last lines of a Megatron or
nanoGPT log, a tail of a run stuck at chance), and the reader forms found on committed logs: what the
lines support and no more."""
import csv
import json
import shutil
import tempfile
from pathlib import Path

import pytest
import torch

from analysis import diagnose

GRAVE = ("critical", "high")


def window(scenario, tmp_path, name: str, lines: int, keep_config: bool = False):
    """The last `lines` lines of a scenario run's log, alone (or beside its config)."""
    root = tmp_path / name
    root.mkdir()
    src = scenario(name)
    if keep_config:
        shutil.copy(src / "config.yaml", root / "config.yaml")
    (root / "train.log").write_text("".join((src / "train.log").read_text().splitlines(keepends=True)[-lines:]))
    return root


def test_a_late_window_of_a_run_at_chance_is_one_reading_not_a_verdict(scenario, tmp_path):
    """Shuffled pairs pin the loss at ln(4): the whole log says so; its last 60 lines alone cannot say the loss
    never fell, and any flat loss sits near ln(k) for some k, so the reading is offered, at medium, with what
    would settle it; the config's class count settles it again."""
    whole, _ = diagnose(scenario("shuffled_labels_mlp"))
    assert (whole.root_causes[0].code, whole.root_causes[0].severity) == ("data_pipeline_bug", "high")
    tail, _ = diagnose(window(scenario, tmp_path, "shuffled_labels_mlp", 60))
    top = tail.root_causes[0]
    assert (top.code, top.severity) == ("data_pipeline_bug", "medium") and "class count" in top.issue
    (tmp_path / "c").mkdir()
    told, _ = diagnose(window(scenario, tmp_path / "c", "shuffled_labels_mlp", 60, keep_config=True))
    assert (told.root_causes[0].code, told.root_causes[0].severity) == ("data_pipeline_bug", "high")


def test_a_steady_late_window_of_a_language_model_is_healthy(tmp_path):
    """A Megatron-style window (iterations 5786-5800 of 500000, lm loss ~2.4, perplexity logged): a language
    model's chance is ln(vocabulary), so a loss of 2.4 is no chance level; a late window that holds is healthy."""
    root = tmp_path / "megatron"
    root.mkdir()
    losses = [2.359935, 2.522473, 2.396109, 2.376205, 2.445632, 2.523875, 2.465936, 2.431207, 2.388410, 2.502113,
              2.417764, 2.390021, 2.468342, 2.441870, 2.409995]
    (root / "finetune.log").write_text("".join(
        f" iteration {5786 + i:>8}/  500000 | consumed samples: {51088 + 8 * i:>12} | elapsed time per iteration "
        f"(ms): 300.1 | learning rate: {7.484e-05 + i * 1e-08:.3E} | global batch size:     8 | lm loss: {v:.6E} | "
        f"loss scale: 1.0 | grad norm: 0.510 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
        + (f" validation loss at iteration {5786 + i} | lm loss value: {v:.6E} | lm loss PPL: 11.2 |\n"
           if i % 5 == 4 else "")
        for i, v in enumerate(losses)))
    d, _ = diagnose(root)
    assert d.root_causes[0].code == "healthy" and "late window" in d.root_causes[0].issue
    assert not [c for c in d.root_causes if c.code != "healthy"]


def _paste(tmp_path, name: str, text: str):
    root = tmp_path / "paste"
    root.mkdir()
    (root / name).write_text(text)
    d, run = diagnose(root)
    return d, run


def test_print_args_then_training_lines_is_a_log_whose_arguments_are_its_settings(tmp_path):
    """PyTorch's word_language_model prints `Namespace(...)` and then its epoch table: a log, not a config
    (it was read as an unreadable config, so the NaN from the first report was never seen), and the
    arguments are settings (lr=20)."""
    rows = "".join(f"| epoch   1 | {200 * i:5d}/ 2983 batches | lr 20.0000 | ms/batch 11.50 | loss   nan | "
                   "ppl      nan\n" for i in range(1, 8))
    d, run = _paste(tmp_path, "train_log.md", "Namespace(batch_size=20, bptt=35, clip=0.25, cuda=True, dropout=0.2, "
                    "epochs=5, lr=20, model='RNN_RELU', nhid=200, nlayers=2, seed=1111, tied=False)\n" + rows)
    assert [(a["kind"]) for a in d.run["artifacts"]] == ["log"]
    assert {c.code for c in d.root_causes[:2]} == {"numerical_instability", "lr_too_high"}
    assert d.root_causes[0].severity in GRAVE and run.config_value("lr").value == 20


def test_a_logged_list_of_losses_with_nan_is_read(tmp_path):
    """VITS logs `[loss_disc, loss_gen, loss_fm, loss_mel, loss_dur, loss_kl, global_step, lr]` as a bare list;
    NaN from the first step (fp16_run on, batch size 1) was said to be finite values."""
    d, _ = _paste(tmp_path, "train.log", "\n".join([
        "2024-11-08 17:20:57,135\tljs_base\tINFO\tTrain Epoch: 1 [0%]",
        "2024-11-08 17:20:57,136\tljs_base\tINFO\t[nan, nan, nan, nan, 1.350276231765747, 134.32485961914062, 0, "
        "0.0002]",
    ]) + "\n")
    assert d.root_causes[0].code in ("numerical_instability", "lr_too_high")
    assert d.root_causes[0].severity in GRAVE


def test_a_launcher_stopped_from_outside_is_no_rank_failure(tmp_path):
    """torchrun itself got SIGTERM (a scheduler's limit, a kill): its `closing signal SIGTERM` lines to the ranks
    are that signal's, so no rank failed; the same lines without it still say a rank did."""
    teardown = ["W1212 12:11:26.085000 9724 torch/distributed/elastic/multiprocessing/api.py:908] Sending process "
                f"{9868 + i} closing signal SIGTERM" for i in range(8)]
    signalled = ["W1212 12:11:26.080000 9724 torch/distributed/elastic/agent/server/api.py:719] Received "
                 "Signals.SIGTERM death signal, shutting down workers", *teardown,
                 "torch.distributed.elastic.multiprocessing.api.SignalException: Process 9724 got signal: 15"]
    d, _ = _paste(tmp_path, "train.log", "\n".join(signalled) + "\n")
    assert not [c for c in d.root_causes if c.code == "distributed_failure" and c.severity in GRAVE]
    # OLMo's trainer before it: steps 995-1010 of 15000, its loss as `train/CrossEntropyLoss`
    steps = [f"2025-12-12 12:09:55.530\tnode:0\tolmo.train:979\tINFO\t[step={995 + i}/15000,epoch=0]\n"
             f"    train/CrossEntropyLoss={2.96 + 0.04 * ((i * 7) % 3 - 1):.3f}\n    train/Perplexity=19.3"
             for i in range(16)]
    (tmp_path / "olmo").mkdir()
    d, _ = _paste(tmp_path / "olmo", "training.log", "\n".join(steps + signalled) + "\n")
    assert d.root_causes[0].code == "healthy" and "stopped from outside" in d.root_causes[0].issue
    (tmp_path / "b").mkdir()
    d, _ = _paste(tmp_path / "b", "train.log", "\n".join(teardown) + "\n")
    assert d.root_causes[0].code == "distributed_failure"


def test_a_rank_that_failed_before_the_launcher_was_signalled_is_still_the_failure(tmp_path):
    """srun stops the surviving node after the first one failed: that node's torchrun is signalled, but the
    failed node's `ChildFailedError` report says a rank failed first (a review of this change)."""
    lines = [f"step {i} loss {2.5 - 0.05 * i:.3f}" for i in range(1, 21)] + [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "[0]:", "  time      : 2025-01-01_10:00:00", "  rank      : 3 (local_rank: 3)", "  exitcode  : 1 (pid: 4242)",
        "W0101 10:00:01.000000 999 torch/distributed/elastic/agent/server/api.py:719] Received Signals.SIGTERM "
        "death signal, shutting down workers",
        "W0101 10:00:01.000000 999 torch/distributed/elastic/multiprocessing/api.py:908] Sending process 1001 closing "
        "signal SIGTERM",
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 999 got signal: 15"]
    d, _ = _paste(tmp_path, "train.log", "\n".join(lines) + "\n")
    assert d.root_causes[0].code == "distributed_failure" and d.root_causes[0].severity in GRAVE


def test_a_logged_list_that_is_no_vits_loss_list_is_not_read(tmp_path):
    """A per-class IoU list with a NaN (a class absent from the split) is no loss: only VITS's
    `[*losses, step, lr]` layout is read."""
    d, _ = _paste(tmp_path, "eval.log", "\n".join([
        "2024-01-01 10:00:00,000 - INFO - Evaluating segmentation on 500 images",
        "2024-01-01 10:00:00,000 - INFO - per-class IoU",
        "2024-01-01 10:00:00,000 - INFO - [0.912, nan, 0.853, 0.701, 0.66]",
        "2024-01-01 10:00:00,000 - INFO - mIoU: 0.782"]) + "\n")
    assert not [c for c in d.root_causes if c.severity in GRAVE]


def test_anomaly_modes_warning_beside_the_error_it_caught_leaves_the_reading_to_that_error(tmp_path):
    d, _ = _paste(tmp_path, "traceback.txt", "\n".join([
        "[W python_anomaly_mode.cpp:104] Warning: Error detected in CudnnBatchNormBackward0. Traceback of forward "
        "call that caused the error:",
        '  File "train.py", line 10, in <module>', "    out = model(x)",
        "Traceback (most recent call last):", '  File "train.py", line 12, in <module>', "    loss.backward()",
        "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.cuda.FloatTensor [64]] is at version 3; expected version 2 instead."]) + "\n")
    assert "numerical_instability" not in [c.code for c in d.root_causes[:1]]


def test_a_nan_cost_beside_a_finite_loss_is_the_runs_nan(tmp_path):
    d, _ = _paste(tmp_path, "train.log", "".join(
        f"Iter {100 * i}, loss= {2 / (1 + 0.1 * i):.4f}, cost= {'nan' if i > 10 else '1.4'}\n" for i in range(1, 21)))
    assert d.root_causes[0].code == "numerical_instability"


def test_a_run_logged_sparsely_from_its_start_is_no_late_window(tmp_path):
    """Iterations 50-600 of 600, the loss held at ln(50257) = 10.83 (a GPT-2 vocabulary at chance): a whole run,
    not a late window, and a level no trained model holds: never healthy."""
    d, _ = _paste(tmp_path, "train.log", "".join(
        f"Iteration {50 * i}/600, loss: {10.83 + 0.01 * ((i * 7) % 3 - 1):.4f}\n" for i in range(1, 13)))
    assert "healthy" not in [c.code for c in d.root_causes[:1]]
    (tmp_path / "late").mkdir()
    d, _ = _paste(tmp_path / "late", "train.log", "".join(
        f"iteration {12000 + i}/500000 | lm loss: {10.83 + 0.01 * ((i * 7) % 3 - 1):.4f}\n" for i in range(15)))
    assert "healthy" not in [c.code for c in d.root_causes[:1]]


def test_a_namespace_longer_than_the_sniffed_head_still_makes_a_log(tmp_path):
    """fairseq's `print(args)` runs to several KB: a log whose first line is longer than the 4 KB the
    classifier reads is not taken for a config file, and its arguments are read."""
    ns = "Namespace(" + ", ".join(f"arg_{i}={i}" for i in range(600)) + ", lr=0.0005, fp16=True)"
    rows = "".join(f"| epoch 001 | loss {'nan' if i > 4 else f'{9.1 - 0.1 * i:.2f}'} | nll_loss 8.2 | ppl 300 | "
                   f"num_updates {10 * i + 10} | lr 0.0005\n" for i in range(10))
    d, run = _paste(tmp_path, "train.log", ns + "\n" + rows)
    assert [a["kind"] for a in d.run["artifacts"]] == ["log"]
    assert d.root_causes[0].code in ("numerical_instability", "lr_too_high") and run.config_value("fp16").value is True


# TensorFlow's BFC allocator at INFO, retrying a smaller chunk mid-run (a Keras BiLSTM-CRF log committed to a public
# repository, epoch 15 of 100; the fit went on to epoch 100 and `Process finished with exit code 0`)
_TF_RETRY = ["2021-05-09 18:30:53.337423: I tensorflow/stream_executor/cuda/cuda_driver.cc:789] failed to allocate "
             f"{mb:.2f}M ({int(mb * 1048576)} bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory"
             for mb in (613.15, 551.84, 496.65)]


def _with_lines(scenario, tmp_path, at: int | None, lines: list[str]):
    """A real run's log (healthy_noisy_mlp) with `lines` put after its line `at` (None: at its end)."""
    log = (scenario("healthy_noisy_mlp") / "train.log").read_text().splitlines()
    at = len(log) if at is None else at
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    (root / "train.log").write_text("\n".join(log[:at] + lines + log[at:]) + "\n")
    return diagnose(root)[0]


def test_an_oom_the_run_learned_on_past_is_a_low_note_under_the_verdict(scenario, tmp_path):
    """The allocator's retries mid-run, 500 loss reports after them, falling: healthy first, the OOM a low note
    that says the run went on; the same lines where the log ends are the crash, and an OOM in a traceback stays
    one whatever follows (a run started again)."""
    mid = _with_lines(scenario, tmp_path, 100, _TF_RETRY)
    assert mid.root_causes[0].code == "healthy"
    oom = next(c for c in mid.root_causes if c.code == "out_of_memory")
    assert oom.severity == "low" and "learned on" in oom.evidence[1].text
    end = _with_lines(scenario, tmp_path, None, _TF_RETRY)
    assert (end.root_causes[0].code, end.root_causes[0].severity) == ("out_of_memory", "critical")
    crash = ["Traceback (most recent call last):", '  File "train.py", line 88, in <module>',
             "    loss.backward()",
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
             "79.25 GiB of which 10.75 MiB is free."]
    restarted = _with_lines(scenario, tmp_path, 100, crash)
    assert (restarted.root_causes[0].code, restarted.root_causes[0].severity) == ("out_of_memory", "critical")


def test_an_oom_counts_from_its_last_line_and_only_where_it_says_the_program_goes_on(scenario, tmp_path):
    """A trainer's caught OOM (`skipping batch`) once mid-run and then at every batch where the log ends: the run
    did not learn on past its last, so it is the crash; the OOM killer's `Killed` mid-log, then losses (a relaunch
    by a wrapper script), stays the crash: its message does not say the program went on."""
    skip = ("2024-05-02 10:11:12 | WARNING | train | CUDA out of memory. Tried to allocate 1.53 GiB (GPU 0; 31.75 GiB "
            "total capacity; 28.41 GiB already allocated; 1.20 GiB free); skipping batch")
    log = (scenario("healthy_noisy_mlp") / "train.log").read_text().splitlines()
    root = tmp_path / "every-batch"
    root.mkdir()
    (root / "train.log").write_text("\n".join(log[:100] + [skip] + log[100:] + [skip] * 40) + "\n")
    end = diagnose(root)[0]
    assert (end.root_causes[0].code, end.root_causes[0].severity) == ("out_of_memory", "critical")
    once = _with_lines(scenario, tmp_path, 100, [skip])
    assert once.root_causes[0].code == "healthy"
    killed = _with_lines(scenario, tmp_path, 100, ["run.sh: line 5: 20211 Killed           python train.py --bs 64"])
    assert (killed.root_causes[0].code, killed.root_causes[0].severity) == ("out_of_memory", "critical")


def test_a_validation_loss_logged_alone_that_turns_up_is_overfitting_at_medium(scenario, tmp_path):
    """Lightning's metrics.csv with `val_loss` per epoch only (a recommender's committed log read no cause): the
    overfit CNN's validation loss, alone, falls to its best and climbs after it: overfitting, medium, saying the
    training loss would settle it; the same run's falling part alone is no such reading."""
    rows = list(csv.DictReader((scenario("overfit_cnn") / "lightning_logs/version_0/metrics.csv").open()))
    val = [r for r in rows if r["val_loss"]]
    best = min(range(len(val)), key=lambda i: float(val[i]["val_loss"]))
    assert 3 <= best <= len(val) - 4            # the run shows the shape this reading needs (a fall, then a rise)

    def logged(name: str, part: list) -> Path:
        root = tmp_path / name
        root.mkdir()
        (root / "metrics.csv").write_text("epoch,step,val_loss\n" + "".join(
            f"{r['epoch']},{r['step']},{r['val_loss']}\n" for r in part))
        return root

    d, _ = diagnose(logged("whole", val))
    top = d.root_causes[0]
    assert (top.code, top.severity) == ("overfitting", "medium") and "training loss" in top.issue
    falling, _ = diagnose(logged("falling", val[:best + 1]))
    assert not [c for c in falling.root_causes if c.code == "overfitting"]


def test_a_validation_loss_that_wanders_or_explodes_is_no_overfitting(tmp_path):
    """Validation losses alone that settle at a level with report-to-report noise (the best is one low draw, the
    climb after it no more than the noise), or that blow up fifty-fold as the LR doubles each epoch: neither is
    the fall-then-climb that overfitting draws."""
    level = [1.2, 0.9, 0.7, 0.55, 0.4846, 0.5113, 0.5064, 0.5129, 0.4827, 0.5006, 0.4990, 0.4700, 0.5108, 0.5064,
             0.5478, 0.4911, 0.5203, 0.4987, 0.5150, 0.5032, 0.4895, 0.5188, 0.5071, 0.5262, 0.4968]
    blown = [2.3, 1.9, 1.6, 1.4, 1.8, 3.5, 9.0, 40.0, 70.0]
    for name, vals in (("level", level), ("blown", blown)):
        root = tmp_path / name
        root.mkdir()
        (root / "metrics.csv").write_text("epoch,step,val_loss\n" + "".join(
            f"{e},{50 * (e + 1) - 1},{v}\n" for e, v in enumerate(vals)))
        d, _ = diagnose(root)
        assert not [c for c in d.root_causes if c.code == "overfitting"], name


def _records(scenario, name: str) -> list[dict]:
    """A scenario run's `step=... loss=... lr=...` lines as records."""
    out = []
    for line in (scenario(name) / "train.log").read_text().splitlines():
        kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
        if "step" in kv and "loss" in kv:
            out.append({"iteration": int(kv["step"]), "total_loss": float(kv["loss"]), "lr": float(kv["lr"])})
    return out


@pytest.mark.parametrize("name,code", [("lr_jump_mlp", "lr_too_high"), ("healthy_noisy_mlp", "healthy")])
def test_json_files_by_their_contents(scenario, tmp_path, name, code):
    """detectron2 writes one JSON object a line into `metrics.json` (an unreadable config before); a trainer state
    uploaded under another name (`trainer_state (1).json`) is still one; a JSON config stays a config."""
    rows = _records(scenario, name)
    d2 = tmp_path / "d2"
    d2.mkdir()
    (d2 / "metrics.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    d, _ = diagnose(d2)
    assert d.root_causes[0].code == code
    hf = tmp_path / "hf"
    hf.mkdir()
    state = {"best_metric": None, "epoch": 10.0, "global_step": rows[-1]["iteration"], "log_history": [
        {"epoch": r["iteration"] / 30, "learning_rate": r["lr"], "loss": r["total_loss"], "step": r["iteration"]}
        for r in rows]}
    (hf / "trainer_state (1).json").write_text(json.dumps(state, indent=2, sort_keys=True))
    (hf / "config.json").write_text(json.dumps({"hidden_size": 64, "learning_rate": 3e-4}, indent=2))
    d, run = diagnose(hf)
    assert d.root_causes[0].code == code
    assert {a.kind for a in run.artifacts} >= {"metrics", "config"}


def _two_part_run(matched: bool) -> list[tuple[float, float, float, float]]:
    """A tiny detector-like head trained on CPU: a class term and a box term (the box term over the objects a
    ground truth matched; with none matched it is 0, as YOLO's is where label files are empty). Per epoch:
    train box, train cls, val box, val cls."""
    g = torch.Generator().manual_seed(0)
    x, cls = torch.randn(640, 8, generator=g), torch.randint(0, 3, (640,), generator=g)
    box = torch.rand(640, 4, generator=g)
    has = torch.ones(640, dtype=torch.bool) if matched else torch.zeros(640, dtype=torch.bool)
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 7)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)

    def terms(i):
        out = model(x[i])
        b = torch.nn.functional.l1_loss(out[has[i], 3:], box[i][has[i]], reduction="sum") / max(1, int(has[i].sum()))
        return b, torch.nn.functional.cross_entropy(out[:, :3], cls[i])

    rows = []
    for _ in range(12):
        for k in range(0, 512, 64):
            opt.zero_grad()
            sum(terms(slice(k, k + 64))).backward()
            opt.step()
        with torch.no_grad():
            rows.append(tuple(float(t) for t in (*terms(slice(0, 512)), *terms(slice(512, 640)))))
    return rows


@pytest.mark.parametrize("matched,code", [(True, "healthy"), (False, "data_pipeline_bug")])
def test_yolov5_results_csv_reads_its_loss_from_its_parts(tmp_path, matched, code):
    """YOLOv5's results.csv (right-aligned, `train/box_loss`, `metrics/mAP_0.5`, `x/lr0`) logs the loss only as its
    parts (no cause at all before): summed, it is read; a box term 0 at every epoch is no object matched."""
    rows = _two_part_run(matched)
    head = ["epoch", "train/box_loss", "train/cls_loss", "metrics/mAP_0.5", "val/box_loss", "val/cls_loss", "x/lr0"]
    text = ",".join(f"{h:>20}" for h in head) + "\n" + "".join(
        ",".join(f"{v:>20.5g}" for v in (e, r[0], r[1], 0.1 + 0.05 * e, r[2], r[3], 0.01)) + "\n"
        for e, r in enumerate(rows))
    (tmp_path / "results.csv").write_text(text)
    d, run = diagnose(tmp_path)
    assert {"train_loss", "val_loss", "map50", "lr"} <= set(run.metrics.names())
    assert d.root_causes[0].code == code


# A DDP run committed to a public repository (train_error.log): each rank raises the same TypeError at the epoch's
# checkpoint, and torchrun reports the child that failed
_RANKS_RAISED = """[rank0]: Traceback (most recent call last):
[rank0]:   File "/DATA/shared1/MsFreB/MsFreB/main_train.py", line 354, in <module>
[rank0]:     main(args)
[rank0]:   File "/DATA/shared1/MsFreB/MsFreB/main_train.py", line 327, in main
[rank0]:     misc.save_model(
[rank0]: TypeError: save_model() got an unexpected keyword argument 'is_best'
W1229 21:58:40.315000 655 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 755 \
closing signal SIGTERM
E1229 21:58:40.631000 655 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) \
local_rank: 0 (pid: 754) of binary: /DATA/shared1/anaconda3/envs/msfreb00/bin/python
Traceback (most recent call last):
  File "/DATA/shared1/anaconda3/envs/msfreb00/lib/python3.10/site-packages/torch/distributed/launcher/api.py", \
line 269, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
Root Cause (first observed failure):
[0]:
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 754)
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""


def test_a_ranks_own_exception_is_the_cause_and_torchruns_report_its_echo(tmp_path):
    """Every rank raised a TypeError in the training script; torchrun's ChildFailedError only reports that a child
    exited 1 (read as a critical distributed failure before, the TypeError left to a question): the rank's own
    error leads, with what would settle it; without it, torchrun's report is the distributed failure it says."""
    d, _ = _paste(tmp_path, "train_error.log", _RANKS_RAISED)
    assert not [c for c in d.root_causes if c.code == "distributed_failure"]
    assert "TypeError: save_model()" in d.root_causes[0].issue
    launcher_only = _RANKS_RAISED.split("W1229", 1)[1]
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "train_error.log").write_text("W1229" + launcher_only)
    d, _ = diagnose(tmp_path / "alone")
    assert d.root_causes[0].code == "distributed_failure"
    runtime = _RANKS_RAISED.replace("TypeError: save_model() got an unexpected keyword argument 'is_best'",
                                    "RuntimeError: Stop_waiting response is expected")
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "train_error.log").write_text(runtime)      # torch's own error: the failure itself
    d, _ = diagnose(tmp_path / "runtime")
    assert d.root_causes[0].code == "distributed_failure"
    cut = "W1229" + launcher_only + "\n".join(_RANKS_RAISED.splitlines()[:5])    # a rank's traceback, cut short
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "train_error.log").write_text(cut)
    d, _ = diagnose(tmp_path / "cut")
    assert d.root_causes[0].code == "distributed_failure"


def test_names_that_are_no_part_of_a_detectors_loss():
    """Only a detector's terms under the split are parts of its loss (YOLO's `train/box_loss`): a GAN's players
    (`train/d_loss`, never summed into one loss) and a loss under a qualifier (`train_avg_loss`) are not."""
    from analysis.names import canonical
    assert canonical("train/box_loss") == "train_loss/box" and canonical("val/dfl_loss") == "val_loss/dfl"
    for name in ("train/d_loss", "train/g_loss", "train_avg_loss", "train_epoch_loss", "val_avg_loss",
                 "train_step_loss"):
        assert not canonical(name).startswith(("train_loss/", "val_loss/")), name


def test_generations_saved_as_json_lines_are_outputs_not_a_curve(scenario, tmp_path):
    """`eval_generations.json`, one scored generation a line (`Dataset.to_json`), beside a log stuck at chance: its
    `reward` per sample is no reward curve (read as one, it made the run healthy where its rows happened to
    rise), so the chance reading stands."""
    shutil.copy(scenario("shuffled_labels_mlp") / "train.log", tmp_path / "train.log")
    (tmp_path / "eval_generations.json").write_text("".join(
        json.dumps({"prompt": f"q{i}", "completion": "a", "reward": -0.5 + i / 32}) + "\n" for i in range(64)))
    d, run = diagnose(tmp_path)
    assert "reward" not in run.metrics.names()
    assert (d.root_causes[0].code, d.root_causes[0].severity) == ("data_pipeline_bug", "high")
