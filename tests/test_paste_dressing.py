"""A pasted excerpt keeps its diagnosis however it was dressed on the way: quoted in Markdown (`> `),
prefixed by a launcher (`[rank0]:`) or a logger's timestamp, coloured, tab-separated, or under a key
name the trainer spelled its own way. The lines are real ones from the tune half of tests/wild;
bench/excerpts.py is the probe that found each failure."""
from __future__ import annotations

import time

import pytest

from analysis.diagnose import diagnose
from analysis.ingest.dressing import undress

# t2t-ViT #26 (tests/wild, tune half): timm's summary.csv pasted without its header; the loss turns NaN
T2T_ROWS = ["206,4.359750032424927,4.154387146377563,7.619999943542481,24.040000201416017",
            "207,4.37085485458374,4.158743778991699,7.820000009155273,24.019999743652345",
            "208,4.367704391479492,4.161868629837036,7.62000002746582,23.86000018310547",
            "209,nan,4.160795520019532,7.7200000274658205,24.01999976196289",
            "210,nan,nan,1.0,5.0",
            "211,nan,nan,1.0,5.0",
            "212,nan,nan,1.0,5.0"]
DRESSES = {"quote": "> ", "rank": "[rank0]: ", "torchrun": "[default1]:", "iso": "2024-03-01T10:22:17.721Z ",
           "logging": "2024-03-01 10:22:03,120 - INFO - ", "bracketed": "[2024-03-01 10:22:03] ",
           "clock": "10:22:03 ", "srun": "3: ", "mpirun": "[1,3]<stderr>:",
           "glog": "I0301 10:22:32.389 1234 train.py:88] "}


def _codes(tmp_path, text: str, name: str = "train.log") -> list[str]:
    (tmp_path / name).write_text(text)
    d, _ = diagnose(tmp_path)
    return [c.code for c in d.root_causes]


@pytest.mark.parametrize("dress", sorted(DRESSES))
def test_headerless_rows_that_turn_nan_are_read_through_a_line_prefix(tmp_path, dress):
    text = "".join(DRESSES[dress] + row + "\n" for row in T2T_ROWS)
    codes = _codes(tmp_path, text)
    assert codes and codes[0] == "numerical_instability", (dress, codes)


def test_headerless_rows_in_ansi_colour_are_read(tmp_path):
    text = "".join(f"\x1b[36m{row}\x1b[0m\n" for row in T2T_ROWS)
    assert _codes(tmp_path, text)[:1] == ["numerical_instability"]


def test_undress_keeps_what_follows_the_prefix_and_the_indentation_of_a_frame():
    assert undress("> [rank3]:   File \"train.py\", line 9") == "  File \"train.py\", line 9"
    assert undress("2024-03-01 10:22:03,120 - INFO - loss: 2.0") == "loss: 2.0"
    assert undress("\x1b[1;31mloss: nan\x1b[0m") == "loss: nan"
    assert undress("209,nan,4.16") == "209,nan,4.16"          # a row that starts with its step stays whole
    assert undress("12:30 loss 2.0") == "12:30 loss 2.0"      # no clock without seconds
    # mpirun --tag-output's `[job,rank]<stream>:` (Horovod, tests/wild opennmt-tf-horovod-shutdown-early-stopping-985)
    assert undress("[1,2]<stderr>:Traceback (most recent call last):") == "Traceback (most recent call last):"


def test_undress_is_linear_in_a_long_run_of_digits():
    t = time.process_time()
    undress("1" * 200_000 + ":")
    undress("[" + "2024-03-01 " * 20_000)
    assert time.process_time() - t < 0.5


def test_yolo_validation_row_with_no_labels_is_read_when_quoted(tmp_path):
    # multiyolov5 #7 (tests/wild, tune half): `all  10  0 ...` under a Markdown quote
    text = ("> Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95\n"
            ">   all          10           0           0           0           0           0\n")
    assert _codes(tmp_path, text)[:1] == ["data_pipeline_bug"]


@pytest.mark.parametrize("quote", ["", "> ", "> > "])
def test_a_column_table_reads_the_same_quoted_in_markdown(tmp_path, quote):
    # yolov7 #142 (tests/wild, tune half): YOLO's header and its row of a NaN box loss; quoted, the header was no
    # header and the paste's words were all that was read
    text = (f"{quote}box         obj              cls     total    labels  img_size\n"
            f"{quote}nan       0.007422         0       nan        22      1280\n")
    assert _codes(tmp_path, text)[:1] == ["numerical_instability"]


def test_an_oom_error_with_tabs_for_spaces_is_named(tmp_path):
    # pytorchic-bert #5 (tests/wild, tune half), copied from a terminal that turned spaces into tabs
    text = "h =\t(scores @ v).transpose(1,\t2).contiguous() RuntimeError:\tCUDA error:\tout of memory\n"
    assert _codes(tmp_path, text, "output.txt")[:1] == ["out_of_memory"]


@pytest.mark.parametrize("line", ["total_loss: nan", "\x1b[1;31mloss: nan\x1b[0m", "train_loss=nan"])
def test_a_one_line_nan_under_any_loss_name_in_output_txt_is_read_as_a_log(tmp_path, line):
    # nanogpt #136 (tests/wild, tune half) pasted `loss: nan` alone in output.txt; spelled another way,
    # or coloured, the file was taken for model outputs (samples) and nothing was read
    codes = _codes(tmp_path, line + "\n", "output.txt")
    assert codes and codes[0] in ("numerical_instability", "lr_too_high"), codes



def test_a_loss_part_that_is_the_only_loss_printed_turns_nan(tmp_path):
    # ssd.pytorch #275 (tests/wild, tune half) with the loss printed under a part's name (mmdet's
    # `loss_cls`): the one loss a paste shows is the loss to judge, part or not
    text = ("iter 40 || loss_cls: 20.0848 || timer: 0.0903 sec.\n"
            "iter 50 || loss_cls: 29821698048.0000 || timer: 0.0833 sec.\n"
            "iter 60 || loss_cls: nan || timer: 0.0837 sec.\n")
    codes = _codes(tmp_path, text)
    assert codes and codes[0] in ("numerical_instability", "lr_too_high"), codes


def test_samples_with_a_timestamp_in_front_are_read_as_the_same_sample(tmp_path):
    # a generated run's collapsed samples (tests/scenarios embedding_lm), pasted from a timestamped console
    text = "".join(f"10:22:{40 + i:02d} zzzzzzzzzzzzzzzzzzzzzzzz\n" for i in range(8))
    assert _codes(tmp_path, text, "samples.txt")[:1] == ["mode_collapse"]


def test_three_reports_of_a_loss_ending_far_above_its_start_name_a_cause(tmp_path):
    # ssd.pytorch #275 (tests/wild, tune half), the first three lines alone: 3.26 -> 14.70 -> 12.29
    text = (">iter 0 || Loss: 3.2635 || timer: 0.0842 sec.\n"
            "iter 10 || Loss: 14.6995 || timer: 0.0851 sec.\n"
            "iter 20 || Loss: 12.2860 || timer: 0.0846 sec.\n")
    (tmp_path / "train.log").write_text(text)
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and top.confidence < 0.8 and top.severity == "medium"


def test_three_reports_of_a_loss_that_dips_and_comes_back_name_no_divergence(tmp_path):
    text = "step 1 loss 2.30\nstep 2 loss 2.10\nstep 3 loss 2.60\n"
    assert "lr_too_high" not in _codes(tmp_path, text)


# the last 17 steps of a healthy generated run (tests/scenarios healthy_noisy_mlp): (step, loss, lr)
COSINE_TAIL = [(584, 0.0045728, 5.2607e-06), (585, 0.0012159, 4.624e-06), (586, 0.0011943, 4.0283e-06),
               (587, 0.002393, 3.4736e-06), (588, 0.003024, 2.9599e-06), (589, 0.0012364, 2.4873e-06),
               (590, 0.0022641, 2.0557e-06), (591, 0.0041107, 1.6652e-06), (592, 0.0035372, 1.3158e-06),
               (593, 0.001483, 1.0074e-06), (594, 0.0043782, 7.4016e-07), (595, 0.0021274, 5.1401e-07),
               (596, 0.0014353, 3.2897e-07), (597, 0.0059281, 1.8505e-07), (598, 0.003218, 8.2246e-08),
               (599, 0.0019559, 2.0562e-08), (600, 0.0043743, 0.0)]


@pytest.mark.parametrize("first", [0, 14])
def test_the_tail_of_a_decayed_schedule_is_not_an_lr_too_low(tmp_path, first):
    # a cosine schedule at its end, pasted alone: the rate before the excerpt is unseen, and so is its
    # sum over the run
    text = "".join(f"2026-03-01 09:03:24,400 INFO train: epoch=1 step={s} loss={v} lr={lr:g} grad_norm=0.01\n"
                   for s, v, lr in COSINE_TAIL[first:])
    (tmp_path / "train.log").write_text(text)
    d, _ = diagnose(tmp_path)
    assert not [c for c in d.root_causes if c.code == "lr_too_low" and c.severity in ("critical", "high")]


def test_a_tiny_rate_held_mid_run_is_still_too_low(tmp_path):
    text = "".join(f"step={s} loss={2.302 - 0.0001 * i:.4f} lr=1e-08\n" for i, s in enumerate(range(500, 530)))
    (tmp_path / "train.log").write_text(text)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "lr_too_low"


@pytest.mark.parametrize("text", [
    # jax #788 (tests/wild, tune half), the line wrapped where the paste was made
    "[1] 2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:672] "
    "Execution of replica 0 failed: Resource exhausted: Out \nof memory while trying to allocate 5520758552 bytes.\n",
    # jax-privacy #10 (tests/wild, tune half)
    "Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device ordinal 0\n"])
def test_xla_resource_exhausted_is_an_out_of_memory_in_any_wording(tmp_path, text):
    assert _codes(tmp_path, text, "output.txt")[:1] == ["out_of_memory"]
