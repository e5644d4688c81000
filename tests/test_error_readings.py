"""Always a differential diagnosis: an error no signature knows still gets ranked plausible causes
from what it shows (its message words, the library frames), with low confidences and what would
settle them. Each error below is a real one pasted in a public thread (the source beside it)."""
from __future__ import annotations

import pytest

from analysis.diagnose import diagnose
from analysis.ingest.events import match_signature

MTPSL = """Traceback (most recent call last):
  File "/share/castor/home/leh/projects/MTPSL/cityscapes_mtl_xtc.py", line 191, in <module>
    con_loss = mapfns(train_pred_ind, train_target_ind, feat_aug[ind_].unsqueeze(0), copy.deepcopy(w), ssl_type=opt.ssl_type)
 File "/share/castor/home/leh/projects/MTPSL/model/mapfns.py", line 167, in forward
    mapout_source = self.mapfns(source_pred, input_task=source_task)
File "/share/castor/home/leh/projects/MTPSL/model/mapfns.py", line 90, in forward
    g_encoder[i][0] = self.encoder_block[i](x)
File "/share/castor/home/leh/projects/MTPSL/model/mapfns.py", line 36, in forward
    gamma = torch.mm(A_taskpair, self.gamma.t())
RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 6x64)
"""

YOLO_LABELS = """Traceback (most recent call last):
  File "train.py", line 432, in <module>
    train()  # train normally
  File "train.py", line 195, in train
    cache_images=False if opt.prebias else opt.cache_images)
  File "/home/enrique/Documents/YoloPyTorch/yolov3/utils/datasets.py", line 335, in __init__
    assert (l[:, 1:] <= 1).all(), 'non-normalized or out of bounds coordinate labels: %s' % file
AssertionError: non-normalized or out of bounds coordinate labels:
"""

# (pasted text, where it was posted, the cause expected first, every cause expected in the top 3)
DETR_ASSERT = """Traceback (most recent call last):
  File "main.py", line 248, in <module>
    main(args)
  File "/detr/models/matcher.py", line 74, in forward
    cost_giou = -generalized_box_iou(box_cxcywh_to_xyxy(out_bbox), box_cxcywh_to_xyxy(tgt_bbox))
  File "/detr/util/box_ops.py", line 51, in generalized_box_iou
    assert (boxes?[:, 2:] >= boxes?[:, :2]).all()
AssertionError
"""

REAL = [
    # the message names the labels: the data first, though the dataset's frame also suggests the loader (a
    # suggested loader failure is no known crash that outranks it)
    (YOLO_LABELS, "tests/wild yolov3-non-normalized-labels-assert-569", "data_pipeline_bug", {"dataloader_failure"}),
    # TensorFlow finds no path from the loss to any variable: the loss was computed outside the tape
    ("ValueError: No gradients provided for any variable: ['dd:0'].\n",
     "tests/wild tf-no-gradients-loss-outside-tape-42167", "no_parameter_updates", set()),
    # TensorFlow 1's minimize() over an empty var_list: trainable scopes that matched no variable
    ("    raise ValueError(\"No variables to optimize.\")\nValueError: No variables to optimize.\n",
     "tests/wild ssd-tensorflow-512-trainable-scopes-no-variables-311", "no_parameter_updates", set()),
    # a Cholesky factorisation that lost positive-definiteness (fixed by a dense solver and a jitter)
    ("torch._C._LinAlgError: torch.linalg_cholesky: (Batch element 11): The factorization could not be completed "
     "because the input is not positive-definite (the leading minor of order 48 is not positive-definite).\n",
     "tests/wild dipp-cholesky-not-positive-definite-dense-solver-6", "numerical_instability", {"data_pipeline_bug"}),
    # a bare AssertionError is read by the statement it printed: DETR's assert on the target boxes (the second
    # set) fails on an annotation with x2 < x1; on the predicted boxes (the first), on predictions gone NaN
    (DETR_ASSERT.replace("boxes?", "boxes2"), "github.com/facebookresearch/detr/issues/285 (the assert's two forms)",
     "data_pipeline_bug", set()),
    (DETR_ASSERT.replace("boxes?", "boxes1"), "github.com/facebookresearch/detr/issues/285", "lr_too_high",
     {"numerical_instability", "data_pipeline_bug"}),
    # glog's fatal check is an error: cuBLAS failing in Caffe (github.com/rbgirshick/py-faster-rcnn/issues/912)
    ("F0827 19:55:39.568928 17377 math_functions.cu:26] Check failed: status == CUBLAS_STATUS_SUCCESS (13 vs. 0)  "
     "CUBLAS_STATUS_EXECUTION_FAILED\n*** Check failure stack trace: ***\n", "tests/wild "
     "faster-rcnn-matlab-cublas-two-classes-output-dim-24", "data_pipeline_bug", {"out_of_memory"}),
    # cv2.imread's None for an image path that does not exist (github.com/tslgithub/image_class/issues/23)
    ('Traceback (most recent call last):\n  File "train.py", line 55, in load_data\n    _, w, h = img.shape[::-1]\n'
     "AttributeError: 'NoneType' object has no attribute 'shape'\n", "github.com/tslgithub/image_class/issues/23",
     "dataloader_failure", {"data_pipeline_bug"}),
    # Docker's small /dev/shm (github.com/NVIDIA/Megatron-LM/issues/878)
    ("OSError: [Errno 28] No space left on device\n", "github.com/NVIDIA/Megatron-LM/issues/878", "dataloader_failure",
     set()),
    (MTPSL, "github.com/VICO-UoE/MTPSL/issues/3", "data_pipeline_bug", {"architecture_imbalance"}),
    # a kernel that faulted: an index past its table first (mmseg #1600 and py-faster-rcnn's cuBLAS failure in
    # tests/wild were labels beyond the classes), memory second (this thread: batch size 1 runs, larger fails)
    ("RuntimeError: CUDA error: an illegal memory access was encountered\n", "github.com/pytorch/pytorch/issues/34220 "
     "(batch size 1 runs, larger fails; the cuda_error context signature names no cause)", "data_pipeline_bug",
     {"out_of_memory"}),
    ("RuntimeError: expected scalar type Float but found Half\n", "github.com/hiyouga/LlamaFactory/issues/1233",
     "numerical_instability", {"data_pipeline_bug"}),
    # a GPU index the machine does not have: four processes per node on two GPUs (not memory, not data)
    ("RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:59\n",
     "tests/wild pick-invalid-device-ordinal-nproc-4-on-2-14 (nproc_per_node=4 on 2 GPUs)", "distributed_failure", set()),
    # a VAE's encoder output gone NaN: the distribution refuses it (a shape is named, but no shape is wrong)
    ("ValueError: Expected parameter loc (Tensor of shape (128, 10)) of distribution Normal(loc: torch.Size([128, "
     "10]), scale: torch.Size([128, 10])) to satisfy the constraint Real(), but found invalid values:\n"
     "tensor([[nan, nan, nan,  ..., nan, nan, nan],\n        [nan, nan, nan,  ..., nan, nan, nan]], device='cuda:0',\n"
     "       grad_fn=<AddmmBackward0>)\n",
     "tests/wild scatlasvae-normal-loc-nan-lr-13 (the LR lowered)", "lr_too_high",
     {"numerical_instability", "data_pipeline_bug"}),
    # Optuna's one-line report of a trial's error, its traceback cut before the exception line; torch before 1.8
    # named no values (a loc is Real(), which only NaN fails)
    ("[W 2021-08-31 18:03:34,301] Trial 2 failed because of the following error: ValueError('The parameter loc has "
     "invalid values')\nTraceback (most recent call last):\n  File \"/home/rl/.local/lib/python3.8/site-packages/"
     "optuna/_optimize.py\", line 216, in _run_trial\n    value_or_values = func(trial)\n  File \"/home/rl/.local/"
     "lib/python3.8/site-packages/stable_baselines3/sac/sac.py\", line 203, in train\n",
     "tests/wild sb3-zoo-sac-optuna-loc-invalid-values-156 ('usually ... the learning rate is too high')",
     "lr_too_high", {"numerical_instability"}),
    # Python's float overflow in a hand-written update: the scores grew past what a float holds
    ("Traceback (most recent call last):\n  File \"bpr.py\", line 260, in <module>\n    model.train(data,sampler,"
     "num_iters)\n  File \"bpr.py\", line 81, in update_factors\n    z = 1.0/(1.0+exp(x))\nOverflowError: math range "
     "error\n", "github.com/gamboviol/bpr/issues/6", "numerical_instability", {"lr_too_high"}),
]


@pytest.mark.parametrize("text,source,first,also", REAL, ids=[r[1] for r in REAL])
def test_an_unknown_error_gets_a_ranked_differential(tmp_path, text, source, first, also):
    sig = match_signature(text)
    assert sig is None or not sig.code            # no signature names a cause: the differential is all there is
    (tmp_path / "traceback.txt").write_text(text)
    d, _ = diagnose(tmp_path)
    codes = [c.code for c in d.root_causes]
    assert codes[0] == first and also <= set(codes[:3])
    assert all(c.confidence <= 0.55 for c in d.root_causes)       # suggests, does not decide
    assert d.status == "needs_more_data" and d.tell_apart          # and names what would settle it
    assert all(c.settle for c in d.root_causes)


def test_a_known_error_in_the_paste_needs_no_differential(tmp_path):
    (tmp_path / "traceback.txt").write_text(MTPSL + "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n")
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes] == ["out_of_memory"]


def test_a_cpp_exception_nothing_caught_ends_the_run_and_its_message_is_read(tmp_path):
    # libstdc++'s and libc++'s words for an uncaught exception: the process aborted after the last loss line
    for crash in ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n",
                  "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command "
                  "buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorTimeout)\n"):
        (tmp_path / "train.log").write_text("Iter 10: Train loss 2.586, Learning Rate 1.000e-05\n"
                                            "Iter 20: Train loss 1.731, Learning Rate 1.000e-05\n" + crash)
        d, _ = diagnose(tmp_path)
        assert d.root_causes[0].code == "out_of_memory" and d.status != "no_failure_found", crash


def test_libstdcxx_says_what_on_the_next_line_and_an_abort_at_exit_is_harmless(tmp_path):
    loss = "".join(f"step={i} loss={2.0 - 0.02 * i:.3f} grad_norm=1.0\n" for i in range(60))
    (tmp_path / "train.log").write_text(loss + "terminate called after throwing an instance of 'std::runtime_error'\n"
                                        "  what():  Insufficient memory to allocate 2147483648 bytes\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "out_of_memory" and "Insufficient memory" in d.root_causes[0].evidence[0].text
    (tmp_path / "train.log").write_text("terminate called after throwing an instance of 'c10::Error'\n"
                                        "  what():  an odd state\n")
    d, _ = diagnose(tmp_path)
    assert "a C++ exception nothing caught that names no known failure" in d.root_causes[0].evidence[0].text
    (tmp_path / "train.log").write_text(loss + "Training complete. Saved model to out/final.pt\n"
                                        "terminate called after throwing an instance of 'c10::Error'\n"
                                        "  what():  CUDA error: driver shutting down\nAborted (core dumped)\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "healthy"


def test_a_cut_traceback_reads_the_tuners_report_just_above_it_not_an_older_error(tmp_path):
    # Optuna 3 names the trial's parameters and ends its report with a period; the line is quoted as printed
    (tmp_path / "output.txt").write_text(
        "[W 2024-03-01 10:05:00,000] Trial 2 failed with parameters: {'lr': 0.3} because of the following error: "
        "ValueError('The parameter loc has invalid values').\nTraceback (most recent call last):\n"
        "  File \"sac.py\", line 203, in train\n    loss = model(batch)\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "lr_too_high" and "{'lr': 0.3}" in d.root_causes[0].evidence[0].text
    # an error two commands back, already fixed, is not what stopped this run
    (tmp_path / "output.txt").write_text(
        "$ python prepare.py --fold 3\nKeyError: 'fold_3'\n$ python prepare.py --fold 2 && python train.py\n"
        "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    main()\n"
        "  File \"/usr/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl\n")
    d, _ = diagnose(tmp_path)
    assert all("fold_3" not in e.text for c in d.root_causes for e in c.evidence)


def test_a_users_own_data_check_is_no_distribution_refusing_nan(tmp_path):
    (tmp_path / "traceback.txt").write_text("ValueError: column 'age' has invalid values: [nan, nan, -3]\n")
    d, _ = diagnose(tmp_path)
    assert not any("own output" in c.issue for c in d.root_causes)          # no distribution's parameter
    assert d.root_causes[0].confidence <= 0.5 and d.root_causes[0].severity == "medium"


def test_a_distribution_refusing_finite_values_is_no_nan_output(tmp_path):
    # the same refusal as the VAE's above, but the values it prints are finite (a scale taken from a linear
    # layer without softplus goes negative): no weights went NaN, so neither the LR nor an overflow is read,
    # and the shapes the message names make no shape error either
    text = ("ValueError: Expected parameter scale (Tensor of shape (64, 1)) of distribution Normal(loc: torch.Size([64, "
            "1]), scale: torch.Size([64, 1])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid "
            "values:\ntensor([[-0.0123],\n        [ 0.5120]], grad_fn=<AddmmBackward0>)\n")
    (tmp_path / "traceback.txt").write_text(text)
    d, _ = diagnose(tmp_path)
    codes = [c.code for c in d.root_causes]
    assert "lr_too_high" not in codes and "numerical_instability" not in codes
    assert all(c.confidence <= 0.3 for c in d.root_causes), codes        # the fallback's: nothing known of it
    # NaN values in the same message are the model's output gone NaN
    (tmp_path / "traceback.txt").write_text(text.replace("-0.0123", "nan").replace(" 0.5120", "nan"))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "lr_too_high"


UNIPOSE = """Traceback (most recent call last):
  File "unipose.py", line 270, in <module>
    trainer = Trainer(args)
  File "unipose.py", line 64, in __init__
    self.val_dir, self.sigma, self.stride, self.workers, self.batch_size)
ValueError: too many values to unpack (expected 2)
"""


def test_an_error_nothing_is_known_about_still_ranks_the_usual_suspects(tmp_path):
    # github.com/bmartacho/UniPose/issues/35: no word or library frame the table knows
    (tmp_path / "traceback.txt").write_text(UNIPOSE)
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes][:2] == ["data_pipeline_bug", "architecture_imbalance"]
    assert all(c.confidence <= 0.3 for c in d.root_causes) and "whole traceback" in d.tell_apart


def test_a_segfault_in_training_is_read_as_a_loader_worker_first_and_says_how_to_tell(tmp_path):
    # Henry1iu/TNT-Trajectory-Prediction#33: a progress line that ends in a segfault; with a bare
    # "Segmentation fault" no answer is certain, so the reading stays low and says what would settle it
    (tmp_path / "output.txt").write_text("[Info: Device_0: train_Ep_11: loss: 4.38811e+02; avg_loss: 4.53619e+02]:  "
                                         "20%|| 11/56 [00:02<00:08,  5.02it/s]Segmentation fault (core dumped)\n")
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "dataloader_failure" and top.confidence < 0.5 and d.status == "needs_more_data"
    assert "num_workers=0" in top.fix and "collect_env" in top.fix
    assert "healthy" not in [c.code for c in d.root_causes]


@pytest.mark.parametrize("text,source", [
    (" CUDA error: no kernel image is available for execution on the device. CUDA kernel errors might be asynchronously "
     "reported at some other API call,so the stacktrace below might be incorrect.\n",
     "github.com/MIC-DKFZ/nnUNet/issues/1040 (maintainer: the PyTorch build does not fit the GPU)"),
    ("[1]    122549 illegal hardware instruction (core dumped)  python predict.py pre-trained/semi-metal-"
     "classification.pth.tar\n", "github.com/pytorch/pytorch/issues/2714 (a CPU without the build's instructions)"),
])
def test_an_installation_error_names_no_training_cause_and_says_what_to_check(tmp_path, text, source):
    # no taxonomy code is an installation fault: no cause is invented (not the OOM or data reading a
    # CUDA error would get), and the reply names the error and the check instead of "nothing shows a fault"
    (tmp_path / "output.txt").write_text(text)
    d, _ = diagnose(tmp_path)
    assert d.root_causes == [], source
    assert d.status == "needs_more_data" and "installation, not the training" in d.questions[0]
    assert "Nothing in these artifacts" not in " ".join(d.questions)


@pytest.mark.parametrize("text,first", [
    # a test's assert quoted alone (github.com/harvard-edge/cs249r_book/issues/1334: requires_grad=False)
    ('assert changed, "Parameters should change after optimizer update"\n', "no_parameter_updates"),
    # an ipdb check for NaNs quoted without its answer (github.com/pytorch/pytorch/issues/795: log_softmax
    # overflowing; with its answers the check is read, tests/test_printed_checks.py)
    ("ipdb> np.isnan((F.log_softmax(input).data.cpu().numpy())).sum()\n", "numerical_instability"),
    # DETR's box assert quoted alone (github.com/facebookresearch/detr/issues/285: the predictions went NaN,
    # fixed with a lower LR): the first box set is the model's
    (" generalized_box_iou\n    assert (boxes1[:, 2:] >= boxes1[:, :2]).all()\n", "lr_too_high"),
    # a divergence said in words (github.com/barronalex/Tacotron/issues/7: fixed with a lower LR)
    ("loss exploded\n", "lr_too_high"),
])
def test_a_paste_with_nothing_read_still_gets_what_its_words_suggest(tmp_path, text, first):
    (tmp_path / "output.txt").write_text(text)
    d, _ = diagnose(tmp_path)
    assert d.root_causes and d.root_causes[0].code == first, d.root_causes
    assert all(c.severity == "low" and c.confidence <= 0.35 for c in d.root_causes)   # words suggest, no more
    assert d.root_causes[0].evidence[0].locator.startswith("line")


@pytest.mark.parametrize("text", [
    # a module's printout names no failure (github.com/pytorch/pytorch/issues/666)
    "net (\n  (layer): Linear (1 -> 1)\n)\n",
    # words that would suggest a cause, in a paste whose metrics were read: the metrics speak
    "epoch 1 loss 0.9 acc 0.61\nepoch 2 loss 0.7 acc 0.70\nepoch 3 loss 0.6 acc 0.74\ncheck isnan: none\n",
])
def test_a_paste_without_failure_words_or_with_metrics_gets_no_words_reading(tmp_path, text):
    (tmp_path / "train.log").write_text(text)
    d, _ = diagnose(tmp_path)
    assert not [c for c in d.root_causes if "Nothing in the paste was read" in c.issue]


@pytest.mark.parametrize("text,source", [
    ("h0913n-ubuntu:12877:12877 [0] NCCL INFO NET/Socket : Using [0]enp0s31f6:192.168.97.149<0>\n"
     "h0913n-ubuntu:12877:12877 [7] NCCL INFO nranks 8\n", "github.com/NVIDIA/nccl/issues/259"),
    ("WARNING:absl:Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so\n",
     "github.com/google-deepmind/alphafold3/issues/656"),
    # a Python warning and the source line it prints under itself
    ("/numpy/core/_methods.py:132: RuntimeWarning: invalid value encountered in double_scalars\n"
     "  ret = ret.dtype.type(ret / rcount)\n", "github.com/virajbdeshpande/AmpliconArchitect/issues/65"),
    # c10d's own notice while a rank waits for the store (maintainer: transient, not an error)
    ("[W socket.cpp:634] The server socket on [localhost]:29501 is not yet listening (errno: 111 - Connection "
     "refused).\n", "github.com/pytorch/pytorch/pull/71864"),
])
def test_a_notice_is_no_paste_to_read_words_from(tmp_path, text, source):
    # a line logged as INFO or WARNING, or a Python warning, says the program went on (maintainers: harmless)
    (tmp_path / "output.txt").write_text(text)
    d, _ = diagnose(tmp_path)
    assert all(c.code == "healthy" for c in d.root_causes), (source, d.root_causes)


def test_model_outputs_beside_other_files_are_no_paste_to_read_words_from(tmp_path):
    (tmp_path / "generations.txt").write_text("The worker could not find the label; memory of the annotation is NaN.\n")
    (tmp_path / "notes.txt").write_text("baseline run, nothing to report\n")
    d, _ = diagnose(tmp_path)
    assert not [c for c in d.root_causes if "Nothing in the paste was read" in c.issue]


_WATCHDOG = ("[rank0]:[E ProcessGroupNCCL.cpp:577] [Rank 0] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=11689512, NumelOut=11689512, Timeout(ms)=600000) ran for "
             "600311 milliseconds before timing out.\n")


@pytest.mark.parametrize("own,code", [
    ('  File "/work/train.py", line 140, in <module>\n    img = Image.open(path)\n'
     "FileNotFoundError: [Errno 2] No such file or directory: '/data/x/0001.png'\n", "dataloader_failure"),
    ("[rank1]:   File \"/work/train.py\", line 140, in <module>\n[rank1]:     out = model(x)\n"
     "[rank1]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x4096 and 2048x1000)\n", "data_pipeline_bug"),
])
def test_a_ranks_own_error_leads_the_other_ranks_watchdog_that_waited_for_it(tmp_path, own, code):
    # the watchdog's timeout is the other ranks waiting for the one that raised: its consequence, not a cause
    (tmp_path / "output.txt").write_text("Traceback (most recent call last):\n" + own + _WATCHDOG)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == code and "distributed_failure" not in [c.code for c in d.root_causes[:1]]
    (tmp_path / "output.txt").write_text(_WATCHDOG)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "distributed_failure"


def test_a_traceback_a_library_printed_while_the_loss_went_on_stopped_nothing(tmp_path):
    # wandb's retry loop prints the exception it handles; the loss is reported three times after it
    (tmp_path / "output.txt").write_text(
        "step 100 loss 2.10\nstep 200 loss 1.88\nwandb: Network error (ConnectionError), entering retry loop.\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/site-packages/wandb/sdk/internal/internal_api.py", line 350, in execute\n'
        "    return self.client.execute(*args, **kwargs)\n"
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.wandb.ai', port=443): Read timed out.\n"
        + "".join(f"step {s} loss {x}\n" for s, x in ((300, 1.71), (400, 1.60), (500, 1.52), (600, 1.47))))
    d, _ = diagnose(tmp_path)
    assert "distributed_failure" not in [c.code for c in d.root_causes] and not any("crashed" in q for q in d.questions)


def test_a_ranks_traceback_quoted_in_torchruns_failure_box_is_that_ranks_own_error(tmp_path):
    # @record puts the rank's traceback in the box, its exception line left of its frames
    (tmp_path / "output.txt").write_text("\n".join([
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================", "train.py FAILED",
        "------------------------------------------------------------", "Root Cause (first observed failure):",
        "[0]:", "  time      : 2024-05-01_10:00:00", "  rank      : 5 (local_rank: 1)", "  exitcode  : 1 (pid: 4455)",
        "  traceback : Traceback (most recent call last):",
        '    File "/usr/local/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/errors/'
        '__init__.py", line 346, in wrapper', "      return f(*args, **kwargs)",
        '    File "/work/data.py", line 77, in __getitem__', "      img = decode(path)",
        "  PIL.UnidentifiedImageError: cannot identify image file '/data/shards/a/000913.jpg'", "  ",
        "============================================================"]) + "\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "dataloader_failure" and "UnidentifiedImageError" in d.root_causes[0].issue
    assert not any("=====" in q for q in d.questions)


@pytest.mark.parametrize("losses,named", [((2.7812, 2.7809, 2.7815, 2.7811, 2.7810), True),
                                          ((2.7812, 2.41, 2.10, 1.88, 1.71), False)])
def test_the_checkpoints_no_grad_warning_beside_a_loss_that_never_moves_is_the_cause(tmp_path, losses, named):
    # LoRA under the reentrant checkpoint: the warning is harmless where the loss falls, the cause where it does not
    (tmp_path / "output.txt").write_text(
        "/usr/local/lib/python3.10/site-packages/torch/utils/checkpoint.py:61: UserWarning: None of the inputs have "
        "requires_grad=True. Gradients will be None\n  warnings.warn(\n"
        + "".join(f"{{'loss': {x}, 'learning_rate': 0.0002, 'epoch': {0.1 * (i + 1):.1f}}}\n"
                  for i, x in enumerate(losses)))
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert (top.code == "no_parameter_updates" and "enable_input_require_grads" in top.fix) == named, top


@pytest.mark.parametrize("line,says", [
    ("RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: "
     "[torch.cuda.FloatTensor [128, 256]], which is output 0 of ReluBackward0, is at version 1; expected version 0 "
     "instead.", "out of place"),
    ("RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they "
     "have already been freed).", ".detach()"),
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
     "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)", "model.to(device)"),
    ("RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.cuda.HalfTensor) should be the same",
     "torch.autocast"),
])
def test_an_error_that_says_what_is_wrong_gets_its_change_not_a_guessed_cause(tmp_path, line, says):
    # torch's own wordings: no taxonomy code is a fault of this kind; the reply names the error and the change, once
    (tmp_path / "traceback.txt").write_text(
        'Traceback (most recent call last):\n  File "train.py", line 50, in <module>\n    loss.backward()\n'
        + line + "\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes == [] and len(d.questions) == 1 and says in d.questions[0], d.questions
