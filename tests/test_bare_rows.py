"""Rows of bare numbers: read in time and memory bounded by the file, whatever a line holds."""
from __future__ import annotations

import time

import pytest

from analysis.diagnose import diagnose
from analysis.ingest import bare_rows as br
from analysis.ingest import load_run
from analysis.ingest.textlog import NONFINITE_PREFIX

HEALTHY = "".join(f"epoch {i} loss {1 / (i + 1):.4f}\n" for i in range(40))


def _cpu(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def test_a_row_regex_stays_linear_in_a_long_run_of_digits():
    # a digit run with no dot could be split between cells many ways: 20,000 digits took ~15 s
    _, took = _cpu(lambda: br._ROW.match("1" * 20_000 + " x"))
    assert took < 0.5


def test_a_healthy_log_with_one_huge_line_is_read(tmp_path):
    (tmp_path / "train.log").write_text(HEALTHY + "1" * 30_000 + "\n")
    run, took = _cpu(lambda: load_run(tmp_path))
    assert len(run.metrics.get("train_loss")) == 40 and took < 2


def test_many_bare_rows_beside_many_named_lines_are_read_in_linear_time(tmp_path):
    # 8,000 bare rows of another loop between 8,000 named lines: each row was tried against each line
    (tmp_path / "train.log").write_text("".join(f"{i * 7 + 0.5} {i * 3 + 0.25}\n"
                                                f"step {i} - loss: {2 / (1 + i / 100):.4f} - acc: 0.5\n"
                                                for i in range(8000)))
    run, took = _cpu(lambda: load_run(tmp_path))
    assert len(run.metrics.get("train_loss")) == 8000 and took < 3


def test_a_headerless_csv_is_read_up_to_its_cells_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(br, "CELLS_MAX", 300)
    (tmp_path / "summary.csv").write_text("".join(f"{i},{1 / (i + 1):.5f},0.5\n" for i in range(1000)))
    run = load_run(tmp_path)
    assert len(run.metrics.get("column_2")) == 100
    assert any("first 300 numbers" in n for n in run.notes)


def test_a_headerless_table_whose_last_column_is_a_duration_in_seconds_is_read(tmp_path):
    # Lasagne/nolearn #241 (tests/wild, tune half): nolearn's epoch table without its header, `dur` as `419.85s`
    rows = ["     10       0.29652       0.29630      1.00077      0.62489  419.86s",
            "     11       0.29002       0.28839      1.00566      0.62501  419.37s",
            "     12           nan           nan          nan      0.62500  419.85s",
            "     13           nan           nan          nan      0.62500  419.30s",
            "     14           nan           nan          nan      0.62500  421.47s"]
    (tmp_path / "train.log").write_text("\n".join(rows) + "\n")
    run = load_run(tmp_path)
    col = run.metrics.get(f"{br.UNNAMED}2")
    assert col is not None and list(col.steps) == [10, 11, 12, 13, 14] and col.values[1] == 0.29002
    assert run.metrics.get(f"{br.UNNAMED}6").values[0] == 419.86
    assert br._ROW.match("1 2 3 4x") is None           # no other word rides on a row


def test_a_tensor_printed_without_brackets_that_turned_nan_is_read(tmp_path):
    # allennlp #890 (tests/wild, tune half): PyTorch 0.3's `Variable containing:` rows; a row of NaN is a NaN
    # whatever tensor it is, a row with a finite cell is not read as one
    (tmp_path / "output.txt").write_text("Variable containing:\n"
                                         " 0   0   0   0   0   0\n"
                                         "-inf -inf -inf -inf -inf -inf\n"
                                         "[torch.cuda.FloatTensor of size 2x6 (GPU 0)]\n\n"
                                         "Variable containing:\n"
                                         "-1.7537 -1.5918 -1.9134 -1.7938 -1.8518 -1.8808\n"
                                         "    nan     nan     nan     nan     nan     nan\n"
                                         "    nan  0.5\n"
                                         "    inf  -nan  nan\n")
    s = load_run(tmp_path).metrics.get(NONFINITE_PREFIX + br.PRINTED_NAN)
    assert s is not None and s.lines.tolist() == [8, 10]


def test_a_print_loops_step_then_nan_values_is_a_nan_row_indented_or_not(tmp_path):
    # gan-intro #1 (tests/wild, tune half): `step: d_loss g_loss`, pasted in a code block or not; a row with a
    # finite value among them, or a step alone, is not one
    rows = ["0: inf  nan", "10: nan nan", "20: nan nan"]
    for name, lines, want in (("bare", rows, [1, 2, 3]), ("indented", ["    " + r for r in rows], [1, 2, 3]),
                              ("finite", ["    0: 0.69  nan", "    10: nan", "    20:"], None)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_text("\n".join(lines) + "\n")
        s = load_run(tmp_path / name).metrics.get(NONFINITE_PREFIX + br.PRINTED_NAN)
        assert (s.lines.tolist() if s is not None else None) == want, name


def test_a_listing_per_class_with_a_nan_row_is_no_nan_of_the_run(tmp_path):
    # (the session's review) a class the split lacks prints NaN in a per-class table: indices one apart, finite
    # rows among them; the same NaN rows counted in steps of 10 are a print loop's
    head = "".join(f"epoch {e} loss {2.3 / e:.4f} acc {0.5 + e / 20:.3f}\n" for e in range(1, 6))
    for name, rows, want in (("per_class", ["  0: 0.912 0.954", "  1: 0.734 0.846", "  2: nan nan"], None),
                             ("bare", ["0: 0.912 0.954", "1: 0.734 0.846", "2: nan nan"], None),
                             ("loop", ["  0: 0.69 0.70", "  10: 0.41 0.52", "  20: nan nan", "  30: nan nan"],
                              [9, 10])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_text(head + "Validation per-class IoU / Dice:\n"
                                                   + "\n".join(rows) + "\n")
        s = load_run(tmp_path / name).metrics.get(NONFINITE_PREFIX + br.PRINTED_NAN)
        assert (s.lines.tolist() if s is not None else None) == want, name


def test_a_table_counted_from_minus_one_is_read(tmp_path):
    # (the session's review) an evaluation before training printed as step -1: still a counter
    (tmp_path / "train.log").write_text("".join(f"{i} {0.1 + i / 10:.4f} {2.3 - i / 5:.4f}\n" for i in range(-1, 6)))
    s = load_run(tmp_path).metrics.get(f"{br.UNNAMED}2")
    assert s is not None and s.steps.tolist() == [-1, 0, 1, 2, 3, 4, 5]


def test_an_evaluation_summary_pasted_alone_is_read_as_the_maps(tmp_path):
    # mmdet #1518 and tf-faster-rcnn #126 (tests/wild, tune half): pycocotools' summary in `output.txt`, and
    # py-faster-rcnn's VOC `Mean AP`
    coco = (" Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.000\n"
            " Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.000\n"
            " Average Precision  (AP) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = -1.000\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "output.txt").write_text(coco)
    run = load_run(tmp_path / "a")
    assert run.metrics.get("map").values.tolist() == [0.0] and run.metrics.get("map50").values.tolist() == [0.0]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "output.txt").write_text("AP for disc = 0.0000\nAP for vertebra = 0.0000\nMean AP = 0.0000\n")
    assert load_run(tmp_path / "b").metrics.get("map50").values.tolist() == [0.0]


def test_a_loss_printed_inf_under_a_dressed_name_is_read_once(tmp_path):
    # GluonTS #608 (tests/wild, tune half): `#test_score (local, wQuantileLoss[0.1]): inf`, a name the scanner
    # does not read as a key; a line it read (`rpn_loss_box: nan`) is not read a second time
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "output.txt").write_text(
        "[2020-02-08 12:04:19 +0100] [59599] [INFO] #test_score (local, wQuantileLoss[0.9]): inf\n"
        "[2020-02-08 12:04:19 +0100] [59599] [INFO] #test_score (local, mean_wQuantileLoss): inf\n")
    names = set(load_run(tmp_path / "a").metrics.names())
    # two such lines are read; one alone is not (an early stopper's `val_loss: inf` starting point, below)
    assert {NONFINITE_PREFIX + "wQuantileLoss", NONFINITE_PREFIX + "mean_wQuantileLoss"} <= names
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "train.log").write_text("iter: 120 / 10000, total loss: 2.593077\n >>> rpn_loss_box: 1.34\n"
                                              "iter: 140 / 10000, total loss: nan\n >>> rpn_loss_box: nan\n")
    box = load_run(tmp_path / "b").metrics.get(NONFINITE_PREFIX + "rpn_loss_box")     # the scanner's, at its step
    assert box.steps.tolist() == [140.0] and box.step_kind != "index"
    # a dressed name the scanner already keeps (`qloss=nan` on a bare line) is its series, and the log stays readable
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "train.log").write_text("step 1 qloss=nan\n[INFO] #test_score (local, qloss[0.1]): inf\n")
    run = load_run(tmp_path / "d")
    assert run.artifacts[0].problem is None and NONFINITE_PREFIX + "qloss" in run.metrics.names()
    # a loss scale, a best-so-far and an early stopper's one starting `inf` are no loss gone non-finite
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "output.txt").write_text("Saving config: {'fp16': True}, max_loss_scale=inf\n"
                                               "[INFO] best_loss[val]: inf\nEarlyStopping(val_loss): inf\n")
    assert not [n for n in load_run(tmp_path / "c").metrics.names() if n.startswith(NONFINITE_PREFIX)]


def test_metrics_printed_under_chinese_words_are_read_by_split(tmp_path):
    # cnn_captcha #12 (tests/wild, tune half): `准确率为` (accuracy is) after `[训练集]` (training set) or
    # `[验证集]` (validation set); the loss beside it is the scanner's
    (tmp_path / "train.log").write_text(
        "第10次训练 >>> [训练集] 准确率为 0.9674999713897705 >>> loss 0.01326522696763277\n"
        "            >>> [验证集] 准确率为 0.17000000178813934 >>> loss 0.01326522696763277\n"
        "第20次训练 >>> [训练集] 准确率为 1.0 >>> loss 0.005544836632907391\n"
        "            >>> [验证集] 准确率为 0.23000000417232513 >>> loss 0.005544836632907391\n"
        "epoch 3 训练损失：0.52, 测试精度: 0.61, 学习率=1e-3\n")
    m = load_run(tmp_path).metrics
    assert m.get("train_acc").values.tolist() == [0.9674999713897705, 1.0]
    assert m.get("val_acc").values.tolist() == [0.17000000178813934, 0.23000000417232513]
    assert m.get("test_acc").values.tolist() == [0.61] and m.get("lr").values.tolist() == [1e-3]
    assert br._zh_metrics("训练损失：0.52") == [("train_loss", 0.52)] and br._zh_metrics("loss 0.5") == []
    # a line's first loss (the mean before the total), no precision (精确度, a mixed-precision setting), no
    # best-so-far; and a run of spaces is read in linear time
    assert br._zh_metrics("第3轮 平均损失: 0.5, 总损失: 20.0") == [("train_loss", 0.5)]
    assert br._zh_metrics("[验证集] 准确率为 0.95 精确度为 0.31") == [("val_acc", 0.95)]
    assert br._zh_metrics("混合精度训练: 开启, 精度 = 16") == [] and br._zh_metrics("最佳精度: 0.7") == []
    _, took = _cpu(lambda: br._zh_metrics("学习率" + " " * 4096 + "x") + br._zh_metrics("损失" + " " * 4096 + "|"))
    assert took < 0.1


def test_a_scalar_tensor_printed_nan_without_grad_fn_is_a_printed_nan(tmp_path):
    # llama-cookbook #133 (tests/wild, tune half): `print(loss)` of an eval loss, then `tensor(nan)`
    (tmp_path / "output.txt").write_text("print(loss)\n\ntensor(nan)\ntensor(nan, device='cuda:0')\ntensor(nan\n")
    s = load_run(tmp_path).metrics.get(NONFINITE_PREFIX + br.PRINTED_VALUE)
    assert s is not None and s.lines.tolist() == [3, 4]


def test_a_segmentation_miou_printed_alone_is_read_as_printed(tmp_path):
    # tests/wild, tune half: deeplab-resnet #41 (`Mean iou =`), AdapNet++ #18 (a percentage), semseg #17 (its
    # `Eval result:` line, which only the bare-row reader reads)
    for name, text, want in [("a", "Mean iou =  0.046470389101241724\n", [0.046470389101241724]),
                             ("b", "mIoU:  3.464414239463952\n", [3.464414239463952]),
                             ("c", "Eval result: mIoU/mAcc/allAcc 0.0038/0.0150/0.0069.\n", [0.0038]),
                             ("d", "Eval result: mIoU/mAcc/allAcc 62.10/70.00/90.00.\n", [62.1])]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "output.txt").write_text(text)
        got = load_run(tmp_path / name).metrics.get("miou")
        assert got is not None and got.values.tolist() == want, name


def test_the_word_before_a_messages_value_is_no_metric_but_the_value_is_kept(tmp_path):
    # swabhs/open-sesame #9 (tests/wild, tune half): DyNet's `Magnitude of gradient is bad: inf`
    (tmp_path / "output.txt").write_text("RuntimeError: Magnitude of gradient is bad: inf\nKL divergence is: nan\n"
                                         "IS: nan\n")
    names = {n for n in load_run(tmp_path).metrics.names() if n.startswith(NONFINITE_PREFIX)}
    assert names == {NONFINITE_PREFIX + br.PRINTED_VALUE, NONFINITE_PREFIX + "is"}     # `IS`, a score, keeps its name


def test_comma_separated_cells_that_end_a_loggers_line_are_a_row(tmp_path):
    # hmgoforth/PointNetLK_Revisited #8 (tests/wild, tune half): a logger's prefix, then `epoch, N, ` and four
    # unnamed values, NaN from epoch 198
    rows = [("0089", "0.127450, 0.018011, 0.002422, 0.000114"), ("0090", "0.024315, 0.008478, 0.001742, 0.000605"),
            ("0091", "0.018989, 0.060334, 0.002259, 0.000702"), ("0198", "nan, nan, nan, nan"),
            ("0199", "nan, nan, nan, nan")]
    (tmp_path / "train.log").write_text("".join(
        f"INFO:PointNetLK-Revisited, 2022-03-11 09:36:30,690, epoch, {e}, {v}\n" for e, v in rows))
    names = load_run(tmp_path).metrics.names()
    assert [n for n in names if n.startswith("column_")] != []
    assert br._comma_tail("INFO:x, epoch, 0089, 0.1, 0.2") == "0089, 0.1, 0.2"
    assert br._comma_tail("Epoch 5, loss 0.1, acc 0.2") == ""          # a value each after a word: named pairs
    assert br._comma_tail("best: 0.1, 0.2") == ""                       # two cells are no row


@pytest.mark.parametrize("before", ["", "INFO:PointNetLK-Revisited, 2022-03-11 10:07:13,210, epoch, 0101, 0.099490, "
                                        "0.019117, 0.002162, 0.000831\n"])
def test_one_or_two_such_rows_with_a_nan_row_are_read_for_it(tmp_path, before):
    # the same log cut to its NaN row, alone or after one finite row: too few rows for a table, the NaN is read
    (tmp_path / "train.log").write_text(before + "INFO:PointNetLK-Revisited, 2022-03-11 14:18:54,833, epoch, 0198, "
                                                 "nan, nan, nan, nan\n")
    names = set(load_run(tmp_path).metrics.names())
    assert NONFINITE_PREFIX + br.PRINTED_ROW in names
    assert br._comma_nan_cells("x, epoch, 0198, nan, 0.1, nan") == []          # a finite cell among them
    assert br._comma_nan_cells("x, 0198, nan, nan") == ["nan", "nan"]


def test_a_nan_row_a_table_reads_is_not_read_twice(tmp_path):
    rows = [f"INFO:x, 2022-03-11 09:36:30,690, epoch, {e:04d}, 0.{e}1, 0.{e}2, 0.{e}3\n" for e in range(1, 9)]
    (tmp_path / "train.log").write_text("".join(rows) + "INFO:x, 2022-03-11 09:36:30,690, epoch, 0009, nan, nan, nan\n")
    names = set(load_run(tmp_path).metrics.names())
    assert NONFINITE_PREFIX + br.PRINTED_ROW not in names and any(n.startswith("column_") for n in names)


def test_rows_that_neither_count_nor_name_are_read_by_place_only_for_a_nan(tmp_path):
    # 222464/HTSL #1 (tests/wild, tune half): a C++ demo's `print` of three numbers, no counter, the third NaN
    rows = [f"{-1e18 * (i + 7):g} 0 {0.95 + i / 1000:g}\n" for i in range(8)] + ["-1.13727e+19 0 nan\n"] * 3
    (tmp_path / "output.txt").write_text("".join(rows))
    run = load_run(tmp_path)
    assert run.artifacts[0].kind != "samples"          # a row ending in NaN reads like a console
    s = run.metrics.get("column_3")
    assert s is not None and s.step_kind == "index" and list(s.steps[:3]) == [0, 1, 2] and s.values[-1] != s.values[-1]
    (tmp_path / "output.txt").unlink()
    for name, text in (("train.log", "".join(rows[:8])),                       # the same rows all finite,
                       ("train.log", "".join(rows[:8]).replace(" 0.95", " nan", 1)),   # a value left out,
                       ("data.csv", "".join(rows).replace(" ", ","))):        # a data file read whole
        for f in tmp_path.iterdir():
            f.unlink()
        (tmp_path / name).write_text(text)
        assert not any(n.startswith("column_") for n in load_run(tmp_path).metrics.names()), name
    # predictions with a label left out (no value near 1e10): a model's outputs, not a log
    for f in tmp_path.iterdir():
        f.unlink()
    (tmp_path / "predictions.txt").write_text("".join(f"0.{i}4 1.0\n" for i in range(6)) + "0.2581 nan\n" * 4)
    assert load_run(tmp_path).artifacts[0].kind == "samples"


def test_numpy_arrays_printed_side_by_side_are_rows(tmp_path):
    # a Stack Overflow question (kiwix mirror of SO 48335501): `print(c, d)` of two 1-element arrays under plain
    # gradient descent at lr 0.01 on unscaled inputs, blowing up, then NaN; the asker lowered the LR
    rows = ("    [-20.48267746] [-1.6179111]\n[ -1.06335529e+12] [ -3.75422935e+10]\n"
            "[ -5.40660918e+22] [ -1.90883086e+21]\n[ -2.74898110e+33] [ -9.70541703e+31]\n" + "[ nan] [ nan]\n" * 4)
    (tmp_path / "train.log").write_text(rows)
    run = load_run(tmp_path)
    s = run.metrics.get("column_1")
    assert s is not None and s.values[0] == -20.48267746 and s.values[-1] != s.values[-1]
    assert diagnose(tmp_path)[0].root_causes[0].code == "lr_too_high"
    # a bracket that is no array's (a list of two words, an unclosed one) is no row
    (tmp_path / "train.log").write_text("[ a] [ b]\n[ 1.5] [ 2.5\n" * 4)
    assert not any(n.startswith("column_") for n in load_run(tmp_path).metrics.names())


def test_numbers_printed_alone_or_in_rows_that_blow_up_are_read_by_place(tmp_path):
    # stats.SE 594738: `print(loss.item())` under SGD at lr 1e-6 on unscaled cubic targets, 1.3e9 to 2.9e28;
    # SO 67320404: `print(L, w1, w2, b)` of hand-written gradient descent at alpha 0.01, the loss to 3.4e44
    cases = {"alone": "".join(f"{1.3e9 * 141.0 ** i!r}\n" for i in range(10)),
             "row": "0.042928723015982384 , 13.7023102434034 , 13.670617201430483 , 0.00254938447277222\n"
                    "9291487188.8259 , -7353857.489486973 , -7293941.123714662 , -1261.9252592161051\n"
                    "3.096713445664372e+21 , 4247172241132.3584 , 4209117175658.749 , 728518135.2857293\n"
                    "1.0320897597938595e+33 , -2.4520737800716524e+18 , -2.4298158059267333e+18 , -420579738783719.2\n"}
    for name, text in cases.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_text(text)
        assert load_run(tmp_path / name).metrics.get("column_1") is not None, name
        top = diagnose(tmp_path / name)[0].root_causes[0]
        assert top.code == "lr_too_high" and "orders of magnitude" in top.issue, name
    # (review of session 47) the same rows with the bias printed as 0.0 at first: the blown-up columns still speak;
    # a counted table whose one column jumps once is no geometric growth
    (tmp_path / "bias0").mkdir()
    rows = cases["row"].splitlines()
    (tmp_path / "bias0" / "train.log").write_text("\n".join([rows[0].rsplit(",", 1)[0] + ", 0.0"] + rows[1:]) + "\n")
    assert diagnose(tmp_path / "bias0")[0].root_causes[0].code == "lr_too_high"
    (tmp_path / "jump").mkdir()
    (tmp_path / "jump" / "train.log").write_text(
        "1 2.3104 0.5120\n2 2.1033 0.6011\n3 1.9521 0.4410\n4 1.8012 0.5230\n5 1.7034 0.4871\n6 1.6122 3.2e+10\n")
    assert not any("orders of magnitude" in c.issue for c in diagnose(tmp_path / "jump")[0].root_causes)
    # numbers alone that fall (a healthy loss printed bare), stay small, or count: nothing read by place
    for name, text in (("falls", "".join(f"{2.3 * 0.8 ** i:.4f}\n" for i in range(12))),
                       ("small", "".join(f"{1.5 ** i:.3f}\n" for i in range(12))),
                       ("counts", "".join(f"{i}\n" for i in range(12)))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_text(text)
        assert not any(n.startswith("column_") for n in load_run(tmp_path / name).metrics.names()), name


def test_a_nan_comma_row_the_logger_printed_finite_rows_after_is_a_value_left_out(tmp_path):
    # (the session's review) an evaluation row of NaN between finite ones: no run gone NaN; `-nan` is NaN too
    rows = ["0.1, 0.2, 0.3", "nan, nan, nan", "0.1, 0.2, 0.3"]
    (tmp_path / "train.log").write_text("".join(f"INFO:eval, 2022-03-11 10:07:13,210, epoch, {i:04d}, {r}\n"
                                                for i, r in enumerate(rows, 1)))
    assert NONFINITE_PREFIX + br.PRINTED_ROW not in set(load_run(tmp_path).metrics.names())
    (tmp_path / "train.log").write_text("INFO:eval, 2022-03-11 10:07:13,210, epoch, 0007, -nan, -nan, -nan\n")
    assert NONFINITE_PREFIX + br.PRINTED_ROW in set(load_run(tmp_path).metrics.names())


def test_a_value_printed_with_its_step_in_brackets_is_read_at_that_step(tmp_path):
    # GitYCC crnn #7 (tests/wild gitycc-crnn-loss-nan-step-6590-clip-grad-7, tune half): the validation summary,
    # then the batch loss at each step, turning NaN at 6590
    lines = ["valid_evaluation: loss=1.832921710359357, acc=0.7594752661693344"]
    lines += [f"train_batch_loss[ {s} ]:  {v}" for s, v in ((6570, 1.6885172128677368), (6580, 1.9712326526641846),
                                                         (6590, "nan"), (6600, "nan"))]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    loss = load_run(tmp_path).metrics.get("train_loss")
    assert loss.steps.tolist() == [6570, 6580, 6590, 6600] and loss.step_kind == "step"
    assert loss.lines.tolist() == [2, 3, 4, 5]
    # fewer than INDEXED_ROWS such lines are an index into a list as likely as a step
    (tmp_path / "train.log").write_text("\n".join(lines[:2]) + "\n")
    assert load_run(tmp_path).metrics.get("train_loss").steps.tolist() != [6570]


def test_indexed_lines_never_replace_a_series_the_scanner_read_or_take_a_class_index_for_a_step(tmp_path):
    lines = [f"step {i} - loss: {1 - i / 40:.3f}" for i in range(20)]
    (tmp_path / "train.log").write_text("\n".join(lines + ["loss[ 0 ]: 0.41", "loss[ 1 ]: nan"]) + "\n")
    assert len(load_run(tmp_path).metrics.get("train_loss")) == 20
    (tmp_path / "train.log").write_text("".join(f"loss[ {c} ]: 0.{c + 1}\n" for c in (2, 0, 1)))
    assert load_run(tmp_path).metrics.get("train_loss") is None        # 2, 0, 1: no step counts that way


def test_rows_saved_with_windows_line_ends_are_read_as_the_same_rows(tmp_path):
    # a paste saved on Windows ends every line with `\r\n`: the `\r` was taken for a progress bar's rewrite and each
    # row read as the blank after it, so a bare table that turns NaN (lasagne/nolearn #241's rows) read nothing
    rows = ["     10       0.29652       0.29630      1.00077      0.62489",
            "     11       0.29002       0.28839      1.00566      0.62501",
            "     12           nan           nan          nan      0.62500"]
    for name, end in (("unix", "\n"), ("windows", "\r\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.log").write_bytes(end.join(rows).encode() + end.encode())
    unix, windows = (load_run(tmp_path / n).metrics.get(f"{br.UNNAMED}2") for n in ("unix", "windows"))
    assert windows is not None and windows.values.tolist()[:2] == unix.values.tolist()[:2] == [0.29652, 0.29002]
    assert list(windows.steps) == list(unix.steps) == [10, 11, 12]
