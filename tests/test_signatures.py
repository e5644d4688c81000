"""Every failure signature and every benign warning, each held by a real line people pasted in a
public thread (the source beside it), through the same path a pasted log takes: the scanner's
prefilter, then the tables in analysis/data/."""
from __future__ import annotations

import pytest

from analysis.diagnose import diagnose
from analysis.ingest.events import build_event, match_benign, prefilter_literals, signatures

# (signature name, line as posted, where it was posted)
REAL_LINES = [
    ("cuda_oom", "CUDA out of memory. Tried to allocate 4.00 GiB (GPU 0; 10.73 GiB total capacity; 4.41 GiB already "
     "allocated; 1.75 GiB free; 3.78 GiB cached)", "tests/wild gtad-oom-30"),
    ("cuda_oom", "RuntimeError: CUDA error: out of memory", "github.com/danieltan07/spatialaffinitynetwork/issues/7"),
    ("cuda_oom", "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCTensorRandom.cu:25",
     "github.com/rowanz/neural-motifs/issues/58"),
    ("tf_oom", "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[100,4096,32]",
     "tests/wild segan-tf-oom-42"),
    ("cudnn_oom_in_disguise", "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
     "github.com/haotian-liu/LLaVA/issues/392"),
    ("host_oom", "RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you "
     "tried to allocate 1178729664 bytes. Error code 12 (Cannot allocate memory)",
     "github.com/nguyenvanhoang7398/FANG/issues/1"),
    ("host_oom", "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you "
     "tried to allocate 31850496000 bytes.", "github.com/Comfy-Org/Nvidia_RTX_Nodes_ComfyUI/issues/13"),
    ("host_oom", "[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', "
     "'main.py', '--local_rank=0'] exits with return code = -9", "github.com/deepspeedai/DeepSpeed/issues/3232"),
    ("nccl_shm", "[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
     "github.com/NVIDIA/nccl/issues/525"),
    ("nccl_shm", "ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-KWfVyt (size 5967872)", "github.com/NVIDIA/nccl-tests/issues/166"),
    ("port_in_use", "RuntimeError: Address already in use", "tests/wild megatron-addr-in-use-343"),
    ("store_barrier", "INFO:root:Waiting in store based barrier to initialize process group for rank: 0, key: "
     "store_based_barrier_key:1 (world_size=8, worker_count=7, timeout=0:30:00)",
     "github.com/Lightning-AI/pytorch-lightning/issues/4420"),
    ("ddp_unused_parameters", "RuntimeError: Expected to have finished reduction in the prior iteration before starting "
     "a new one. This error indicates that your module has parameters that were not used in producing loss.",
     "tests/wild sood-ddp-unused-params-33"),
    ("dataloader_killed", "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
     "shared memory (shm).", "github.com/nianticlabs/simplerecon/issues/3"),
    ("batchnorm_single", '"Expected more than 1 value per channel when training, got input size torch.Size([1, 2, 1, 1])"',
     "tests/wild litehrnet-bn-batch1-4"),
    ("label_out_of_range", "../aten/src/ATen/native/cuda/NLLLoss2d.cu:103: nll_loss2d_forward_kernel: block: [5,0,0], "
     "thread: [996,0,0] Assertion `t >= 0 && t < n_classes` failed.", "github.com/milesial/Pytorch-UNet/issues/375"),
    ("label_out_of_range", "IndexError: Target 192 is out of bounds", "tests/wild unet-greyscale-mask-target-291"),
    ("nonfinite_loss", "FloatingPointError: Loss became infinite or NaN at iteration=27!", "tests/wild detectron2-diverge-508"),
    ("nonfinite_loss", "FloatingPointError: Predicted boxes or scores contain Inf/NaN. Training has diverged.",
     "tests/wild detectron2-diverged-lr01-1128"),
    ("nonfinite_loss", '"grad norm is nan. Do not update model".', "tests/wild espnet-eps-grad-nan-964"),
    ("loss_scale_overflow", "2020-03-23 11:41:18 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale "
     "to: 0.00048828125", "tests/wild fairseq-bt-overflow-1895"),
]

BENIGN_LINES = [
    ("scheduler_before_optimizer", "/opt/conda/lib/python3.7/site-packages/torch/optim/lr_scheduler.py:100: UserWarning: "
     "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call "
     "them in the opposite order", "tests/wild reid-strong-sched-warning-190"),
    ("ddp_grad_strides", "UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not "
     "created according to the gradient layout contract", "tests/wild sam2-grad-strides-ok-492"),
    ("tokenizers_fork", "huggingface/tokenizers: The current process just got forked, after parallelism has already "
     "been used. Disabling parallelism to avoid deadlocks...", "tests/wild autotrain-tokenizers-fork-warning-522"),
    ("use_cache_with_checkpointing", "`use_cache=True` is incompatible with gradient checkpointing. Setting "
     "`use_cache=False", "tests/wild msswift-use-cache-warning-22"),
    ("loss_scale_search", "[2024-09-11 17:52:18,030] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
     "Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648", "tests/wild cogvideo-overflow-normal-233"),
    ("loss_scale_search", '"Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 262144.0"',
     "tests/wild apex-gpt2-overflow-fine-864"),
]


def _passes_prefilter(line: str) -> bool:
    return any(lit in line for lit in prefilter_literals())


@pytest.mark.parametrize("name,line,source", REAL_LINES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(REAL_LINES)])
def test_real_line_names_its_signature(name, line, source):
    assert _passes_prefilter(line), f"the scanner would never hand this line to Python ({source})"
    event, _ = build_event("train.log", 1, [line])
    assert event is not None and event.signature == name, (source, event)


def test_every_signature_has_a_real_line():
    named = {n for n, _, _ in REAL_LINES}
    untested = {s.name for s in signatures() if s.code} - named - {
        # older signatures with their own tests in test_analyzers / test_textlog
        "nccl_timeout", "rank_failure", "dataloader_handover", "dataloader_worker_error", "var_dof", "anomaly_nan"}
    assert not untested


@pytest.mark.parametrize("name,line,source", BENIGN_LINES, ids=[n for n, _, _ in BENIGN_LINES])
def test_benign_warning_is_not_a_fault(name, line, source):
    assert _passes_prefilter(line), source
    assert match_benign(line).name == name


def test_a_loss_scale_driven_below_one_is_a_fault_not_the_scalers_search():
    line = "2020-03-23 11:48:04 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 0.000244140625"
    assert match_benign(line) is None
    event, _ = build_event("train.log", 1, [line])
    assert event.code == "numerical_instability" and event.fields["scale"] < 1


def test_a_paste_of_harmless_warnings_is_healthy_and_says_why(tmp_path):
    (tmp_path / "output.txt").write_text(BENIGN_LINES[0][1] + "\n" + BENIGN_LINES[1][1] + "\n")
    d, _ = diagnose(tmp_path)
    assert d.status == "no_failure_found"
    top = d.root_causes[0]
    assert top.code == "healthy" and "harmless" in top.evidence[0].text and top.evidence[0].locator == "line 1"


def test_a_harmless_warning_beside_a_crash_is_not_healthy(tmp_path):
    (tmp_path / "output.txt").write_text(BENIGN_LINES[0][1] + "\nRuntimeError: Address already in use\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "distributed_failure" and d.status == "diagnosis_complete"


@pytest.mark.parametrize("line,code", [
    ("CUDA out of memory. Tried to allocate 4.00 GiB (GPU 0; 10.73 GiB total capacity)", "out_of_memory"),
    ('"Expected more than 1 value per channel when training, got input size torch.Size([1, 2, 1, 1])"', "zero_variance"),
])
def test_one_line_pasted_as_output_txt_is_read_as_a_log(tmp_path, line, code):
    (tmp_path / "output.txt").write_text(line + "\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes and d.root_causes[0].code == code


def test_store_barrier_names_the_missing_worker(tmp_path):
    (tmp_path / "train.log").write_text(REAL_LINES[11][1] + "\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "distributed_failure" and "7 workers registered for world_size 8" in d.root_causes[0].issue


def test_store_barrier_with_every_rank_arrived_is_no_fault(tmp_path):
    (tmp_path / "train.log").write_text(REAL_LINES[11][1].replace("worker_count=7", "worker_count=8") + "\n")
    d, _ = diagnose(tmp_path)
    assert "distributed_failure" not in [c.code for c in d.root_causes]
