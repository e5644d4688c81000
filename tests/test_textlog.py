"""Plain-text logs as real tools print them."""
from pathlib import Path

import numpy as np

from analysis.ingest.textlog import parse_text_log


def _parse(tmp_path: Path, text: str | bytes):
    p = tmp_path / "train.log"
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    r = parse_text_log(p, "train.log")
    return r, {s.name: s for s in r.series}


def test_key_value_styles_and_line_numbers(tmp_path):
    r, s = _parse(tmp_path, "\n".join([
        "2024-05-01 12:00:00,001 INFO trainer.py:88 starting",
        "step=1 loss=2.30 lr=1e-3 grad_norm=1.5",
        "step: 2 loss: 2.20 lr: 1e-3",
        "| step | 3 | loss | 2.10 |",
        "",
        "step 4 loss 2.00",
    ]))
    loss = s["train_loss"]
    assert loss.steps.tolist() == [1, 2, 3, 4]
    assert loss.values.tolist() == [2.30, 2.20, 2.10, 2.00]
    assert loss.lines.tolist() == [2, 3, 4, 6]          # the blank line still counts
    assert s["lr"].values.tolist() == [1e-3, 1e-3]
    assert s["grad_norm"].locator(0) == "line 2"
    assert r.lines == 6


def test_nanogpt_and_hf_stdout_lines(tmp_path):
    _, s = _parse(tmp_path, "\n".join([
        "iter 100: loss 2.3400, time 12.34ms, mfu 3.20%",
        "iter 110: loss 2.3100, time 12.10ms, mfu 3.25%",
        "{'loss': 2.30, 'grad_norm': 1.8, 'learning_rate': 5e-05, 'epoch': 0.1}",
        "{'eval_loss': 2.5, 'eval_runtime': 1.2, 'epoch': 0.1}",
    ]))
    assert s["train_loss"].values.tolist() == [2.34, 2.31, 2.30]
    assert s["train_loss"].steps.tolist()[:2] == [100, 110]
    assert s["step_time"].values.tolist() == [12.34, 12.10]
    assert s["lr"].values.tolist() == [5e-05]
    assert s["val_loss"].values.tolist() == [2.5]


def test_val_loss_is_not_read_as_train_loss(tmp_path):
    _, s = _parse(tmp_path, "step 5 val/loss=2.4\nstep 6 train/loss=2.0 val_loss=2.5\n")
    assert s["train_loss"].values.tolist() == [2.0]
    assert s["val_loss"].values.tolist() == [2.4, 2.5]


def test_ansi_colour_progress_bars_and_nan(tmp_path):
    bar = ("Epoch 1:  45%|####  | 450/1000 [00:10<00:12, 43.21it/s, loss=2.31]\r"
           "Epoch 1:  46%|####  | 460/1000 [00:10<00:12, 43.21it/s, loss=1.99]")
    r, s = _parse(tmp_path, "\x1b[1mstep=1\x1b[0m loss=2.5\n" + bar + "\nstep=3 loss=nan grad_norm=inf\n")
    v = s["train_loss"].values
    assert v[:2].tolist() == [2.5, 1.99]                # the bar's last state
    assert np.isnan(v[2]) and np.isinf(s["grad_norm"].values[0])
    assert r.has_carriage_returns


def test_malformed_lines_are_counted_not_fatal(tmp_path):
    r, s = _parse(tmp_path, "step=1 loss=2.0\nstep=2 loss=\nstep=3 loss=,\n\x00\xff garbage \x80\nstep=4 loss=1.5\n".encode("latin-1"))
    assert s["train_loss"].values.tolist() == [2.0, 1.5]
    assert r.skipped_lines == 2


def test_traceback_and_warnings_become_events(tmp_path):
    r, _ = _parse(tmp_path, "\n".join([
        "step=1 loss=2.0",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "train.py", line 88, in <module>',
        "[rank0]:     loss.backward()",
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
        "capacity; 14.61 GiB already allocated; 3.19 MiB free; 14.72 GiB reserved in total by PyTorch)",
        "/x/torch/nn/modules/module.py:12: UserWarning: var(): degrees of freedom is <= 0.",
        "/x/torch/nn/modules/module.py:12: UserWarning: var(): degrees of freedom is <= 0.",
        "[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 1800000 milliseconds before timing out.",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.",
    ]))
    by = {e.signature: e for e in r.events}
    oom = by["cuda_oom"]
    assert oom.line == 5 and oom.code == "out_of_memory"
    assert oom.fields["tried"] == 20 * 2**20 and round(oom.fields["capacity"] / 2**30, 2) == 15.78
    assert oom.fields["frames"][0] == {"file": "train.py", "line": 88, "func": "<module>", "code": "loss.backward()"}
    assert by["var_dof"].count == 2 and by["var_dof"].line == 6
    assert by["nccl_timeout"].code == "distributed_failure"
    assert by["dataloader_killed"].code == "dataloader_failure"


def test_big_log_streams_in_chunks_with_exact_lines(tmp_path, monkeypatch):
    import analysis.ingest.textlog as tl
    monkeypatch.setattr(tl, "CHUNK_BYTES", 4096)         # force many chunks and chunk edges
    lines = [f"2024-05-01 INFO step={i} loss={5 - i * 1e-3:.4f}" for i in range(1, 3001)]
    lines[2500] = "step=2501 loss=nan"
    _, s = _parse(tmp_path, "\n".join(lines) + "\n")
    loss = s["train_loss"]
    assert len(loss) == 3000 and loss.lines[-1] == 3000
    i = int(np.flatnonzero(np.isnan(loss.values))[0])
    assert loss.steps[i] == 2501 and loss.locator(i) == "line 2501"


def test_numbers_parse_exactly_as_python_does(tmp_path):
    rnd = np.random.default_rng(0)
    texts = [".5", "1.", "+3", "-0.0", "1e-4", "2.5E+3", "123456789012345678", "0.1234567890123456789",
             "1e300", "4.9e-324", "-7e-30", "3.00e-04", "9007199254740993"]
    for x in rnd.lognormal(0, 8, 400) * rnd.choice([-1, 1], 400):
        texts += [f"{x:.4f}", f"{x:.2e}", f"{x:g}", repr(float(x)), str(int(x))]
    _, s = _parse(tmp_path, "".join(f"step={i} loss={t}\n" for i, t in enumerate(texts)))
    assert s["train_loss"].values.tolist() == [float(t) for t in texts]


def test_names_as_people_write_them(tmp_path):
    _, s = _parse(tmp_path, "\n".join([
        "Epoch 1 | Step 10 | Train Loss: 2.5 | Val Loss: 2.7 | Grad Norm: 1.25 | learning rate = 3e-4",
        "step 11 test/loss=9.0 aux-loss=8.0 loss: tensor(2.4, device='cuda:0') \"eval_loss\": 2.6",
        "step 12 loss info stopped; lr=inf",
    ]))
    assert s["train_loss"].values.tolist() == [2.5, 2.4]         # never test/ or aux- loss
    assert s["val_loss"].values.tolist() == [2.7, 2.6]
    assert s["grad_norm"].values.tolist() == [1.25]
    assert s["test_loss"].values.tolist() == [9.0]
    assert s["lr"].values.tolist() == [3e-4, np.inf]                # `info` is no inf
    assert s["epoch"].values.tolist() == [1]


def test_the_whole_loss_under_a_qualifier_and_camel_case_names(tmp_path):
    # `loss_total` sums the parts printed beside it: it is the loss, never one more part of it; camelCase
    # as print loops write it (`f'Epoch: {epoch}\tTrainLoss: {train_loss}'`, `ValLoss`, `ValAcc`)
    _, s = _parse(tmp_path, "\n".join([
        "iter 10 loss_total: 1.50 loss_cls: 0.90 loss_box: 0.60",
        "iter 20 loss_total: nan loss_cls: nan loss_box: 0.55",
        "Epoch: 3\tTrainLoss: 0.41\tValLoss: 0.52\tValAcc: 0.83",
        "epoch 4 loss_val: 0.50",
    ]))
    assert s["train_loss"].values.tolist()[:1] == [1.5] and np.isnan(s["train_loss"].values[1])
    assert s["train_loss"].values.tolist()[2] == 0.41           # not 1.5 + 0.9 + 0.6 summed as parts
    assert s["train_loss/cls"].values.tolist()[:1] == [0.9]
    assert s["val_loss"].values.tolist() == [0.52, 0.50] and s["val_acc"].values.tolist() == [0.83]


def test_a_counter_attached_to_its_name_and_an_index_that_is_not_one(tmp_path):
    r, s = _parse(tmp_path, "Step[300/1000] Epoch(2) loss: 0.5\nStep[400/1000] Epoch(2) loss: 0.4\nloss[0]: 0.3\n")
    assert s["train_loss"].steps.tolist() == [300, 400] and s["epoch"].values.tolist() == [2, 2]
    assert s["train_loss"].values.tolist() == [0.5, 0.4]         # `loss[0]: 0.3` indexes a loss: not read as 0


def test_thinned_series_keep_their_nan_and_spike(tmp_path, monkeypatch):
    import analysis.ingest.textlog as tl
    import analysis.metrics as metrics
    monkeypatch.setattr(metrics, "MAX_POINTS", 64)
    monkeypatch.setattr(tl, "CHUNK_BYTES", 2048)
    loss = [f"{2 - i * 1e-4:.4f}" for i in range(5000)]
    loss[1234], loss[3999] = "40.0", "nan"
    _, s = _parse(tmp_path, "".join(f"step={i} loss={v}\n" for i, v in enumerate(loss)))
    series = s["train_loss"]
    assert len(series) <= 128 and series.stride > 1
    assert 40.0 in series.values.tolist() and np.isnan(series.values).sum() == 1
    i = int(np.flatnonzero(np.isnan(series.values))[0])
    assert series.steps[i] == 3999 and series.lines[i] == 4000
    gaps = np.diff(series.steps)
    assert gaps.max() <= 2 * series.stride                          # evenly thinned, old and new alike


def test_a_step_counter_that_restarts_each_epoch_keeps_the_lines_in_order(tmp_path, monkeypatch):
    """yunjey/pytorch-tutorial's `Epoch [2/5], Step [100/600], Loss: x`: the step restarts each
    epoch, so it continues from where it was instead of folding the epochs onto each other; across
    chunk edges too."""
    import analysis.ingest.textlog as tl
    lines = [f"Epoch [{e}/4], Step [{s}/600], Loss: {4 - e - s / 1000:.4f}" for e in range(1, 5) for s in range(100, 700, 100)]
    for chunk in (1 << 20, 256):
        monkeypatch.setattr(tl, "CHUNK_BYTES", chunk)
        _, s = _parse(tmp_path, "\n".join(lines) + "\n")
        loss = s["train_loss"]
        assert loss.lines.tolist() == list(range(1, 25))              # in the order logged
        assert np.all(np.diff(loss.steps) > 0)
        assert loss.steps[:7].tolist() == [100, 200, 300, 400, 500, 600, 700]
        assert loss.values[-1] == float(lines[-1].rsplit(" ", 1)[1])


def test_a_two_column_pandas_frame_is_a_table(tmp_path):
    # `print(pd.DataFrame(history.history))` of a Keras model that fits loss and accuracy only: two named
    # columns, the frame's index under the header's blanks (the numbers are those of tests/wild
    # keras-int-normalize-zero-input-255, a tune-half case)
    _, s = _parse(tmp_path, "        loss  accuracy\n0   0.235597  0.968750\n1  17.269388  0.500000\n"
                            "2  17.269388  0.500000\n")
    assert list(s["train_loss"].values) == [0.235597, 17.269388, 17.269388]
    assert list(s["train_acc"].values) == [0.96875, 0.5, 0.5]


def test_a_table_printed_through_a_logger_is_read_after_its_stamps(tmp_path):
    # yolov7 #142 (tests/wild, tune half) as Python's logging prints it: the header and its row each stamped
    _, s = _parse(tmp_path, "2024-03-01 10:22:30,809 - INFO - box         obj              cls     total    labels  "
                            "img_size\n2024-03-01 10:22:31,249 - INFO - nan       0.007422         0       nan        "
                            "22      1280\n")
    assert np.isnan(s["train_loss"].values[0]) and s["train_loss/obj"].values.tolist() == [0.007422]
    # glog's stamp too; a header with no stamp keeps its rows' first cells, whatever they look like
    _, s = _parse(tmp_path, "I0301 10:22:10.042 1234 train.py:88] box  obj  cls  total\n"
                            "I0301 10:22:11.042 1234 train.py:88] 0.5  0.1  0  0.6\n")
    assert s["train_loss"].values.tolist() == [0.6]
    _, s = _parse(tmp_path, "epoch  box  obj  total\n10  0.5  0.1  0.6\n")
    assert s["train_loss"].values.tolist() == [0.6] and s["epoch"].values.tolist() == [10]


def test_two_names_one_blank_apart_are_no_table(tmp_path):
    _, s = _parse(tmp_path, "loss acc\n1 2\n3 4\n")
    assert "train_loss" not in s


def test_gradient_boostings_evaluation_log_is_a_training_and_a_validation_loss(tmp_path):
    # XGBoost's `[round]  train-rmse:...  test-rmse:...` (tests/wild xgboost-r-cv-rmse-nan-dataframe-dmatrix-194's
    # shape) and the scikit-learn API's `validation_0-logloss`
    _, s = _parse(tmp_path, "[0]\ttrain-rmse:0.52\ttest-rmse:0.61\n[1]\ttrain-rmse:0.41\ttest-rmse:0.55\n")
    assert s["train_loss"].values.tolist() == [0.52, 0.41] and s["val_loss"].values.tolist() == [0.61, 0.55]
    _, s = _parse(tmp_path, "[0]\tvalidation_0-logloss:0.60\n[1]\tvalidation_0-logloss:0.50\n")
    assert s["val_loss"].values.tolist() == [0.6, 0.5]


def test_a_nan_under_a_name_read_twice_on_a_line_is_not_lost_to_the_first(tmp_path):
    # MMSA #40 (tests/wild, tune half): two parts of the loss, each printed as `... loss`, the main one NaN
    _, s = _parse(tmp_path, "MMSA - TRAIN-(mmim) [1/2/2] >> mmilb loss: 0.0042 main loss: nan  Has0_acc_2: 0.5701\n")
    assert np.isnan(s["train_loss"].values[0])
    _, s = _parse(tmp_path, "a loss: 0.5 b loss: 0.7\n")
    assert s["train_loss"].values.tolist() == [0.5]


def test_an_error_a_terminal_hard_wrapped_at_80_columns_is_read_joined_at_its_first_line(tmp_path):
    # cartoongan #1's host OOM (tests/wild, tune half) as a terminal copy wrapped at 80 columns: the signature's
    # words were cut across lines (`can't` / ` allocate memory`) and the line read as an unknown error
    msg = ("RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you "
           "tried to allocate 67108864 bytes. Error code 12 (Cannot allocate memory)")
    wrapped = "\n".join(msg[i:i + 80] for i in range(0, len(msg), 80)) + "\n\nEpoch 3: loss 0.52\n"
    r, _ = _parse(tmp_path, wrapped)
    assert [(e.code, e.line) for e in r.events] == [("out_of_memory", 1)]
    assert "allocate memory: you tried" in r.events[0].text
    # a traceback's indented frame after a line 80 long is no continuation of it
    (tmp_path / "b").mkdir()
    frame = "Traceback (most recent call last):\n" + "  File \"train.py\", line 12, in <module>\n" * 2
    r, _ = _parse(tmp_path / "b", frame + "x" * 80 + "\n    loss.backward()\nRuntimeError: CUDA out of memory.\n")
    assert [e.code for e in r.events] == ["out_of_memory"]
