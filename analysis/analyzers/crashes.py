"""Failures named in logs and tracebacks: out of memory (with its numbers), NCCL and rank
failures, DataLoader worker deaths, zero-variance statistics, NaN detectors and loss-scale
overflows. The signature table is data: analysis/data/signatures.toml."""
from __future__ import annotations

import re

import numpy as np

from analysis.analyzers import error_readings
from analysis.analyzers.common import (
    COLLECTIVE_WAITED,
    NAN_DATA_SETTLE,
    pasted_texts,
    reported_after,
    small_lr,
    train_loss,
)
from analysis.ingest.dressing import undress
from analysis.ingest.events import signatures
from analysis.metrics import clip, fmt
from analysis.model import Event, Evidence, Finding
from analysis.patches import set_config_value
from analysis.run import ConfigHit, Run

NAME = "crashes"
GIB = 2 ** 30
BATCH_KEYS = ("per_device_train_batch_size", "batch_size", "micro_batch_size", "train_batch_size")


def _gib(x: float) -> str:
    return f"{x / GIB:.2f} GiB" if x >= GIB / 10 else f"{x / 2**20:.0f} MiB"


def _ev(e: Event, text: str | None = None) -> Evidence:
    repeated = e.count > 1 and "last_line" in e.fields
    suffix = f" (x{e.count}, last at line {e.fields['last_line']})" if repeated else ""
    return Evidence(clip(text or e.text, 300) + suffix, e.artifact, e.locator)


def _user_frame(e: Event) -> Evidence | None:
    frames = [f for f in e.fields.get("frames", [])
              if "site-packages" not in f["file"] and "/lib/python" not in f["file"]]
    if not frames:
        return None
    f = frames[-1]
    return Evidence(f'raised from {f["file"]}:{f["line"]} in {f["func"]}: {f["code"]}'.rstrip(": "),
                    e.artifact, e.locator)


# the Hugging Face Trainer's evaluation gathering every batch's predictions on the device
_EVAL_GATHER = ("evaluation_loop", "nested_concat", "torch_pad_and_concatenate", "_nested_gather", "prediction_loop")
HELD_ELSEWHERE = 0.5     # of the GPU's capacity, held outside the process that failed: another process has the GPU


def _held_by_others(f: dict) -> tuple[float, float] | None:
    """(bytes held outside the failing process, bytes it held) where the GPU was full and most of it was held
    elsewhere: PyTorch's own count of the process's use (`this process has X memory in use`, else what PyTorch
    reserved or allocated) against the total capacity less what was free."""
    own = f.get("in_use", f.get("reserved"))
    if own is None and "allocated" in f:
        own = f["allocated"] + f.get("reserved_unallocated", 0.0)
    if own is None or "capacity" not in f or "free" not in f:
        return None
    others = f["capacity"] - f["free"] - own
    return (others, own) if others >= HELD_ELSEWHERE * f["capacity"] else None


def _oom(run: Run, e: Event) -> Finding:
    f = e.fields
    parts = []
    if "tried" in f:
        parts.append(f"tried to allocate {_gib(f['tried'])}")
    if "free" in f and "capacity" in f:
        parts.append(f"{_gib(f['free'])} free of {_gib(f['capacity'])}")
    if "allocated" in f:
        parts.append(f"{_gib(f['allocated'])} allocated by PyTorch")
    frag = ("reserved_unallocated" in f
            and f["reserved_unallocated"] >= max(f.get("tried", 0), 0.05 * f.get("capacity", 1e18)))
    if frag:
        parts.append(f"{_gib(f['reserved_unallocated'])} reserved but unallocated (fragmentation)")
    where = "host" if e.signature == "host_oom" else "GPU"
    others = _held_by_others(f) if where == "GPU" else None
    if others is not None:
        parts.append(f"{_gib(others[0])} held outside this process's {_gib(others[1])}")
    ev = [_ev(e)]
    uf = _user_frame(e)
    if uf:
        ev.append(uf)
    patch = None
    shape = _allocation_shape(run, int(f["tried"])) if f.get("tried") else None
    if shape is not None:
        ev.append(shape[0])
        if shape[1]:
            patch = shape[1]
    hit = run.config_value(*BATCH_KEYS)
    if patch is None and hit and isinstance(hit.value, int) and hit.value > 1:
        ev.append(hit.evidence())
        patch = set_config_value(hit.config, hit.key, max(1, hit.value // 2))
    budget = _budget(run) if where == "GPU" else None
    if budget is not None:
        ev.append(budget[0])
    if shape is not None:
        fix = (f"That one tensor is {_gib(f['tried'])}, set by {shape[2]}: build it in chunks along "
               "its first dimension (e.g. evaluate a few sequences at a time and keep only what you "
               "need from each chunk, such as the loss or the argmax), or lower those settings; "
               "halving the first halves it")
    elif where == "GPU" and any(fr["func"] in _EVAL_GATHER for fr in e.fields.get("frames", [])):
        fix = ("It ran out in evaluation, where the Trainer keeps every batch's logits on the GPU until the end: "
               "set eval_accumulation_steps (e.g. 8) to move them to the CPU as it goes, and pass "
               "preprocess_logits_for_metrics that keeps only what the metric needs (the argmax); "
               "per_device_eval_batch_size can then stay")
    elif others is not None:
        fix = (f"Another process holds {_gib(others[0])} of this GPU (this one {_gib(others[1])}): find it with "
               "nvidia-smi (a notebook kernel, an earlier run still alive, another job on a shared GPU) and stop it, "
               "or pick a free GPU with CUDA_VISIBLE_DEVICES; a smaller batch will not make room it does not have")
    elif frag:
        fix = ("Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to stop fragmentation; if it still "
               "fails, halve the micro-batch and keep the effective batch with gradient accumulation")
    elif budget is not None and budget[1]:
        fix = "Where the memory goes decides the fix: " + "; ".join(budget[1])
    else:
        fix = ("Halve the micro-batch and double gradient accumulation steps (same effective batch); then "
               "gradient checkpointing and bf16 autocast; shard optimizer state (FSDP/ZeRO) for large models")
    title = _OOM_TITLES.get(e.signature, f"{where} out of memory")
    if e.signature == "host_oom" and _WINDOWS_PAGING.search(e.text):
        fix = ("Windows ran out of virtual memory (the paging file), not the GPU: each DataLoader worker process "
               "maps the CUDA libraries again. Lower num_workers (0 or 2), or enlarge the paging file (System > "
               "Advanced system settings > Performance > Virtual memory) and restart")
    elif e.signature == "host_oom" and "tried" not in f:
        fix = ("The kernel's OOM killer ended the process (SIGKILL, exit 137/-9): host RAM ran out. Lower "
               "num_workers and the data held in memory per worker (load lazily, memory-map), load "
               "checkpoints with mmap=True / low_cpu_mem_usage, and check `dmesg` for the oom-kill line")
    elif e.signature == "tf_dst_uninitialized":
        fix = ("TensorFlow could not allocate the tensor it was copying to the GPU: check nvidia-smi for other "
               "processes on the GPU (another session or notebook holding its memory), then halve the batch size")
    elif e.signature == "cudnn_oom_in_disguise":
        fix = ("cuDNN or cuBLAS could not get memory for its handle or workspace: check nvidia-smi for other "
               "processes on the GPU and halve the batch size first; if it still fails at batch size 1, "
               "check that the PyTorch build matches the CUDA/cuDNN driver (and, for cuBLAS, that no token "
               "id exceeds the embedding size)")
    issue = f"{title}: " + ", ".join(parts) if parts else title
    confidence = 0.75 if e.signature in ("cudnn_oom_in_disguise", "tf_dst_uninitialized") else 0.97
    severity = "critical"
    if e.signature == "cuda_oom_retried":     # handled by a retry: the run may go on, slower, on the CPU
        fix = ("detectron2 ran the op again on the CPU: lower the images' size or the number of boxes per image "
               "(the op's inputs) or the batch, so it fits the GPU; if the host then runs out, that is the crash")
        confidence, severity = RETRIED_OOM, "medium"
    return Finding(code="out_of_memory", issue=issue, severity=severity, confidence=confidence,
                   evidence=ev, fix=fix,
                   expected_impact="the step fits in memory; throughput per sample roughly unchanged",
                   patch=patch, analyzer=NAME, quick_fix="Halve the micro-batch size")


# An out-of-memory message that says the program goes on: TensorFlow's allocator retrying a smaller chunk
# (`failed to allocate 613.15M (642935552 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY`, at INFO), a trainer
# that caught it (fairseq's `attempting to recover from OOM`, `skipping batch`). Not the OOM killer's `Killed`,
# nor a bare `CUDA out of memory`: losses after those may be a relaunch's.
_RETRIED_OOM = re.compile(r"failed to allocate [\d.]+\s?[KMGT]?i?B? \(\d+ bytes\) from device|skipping (?:this )?batch|"
                          r"recover(?:ing)? from (?:an? )?OOM|attempting to recover|"
                          # Ray's memory monitor kills a task to free the node's RAM, and retries it
                          r"Workers \(tasks / actors\) killed due to memory pressure", re.I)


def _oom_gone_past(e: Event, went_on: Evidence) -> Finding:
    """An out-of-memory message that says the program goes on (`_RETRIED_OOM`), with no traceback around it, that
    the run learned on past (the loss reported after its last line, finite and lower at the end). The GPU is close
    to full; the run did not die of it: a low note under the verdict on the loss."""
    count = f" ({e.count} times)" if e.count > 1 else ""
    where = "Host" if e.signature == "host_oom" else "GPU"
    return Finding(code="out_of_memory", issue=f"{where} memory ran short{count}, and the run learned on past it: an "
                   "allocation retried smaller or a batch skipped, not a crash", severity="low",
                   confidence=OOM_GONE_PAST, evidence=[_ev(e), went_on],
                   fix="Nothing failed here. If the trainer says it skipped batches (fairseq's `skipping batch`), or "
                       "steps slowed at that line, lower the batch size; TensorFlow's allocator retries are harmless "
                       "(set memory growth to stop them)",
                   analyzer=NAME, quick_fix="Lower the batch size if batches were skipped")


OOM_GONE_PAST = 0.35


# Memory at its limit, no allocation failed in the lines: DeepSpeed ZeRO-3 flushing the allocator's cache to fit a
# step (where the run then died, most often why; alone, slow but alive), and Kubernetes evicting a pod for the node's
# memory (the trainer's, or another pod on the node): (issue, fix)
_MEMORY_PRESSURE = {
    "allocator_cache_flushes": ("GPU memory at its limit: DeepSpeed flushed PyTorch's allocator cache to fit steps",
                                "Lower the micro-batch or sequence length and keep the effective batch with gradient "
                                "accumulation; turn on activation checkpointing, or offload optimizer state "
                                "(zero_optimization.offload_optimizer) to free GPU memory"),
    "pod_evicted": ("Kubernetes evicted a pod: its node ran short of memory",
                    "Check the evicted pod is the trainer's (kubectl get events); if so, give its container a memory "
                    "request and limit that fit the run (host RAM: the DataLoader's workers, the dataset held in "
                    "memory), or lower num_workers and what each holds"),
    "xla_remat_short": ("XLA expects the compiled step to need more memory than the device holds, even recomputing "
                        "activations: if RESOURCE_EXHAUSTED follows, this is why",
                        "Shrink what the step holds: a smaller batch or sequence (or num_envs), a replay buffer or "
                        "cache sized explicitly rather than by the run's length, fewer parameters on each device "
                        "(shard them), or bf16 activations"),
}


# Warnings a rank goes on after: none is a rank's own error that would make a launcher's report its echo
_NOT_OWN_ERROR = (*_MEMORY_PRESSURE, "invalid_annotations_dropped", "numpy_var_dof")


def _memory_pressure(e: Event) -> Finding:
    issue, fix = _MEMORY_PRESSURE[e.signature]
    count = f" ({e.count} times)" if e.count > 1 else ""
    return Finding(code="out_of_memory", issue=issue + count, severity="medium", confidence=MEMORY_PRESSURE,
                   evidence=[_ev(e)], fix=fix, analyzer=NAME, quick_fix=fix.split(";")[0][:80])


MEMORY_PRESSURE = 0.5

_WINDOWS_PAGING = re.compile(r"WinError 1455|paging file is too small|页面文件太小")
_OOM_TITLES = {"host_oom": "Host out of memory",
               "tf_oom": "GPU out of memory (TensorFlow or XLA/JAX resource exhausted)",
               "cudnn_oom_in_disguise": "A cuDNN/cuBLAS error that is most often GPU memory exhausted",
               "tf_dst_uninitialized": "A TensorFlow copy to the GPU that could not allocate its tensor: most often "
                                       "GPU memory exhausted",
               "cuda_oom": "GPU out of memory",
               "cuda_oom_retried": "GPU out of memory inside an op, which detectron2 retried on the CPU"}
RETRIED_OOM = 0.6


def _budget(run: Run):
    """Evidence of where a step's memory goes, and the remedies by what each frees."""
    from analysis.analyzers.common import optimizer_family
    from analysis.memory_budget import estimate

    fam = optimizer_family(run)
    b = estimate(run, fam[0] if fam else None)
    if b is None or len(b.parts) < 3:
        return None
    parts = ", ".join(f"{k} {_gib(v)}" for k, v in sorted(b.parts.items(), key=lambda kv: -kv[1]))
    ck = max(run.loaded_checkpoints(), key=lambda c: c.numel)
    return Evidence(f"estimated need {_gib(b.total)}: {parts} (from {'; '.join(b.sources)})", ck.artifact,
                    f"tensors of {ck.artifact}"), b.remedies


def _allocation_shape(run: Run, tried: int):
    """The config values whose product (times 1, 2, 4 or 8 bytes) is exactly the allocation that
    failed: the tensor that did not fit, named by its settings; and a patch halving the first."""
    from itertools import combinations

    values = [(cfg, key, int(v)) for cfg in run.configs for key, v in cfg.values.items()
              if isinstance(v, int) and not isinstance(v, bool) and 1 < v <= 10**7][:40]
    for n in (2, 3, 4):
        for combo in combinations(values, n):
            prod = 1
            for _, _, v in combo:
                prod *= v
            for width in (4, 2, 1, 8):
                if prod * width == tried:
                    names = " x ".join(f"{k} ({v:,})" for _, k, v in combo)
                    cfg, key, v = combo[0]
                    lines = ", ".join(f"{c.artifact} line {c.lines.get(k, 1)}" for c, k, _ in combo)
                    ev = ConfigHit(cfg, key, v).evidence(f"{names} x {width} bytes = {tried:,} bytes: "
                                                         f"exactly the allocation that failed ({lines})")
                    return ev, set_config_value(cfg, key, max(1, v // 2)), " x ".join(k for _, k, _ in combo)
    return None


# The ranks never formed a group: the rendezvous or the store timed out or refused (no rank's training failed)
_NEVER_FORMED = re.compile(r"RendezvousTimeoutError|DistStoreError|DistNetworkError|Socket Timeout|client socket "
                           r"has timed out|store->get|connect to \(failed\)|Socket Connect Error")
_RENDEZVOUS = ("The ranks never formed a group: the rendezvous or its store timed out or refused the connection",
               "Check that every node reaches MASTER_ADDR:MASTER_PORT (the same address and port on all nodes, the "
               "port open between them, not a loopback or a docker bridge), that --nnodes and --nproc_per_node "
               "match the nodes you started, and that every node was started before the timeout")

# A DataLoader that waited past its `timeout` for a batch: a worker stuck, not one that died
_LOADER_TIMED_OUT = ("A DataLoader worker stopped answering: no batch within the loader's timeout",
                     "Find what the worker waits on: run with num_workers=0 to get the stack at the stuck sample (a "
                     "slow network or disk read, a lock or a thread pool in a transform: cv2.setNumThreads(0) with "
                     "fork), then raise `timeout` only if that sample is merely slow")

# NCCL's own error in a collective (the signature's lines that say no timeout)
_NCCL_OWN_ERROR = ("NCCL failed in a collective with an error of its own (a system or network call, a peer gone), "
                   "not a timeout", "Rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see the call that "
                   "failed; for a socket or connection error set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the "
                   "interface the nodes reach each other on, open the ports between them (a firewall), and try "
                   "NCCL_IB_DISABLE=1 for a broken InfiniBand; for an internal or CUDA error match the NCCL, driver "
                   "and CUDA versions on every node")

_FIXES = {
    "fasttext_nan": ("fastText stopped on a NaN weight: the learning rate drove the updates past what fp32 holds",
                     "Lower -lr (fastText's default is 0.1 for supervised, 0.05 for unsupervised training; "
                     "one-vs-all and hierarchical softmax losses want it lower still), and with many labels "
                     "use -loss hs or -loss ova with a smaller -lr"),
    "dynet_bad_gradient": ("DyNet refused an update whose gradient norm is Inf or NaN: the updates outgrew the "
                           "weights", "Lower the learning rate (the trainer's learning_rate / eta0) and clip "
                           "gradients (trainer.clip_threshold, on by default at 5: check it was not disabled)"),
    "unknown_piece_output": ("The model's output holds the tokenizer's unknown piece (⁇): the training text has "
                             "characters its vocabulary lacks, which were trained on as <unk>",
                             "Count the <unk> ids in the tokenized training targets (sp.encode(text) == sp.unk_id()); "
                             "add the missing characters to the vocabulary (train a new tokenizer on your text, or "
                             "change the model's tokenizer before fine-tuning), or normalise the text to the "
                             "characters it has"),
    "spacy_misaligned_entities": ("spaCy drops entities whose character offsets do not fall on token "
                                  "boundaries: those annotations never reach training",
                                  "Check the offsets with spacy.gold.biluo_tags_from_offsets(nlp.make_doc(text), "
                                  "entities) (spacy.training.offsets_to_biluo_tags in v3): an off-by-one end, "
                                  "trailing spaces or punctuation inside a span; fix the annotations, or snap "
                                  "the spans to tokens with doc.char_span(..., alignment_mode='expand')"),
    "nccl_timeout": ("A collective timed out: one rank stopped reaching it", "Find the rank that stalled "
                     "first (NCCL_DEBUG=INFO, TORCH_NCCL_ASYNC_ERROR_HANDLING=1); look for uneven data per "
                     "rank, a rank-only branch (logging, eval, checkpointing) or a hung dataloader; raise "
                     "the timeout only once the cause is known"),
    "nccl_network": ("NCCL lost a connection between ranks: a peer process died or the network failed",
                     "Find the rank that died first (its own log, dmesg for the OOM killer): a closed peer "
                     "is usually its consequence; if every rank lived, test the transport (NCCL_DEBUG=INFO, "
                     "NCCL_SOCKET_IFNAME, NCCL_IB_DISABLE=1) and the links between the nodes"),
    "elastic_teardown": ("The launcher (torchrun, DeepSpeed) is stopping the other ranks because one failed",
                         "Read the first failing rank's own error above the SIGTERM (or `Killing subprocess`) "
                         "lines, or torchrun's error file: they are its consequence"),
    "horovod_shutdown": ("Horovod shut down: a rank raised, or finished while the others still called "
                         "collectives", "Read the first rank's own exception above the first shutdown "
                         "message; if none raised, make every rank run the same number of steps and "
                         "collectives (an early stop or a last batch decided on one rank only must be "
                         "broadcast to all)"),
    "gloo_connect": ("Gloo could not connect every pair of ranks: a peer is unreachable on the network interface "
                     "Gloo chose", "Set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) to the interface the nodes reach "
                     "each other on (not lo or a docker bridge), open the ports between the nodes, and check "
                     "MASTER_ADDR resolves to that interface on every node"),
    "collective_mismatch": ("The ranks called different collectives (another op, order, shape or dtype)",
                            "Make every rank run the same collectives in the same order: a branch taken on one rank "
                            "only (rank-0 logging or eval that all-reduces, an uneven last batch, a parameter used "
                            "on some ranks) is the usual source; TORCH_DISTRIBUTED_DEBUG=DETAIL names the op"),
    "rank_failure": ("A worker rank failed and took the job down", "Read the first failing rank's own "
                     "traceback (torchrun's error file); the other ranks' errors are consequences"),
    "dataloader_killed": ("A DataLoader worker died", "The worker was killed (often the host OOM killer or a "
                          "too-small /dev/shm): lower num_workers, give the container more shared memory "
                          "(--shm-size), and check the sample the worker was loading"),
    "dataloader_handover": ("A DataLoader worker died while handing a batch to the training process",
                            "The worker vanished mid-transfer (often the host OOM killer or a too-small "
                            "/dev/shm): lower num_workers, give the container more shared memory "
                            "(--shm-size) or use torch.multiprocessing.set_sharing_strategy('file_system') "
                            "(also the fix when the process runs out of file descriptors: ancdata, too many "
                            "open files; or raise ulimit -n), and check the sample the worker was loading"),
    "spawn_without_main_guard": ("DataLoader workers started under spawn (Windows, macOS) from a script "
                                 "without the `if __name__ == '__main__':` guard",
                                 "Put the training code under `if __name__ == '__main__':` (each spawned worker "
                                 "re-imports the script), or set num_workers=0 to load in the main process"),
    "dataloader_worker_error": ("A DataLoader worker failed while loading a sample", "The worker's own error "
                                "names the record: fix or skip it in the dataset's __getitem__ (catch the "
                                "decode error, log the index, filter the file list); num_workers=0 "
                                "reproduces it in the main process"),
    "nccl_shm": ("NCCL could not create its shared-memory segment (/dev/shm full or too small)",
                 "Give the container more shared memory (docker --shm-size=16g or --ipc=host; a Kubernetes "
                 "emptyDir with medium: Memory on /dev/shm), remove stale /dev/shm/nccl-* files; "
                 "NCCL_SHM_DISABLE=1 works around it at some speed cost"),
    "port_in_use": ("The rendezvous port is already in use: distributed init could not bind MASTER_PORT",
                    "Another job (or a stale process from a crashed run) holds the port: pick a "
                    "free one (torchrun --master_port, accelerate --main_process_port, MASTER_PORT) "
                    "or kill the stale process"),
    "store_barrier": ("Ranks wait at the init barrier: fewer (or more) workers joined than the world size",
                      "A rank never started or crashed before init (read its own log), or two jobs share one "
                      "MASTER_ADDR:MASTER_PORT; check nproc_per_node x nnodes equals world_size"),
    "ddp_unused_parameters": ("DDP: some parameters received no gradient in the previous iteration",
                              "Pass find_unused_parameters=True to DistributedDataParallel, or make every "
                              "output of forward() take part in the loss (remove or freeze the unused "
                              "module); TORCH_DISTRIBUTED_DEBUG=DETAIL names the parameters"),
    "corrupt_sample": ("A sample file is corrupt: the loader could not decode it to the end",
                       "Find the broken files and drop or re-create them (open each with PIL's Image.open(p).load(), "
                       "or iterate the TFRecords with tf.data.TFRecordDataset and catch DataLossError; a download "
                       "or copy cut short is the usual source); PIL's ImageFile.LOAD_TRUNCATED_IMAGES = True only "
                       "pads the broken image"),
    "empty_dataset": ("The dataset is empty: the sampler got 0 samples",
                      "Print len(dataset) and the path it reads: a wrong data root or list file, another folder "
                      "layout (class sub-folders, file extensions) or a filter that kept nothing"),
    "label_shape_mismatch": ("The labels do not fit the model's output: another number of classes, or another "
                             "encoding", "Make the head's size equal the dataset's class count (num_classes in the "
                             "config, the last Dense layer's units) and the labels the loss's encoding: one-hot "
                             "with categorical_crossentropy, integer ids with sparse_categorical_crossentropy"),
    "unequal_samples": ("Samples of different sizes cannot be batched",
                        "Give every sample one size before batching: resize or crop images to a fixed size in the "
                        "transform, pad sequences in a collate_fn; in a batched datasets.map return every column "
                        "with as many rows (drop the old columns with remove_columns)"),
    "label_set_error": ("The labels are not the set the model was fit for: one class only, or labels it never saw",
                        "Count the labels of the split that fails (np.unique(y, return_counts=True)): a split or "
                        "filter that kept one class needs stratifying; NaN among unseen labels is a missing value "
                        "read as a label (drop or impute it before encoding)"),
    "invalid_annotations_dropped": ("detectron2 dropped annotations without a valid segmentation",
                                    "Check the dataset conversion: each polygon needs 3 or more points (6 numbers) "
                                    "and non-empty masks; a handful dropped is harmless, most of them is a converter "
                                    "that writes the masks wrongly"),
    "numpy_var_dof": ("NumPy computed a variance or std over one element or none: it is NaN",
                      "Guard the statistic where it feeds training (compute it only over 2 or more values, or use "
                      "ddof=0); harmless where a report or analysis script prints it"),
    "horovod_stall": ("Horovod: ranks have waited over a minute for a tensor the others did not submit",
                      "If it lasts, the ranks diverged in what they reduce (a branch on one rank, an uneven last "
                      "batch, a parameter unused on some ranks): make every rank submit the same tensors in the same "
                      "order (HOROVOD_TIMELINE names them); if it passes, a slow rank (a long first batch, an "
                      "evaluation on rank 0 only) held the others, and the warning is harmless"),
    "no_labels_in_batch": ("The Trainer got no loss: the batches hold no labels",
                           "Name the target column `labels` (or set label_names in TrainingArguments), and check "
                           "remove_unused_columns did not drop it: the Trainer keeps only the columns the model's "
                           "forward() names"),
    "empty_param_list": ("The optimizer was given no parameters: nothing can be trained",
                         "Build the optimizer after the model's layers exist and over model.parameters() (or the "
                         "filter of requires_grad ones, checking it keeps some); register sub-layers in nn.Module "
                         "attributes or nn.ModuleList, not a Python list"),
    "label_out_of_range": ("A target label is outside [0, number of classes)",
                           "Check the labels against the model's output size: masks saved as 0/255 need "
                           "mapping to class indices, an ignore label (-1, 255) needs ignore_index in the "
                           "loss, and the class count may be off by one (background); assert labels.min() "
                           ">= 0 and labels.max() < C"),
    "var_dof": ("var()/std() over a single element: the statistic is NaN and its gradient too",
                "Guard the reduction: compute the variance only when the reduced dimension has >= "
                "2 elements (or use correction=0), and add a regulariser that keeps the quantity "
                "from collapsing to one value"),
    "batchnorm_single": ("BatchNorm saw one value per channel (batch of 1)", "Drop the last incomplete batch "
                         "(drop_last=True), use batch size >= 2, or switch to GroupNorm/LayerNorm"),
    "input_contains_nan": ("The input data holds NaN or Inf values (the library checked it before fitting)",
                           "Find the rows with non-finite features (np.isnan(X).any(axis=1)) and impute or drop "
                           "them; check the step that made them (a division by a zero std, a log of 0, a "
                           "failed parse)"),
    "anomaly_nan": ("Autograd anomaly detection named the op that produced NaN", "Fix the named op's inputs: "
                    "clamp before log/sqrt/div, add eps, compute it in fp32"),
    "anomaly_backward_error": ("Autograd anomaly detection caught an error in a backward op, most often a NaN or Inf "
                               "it produced", "Read the error printed after the forward traceback: `returned nan "
                               "values` names the op (clamp before log/sqrt/div, add eps, compute it in fp32); "
                               "`modified by an inplace operation` needs a .clone() before the in-place op"),
    "loss_scale_overflow": ("fp16 loss-scale overflows: gradients exceed fp16 range", "Use bf16 "
                            "autocast, or keep the GradScaler and lower the LR; check for a layer that "
                            "produces very large activations"),
    "duplicate_gpu": ("Two ranks are on the same GPU", "Bind each process to its own device before "
                      "init: torch.cuda.set_device(local_rank) (LOCAL_RANK from the launcher); remove a "
                      "device fixed in the script (cuda:0, CUDA_VISIBLE_DEVICES set per process) and "
                      "check nproc_per_node <= GPUs"),
    "ddp_ready_twice": ("DDP saw a parameter's gradient twice in one step (reentrant gradient checkpointing, "
                        "or a parameter shared or used outside forward)",
                        "Use non-reentrant checkpointing (torch.utils.checkpoint with use_reentrant=False, "
                        "gradient_checkpointing_kwargs={'use_reentrant': False}), or call "
                        "model._set_static_graph(); TORCH_DISTRIBUTED_DEBUG=DETAIL names the parameter"),
    "embedding_index_out_of_range": ("An id beyond the embedding table: a token or "
                                     "category id >= num_embeddings",
                                     "After adding tokens call "
                                     "model.resize_token_embeddings(len(tokenizer)); check that the largest "
                                     "input id is below the embedding size (vocab_size in the config "
                                     "matching the tokenizer, categorical ids built from the same data)"),
    "tf_gather_out_of_range": ("A TensorFlow gather read an index past its tensor: a token id >= the vocabulary, a "
                               "position >= max_length, or a label >= the classes (a class_weight or one-hot table)",
                               "The op on the next line names the table: for an embedding lookup make its input_dim "
                               "the largest id + 1 (vocab_size + 1 with a padding id 0, ids from the same "
                               "tokenizer); for position embeddings truncate the inputs to max_length; for a "
                               "class table check that the labels run from 0 to num_classes - 1"),
    "device_assert": ("A device-side assert: an index out of range, most often a class label outside "
                      "[0, number of classes) or a token id beyond the vocabulary",
                      "Rerun with CUDA_LAUNCH_BLOCKING=1 (or on the CPU) to see the failing op; check "
                      "labels.min() >= 0 and labels.max() < the model's output size (a class count "
                      "off by one, an ignore label of -1 or 255 without ignore_index, 1-based "
                      "labels), and token ids < vocab_size"),
    "target_size_mismatch": ("The loss compares predictions and targets of different shapes: they broadcast, "
                             "so every prediction is scored against every label",
                             "Make the shapes equal before the loss: squeeze the model's output "
                             "([N, 1] -> [N]) or unsqueeze the target; the model otherwise "
                             "learns only the labels' mean"),
    "input_ran_out": ("Keras stopped the epoch early: the dataset or generator yields fewer batches than "
                      "steps_per_epoch asks for", "Set steps_per_epoch = len(x_train) // batch_size (and "
                      "validation_steps the same way), or add .repeat() to the tf.data dataset; a generator must "
                      "loop forever"),
    "constant_input": ("A correlation was computed over a constant array: every prediction (or every target) in "
                       "the set scored was the same value, so the coefficient is undefined (NaN)",
                       "Print the predictions and targets the metric gets: a model that predicts one value for "
                       "every input (untrained, or collapsed), or a feature/gene/count with no variation in the "
                       "subset, makes it; drop constant columns before scoring, or score over more samples"),
    "numpy_invalid_value": ("NumPy computed a math function outside its domain: the array holds NaN or -inf "
                            "from here on", "Guard the input before the call (np.log(np.maximum(x, eps)), "
                            "np.sqrt(np.clip(x, 0, None))) and find where it comes from: a width or count of 0 "
                            "in the data (a box with x2 <= x1) is the usual source; np.seterr(all='raise') "
                            "stops at the first one"),
    "numpy_overflowed_operands": ("NumPy subtracted, added or multiplied values that were already inf or NaN "
                                  "(an overflow, a log of 0, a division by 0): the array holds NaN from here on",
                                  "Find where the values first become inf: np.seterr(all='raise') stops there; an "
                                  "unbounded sum (returns over an episode that never ends, a loss accumulated "
                                  "without a reset), an exp of a large value, or an LR that drove the weights out "
                                  "of range are the usual sources"),
    "numpy_overflow": ("NumPy's arithmetic overflowed: values left float range (inf from here on), so the weights, "
                       "gradients or sums they were had grown without bound",
                       "Find the first array that grows: print np.abs(x).max() of the weights, the gradients and the "
                       "inputs each step (np.seterr(over='raise') stops at the overflow); an LR too high, an unbounded "
                       "sum, unnormalised inputs or rewards are the usual sources: lower the LR, normalise, clip"),
    "fp16_params_unscale": ("GradScaler was given parameters kept in fp16: their gradients cannot be unscaled "
                            "safely", "Keep the model's parameters in fp32 under AMP (drop model.half(); autocast "
                            "runs the ops in fp16), or train in bf16 without a GradScaler"),
    "no_inf_checks": ("GradScaler found no gradient to step: no parameter of this optimizer received a gradient",
                      "Check that the optimizer's parameters have requires_grad=True and that the loss depends on "
                      "them (no .detach(), no torch.no_grad() around the forward); print [n for n, p in "
                      "model.named_parameters() if p.grad is None] after backward"),
    "numpy_overflow_in_data": ("NumPy overflowed inside the data pipeline: the samples hold values too large to "
                               "transform (a record read with the wrong dtype or number of fields gives 1e31s)",
                               "Check the raw records before any augmentation: assert np.isfinite(x).all() and print "
                               "np.abs(x).max() per field for the sample the warning fires on; read the files with "
                               "the dtype and field count they were written with, and drop or fix the records with "
                               "absurd values"),
    "tokenization_mismatch": ("The conversation's tokens and its label mask differ in length, so the trainer masked "
                              "the whole sample (every label ignored): the conversation template or the tokenizer "
                              "version does not fit the model, and what it masks is not trained on (a loss at 0 "
                              "where every sample is)",
                              "Use the conversation template made for this model's tokenizer (LLaVA's --version: "
                              "llava_llama_3 for Llama 3, v1 for Vicuna, plain for pretraining; FastChat's and "
                              "InternVL's template names the same way) with the tokenizer version the code was "
                              "written for (the `legacy` change moved a token); count the warnings per epoch: none "
                              "should remain"),
    "labels_not_found": ("The trainer found the images and not their labels or captions: it trains without them, "
                         "or does not start", "Check where it looks: the label or caption files must sit beside "
                         "the images (or in the labels folder the images' path maps to) under the same name and "
                         "the extension the trainer expects (kohya's caption_extension, .caption by default; "
                         "YOLO's labels/*.txt); list one image and the file the trainer would read for it"),
    "yolo_corrupt_label": ("Label files the trainer could not use: it dropped those images (coordinates outside "
                           "[0, 1], negative or duplicate labels)", "Fix the label files the warning names: YOLO "
                           "wants one `class x_center y_center width height` row per box, each coordinate divided "
                           "by the image's width or height (between 0 and 1), class ids from 0; convert absolute "
                           "pixel boxes and re-run the dataset scan (delete the .cache files)"),
    "bce_input_range": ("A binary cross-entropy got a prediction outside [0, 1]: the model's output went NaN (or "
                        "it gives logits to a loss that wants probabilities)", "Find where the output turns NaN "
                        "(torch.isfinite on the logits per step; lower the LR or clip gradients if they grow "
                        "first); give logits to BCEWithLogitsLoss instead of a sigmoid into BCELoss, which is also "
                        "the stable form under AMP"),
    "tf_no_gradients": ("TensorFlow found variables the loss does not reach: those layers are never trained",
                        "Make the named layers take part in the loss (an output the loss never reads, a layer "
                        "built but not called in call(), a tensor taken through numpy or tf.stop_gradient); "
                        "if they are unused on purpose (a pooler the head does not read), drop them from "
                        "trainable_variables"),
    "non_leaf_param": ("The optimizer was given tensors that are not leaves: weights moved or scaled after "
                       "requires_grad was set, so the ones it would update are not the ones the model uses",
                       "Create each weight on its device with its final scale, then mark it: torch.randn(..., "
                       "device=dev) * 0.01 followed by .requires_grad_(), or nn.Parameter(...); move the whole "
                       "module with model.to(device) before building the optimizer"),
    "training_step_none": ("Lightning skipped every optimizer step: training_step returned no loss",
                           "Return the loss from training_step (`return loss`, or a dict with a 'loss' key); "
                           "return None only for a batch you mean to skip"),
    "mlagents_not_training": ("ML-Agents is running the policy without training it (`Not Training.`)",
                              "Start mlagents-learn with --train (older releases run inference without it), or "
                              "check the behavior name in the trainer config matches the agent's"),
    "nan_observation": ("The environment hands the policy NaN observations", "Find the observation that is NaN "
                        "(a division by zero, an uninitialised sensor, a normalisation by a zero std) and guard "
                        "it in the environment; NaN inputs turn the network's outputs and losses NaN"),
    "ctc_not_enough_time": ("A label is longer than the input sequence CTC aligns it to: the loss cannot score it",
                            "Make the model's output sequence longer than the longest label plus a blank between "
                            "repeated characters (less downsampling, a wider input), or drop those samples; "
                            "ignore_longer_outputs_than_inputs=True only skips them"),
    "ctc_no_valid_path": ("CTC found no alignment for a label: it needs more time steps than the input has, and "
                          "that sample's loss is inf", "Drop or truncate samples whose label, plus a blank between "
                          "repeated characters, is longer than the model's output sequence (the image width after "
                          "downsampling, max_text_len); count them per epoch: a handful is harmless, one per batch "
                          "is a data bug"),
    "checkpoint_no_input_grad": ("Gradient checkpointing got inputs that do not require grad (frozen embeddings "
                                 "under LoRA/PEFT): with the reentrant checkpoint no weight inside the checkpointed "
                                 "blocks gets a gradient, and the backward found nothing to differentiate",
                                 "Call model.enable_input_require_grads() before training (PEFT's "
                                 "prepare_model_for_kbit_training does), or checkpoint without reentrancy "
                                 "(gradient_checkpointing_kwargs={'use_reentrant': False}); harmless alone where "
                                 "every layer inside the blocks is frozen on purpose"),
    "nonfinite_matching_cost": ("The Hungarian matcher got a cost matrix with NaN or inf in it: the predicted boxes "
                                "or class scores had gone non-finite",
                                "Find the step where the predictions first turn NaN (torch.isfinite on the boxes and "
                                "logits); a DETR-style model wants a low LR (AdamW 1e-4, backbone 1e-5), gradient "
                                "clipping (max_norm 0.1) and fp32 in the matcher; boxes of zero size in the "
                                "annotations make the GIoU cost NaN too"),
    "nonfinite_loss": ("The training loop reported a non-finite loss", "Find the first op that overflows "
                       "(set_detect_anomaly for a few steps), compute the loss in fp32, add eps"),
}


# A launcher's report that a rank exited (torchrun's `failed (exitcode: 1)`, its SIGTERMs to the others;
# Horovod's shutdown after a rank raised) says where, not why: beside the rank's own error naming another
# cause, it is that error's consequence.
LAUNCHER_REPORTS = ("rank_failure", "elastic_teardown", "horovod_shutdown")
# ...and the other ranks' watchdog, waiting at a collective for the rank that failed (not NCCL's own error, a cause)
WAITED_FOR = ("nccl_timeout", "horovod_stall")
# A RuntimeError of the model's own, about shapes, sizes, types or devices (`mat1 and mat2 shapes cannot be
# multiplied`), not one torch raises for a collective or a store that failed (`Stop_waiting response is expected`)
_MODEL_RUNTIME = re.compile(r"(?i)shapes? |sizes? |dimension|dtype|cannot be multiplied|must match|out of bounds")
_DISTRIBUTED_WORDS = re.compile(r"(?i)nccl|gloo|collective|process ?group|c10d|distributed|rendezvous|\bstore\b|"
                                r"socket|timed? ?out|watchdog|rank|waiting")
_CODE_ERROR = re.compile(r"(?:\[rank\d+\]:\s*)?(?:[A-Za-z_]\w*\.)*(?:TypeError|NameError|AttributeError|KeyError|"
                         r"IndexError|ValueError|ImportError|ModuleNotFoundError|AssertionError|FileNotFoundError|"
                         r"SyntaxError|ZeroDivisionError|UnboundLocalError|NotImplementedError|UnidentifiedImageError|"
                         r"UnicodeDecodeError|JSONDecodeError|PermissionError|EOFError)\b")
# Warnings the program went on after, read only beside a failure: NumPy's domain warning says where a NaN may
# come from, not that the run failed; the checkpoint's "no input requires grad" is harmless where every layer
# in the checkpointed blocks is frozen on purpose (a frozen ViT), the fault where a backward then fails on a loss
# that reached no trainable weight (LoRA under gradient checkpointing).
WARNED_ONLY = ("numpy_invalid_value", "checkpoint_no_input_grad")
# NumPy's arithmetic warnings are warnings too, not the failure that makes its domain warning one (a log2 of 0 and
# the subtract after it on one line of a statistic's code, an overflow and a log of its inf in a metric)
_ARITHMETIC = ("numpy_overflowed_operands", "numpy_overflow")
# Warnings a run goes on after that still name a fault: images dropped for their labels and NaN observations
# (high), layers the loss never reaches, labels CTC cannot align and a correlation over a constant set (medium:
# some are unused on purpose, a rare one is harmless, an untrained model's first evaluation predicts one value),
# NumPy's arithmetic on values already inf or NaN and images trained on without their captions (medium: a
# library's own subtract of two infinities, a class token used by design); a trainer that stops on one of them
# says so in its traceback, where the severity is the crash's
_SEVERITY = {"yolo_corrupt_label": "high", "numpy_overflow_in_data": "medium", "numpy_overflowed_operands": "medium",
             "numpy_overflow": "medium",
             "labels_not_found": "medium", "tokenization_mismatch": "medium",
             "tf_no_gradients": "medium", "ctc_no_valid_path": "medium",
             "nan_observation": "high", "constant_input": "medium", "input_ran_out": "medium",
             "spacy_misaligned_entities": "medium", "unknown_piece_output": "medium",
             "anomaly_backward_error": "medium", "numpy_var_dof": "medium", "invalid_annotations_dropped": "medium",
             "horovod_stall": "medium"}
# Warnings of a moment that a run learning past them leaves behind: the loss reported LEARNED_AFTER times after
# the warning's line, and lower at the last of them than at the first (a sample skipped, memory tight, a pod
# evicted and rescheduled, a few annotations dropped); never one inside a traceback, which stopped the program
_PASSING = ("constant_input", "spacy_misaligned_entities", "numpy_overflow_in_data", "numpy_overflowed_operands",
            "numpy_overflow",
            "labels_not_found", "corrupt_sample", "tokenization_mismatch",
            "allocator_cache_flushes", "pod_evicted", "invalid_annotations_dropped", "horovod_stall",
            # XLA's estimate of a step that does not fit: where the run then trains, the estimate was not the limit
            "xla_remat_short")
LEARNED_AFTER = 3
# An assert that names the check a device-side assert failed: the generic device-assert reading (a label out
# of range) gives way to it
_NAMED_ASSERTS = ("bce_input_range",)


def stopped_from_outside(run: Run) -> Event | None:
    """The launcher's own line saying it was sent SIGTERM/SIGINT/SIGHUP, where no rank's failure is reported
    beside it; else None."""
    if any(e.signature == "rank_failure" for e in run.events):
        return None
    return next((e for e in run.events if e.signature == "launcher_signalled"), None)


_RUNTIME = re.compile(r"(?:\[rank\d+\]:\s*)?RuntimeError: (.*)")


def _programming_error(text: str) -> bool:
    """An exception line that is the rank's own code's: a Python error of the code or its data (_CODE_ERROR), or a
    RuntimeError about shapes, sizes or types that names nothing distributed."""
    if _CODE_ERROR.match(text):
        return True
    m = _RUNTIME.match(text)
    return m is not None and _MODEL_RUNTIME.search(m.group(1)) is not None and not _DISTRIBUTED_WORDS.search(m.group(1))


def _echo(e: Event) -> bool:
    """A report that a rank stopped, the launcher's or the other ranks' waiting for it: beside a rank's own error,
    that error's consequence."""
    return e.signature in LAUNCHER_REPORTS or (e.signature in WAITED_FOR and (
        e.signature != "nccl_timeout" or COLLECTIVE_WAITED.search(e.text) is not None))


def analyze(run: Run) -> list[Finding]:
    out: list[Finding] = []
    # a rank's own error: a signature's, or a programming error ending a rank's traceback (`[rank0]: TypeError:
    # save_model() got an unexpected keyword argument`): the launcher's report after it is its echo. A RuntimeError
    # is not one (torch raises it for a collective that failed, the distributed failure itself), nor a traceback
    # cut before its exception line.
    own_error = any((e.code not in (None, "distributed_failure") and not _says_nothing(e)
                     and e.signature not in _NOT_OWN_ERROR)
                    or (e.signature == "traceback" and e.code is None and _programming_error(e.text))
                    for e in run.events)
    # torchrun, sent a signal from outside, tears its ranks down (its SIGTERMs are the signal's); a rank's own
    # failure report beside it (`ChildFailedError`, `exitcode: 1`: another node failed first) still stands
    signalled = stopped_from_outside(run)
    anomaly_explained = any(e.signature != "anomaly_backward_error"
                            and (e.code or e.signature in error_readings.UNKNOWN) for e in run.events)
    failed = any(e.signature in WARNED_ONLY for e in run.events) and _failed_beside(run)
    backward_failed = _backward_failed(run)
    named_assert = any(e.signature in _NAMED_ASSERTS for e in run.events)
    for e in run.events:
        if e.code is None or (own_error and _echo(e)):
            continue
        if signalled and e.signature == "elastic_teardown":
            continue            # the outside signal's consequence
        if anomaly_explained and e.signature == "anomaly_backward_error":
            continue            # the error anomaly mode caught is in the paste itself: it speaks for itself
        if named_assert and e.signature == "device_assert":
            continue
        warned = e.signature in WARNED_ONLY
        boxed = _box_target(run, e) if e.signature == "numpy_invalid_value" else None
        logged = _unguarded_log(run, e) if e.signature == "numpy_invalid_value" and boxed is None else None
        # the checkpoint's warning beside a loss that never moves: the blocks it names got no gradient
        unmoved = e.signature == "checkpoint_no_input_grad" and _loss_never_moved(run)
        if warned and not failed and not unmoved and boxed is None and logged is None:
            continue            # NumPy's domain warning with nothing gone wrong beside it: expected values
        if e.signature == "checkpoint_no_input_grad" and not backward_failed and not unmoved:
            continue            # beside an OOM in the forward pass, a frozen block's warning says nothing
        if e.signature in _PASSING and not e.context and _learned_after(run, e):
            continue            # a moment the run learned on past (an untrained model's first evaluation, ...)
        if e.signature == "labels_not_found" and _class_token_set(run):
            continue            # kohya's DreamBooth images: trained on their class token, by design
        if e.signature == "tokenization_mismatch" and _trained_beside(run):
            continue            # a few odd samples masked all through a run whose loss falls: the rest train
        if e.signature in _MEMORY_PRESSURE:
            out.append(_memory_pressure(e))
            continue
        if e.code == "out_of_memory":
            other = _allocation_reason(run, e)
            if other is not None:
                out.append(_alloc_failed_otherwise(e, other))
                continue
            went_on = _learned_after(run, e) if not e.context and _RETRIED_OOM.search(e.text) else None
            out.append(_oom(run, e) if went_on is None else _oom_gone_past(e, went_on))
            continue
        title, fix = _FIXES.get(e.signature, ("", ""))
        ev = [_ev(e)]
        uf = _user_frame(e)
        if uf:
            ev.append(uf)
        patch = None
        if "original_error" in e.fields:
            ev.insert(0, Evidence(e.fields["original_error"], e.artifact, "line "
                                                                          f"{e.fields['original_line']}"))
            title = f"{title}: {clip(e.fields['original_error'], 120)}"
        if e.signature == "batchnorm_single":
            hit = run.config_value("drop_last", "dataloader_drop_last")
            if hit and hit.value is False:
                ev.append(hit.evidence(f"{hit.key} = false: the last, smaller batch is kept"))
                patch = set_config_value(hit.config, hit.key, "true")
        if e.code == "zero_variance":
            for code in run.code:
                lines = code.calls.get("var", []) + code.calls.get("std", [])
                for ln in lines[:2]:
                    ev.append(Evidence(code.text.splitlines()[ln - 1].strip(), code.artifact, f"line {ln}"))
        if _says_nothing(e):
            continue
        if e.signature == "nccl_timeout" and not COLLECTIVE_WAITED.search(e.text):
            title, fix = _NCCL_OWN_ERROR
        if e.signature == "rank_failure" and _NEVER_FORMED.search(e.text):
            title, fix = _RENDEZVOUS
        if e.signature == "dataloader_killed" and "timed out" in e.text:
            title, fix = _LOADER_TIMED_OUT
        if e.signature == "store_barrier" and "world_size" in e.fields:
            title = (f"{title}: {e.fields['worker_count']} workers registered for world_size "
                     f"{e.fields['world_size']}")
        conf = (_CONFIDENCE.get(e.signature) or (NAN_LOSS_MESSAGE if _loss_nan_message(e) else None)
                or _CODE_CONFIDENCE.get(e.code, 0.7))
        if boxed is not None:
            conf = BOX_TARGET_DATA - 0.15     # the log of a box's size: the box first, the guard second
        elif logged is not None:
            ev.append(logged)
            conf = max(conf, UNGUARDED_LOG)
            fix = ("Keep the log's argument above 0 where it is taken: np.log(np.clip(p, 1e-7, 1)) (for a "
                   "cross-entropy, np.clip(A, eps, 1 - eps) before both logs) or np.log(x + 1e-8)")
        critical = e.context or e.code in ("distributed_failure", "dataloader_failure", "data_pipeline_bug")
        sev = (None if e.context else _SEVERITY.get(e.signature)) \
            or ("critical" if critical else "medium" if warned else "high")
        count = f" ({e.count} times)" if e.count > 1 else ""
        issue = f"{title}{count}" if title else f"{clip(e.text, 160)}{count}"
        quick_fix = fix.split(";")[0].split(":")[0][:80]          # the fix's first clause
        out.append(Finding(code=e.code, issue=issue, severity=sev, confidence=conf, evidence=ev, fix=fix,
                           patch=patch, analyzer=NAME, quick_fix=quick_fix))
        if e.signature in _LR_READING:
            out.append(_lr_reading(e, small_lr(run)))
        if boxed is not None:
            out.append(_box_reading(e, boxed))
        elif _loss_nan_message(e) or e.signature == "numpy_invalid_value":
            out.append(_data_reading(e, "medium" if warned else "high"))
    frozen = _nothing_trainable(run)
    if frozen is not None:
        out.append(frozen)
    dropped = _dropped_nonfinite(run)
    if dropped is not None:
        out.append(dropped)
    overflowed = _overflowed_update(run)
    if overflowed is not None:
        out.append(overflowed)
    # the launcher's report of a rank's own error is no cause, and a warning no error that stopped the run: a
    # traceback beside one is still read
    told = [e for e in run.events if not (own_error and _echo(e)) and e.signature not in _ARITHMETIC + _PASSING]
    return out + error_readings.analyze_events(told, train_loss(run)) + error_readings.analyze_words(run)


_TRAINABLE = re.compile(r"(?<![-\w])(?i:trainable params):\s*(\d[\d,]*)")    # the signature's, with the count


def _nothing_trainable(run: Run) -> Finding | None:
    """A model summary that counts 0 trainable parameters (Keras `Trainable params: 0`, PEFT's
    `trainable params: 0 ||`), where no other summary in the paste counts more: nothing can be
    updated. A frozen backbone's summary beside the whole model's (which counts its head) is a
    freeze on purpose."""
    counts = [(e, int(m.group(1).replace(",", ""))) for e in run.events if e.signature == "trainable_params"
              and (m := _TRAINABLE.search(e.text))]
    if not counts or any(n for _, n in counts):
        return None
    if any(e.signature == "benign" and e.fields.get("benign") == "inference_only_params" for e in run.events):
        return None         # LLaMA-Factory's own word that the model is loaded for inference or export
    e = counts[0][0]
    return Finding(code="no_parameter_updates", issue="The model has no trainable parameters: every layer is "
                   "frozen, so training cannot change it", severity="high", confidence=0.85, evidence=[_ev(e)],
                   fix="Unfreeze what should learn (layer.trainable = True before compile() in Keras; "
                       "requires_grad=True, or a PEFT config whose target_modules name modules the model has) "
                       "and check the summary counts the head's parameters as trainable",
                   analyzer=NAME, quick_fix="Unfreeze the layers that should learn")


def _dropped_nonfinite(run: Run) -> Finding | None:
    """tensorboardX's `NaN or Inf found in input tensor` with no loss printed beside it: harmless for a metric over
    an empty batch (benign.toml), yet the value it dropped may be the loss. A low note below the healthy verdict
    says which number would tell; a finite loss in the paste tells already."""
    e = next((e for e in run.events if e.signature == "benign"
              and e.fields.get("benign") == "tensorboard_nonfinite_scalar"), None)
    if e is None or train_loss(run) is not None:
        return None
    return Finding(code="numerical_instability", issue="A value sent to TensorBoard was NaN or Inf and was dropped: "
                   "harmless for a metric over an empty batch, the fault if it was the loss", severity="low",
                   confidence=DROPPED_NONFINITE, evidence=[_ev(e)],
                   fix="Print the loss beside the warning (or assert torch.isfinite(loss) each step): a finite loss "
                       "leaves the warning harmless; a NaN loss is the fault to chase",
                   analyzer=NAME, quick_fix="Print the loss beside the warning")


def _learned_after(run: Run, e: Event) -> Evidence | None:
    """The loss reported after event `e`'s line, where the run learned on past it: LEARNED_AFTER reports or
    more, finite, lower at the last than at the first."""
    loss = next((s for n in ("train_loss", "val_loss") if (s := run.metrics.get(n)) is not None and len(s)), None)
    after = reported_after(loss, e)
    if loss is None or len(after) < LEARNED_AFTER or not np.isfinite(after).all() or after[-1] >= after[0]:
        return None
    return Evidence(f"{len(after)} loss reports after it, from {fmt(float(after[0]))} to {fmt(float(after[-1]))}: "
                    "the run learned on", loss.artifact, loss.span_locator(len(loss) - len(after), len(loss) - 1))


def _trained_beside(run: Run) -> bool:
    """Whether the training loss, wherever its reports sit beside a warning repeated all through the run, was
    reported LEARNED_AFTER times or more, finite, above 0 and lower at the last than at the first."""
    loss = run.metrics.get("train_loss")
    if loss is None or len(loss) < LEARNED_AFTER or not np.isfinite(loss.values).all():
        return False
    return bool(loss.values[-1] > 0 and loss.values[-1] < loss.values[0])


# kohya's dataset summary naming the token a caption-less image is trained on (`class_tokens: sotsuaru dog`)
_CLASS_TOKENS = re.compile(r"^\s{0,8}class_tokens: (?!None\b)\S", re.M)


def _class_token_set(run: Run) -> bool:
    return any(_CLASS_TOKENS.search(text) for _, text in pasted_texts(run, ("log",), 1 << 20))


def _failed_beside(run: Run) -> bool:
    """Whether the paste shows a failure other than a warning: an error, a crash, or a metric gone
    non-finite. A NumPy domain warning alone is often expected (a log of 0 in a plot or a statistic)."""
    if any(e.signature not in WARNED_ONLY and e.signature not in _ARITHMETIC
           and (e.code or e.signature in ("traceback", "error", "native_crash")) for e in run.events):
        return True
    crash = next(s.pattern for s in signatures() if s.name == "native_crash")
    if any(e.signature in WARNED_ONLY and crash.search(e.text) for e in run.events):
        return True             # the process died on the warning's own line (`... Command terminated by signal 11`)
    return any(s is not None and len(s) and not np.isfinite(s.values).all()
               for s in (run.metrics.get(n) for n in run.metrics.names()))


NEVER_MOVED = 0.01        # a loss that moved under 1% over its reports (3 or more) never moved


def _loss_never_moved(run: Run) -> bool:
    s = train_loss(run)
    v = s.values[np.isfinite(s.values)] if s is not None else np.empty(0)
    return len(v) >= 3 and v[0] > 0 and float(np.ptp(v)) < NEVER_MOVED * float(v[0])


def _backward_failed(run: Run) -> bool:
    """A failure in the backward pass: autograd's "does not require grad" error, or a traceback whose last
    frames are the backward call."""
    for e in run.events:
        if "does not require grad" in e.text or "does not have a grad_fn" in e.text:
            return True
        frames = e.fields.get("frames") or []
        if e.signature == "traceback" and any(f.get("func") == "backward" for f in frames[-2:]):
            return True
    return False


def _says_nothing(e: Event) -> bool:
    """An event its signature matched that names no fault: a target-size warning whose shapes pair no
    element wrongly ([1, 1] against [1] holds one element either way), a store barrier every rank
    arrived at (it is just being passed). Neither is reported, nor is either a rank's own error that
    would make a launcher's report of the failure its consequence."""
    if e.signature == "target_size_mismatch":
        return not _broadcasts(e.text)
    return (e.signature == "store_barrier" and "world_size" in e.fields
            and e.fields["world_size"] == e.fields["worker_count"])


def _broadcasts(text: str) -> bool:
    """Whether the two torch.Size shapes of a target-size warning pair elements wrongly: the
    broadcast shape holds more elements than one of them, at the batch printed or, for a batch of
    one, at a larger one (an unreadable pair counts as wrong)."""
    from math import prod

    shapes = [[int(x) for x in re.findall(r"\d+", m)] for m in re.findall(r"Size\(\[([\d, ]*)\]\)", text)]
    if len(shapes) != 2:
        return True
    a, b = shapes

    def wrong(a: list[int], b: list[int]) -> bool:
        n = max(len(a), len(b))
        a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        return not (prod(max(x, y) for x, y in zip(a, b)) == prod(a) == prod(b))
    # a batch of one hides it ([1, 256, 256] against [1, 1, 256, 256]): at any larger batch the same shapes
    # pair every mask with every prediction; a one-element pair is a scalar loss at any batch
    batch_of_one = bool(a) and bool(b) and a[0] == b[0] == 1 and prod(a) > 1
    return wrong(a, b) or batch_of_one and wrong([2] + a[1:], [2] + b[1:])


# Signatures whose confidence differs from their code's: a device-side assert is most often, not
# always, a label out of range; a target-size warning is a bug only where the shapes broadcast.
_CONFIDENCE = {"device_assert": 0.75, "embedding_index_out_of_range": 0.7, "target_size_mismatch": 0.7,
               # labels of another width than the head: the labels' encoding, or a head built for another task
               "label_shape_mismatch": 0.8,
               # an optimizer over nothing: the model's parameters filtered out or not registered
               "empty_param_list": 0.85,
               # ranks calling different collectives: more telling than the `ncclInvalidUsage` it raises
               "collective_mismatch": 0.95,
               # NumPy's statistic over no degrees of freedom, and detectron2's dropped annotations: warnings a run
               # may not care about (a report's std over one run, a few degenerate polygons)
               "numpy_var_dof": 0.5, "invalid_annotations_dropped": 0.55, "horovod_stall": 0.5,
               # no labels in the batch: a column named otherwise, or one the Trainer dropped
               "no_labels_in_batch": 0.8,
               "duplicate_gpu": 0.92,
               # a launcher's report that a rank exited says where, not why: the rank's own error is the cause
               "rank_failure": 0.7, "elastic_teardown": 0.6,
               # Horovod's shutdown: a rank that raised (its own error elsewhere) or one that finished early
               "horovod_shutdown": 0.7,
               # a closed peer is most often a rank that died first (its own error is the cause), less
               # often the network itself
               "nccl_network": 0.7,
               # NumPy's domain warning makes a NaN; in metric code it may go nowhere
               "numpy_invalid_value": 0.5,
               # ...and its overflow in a data pipeline's file: the samples; a warning the run may survive
               "numpy_overflow_in_data": 0.55,
               # ...and from a sum or a difference: values gone inf or NaN before it
               "numpy_overflowed_operands": 0.5,
               # ...and its overflow in arithmetic: values out of float range, which the LR or the data may have made
               "numpy_overflow": 0.45,
               # an index the data made past the tensor a TensorFlow gather reads (which table, its next line says)
               "tf_gather_out_of_range": 0.6,
               # dropped images are wrong labels; a variable without gradient may be unused on purpose; a BCE
               # input outside [0, 1] is NaN from an overflow or from weights an LR too high drove there
               "yolo_corrupt_label": 0.75, "tf_no_gradients": 0.55, "bce_input_range": 0.6,
               # images trained on without their labels or captions; a few missing may be on purpose
               "labels_not_found": 0.6,
               # samples masked whole for a template that does not fit the tokenizer (a rare one may be an outlier)
               "tokenization_mismatch": 0.7,
               # a label CTC cannot align: rare ones are harmless
               "ctc_no_valid_path": 0.5,
               # a NaN observation is the data's (the environment's); it may be masked before it reaches a loss
               "nan_observation": 0.7,
               # a correlation over a constant set: the thread asking about it alone settles it, a run that
               # learns after it does not
               "constant_input": 0.6,
               # an epoch cut short: the batches asked for are more than the data holds
               "input_ran_out": 0.65,
               # fastText's NaN and DyNet's Inf gradient: the LR, but a NaN in the data would show the same
               "fasttext_nan": 0.6, "dynet_bad_gradient": 0.55,
               # entities dropped from training: a fault when many are, a nuisance when one is
               "spacy_misaligned_entities": 0.6,
               # raised, it stops training on the first label too long for its input: the data, nearly always
               "ctc_not_enough_time": 0.8,
               # <unk> in what the model says: the tokenizer and the text disagree, or the input was out of domain
               "unknown_piece_output": 0.55,
               # anomaly mode caught an error in a backward op: a NaN most often, an in-place edit sometimes
               "anomaly_backward_error": 0.55}
# The confidence of a crash by its code, where its signature has none of its own (otherwise 0.7).
_CODE_CONFIDENCE = {"distributed_failure": 0.9, "dataloader_failure": 0.9, "zero_variance": 0.9,
                    "numerical_instability": 0.75, "data_pipeline_bug": 0.9}
# A NaN or an overflow the loop reports has a second reading: updates too large for the weights.
_LR_READING = {"nonfinite_loss": 0.5, "loss_scale_overflow": 0.45, "bce_input_range": 0.45}
# A trainer's "loss became NaN" (not a gradient's, not the loss scaler's) names no mechanism: the
# overflow reading holds the higher confidence, the LR's the higher severity, so the LR's leads where the
# message stands alone and the overflow's inside a traceback (the LR's first, too, where the trainer says
# the training diverged); bad data (a NaN input, a broken target) is listed after them. Alone, the LR
# settled five such messages of the tuning sets (tests/wild's tune half, bench/probes), the overflow two.
NAN_LOSS_MESSAGE, LR_OVER_NAN_LOSS, LR_DIVERGED, DATA_OVER_NAN_LOSS = 0.65, 0.6, 0.7, 0.45
LR_SMALL = 0.3            # the LR reading where the run's LR is at most common.SMALL_LR
DROPPED_NONFINITE = 0.3   # a value tensorboardX dropped as NaN/Inf, with no loss to say whether it was the loss


def _loss_nan_message(e: Event) -> bool:
    low = e.text.lower()
    return e.signature == "nonfinite_loss" and "grad" not in low and (
        "loss" in low or "diverg" in low or "check_nan" in low)    # RecBole's NaN check on the loss, as a last frame


# a box regression target's size, the log NumPy warned about: py-faster-rcnn's `bbox_transform.py`
# (`targets_dw = np.log(gt_widths / ex_widths)`) and its forks' names
_BOX_TARGET = re.compile(r"\b(?:gt_(?:widths?|heights?|boxes)|ex_(?:widths?|heights?)|targets_d[xywh]|bbox_transform"
                         r"|box(?:es)?_(?:widths?|heights?|w|h))\b")
BOX_TARGET_DATA = 0.6


def _source_line(run: Run, e: Event, pattern: re.Pattern) -> Evidence | None:
    """The source line Python prints under a warning (the next line, indented), where `pattern` finds it."""
    for a, text in pasted_texts(run, ("log", "traceback"), 1 << 20, only=e.artifact):
        lines = text.split("\n")      # as the events count them
        raw = lines[e.line][:400] if e.line < len(lines) else ""
        src = undress(raw)          # under a logger's stamp (`2024-03-01 10:22:41,424 - INFO -     step_S += ...`)
        if (raw[:1].isspace() or src != raw) and pattern.search(src):
            return Evidence(src.strip(), a.path, f"line {e.line + 1}")
    return None


# NumPy's log of a bare variable or of `1 - p` with nothing that keeps it above 0 (no `+ eps`, no clip, no
# maximum): a hand-written cross-entropy's `np.log(A)`, DSRG's `unary = -np.log(feat)`. Beside NumPy's warning that
# a log divided by zero (or met a negative), that line is where the -inf or NaN came from, and the loss built from
# it is -inf or NaN. Only NumPy's own log raises NumPy's warning; a constant's log (`np.log(n_classes)`) and a log
# under `np.where` (the safe entropy idiom computes both branches, and warns, but keeps the right one) are not it.
_UNGUARDED_LOG = re.compile(r"\b(?:np|numpy)\.log\(\s*(?:1\s*-\s*)?(?P<arg>[A-Za-z_][\w.]*)(?:\[[^\]\n]{0,40}\])?\s*\)")
_CONSTANT_ARG = re.compile(r"(?:n|num|number)_\w+|\w*(?:classes|count|size|len)|[A-Z][A-Z0-9_]{2,}")
_LOG_WARNING = re.compile(r"encountered in log(?!\w)")
# a cost or a loss assigned in pasted code, the one log line there the warning is read against
_LOSS_ASSIGN = re.compile(r"^\s*(?:self\.)?[A-Za-z_]\w{0,40}\s*=[^=]")
_LOSS_WORDS = re.compile(r"loss|cost|entropy|likelihood|nll|xent", re.I)
UNGUARDED_LOG = 0.6
LINE_READ = 400                 # characters of a pasted line read for a log call


def _log_call(text: str) -> bool:
    """Whether `text` takes NumPy's log of a variable, unguarded, outside an np.where."""
    if "where" in text:
        return False
    return any(not _CONSTANT_ARG.fullmatch(m.group("arg").rsplit(".", 1)[-1]) for m in _UNGUARDED_LOG.finditer(text))


def _unguarded_log(run: Run, e: Event) -> Evidence | None:
    """Where NumPy's warning says its log divided by zero or went outside its domain: the line that takes that
    log unguarded, the source line printed under the warning (a blank line may sit between, as pasted), or, where
    no source line is printed, a cost or loss assigned in pasted code; else None."""
    if not _LOG_WARNING.search(e.text):
        return None
    why = ": a log of a value nothing keeps above 0"
    for a, text in pasted_texts(run, ("log", "traceback"), 1 << 20, only=e.artifact):
        lines = text.split("\n")
        for i in range(e.line, min(e.line + 2, len(lines))):
            src = undress(lines[i][:LINE_READ])
            if src.strip():
                if lines[i][:1].isspace() or src != lines[i]:        # the warning's own source line
                    return Evidence(f"{src.strip()}{why}", a.path, f"line {i + 1}") if _log_call(src) else None
                break
    for code in run.code:
        for i, full in enumerate(code.text.splitlines()[:5000]):
            line = full[:LINE_READ]
            m = _LOSS_ASSIGN.match(line)
            if m and _LOSS_WORDS.search(line[:m.end()]) and _log_call(line):
                return Evidence(f"{line.strip()}{why}", code.artifact, f"line {i + 1}")
    return None


def _box_target(run: Run, e: Event) -> Evidence | None:
    """The line NumPy's domain warning names (its own text, or the source line printed under it) when
    that line takes the log of a box's width or height: a box of zero or negative size in the
    annotations makes the target NaN, a fault whatever else the paste shows."""
    return _source_line(run, e, _BOX_TARGET) or (_ev(e) if _BOX_TARGET.search(e.text) else None)


# Theano raises `CudaNdarray_ZEROS: allocation failed` for any failed cudaMalloc; the line before it says why
_THEANO_ALLOC = re.compile(r"CudaNdarray_[A-Za-z_]{1,40}: allocation failed")
_ALLOC_FAILED_OTHERWISE = re.compile(r"Error allocating \d+ bytes of device memory \((?!out of memory)[^)\n]{1,200}\)")
OTHER_ALLOC_FAILURE = 0.3


def _allocation_reason(run: Run, e: Event) -> str | None:
    """Where `e` is Theano's `allocation failed`, the cudaMalloc line before it that names a reason other than
    memory (a kernel timed out, a launch failed); else None."""
    if not _THEANO_ALLOC.search(e.text):
        return None
    return next((m.group(0) for _, text in pasted_texts(run, ("log", "traceback"), 1 << 20)
                 if (m := _ALLOC_FAILED_OTHERWISE.search(text))), None)


def _alloc_failed_otherwise(e: Event, reason: str) -> Finding:
    return Finding(code="out_of_memory", severity="medium", confidence=OTHER_ALLOC_FAILURE,
                   issue="A GPU allocation failed, for a reason its own line names other than memory: "
                         + clip(reason, 120),
                   evidence=[_ev(e)], analyzer=NAME, quick_fix="Read the allocation's reason",
                   fix="A launch that timed out is the display watchdog killing a long kernel on a GPU that drives a "
                       "screen (use another GPU or shorter kernels); an unspecified launch failure is a kernel that "
                       "crashed: rerun with CUDA_LAUNCH_BLOCKING=1")


# NumPy's overflow warning on a hand-written update that scales by the learning rate (`step_S += lrS * e_ijk *
# ...`, `W -= alpha * dW`, `theta = theta - (alpha / m) * ...`, `v = mu * v - learning_rate * dx`): the updates
# outgrew float range, so the weights did too. Not an exp's overflow (a sigmoid's `exp(-z)` overflows to a correct
# 0 on a far-out sample while the weights stay finite), and not where the loss went on falling after it.
_NUMPY_OVERFLOW = re.compile(r"RuntimeWarning: overflow encountered in (?!exp|expm1|exp2|cosh|sinh)\w+")
_LR_UPDATE = re.compile(r"(?:[-+]=\s*|=\s*[\w.\[\]:, *]+?\s*[-+]\s*)\(?\s*(?:self\.)?"
                        r"(?:lr\w*|learning_rate|alpha|eta|step_size)\b\s*[*/]")
# an update that adds the gradient climbs it: at any LR the weights grow, so the sign is the suspect
_ASCENT = re.compile(r"\+=.*(?:\b(?:grads?|gradients?|d[Wwbx]\w*)\b|-\s*y\w*\s*\))")   # a gradient, or pred - y
OVERFLOWED_UPDATE, OVERFLOWED_ASCENT = 0.65, 0.35


def _overflowed_update(run: Run) -> Finding | None:
    """NumPy's overflow warning whose source line is a weight update scaled by the LR: lr_too_high."""
    for e in run.events:
        if e.signature not in ("warning", "numpy_overflow") or not _NUMPY_OVERFLOW.search(e.text) \
                or _learned_after(run, e):
            continue
        src = _source_line(run, e, _LR_UPDATE)
        if src is None:
            continue
        ascent = _ASCENT.search(src.text) is not None
        return Finding(code="lr_too_high",
                       issue="An update scaled by the learning rate overflowed: the steps outgrew the weights until "
                             "they left float range" + ("; it adds the gradient, so check its sign first (an "
                                                        "ascent grows at any LR)" if ascent else ""),
                       severity="high", confidence=OVERFLOWED_ASCENT if ascent else OVERFLOWED_UPDATE,
                       evidence=[_ev(e), src],
                       fix=("Make the update subtract the gradient (w -= lr * grad); if it still overflows, lower "
                            if ascent else "Lower ")
                       + "the learning rate 10x (or normalise the gradient by the number of samples it sums over) and "
                         "print the loss each epoch: it should fall, not grow",
                       analyzer=NAME, quick_fix="Check the update's sign" if ascent else "Lower the LR 10x")
    return None


def _box_reading(e: Event, line: Evidence) -> Finding:
    return Finding(code="data_pipeline_bug",
                   issue="The log of a box's width or height was invalid: a box of zero or negative size in the "
                         "annotations makes its regression target NaN",
                   severity="high", confidence=BOX_TARGET_DATA,
                   evidence=[_ev(e)] + ([line] if line.locator != _ev(e).locator else []),
                   fix="Find the boxes with x2 <= x1 or y2 <= y1 in the annotations (a 1-based coordinate made 0-based "
                       "and wrapped, a flipped image's boxes, points instead of boxes) and drop or fix them before "
                       "training; assert (gt[:, 2:] > gt[:, :2]).all() in the loader",
                   analyzer=NAME, quick_fix="Drop the boxes of zero or negative size")


def _data_reading(e: Event, severity: str = "high") -> Finding:
    """The data reading of a trainer's NaN loss (or a NumPy domain warning): a non-finite input or a
    target the loss cannot score makes the loss NaN at whatever LR."""
    return Finding(code="data_pipeline_bug", issue="A NaN or Inf in the inputs, or a "
                                                   "target the loss cannot score: "
                   + clip(e.text, 120), severity=severity, confidence=DATA_OVER_NAN_LOSS,
                   evidence=[_ev(e, f"{e.text.strip()} "
                           "(a NaN input or a broken target, such as an empty box, ends this way too)")],
                   fix="Assert torch.isfinite on each batch's inputs and targets, and drop samples with "
                       "empty or degenerate boxes or out-of-range labels",
                   analyzer=NAME, quick_fix="Assert the inputs are finite",
                   settle=NAN_DATA_SETTLE)


def _lr_reading(e: Event, small: Evidence | None = None) -> Finding:
    """The LR reading of a reported NaN or overflow: close behind the numerical reading where the
    trainer says the loss (not a gradient) became NaN, ahead of it where it says the training
    diverged, and well below it for a NaN gradient or a loss-scale overflow, or where the run's LR
    (`small`) is too small to drive the weights to overflow."""
    loss_msg = _loss_nan_message(e)
    if loss_msg:
        conf = LR_DIVERGED if "diverg" in e.text.lower() else LR_OVER_NAN_LOSS
    else:
        conf = _LR_READING[e.signature]
    ev = [_ev(e, f"{e.text.strip()} (a learning rate too high ends this way as often as an overflow does)")]
    if small is not None:
        conf = min(conf, LR_SMALL)
        ev.append(small)
    return Finding(code="lr_too_high",
                   issue="Updates too large for the weights: " + clip(e.text, 120),
                   severity="critical" if loss_msg and small is None else "high",
                   confidence=conf,
                   evidence=ev,
                   fix="Lower the learning rate 10x (or lengthen the warm-up) and clip gradients (max_norm "
                       "1.0); if the NaN stops, raise it back gradually",
                   expected_impact="the loss stays finite",
                   analyzer=NAME,
                   quick_fix="Lower the LR 10x")
