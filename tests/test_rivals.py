"""The look-alikes listed beside the leading cause (analysis/rivals.py), on real runs: each joins
only where the artifacts leave it open and point to it, always below the leader, with located
evidence; what the artifacts exclude stays off."""
from __future__ import annotations

import numpy as np
import pytest

from analysis.diagnose import diagnose
from analysis.ingest import load_run
from analysis.model import Evidence, Finding
from analysis.rivals import add_rivals


def _leader(code: str, run, onset: float | None = 100.0, rules_out: tuple[str, ...] = ()) -> Finding:
    loss = run.metrics.get("train_loss")
    return Finding(code=code, issue="leader", severity="critical", confidence=0.8,
                   evidence=[Evidence("train_loss rose", loss.artifact, loss.locator(len(loss) - 1))],
                   fix="-", onset_step=onset, rules_out=rules_out)


def test_a_nan_out_of_calm_norms_leaves_a_bad_batch_open_below_the_overflow(scenario):
    """The grad norm turns NaN at the loss's NaN step (the NaN loss backpropagated), calm before it:
    that is the leader's own evidence against a blow-up, so gradients are not listed beside it."""
    d, run = diagnose(scenario("standardise_no_eps_0"))     # a std() without eps: the loss turns NaN
    codes = [c.code for c in d.root_causes]
    assert codes[0] == "numerical_instability" and "no gradient blow-up before it" in d.root_causes[0].issue
    g, loss = run.metrics.get("grad_norm"), run.metrics.get("train_loss")
    first_nan = [s.steps[np.flatnonzero(~np.isfinite(s.values))[0]] for s in (g, loss)]
    assert first_nan[0] == first_nan[1]
    added = [c for c in d.root_causes if c.analyzer == "rivals"]
    assert {c.code for c in added} == {"data_pipeline_bug"}
    paths = {a["path"] for a in d.run["artifacts"]}
    for c in added:
        assert c.confidence < d.root_causes[0].confidence and c.severity == "medium"
        assert c.evidence and all(e.artifact in paths and e.locator for e in c.evidence)
        assert c.settle and c.fix.startswith("Check before changing anything")
    bad = next(c for c in added if c.code == "data_pipeline_bug")
    assert "non-finite" in bad.evidence[0].text


def test_calm_gradients_and_a_finite_loss_leave_no_look_alike(scenario):
    run = load_run(scenario("sgd_rate_adaptive_0"))         # grad norms logged, calm; the loss never NaN
    lead = _leader("lr_too_high", run)
    assert add_rivals([lead], run) == [lead]


def _growing(scenario):
    """A real run whose grad norm grows from ~0.5 to 1e10 and then Inf, and the step before the Inf."""
    run = load_run(scenario("cubic_activation_0"))
    g = run.metrics.get("grad_norm")
    return run, float(g.steps[np.flatnonzero(~np.isfinite(g.values))[0] - 1])


def test_gradients_that_grew_before_the_failure_are_cited(scenario):
    run, last_finite = _growing(scenario)
    g = run.metrics.get("grad_norm")
    out = add_rivals([_leader("lr_too_high", run, onset=last_finite)], run)
    grad = next(c for c in out if c.code == "exploding_gradients")
    assert grad.evidence[0].text.startswith("grad_norm rose from") and grad.evidence[0].artifact == g.artifact
    out = add_rivals([_leader("lr_too_high", run, onset=float(g.steps[-1]))], run)
    assert next(c for c in out if c.code == "exploding_gradients").evidence[0].text.startswith("grad_norm non-finite")


def test_what_a_finding_rules_out_and_a_reading_without_a_curve_stay_off(scenario):
    run, onset = _growing(scenario)
    ruled = _leader("lr_too_high", run, onset, rules_out=("exploding_gradients", "numerical_instability"))
    assert add_rivals([ruled], run) == [ruled]
    config_only = _leader("lr_too_high", run, onset=None)
    assert add_rivals([config_only], run) == [config_only]


def test_a_cause_already_found_is_not_said_twice_and_notes_stay_last(scenario):
    run, onset = _growing(scenario)
    lead = _leader("lr_too_high", run, onset)
    note = Finding(code="loss_spikes", issue="note", severity="low", confidence=0.9,
                   evidence=lead.evidence, fix="-")
    out = add_rivals([lead, note], run)
    assert [c.code for c in out] == ["lr_too_high", "exploding_gradients", "numerical_instability", "loss_spikes"]
    assert sum(c.confidence for c in out[1:3]) <= 1 - lead.confidence + 0.01
    found = Finding(code="exploding_gradients", issue="found", severity="high", confidence=0.5,
                    evidence=lead.evidence, fix="-")
    assert [c.code for c in add_rivals([lead, found], run)] == ["lr_too_high", "exploding_gradients",
                                                                 "numerical_instability"]


def test_a_healthy_run_gets_no_look_alike(scenario):
    d, _ = diagnose(scenario("restarts_noise_0"))
    assert d.root_causes[0].code == "healthy"
    assert not any(c.analyzer == "rivals" for c in d.root_causes)


def test_a_loss_that_never_left_its_start_keeps_the_stall_causes_the_artifacts_leave_open(scenario):
    d, run = diagnose(scenario("random_targets_lstm"))      # labels drawn apart from their inputs
    assert d.root_causes[0].code == "data_pipeline_bug"
    added = {c.code: c for c in d.root_causes if c.analyzer == "rivals"}
    # no checkpoint was shared: the layers' signal stays open; the LR is in its range; the shared code
    # builds an LSTM and no ReLU, so there are no ReLU units to die
    assert set(added) == {"vanishing_gradients"} and not run.loaded_checkpoints()
    assert run.code and not any("relu" in c.text.lower() for c in run.code)
    assert all("no checkpoint was shared" in c.evidence[0].text for c in added.values())


def test_an_lr_under_its_range_keeps_bad_data_beside_it_not_a_frozen_model(scenario):
    d, _ = diagnose(scenario("lr_below_range_0"))
    assert d.root_causes[0].code == "lr_too_low"
    added = [c for c in d.root_causes if c.analyzer == "rivals"]
    # the loss moved, a little: the weights were updated, so only the data stays open
    assert [c.code for c in added] == ["data_pipeline_bug"]
    assert "labels that do not match their inputs" in added[0].evidence[0].text


def test_a_tanh_stack_gets_no_dead_relu_beside_it(scenario):
    d, run = diagnose(scenario("deep_tanh_cnn"))            # tanh after every convolution, no ReLU anywhere
    assert d.root_causes[0].code == "vanishing_gradients"
    assert run.code and not any("relu" in c.text.lower() for c in run.code)
    assert "dead_relu" not in [c.code for c in d.root_causes]


def test_a_loss_scaler_s_skipped_steps_are_not_gradients_blowing_up(scenario):
    """fp16: the norm reads Inf at a few early steps the scaler skipped, finite after each; the
    look-alike cites the norms' real rise before the NaN, not a skipped step."""
    d, run = diagnose(scenario("fp16_scale_decay_0"))
    g = run.metrics.get("grad_norm")
    bad = np.flatnonzero(~np.isfinite(g.values))
    assert len(bad) and np.isfinite(g.values[bad[0] + 1])           # an Inf the norms came back from
    grad = next(c for c in d.root_causes if c.code == "exploding_gradients" and c.analyzer == "rivals")
    assert grad.evidence[0].text.startswith("grad_norm rose from")
    assert grad.evidence[0].locator != g.locator(int(bad[0]))


def test_a_weak_leader_keeps_its_look_alikes_under_it(scenario):
    """A leader at 0.2 leaves 0.8; shared between its two look-alikes that would put each above it."""
    run, onset = _growing(scenario)
    lead = _leader("lr_too_high", run, onset)
    lead.confidence = 0.2
    out = add_rivals([lead], run)
    assert len(out) > 1 and all(c.confidence < lead.confidence for c in out[1:])


def test_an_lr_above_its_range_is_said_above_it_not_near_it(scenario):
    d, run = diagnose(scenario("negative_bias_mlp"))        # lr 0.05 in the config, no optimizer named
    lr = next(c for c in d.root_causes if c.code == "lr_too_high" and c.analyzer == "rivals")
    assert "lr = 0.05: above the top" in lr.evidence[0].text


def _open(tmp_path, text: str) -> tuple[str, list[Finding]]:
    (tmp_path / "train.log").write_text(text)
    d, _ = diagnose(tmp_path)
    return d.root_causes[0].code, [c for c in d.root_causes if c.issue.startswith("Not excluded")]


def test_an_unsure_healthy_verdict_keeps_what_its_lines_point_to_beside_it(tmp_path):
    # the PyTorch MNIST example's evaluation line alone: nothing wrong in it, but 21% on ten digits is low
    lead, added = _open(tmp_path, "\nTest set: Average loss: 1.9820, Accuracy: 2130/10000 (21%)\n\n")
    assert lead == "healthy" and [c.code for c in added] == ["data_pipeline_bug"]
    assert added[0].severity == "low" and added[0].evidence[0].locator == "line 2" and added[0].settle


def test_a_training_runs_low_score_at_a_report_a_usual_lr_and_a_sure_verdict_leave_nothing_open(tmp_path):
    # ogb #64's line (tests/wild, tune half) beside its loss is one report of a training run: no plateau; the
    # first epoch of any model scores low; an optimizer unknown says nothing of an LR (SGD's 0.1 is Adam's x10)
    for i, text in enumerate(("Run: 01, Epoch: 30, Loss: 1.6056, Train: 4.87%, Valid: 5.98%, Test: 6.70%\n",
                              "Epoch 1/20\n469/469 - 5s - loss: 2.2011 - accuracy: 0.1850 - val_loss: 2.0512 - "
                              "val_accuracy: 0.2731\n",
                              "".join(f"Epoch {e}: loss {1.2 - e * 0.1:.3f} val_loss {1.1 - e * 0.08:.3f} lr 0.1\n"
                                      for e in range(2, 5)))):
        (tmp_path / str(i)).mkdir()
        lead, added = _open(tmp_path / str(i), text)
        assert lead == "healthy" and not added, (text, added)


# torchrun's report of a failed rank, as it prints it (the layout of torch/distributed/elastic/multiprocessing/errors)
_CHILD_FAILED = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2023-05-10_12:00:00
  host      : node1
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 12345)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""
_WATCHDOG = ("[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
             "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800789 milliseconds before timing out.\n")


def _stopped(tmp_path, text: str) -> tuple[list[str], list]:
    (tmp_path / "traceback.txt").write_text(text)
    d, _ = diagnose(tmp_path)
    return [c.code for c in d.root_causes], d.root_causes


def test_a_report_that_a_rank_stopped_keeps_what_stops_one_beside_it(tmp_path):
    # the report names no error of the rank's own: one rank's OOM or input pipeline stops a job this way
    for i, text in enumerate((_CHILD_FAILED, _WATCHDOG)):
        (tmp_path / str(i)).mkdir()
        codes, causes = _stopped(tmp_path / str(i), text)
        assert codes[:3] == ["distributed_failure", "out_of_memory", "dataloader_failure"], (text, codes)
        lead, *added = causes[:3]
        assert all(c.severity == "medium" and c.confidence < lead.confidence for c in added)
        assert all(c.evidence[0].locator == lead.evidence[0].locator and "names no error" in c.evidence[0].text
                   for c in added)


def test_a_rank_s_own_error_or_a_failure_of_the_processes_meeting_leaves_nothing_beside_it(tmp_path):
    # a rank's own CUDA OOM above the report is the cause (the report its echo); a port taken, or NCCL's own error
    # (torch 1.7's wording), is the job's own fault
    oom = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 23.69 GiB total "
           "capacity; 21.50 GiB already allocated; 1.10 GiB free; 21.90 GiB reserved in total by PyTorch)\n")
    port = ("RuntimeError: The server socket has failed to listen on any local network address. The server socket "
            "has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n")
    nccl = ("RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:514, unhandled system error, "
            "NCCL version 2.7.8\n")
    for i, (text, lead) in enumerate(((oom + _CHILD_FAILED, "out_of_memory"), (port, "distributed_failure"),
                                      (nccl, "distributed_failure"))):
        (tmp_path / str(i)).mkdir()
        codes, _ = _stopped(tmp_path / str(i), text)
        assert codes[0] == lead and "dataloader_failure" not in codes, (text, codes)


@pytest.mark.parametrize("text", [
    # the rank's own error above the report, one no signature names
    "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    out = model(x)\n"
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!\n"
    + _CHILD_FAILED,
    # a rendezvous that never formed: no rank trained, the job's setup is the fault
    "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.\n",
    "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n",
    # a communicator aborted for NCCL's own error, not a wait
    "RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: NCCL error: unhandled "
    "cuda error, NCCL version 2.10.3\n",
])
def test_a_rank_s_own_error_a_rendezvous_or_nccl_s_own_abort_gets_no_stopped_rank_look_alike(tmp_path, text):
    codes, _ = _stopped(tmp_path, text)
    assert codes[0] == "distributed_failure" and "dataloader_failure" not in codes, codes
