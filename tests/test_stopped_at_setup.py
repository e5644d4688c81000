"""A paste that ends at the distributed setup (analysis/analyzers/stopped_at_setup.py): the hang's place is read,
with the last line as its evidence; the same lines with a run or an error after them are not a hang."""
from __future__ import annotations

import pytest

from analysis.diagnose import diagnose

# as posted: taming-transformers #12, Lightning #9641 and PaddleFleetX #1054 (tests/wild, tuning half)
TAMING = "initializing ddp ...\n"
LIGHTNING = ("initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\n" + "-" * 100 + "\ndistributed_backend=nccl\n"
             "All DDP processes registered. Starting ddp with 2 processes\n" + "-" * 100 + "\n")
PADDLE = ("I0302 02:01:36.274989 31267 nccl_context.cc:83] init nccl context nranks: 4 local rank: 0/1 gpu id: 0/1 "
          "ring id: 0/1\n")


@pytest.mark.parametrize("text, line", [(TAMING, 1), (LIGHTNING, 4), (PADDLE, 1)])
def test_a_paste_ending_at_the_setup_is_a_rank_that_never_joined(tmp_path, text, line):
    (tmp_path / "output.txt").write_text(text)
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert (top.code, top.severity) == ("distributed_failure", "medium") and top.confidence < 0.8
    assert top.evidence[0].locator == f"line {line}" and "NCCL_DEBUG=INFO" in top.fix


@pytest.mark.parametrize("after", [
    # the run went on: Lightning's progress bar with its loss
    "".join(f"Epoch 0:  {p}%|##        | {p}/100 [00:0{p // 20}<00:10, 9.80it/s, loss={2.3 - p / 100:.3f}, "
            "v_num=0]\n" for p in (20, 40, 60, 80)),
    # the job stopped on an error of its own, which speaks for itself
    "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    trainer.fit(model)\n"
    "RuntimeError: CUDA error: out of memory\n",
])
def test_the_setup_with_a_run_or_an_error_after_it_is_no_hang(tmp_path, after):
    (tmp_path / "train.log").write_text(LIGHTNING + after)
    d, _ = diagnose(tmp_path)
    assert not any("ends at the distributed setup" in c.issue for c in d.root_causes)


def test_one_rank_at_its_setup_beside_a_run_or_a_metrics_file_is_no_hang(tmp_path):
    # a healthy rank 1 under Lightning prints only its setup line; rank 0's log, or a metrics file, shows the run
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    (tmp_path / "a" / "rank0.log").write_text(LIGHTNING + "".join(
        f"Epoch {e}: 100%|##########| 100/100 [00:10<00:00, 9.80it/s, loss={1.5 - e * 0.15:.3f}]\n" for e in range(6)))
    (tmp_path / "a" / "rank1.log").write_text("initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\n")
    (tmp_path / "b" / "train.log").write_text(LIGHTNING)
    (tmp_path / "b" / "metrics.csv").write_text("epoch,train_loss,val_loss\n" + "".join(
        f"{e},{1.5 - e * 0.2:.2f},{1.6 - e * 0.2:.2f}\n" for e in range(5)))
    for d in ("a", "b"):
        diagnosis, _ = diagnose(tmp_path / d)
        assert not any("distributed setup" in c.issue or "every rank registered" in c.issue
                       for c in diagnosis.root_causes), d


def test_a_job_of_one_process_or_an_error_above_the_setup_is_no_hang(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    (tmp_path / "a" / "output.txt").write_text("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/1\n")
    (tmp_path / "b" / "output.txt").write_text(
        "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    batch = cfg['items']\n"
        "KeyError: 'items'\ninitializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n")
    for d in ("a", "b"):
        diagnosis, _ = diagnose(tmp_path / d)
        assert not any("distributed setup" in c.issue for c in diagnosis.root_causes), d


def test_every_rank_registered_is_a_hang_in_the_first_collective_not_a_rank_missing(tmp_path):
    (tmp_path / "output.txt").write_text(LIGHTNING)
    d, _ = diagnose(tmp_path)
    assert "every rank registered" in d.root_causes[0].issue and "NCCL_P2P_DISABLE=1" in d.root_causes[0].fix


def test_a_warning_above_the_setup_is_no_error(tmp_path):
    # Lightning's dataloader warning before the setup lines: the run went on past it, to the setup
    (tmp_path / "output.txt").write_text(
        "/usr/lib/python3/site-packages/pytorch_lightning/trainer/connectors/data_connector.py:224: "
        "PossibleUserWarning: The dataloader, train_dataloader, does not have many workers which may be a bottleneck.\n"
        "  rank_zero_warn(\n" + TAMING)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "distributed_failure" and "distributed setup" in d.root_causes[0].issue
