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
