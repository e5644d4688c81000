"""Every failure signature and every benign warning, each held by a real line people pasted in a
public thread (the source beside it), through the same path a pasted log takes: the scanner's
prefilter, then the tables in analysis/data/."""
from __future__ import annotations

import pytest

from analysis.diagnose import diagnose
from analysis.ingest.events import build_event, match_benign, prefilter_literals, signatures
from analysis.ingest.textlog import _literals as textlog_literals
from tests.scenarios.minibatch_noise import regression_losses

# (signature name, line as posted, where it was posted)
REAL_NCCL_WATCHDOG = ("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
                      "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, "
                      "NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.")
REAL_LINES = [
    ("dataloader_handover", "训练报错：RuntimeError: unable to open shared memory object </torch_735354_2766238047_18> in "
     "read-write mode: Too many open files (24)", "a public note whose fix is `ulimit -S -n 65535` (the process's file "
     "descriptors, not /dev/shm)"),
    # SLURM's current wording of the kernel's OOM kill (its older `oom-kill event(s)` was already read)
    ("host_oom", "slurmstepd: error: Detected 1 oom_kill event in StepId=8538204.0. Some of the step tasks have been "
     "OOM Killed.", "a public FSDP fine-tuning question (70B, full state dict at the end of training)"),
    ("host_oom", "srun: error: curie-gpu003: task 1: Out Of Memory", "a public HPC write-up's job log (the OOM killer, "
     "the GPU at 3.51 of 31.73 GiB)"),
    # session 43: the thirty-sixth round's tune cases (CuPy under Chainer, Theano, TF's allocator dumps)
    ("cuda_oom", "Exception in main training loop: out of memory to allocate 205520896 bytes (total 16068929536 bytes)",
     "tests/wild chainer-py2-backprop-leak-oom-5621 (CuPy's words, printed by Chainer's trainer)"),
    ("cuda_oom", "RuntimeError: CudaNdarray_ZEROS: allocation failed.", "tests/wild biaxial-rnn-cudandarray-zeros-alloc-22"),
    ("tf_oom", "I tensorflow/core/common_runtime/gpu/gpu_region_allocator.cc:345] Aggregate Region Memory: 2990620672 "
     "(2.79GiB)", "tests/wild tensorflow-mnist-conv-gtx980-oom-262 (the old region allocator's dump)"),
    ("tf_oom", "2022-10-28 04:33:01.109362: I tensorflow/core/common_runtime/bfc_allocator.cc:1101] Sum Total of in-use "
     "chunks: 6.66GiB", "a KerasCV Stable Diffusion guide's OOM dump, in a public repository's README"),
    # session 37: the thirty-second round's tune cases
    ("cuda_oom", "cuda out of memory, tried to allocate 50MiB(GPU 0; 1.96GiB totalcapacity;1.33GiB already allocated; "
     "43.5MiB free;1.36 GiB reserved in total by Pytorch)", "tests/wild detectron2-mask-rcnn-2gb-gpu-oom-expected-2457 "
     "(as the reporter retyped it, lower case)"),
    ("cuda_oom", "21:39:09 ERROR    Uncaught exception: Could not allocate memory: E:\\TUTORIAL\\ngp\\instant-ngp\\"
     "dependencies\\tiny-cuda-nn\\include\\tiny-cuda-nn/gpu_memory.h:109 cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2) "
     "failed with error out of memory", "tests/wild instant-ngp-86-4k-images-exceed-8gb-oom-182 (tiny-cuda-nn's wording)"),
    ("checkpoint_no_input_grad", "/home/ywan171/miniconda3/envs/trl/lib/python3.9/site-packages/torch/utils/"
     "checkpoint.py:31: UserWarning: None of the inputs have requires_grad=True. Gradients will be None",
     "tests/wild peft-dpo-gradient-checkpointing-no-input-grad-1056 (trl #927's fix: inputs made to require grad)"),
    ("nonfinite_matching_cost", "ValueError: matrix contains invalid numeric entries (the 132th line in "
     "hungarian_assigner)", "tests/wild mmdet-detr-scratch-hungarian-nan-cost-4902 (SciPy's linear_sum_assignment "
     "under mmdet's DETR matcher)"),
    # session 34: the twenty-third round's tune cases
    ("port_in_use", "RuntimeError address already in use", "tests/wild allennlp-distributed-address-in-use-4666 "
     "(as the thread's title words it, lower case and no colon)"),
    ("cuda_oom_retried", "Attempting to copy inputs of <function pairwise_iou at > to CPU due to CUDA OOM",
     "tests/wild detectron2-pairwise-iou-cpu-oom-image-size-2595 (detectron2's retry_if_cuda_oom)"),
    ("dataloader_killed", "RuntimeError: One or more background workers are no longer alive. Exiting. Please check the "
     "print statements above for the actual error message", "tests/wild nnunet-background-workers-dead-docker-ipc-host-1898 "
     "(nnU-Net v2's augmenter; the fix was Docker's --ipc=host)"),
    ("label_out_of_range", "  SoftmaxMultiClassObj: label must be in [0, num_class), num_class=12 but found 12 in label",
     "tests/wild xgboost-r-softprob-label-out-of-range-factor-745 (XGBoost's wording, from R)"),
    ("label_out_of_range", "xgboost.core.XGBoostError: [10:21:37] ../src/objective/multiclass_obj.cu:120: "
     "SoftmaxMultiClassObj: label must be in [0, num_class).", "XGBoost's newer wording (its multiclass_obj.cu)"),
    ("port_in_use", "BIND FAILED: ADDRESS ALREADY IN USE", "upper case, as some launchers shout it"),
    # session 33: the nineteenth round's tune cases
    ("constant_input", "PearsonRConstantInputWarning: An input array is constant; the correlation coefficent is not "
     "defined.", "tests/wild locating-objects-pearsonr-constant-counts-33 (SciPy's older wording, with its typo)"),
    ("constant_input", "GT-long-range-niches/src/InterScale/train/_trainingplans.py#line=180): ConstantInputWarning: An "
     "input array is constant; the correlation coefficient is not defined.",
     "tests/wild interscale-pearsonr-constant-gene-or-cell-19"),
    ("input_ran_out", "WARNING:tensorflow:Your input ran out of data; interrupting training. Make sure that your "
     "dataset or generator can generate at least `steps_per_epoch * epochs` batches (in this case, 354846 batches). "
     "You may need to use the repeat() function when building your dataset.",
     "tests/wild keras-io-input-ran-out-of-data-steps-per-epoch-285"),
    ("dataloader_worker_error", "报错 FatalError: Blocking queue is killed because the data reader raises an exception.",
     "tests/wild paddleocr-rec-blocking-queue-killed-num-workers-3658 (PaddlePaddle's reader)"),
    ("label_out_of_range", "Error: Variable value (label) of OP(fluid.layers.cross_entropy) expected >= 0 and < 5, but "
     "got 5.", "tests/wild paddleclas-label-expected-lt-5-got-5-389 (PaddlePaddle's wording)"),
    ("mlx_oom", "libc++abi: terminating due to uncaught exception of type std::runtime_error: [malloc_or_wait] "
     "Unable to allocate 12 bytes.", "tests/wild mlx-lora-malloc-unable-to-allocate-70"),
    ("mlx_oom", "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
     "execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
     "tests/wild mlx-lm-full-finetune-metal-oom-236"),
    # session 32: warnings and asserts a probe of common messages read as nothing or as the wrong cause
    ("yolo_corrupt_label", "train: WARNING ⚠️ /home/..../837.jpg: ignoring corrupt image/label: non-normalized or out "
     "of bounds coordinates [     1.0021]", "github.com/ultralytics/yolov5/issues/10632 (labels outside [0, 1]; "
     "a maintainer says the same of github.com/ultralytics/yolov5/issues/4798: 'your labels are incorrect')"),
    ("yolo_corrupt_label", "WARNING: Ignoring corrupted image and/or label /path/to/widerface/val/1060.jpg: duplicate "
     "labels", "github.com/deepcam-cn/yolov5-face/issues/270 (YOLOv5's older wording)"),
    ("bce_input_range", "/opt/conda/conda-bld/pytorch_1695392067780/work/aten/src/ATen/native/cuda/Loss.cu:94: "
     "operator(): block: [0,0,0], thread: [96,0,0] Assertion `input_val >= zero && input_val <= one` failed.",
     "github.com/WENGSYX/CMIVQA_Baseline/issues/16 (the scores fed to BCELoss were NaN)"),
    ("bce_input_range", "/tmp/pip-req-build-p5q91txh/aten/src/THCUNN/BCECriterion.cu:57: void "
     "bce_updateOutput_no_reduce_functor<Dtype, Acctype>::operator()(const Dtype *, const Dtype *, Dtype *) [with "
     "Dtype = float, Acctype = float]: block: [305,0,0], thread: [82,0,0] Assertion `*input >= 0. && *input <= 1.` "
     "failed.", "github.com/bubbliiiing/yolox-pytorch/issues/121"),
    ("bce_input_range", "Error: /paddle/paddle/fluid/operators/bce_loss_op.cu:38 Assertion `(x >= static_cast<T>(0)) && "
     "(x <= one)` failed. Input is expected to be within the interval [0, 1], but recieved nan.",
     "github.com/PaddlePaddle/PaddleDetection/issues/4638 (the loss grew, then NaN)"),
    ("non_leaf_param", "ValueError: can't optimize a non-leaf Tensor", "tests/wild pytorch-optimizer-non-leaf-scaled-"
     "tensor-140469 (a weight scaled by 0.01 after requires_grad; github.com/pytorch/pytorch/issues/140469)"),
    ("non_leaf_param", "  what():  can't optimize a non-leaf Tensor", "tests/wild gotorch-dcgan-gpu-non-leaf-tensor-261"),
    ("training_step_none", "training_step returned None. If this was on purpose, ignore this warning...",
     "tests/wild mlops-basics-lightning-training-step-returns-none-14"),
    ("mlagents_not_training", "INFO:mlagents.trainers: block5-0: BlockBrain: Step: 0. Time Elapsed: 99.064 s Mean "
     "Reward: -7.901. Std of Reward: 2.661. Not Training.", "tests/wild mlagents-not-training-missing-train-flag-3105"),
    ("nan_observation", "WARNING:mlagents_envs:An agent had a NaN observation in the environment",
     "tests/wild mlagents-sac-nan-observation-warning-3214"),
    ("ctc_no_valid_path", "Warning: tensorflow/core/util/ctc/ctc_loss_calculator.cc:144] No valid path found.",
     "tests/wild simplehtr-ctc-no-valid-path-dash-label-28 (a label of 46 dashes)"),
    ("tf_no_gradients", "WARNING:tensorflow:Gradients do not exist for variables ['dense_2/kernel:0', 'dense_2/bias:0'] "
     "when minimizing the loss.", "github.com/tensorflow/tensorflow/issues/48547"),
    # session 35: the wild corpus's twenty-sixth round (tune half)
    ("fasttext_nan", "Progress:   0.2% words/sec/thread:    4139 lr:  0.898591 avg.loss: 114.726540 ETA:   2h33m27sterminate "
     "called after throwing an instance of 'fasttext::DenseMatrix::EncounteredNaNError'",
     "tests/wild fasttext-ova-encountered-nan-lr-0.9-1063"),
    ("dynet_bad_gradient", "RuntimeError: Magnitude of gradient is bad: inf",
     "tests/wild open-sesame-dynet-gradient-magnitude-inf-lower-lr-9"),
    ("spacy_misaligned_entities", '>...\\language.py:482: UserWarning: [W030] Some entities could not be aligned in the '
     'text "I think he has schizophrenia." with entities "[(16, 29, \'CONDITION\')]". Use `spacy.gold.biluo_tags_from_'
     'offsets(nlp.make_doc(text), entities)` to check the alignment. Misaligned entities (with BILUO tag \'-\') will be '
     'ignored during training.', "tests/wild spacy-ner-entity-offsets-off-by-one-w030-6240"),
    ("ctc_not_enough_time", "InvalidArgumentError (see above for traceback): Not enough time for target transition "
     "sequence (required: 64, available: 39)0You can turn this error into a warning by using the flag "
     "ignore_longer_outputs_than_inputs", "tests/wild asrt-tf-port-ctc-not-enough-time-64-vs-39-32"),
    # session 36's round-31 tune cases: RAPIDS' memory pool (XGBoost on GPU), CatBoost's NaN target, rabit's tracker
    ("cuda_oom", "Memory allocation error on worker 0: std::bad_alloc: out_of_memory: RMM failure at:/home/ubuntu/"
     "anaconda3/include/rmm/mr/device/arena_memory_resource.hpp:171: Maximum pool size exceeded (failed to allocate "
     "5.985840 GiB): No room in arena.", "tests/wild xgboost-extmem-rmm-pool-oom-11457"),
    ("cuda_oom", "Error allocating 411041792 bytes of device memory < out of memory >. Driver report 169512960 bytes "
     "free and 2147483648 bytes total", "tests/wild deepmask-keras-theano-2gb-oom-optimizer-none-6 (Theano's words)"),
    ("input_contains_nan", "CatBoostError: C:/Program Files (x86)/Go Agent/pipelines/BuildMaster/catboost.git/catboost/"
     "private/libs/target/target_converter.cpp:392: NaN values are not supported for target",
     "tests/wild catboost-crossentropy-target-nan-and-above-one-2061"),
    ("rank_failure", "connect to (failed): [localhost]", "tests/wild dask-xgboost-rabit-localhost-connect-failed-5"),
    ("unknown_piece_output", "' ⁇ un müssen meines  ⁇ rachtens konkrete und erkennbare  ⁇ aßnahmen "
     "ergriffen werden ⁇ '", "tests/wild nemo-asr-finetune-chars-outside-tokenizer-unk-5289"),
    # PaddlePaddle's AMP scaler (its prefilter literal was missing: the pattern had never been reached)
    ("nonfinite_loss", "Found inf or nan, current scale is: 128.0, decrease to: 128.0*0.5",
     "tests/wild paddledet-fp16-found-inf-nan-loss-scale-halving-4049"),
    # session 31
    ("numpy_invalid_value", "RuntimeWarning: invalid value encountered in log targets_dw = np.log(gt_widths / "
     "ex_widths) Command terminated by signal 11", "github.com/endernewton/tf-faster-rcnn/issues/107"),
    # session 38
    ("rank_failure", "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
     "github.com/huggingface/trl/issues/3436 (the last field of torchrun's failure summary, all the stored copy kept)"),
    ("numpy_overflow_in_data", "/home/yuwentao/project/3D_tracking/OpenPCDet/pcdet/datasets/augmentor/augmentor_"
     "utils.py:77: RuntimeWarning: overflow encountered in multiply", "github.com/open-mmlab/OpenPCDet/issues/341"),
    # lines a probe of public threads met (session 31), each with the cause its thread settled
    ("label_out_of_range", "InvalidArgumentError (see above for traceback): Received a label value of 48 which is "
     "outside the valid range of [0, 40).  Label values: 1 23 24 47 11 39 5 1", "github.com/vrenkens/nabu/issues/9"),
    ("host_oom", "DefaultCPUAllocator: not enough memory: you tried to allocate 223045988 bytes.",
     "github.com/tootouch/MemSeg/issues/3"),
    ("fp16_params_unscale", 'ValueError("Attempting to unscale FP16 gradients.")',
     "github.com/mk-minchul/AdaFace/issues/127 (an fp16 PReLU under GradScaler)"),
    ("no_inf_checks", 'AssertionError: No inf checks were recorded for this optimizer.',
     "github.com/SheldonTsui/GOF_NeurIPS2021/issues/2 (every parameter's grad was None)"),
    ("dataloader_handover", "OSERROR: [Errno 24] Too many files open.",
     "github.com/XiaohangZhan/face_recognition_framework/issues/5 (from reduction.py and resource_sharer.py)"),
    ("nccl_timeout", "Rccl error, unhandled system error", "github.com/ROCm/rccl/issues/328 (fixed by NCCL_SOCKET_IFNAME)"),
    ("native_crash", "Command terminated by signal 11", "github.com/endernewton/tf-faster-rcnn/issues/107"),
    ("empty_epoch", "[WARNING|trainer.py:2013] ... >> There seems to be not a single sample in your epoch_iterator, "
     "stopping training at step 0!", "github.com/RUC-GSAI/YuLan-IR/issues/5 (9 examples, batch size 64)"),
    ("tf_oom", "2019-01-08 19:06:11.303639: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate "
     "7.35G (7889485824 bytes) from device: hipError_t(1002)", "github.com/ROCm/tensorflow-upstream/issues/82"),
    ("host_oom", "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
     '"D:\\Anaconda\\envs\\swin-train\\lib\\site-packages\\torch\\lib\\shm.dll" or one of its dependencies.',
     "github.com/cszn/KAIR/issues/127"),
    ("cudnn_oom_in_disguise", "tensorflow.python.framework.errors_impl.InternalError:  Blas GEMM launch failed : "
     "a.shape=(32, 768), b.shape=(768, 768), m=32, n=768, k=768", "github.com/amaiya/ktrain/issues/141 (the GPU's "
     "memory held by an earlier notebook)"),
    ("nccl_timeout", "UnknownError (see above for traceback): ncclCommInitRank failed: unhandled cuda error",
     "github.com/horovod/horovod/issues/108"),
    ("horovod_stall", "One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and "
     "are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying "
     "to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
     "github.com/horovod/horovod/issues/100 (a deadlock there; harmless in github.com/horovod/horovod/issues/2843, "
     "where the run went on)"),
    # icefall/ZipVoice's fp16 scaler giving up (`grad_scale is too small, exiting`), fixed in fp32
    ("loss_scale_overflow", "RuntimeError: grad_scale is too small, exiting: 2.3283064365386963e-10",
     "github.com/k2-fsa/ZipVoice/issues/17"),
    # wordings the wild corpus's twelfth round met (session 30)
    ("tf_oom", "  Compilation failure: Ran out of memory in memory space hbm. Used 8.38G of 8.00G hbm. Exceeded hbm "
     "capacity by 385.25M.", "github.com/tensorflow/tpu/issues/385"),
    ("tf_oom", "2020-10-22 02:48:58 10.128.0.33 [3]   (1) Resource exhausted: Attempting to allocate 180.59M. That was "
     "not possible. There are 142.58M free.; (0x3x0_HBM1)", "github.com/pytorch/xla/issues/2569"),
    ("elastic_teardown", "[2025-06-02 20:51:24,182] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 410126",
     "github.com/QwenLM/Qwen2.5-VL/issues/135"),
    # wordings the wild-paste probes met (session 28)
    ("input_contains_nan", "ValueError: Input contains NaN, infinity or a value too large for dtype('float64').",
     "github.com/craymichael/CNN_LCD/issues/15"),
    ("batchnorm_single", "`ValueError: Expected more than 1 spatial element when training, got input size "
     "torch.Size([32, 512, 1, 1])`", "github.com/liufeng2915/CFSM/issues/4"),
    ("host_oom", "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.61 GiB for an array with shape "
     "(753, 536, 536) and data type float64", "github.com/MIC-DKFZ/nnUNet/issues/2213"),
    ("cudnn_oom_in_disguise", "  (0) Unknown: Failed to get convolution algorithm. This is probably because cuDNN "
     "failed to initialize, so try looking to see if a warning log message was printed above.",
     "github.com/tensorflow/tensorflow/issues/38929"),
    ("tf_oom", "2017-07-31 11:36:02.747322: W tensorflow/core/common_runtime/bfc_allocator.cc:273] Allocator "
     "(cuda_host_bfc) ran out of memory trying to allocate 3.72GiB.  Current allocation summary follows.",
     "github.com/tensorflow/tensorflow/issues/11915"),
    ("cuda_oom", "CUDA out of memory. Tried to allocate 4.00 GiB (GPU 0; 10.73 GiB total capacity; 4.41 GiB already "
     "allocated; 1.75 GiB free; 3.78 GiB cached)", "tests/wild gtad-oom-30"),
    ("cuda_oom", "RuntimeError: CUDA error: out of memory", "github.com/danieltan07/spatialaffinitynetwork/issues/7"),
    ("cuda_oom", "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCTensorRandom.cu:25",
     "github.com/rowanz/neural-motifs/issues/58"),
    # caffe (glog) and PaddlePaddle: the allocation's CUDA status, 2 being cudaErrorMemoryAllocation
    ("cuda_oom", "F0911 12:46:40.284883 18216 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
     "github.com/aharley/segaware/issues/3; settled as GPU OOM in github.com/yjxiong/caffe/issues/69"),
    ("cuda_oom", "Check failed: cudaSuccess == cudaStat (0 vs. 2) Cuda Error: out of memory",
     "github.com/PaddlePaddle/Paddle/issues/8949"),
    # torch.multiprocessing.spawn reporting a rank the OOM killer took (maintainer: out of memory)
    ("host_oom", "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL",
     "github.com/lyu-yx/ACUMEN/issues/4"),
    # PAI's job runner and the kernel's report when the OOM killer took a worker (tests/wild easyrec-pai-worker-oom-killer-60)
    ("host_oom", "xargs: /worker/venv/bin/python: terminated by signal 9", "github.com/alibaba/EasyRec/issues/60"),
    ("host_oom", 'The job has been killed by "OOM Killer", please check your job\'s memory usage.',
     "github.com/alibaba/EasyRec/issues/60"),
    ("host_oom", "total-vm:30193768kB, anon-rss:19770320kB, file-rss:0kB, shmem-rss:0kB",
     "github.com/alibaba/EasyRec/issues/60"),
    # Kubernetes' container status (kubectl describe pod) and a CI task's exit status
    ("host_oom", "      Reason:       OOMKilled", "docs.e2enetworks.com/docs/myaccount/kubernetes/troubleshoot/oomkilled.md (kubectl describe pod)"),
    ("host_oom", "      Exit Code:    137", "docs.e2enetworks.com/docs/myaccount/kubernetes/troubleshoot/oomkilled.md (kubectl describe pod)"),
    ("host_oom", "Training task exit with status code 137", "github.com/mozilla/bugbug/issues/3906"),
    ("host_oom", "test      0/1       OOMKilled   0          1m",
     "docs.openshift.com/container-platform/3.9/dev_guide/application_memory_sizing.html (oc get pod)"),
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
    ("anomaly_nan", "RuntimeError :  Function  'SqrtBackward'  returned nan values in its 0th output.",
     "github.com/xuelunshen/rfnet/issues/4"),
    # anomaly mode's warning alone: the error it caught follows the forward traceback, not pasted here
    ("anomaly_backward_error", "[W python_anomaly_mode.cpp:60] Warning: Error detected in SoftmaxBackward. Traceback "
     "of forward call that caused the error:", "github.com/QiangAIResearcher/sahp_repo/issues/4 (the reporter's fix: a smaller batch)"),
    ("nccl_shm", "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
     "github.com/pytorch/pytorch/issues/37004"),
    ("nccl_shm", "[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
     "github.com/NVIDIA/nccl/issues/525"),
    ("nccl_shm", "ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-KWfVyt (size 5967872)", "github.com/NVIDIA/nccl-tests/issues/166"),
    ("host_oom", "terminate called after throwing an instance of 'std::bad_alloc'",
     "github.com/ljanyst/ssd-tensorflow/issues/8 (maintainer: you've run out of memory)"),
    ("elastic_teardown", "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 899505 closing signal "
     "SIGTERM", "github.com/yangjianxin1/Firefly/issues/171"),
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
    ("nonfinite_loss", "Training got into NaN values...", "github.com/Justin1904/Low-rank-Multimodal-Fusion/issues/10"),
    # RecBole's NaN check on the loss, the last frame of a traceback pasted without its error line
    ("nonfinite_loss", '  File "D:\\anaconda3\\lib\\site-packages\\recbole\\trainer\\trainer.py", line 248, in _check_nan',
     "github.com/RUCAIBox/RecBole/issues/1726"),
    # torch's std() warning over one value, wrapped by the paste: its second half alone
    ("var_dof", "strictly less than the reduction factor (input numel divided by output numel). (Triggered internally at "
     "/opt/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1827.)", "github.com/Yu-Maryland/Gamora/pull/9"),
    # SpeechBrain's check_gradients giving up on non-finite losses
    ("nonfinite_loss", "ValueError: Loss is not finite and patience is exhausted. To debug, wrap 'fit()' with autograd's "
     "detect_anomaly()', e.g.", "tests/wild speechbrain-commonlanguage-aam-cosine-acos-nan-loss-1276"),
    ("nonfinite_loss", "FloatingPointError: Predicted boxes or scores contain Inf/NaN. Training has diverged.",
     "tests/wild detectron2-diverged-lr01-1128"),
    ("nonfinite_loss", '"grad norm is nan. Do not update model".', "tests/wild espnet-eps-grad-nan-964"),
    ("loss_scale_overflow", "2020-03-23 11:41:18 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale "
     "to: 0.00048828125", "tests/wild fairseq-bt-overflow-1895"),
    # out of memory in its other wordings
    ("cuda_oom", "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
     "github.com/layumi/Person_reID_baseline_pytorch/issues/286"),
    ("cudnn_oom_in_disguise", "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
     "github.com/marqo-ai/marqo/issues/101 (maintainer: due to OOM with the GPU)"),
    ("cudnn_oom_in_disguise", "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
     "github.com/EleutherAI/lm-evaluation-harness/issues/1689 (fixed with more GPUs)"),
    ("host_oom", "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)",
     "github.com/davidsandberg/facenet/issues/236"),
    ("host_oom", "Killed", "github.com/BVLC/caffe/issues/886"),
    ("host_oom", "[Sun Mar 30 08:24:00 2025] Out of memory: Killed process 7899 (python) total-vm:26,184,840kB, "
     "anon-rss:153,700,88kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:38964kB oom_score_adj:0",
     "github.com/0jc1/py-autovod/issues/7"),
    ("host_oom", "[Thu Mar 14 01:57:54 2019] Out of memory: Kill process 89746 (python) score 1031 or sacrifice child",
     "github.com/intel/platform-resource-manager/issues/42"),
    # distributed failures: the NCCL watchdog, NCCL's own errors, the store, the launchers
    ("nccl_timeout", REAL_NCCL_WATCHDOG, "github.com/hiyouga/LlamaFactory/issues/7396"),
    ("nccl_timeout", "ncclSystemError: System call (socket, malloc, munmap, etc) failed.",
     "github.com/rstrudel/segmenter/issues/60"),
    ("nccl_timeout", "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system "
     "error, NCCL version 2.7.8", "github.com/rstrudel/segmenter/issues/60"),
    ("nccl_timeout", "[rank1]: ncclInternalError: Internal check failed.", "github.com/vllm-project/vllm/issues/10453"),
    # PyTorch <= 1.x (DataParallel, torch.cuda.nccl) capitalises it
    ("nccl_timeout", "RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)",
     "github.com/Tencent-Hunyuan/HunyuanVideo/issues/114"),
    ("nccl_timeout", "RuntimeError: NCCL Error 1: unhandled cuda error", "github.com/pytorch/pytorch/issues/11756"),
    ("store_barrier", "timed out initializing process group in store based barrier on rank",
     "tests/wild chatglm2-store-barrier-timeout-6"),
    ("nccl_shm", "Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)",
     "tests/wild videodiffusion-nccl-shm-docker-2"),
    ("store_barrier", "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
     "store_based_barrier_key:1 (world_size=4, worker_count=2, timeout=0:30:00)", "github.com/lllyasviel/ControlNet/issues/380"),
    ("rank_failure", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
     "github.com/Vision-CAIR/MiniGPT-4/issues/237"),
    ("rank_failure", "  exitcode  : 1 (pid: 78970)", "github.com/Vision-CAIR/MiniGPT-4/issues/237"),
    ("rank_failure", "RuntimeError: Socket Timeout", "github.com/pytorch/pytorch/issues/63455"),
    ("rank_failure", "RuntimeError: [2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
     "key-value store by key '0', but store->get('0') got error: Socket Timeout",
     "github.com/axolotl-ai-cloud/axolotl/issues/809"),
    ("rank_failure", "[E616 02:08:15.931416442 socket.cpp:1023] [c10d] The client socket has timed out after 600000ms "
     "while trying to connect to (172.17.0.9, 50437).", "github.com/vllm-project/vllm/issues/19670"),
    # the same, as PyTorch 2.0 counts it in seconds
    ("rank_failure", "[E socket.cpp:793] [c10d] The client socket has timed out after 1800s while trying to connect to "
     "(127.0.0.1, 48391).", "github.com/lllyasviel/ControlNet/issues/382"),
    # rank 0's store went away under the others: "a possible application crash on rank 0"
    ("rank_failure", "RuntimeError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
     "key-value store by key '0', but store->get('0') got error: Connection reset by peer. This may indicate a possible "
     "application crash on rank 0 or a network set up issue.", "github.com/hiyouga/LlamaFactory/issues/1808"),
    ("rank_failure", "[2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/global/D1/homes/sushant/"
     "sushanta/venv/bin/python3.10', '-u', 'trainCLM.py', '--local_rank=1', '--deepspeed', '/home/sushant/D1/sushanta/"
     "try/nepaligpt/clm/config/deepspeed_config.json'] exits with return code = -11",
     "github.com/deepspeedai/DeepSpeedExamples/issues/626 (the DeepSpeed launcher)"),
    ("rank_failure", "subprocess.CalledProcessError: Command '['/home/yh/anaconda3/bin/python', '-u', 'train.py', "
     "'--local_rank=0']' returned non-zero exit status 1.", "github.com/megvii-research/MSPN/issues/31"),
    ("rank_failure", "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: "
     "226263) of binary: /home/student/2022/ai22mtech12005/miniconda3/envs/climb/bin/python",
     "github.com/huggingface/accelerate/issues/1473 (accelerate launch --multi_gpu)"),
    ("duplicate_gpu", "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000",
     "github.com/Peterande/D-FINE/issues/289"),
    ("duplicate_gpu", "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
     "github.com/Peterande/D-FINE/issues/289"),
    ("ddp_ready_twice", "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the "
     "following reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model parameters "
     "are not shared across multiple concurrent forward-backward passes2) Reused parameters in multiple reentrant "
     "backward passes. For example, if you use multiple `checkpoint` functions to wrap the same part of your model, it "
     "would result in the same set of parameters been used by different reentrant backward passes multiple times, and "
     "hence marking a variable ready multiple times. DDP does not support such use cases yet.",
     "github.com/OFA-Sys/Chinese-CLIP/issues/13"),
    # DataLoader deaths
    ("dataloader_killed", "RuntimeError: DataLoader worker (pid 1817) is killed by signal: Killed. ",
     "github.com/pytorch/pytorch/issues/8976"),
    ("dataloader_killed", "ERROR: Unexpected segmentation fault encountered in worker.",
     "github.com/facebookresearch/pycls/issues/146"),
    ("dataloader_handover", "RuntimeError: received 0 items of ancdata", "github.com/rusty1s/himp-gnn/issues/7"),
    # an index out of range on the GPU: a label >= the number of classes
    ("device_assert", "RuntimeError: CUDA error: device-side assert triggered", "github.com/Deci-AI/super-gradients/issues/1307"),
    ("device_assert", "RuntimeError: cuda runtime error (59) : device-side assert triggered at /opt/conda/conda-bld/"
     "pytorch_1556653215914/work/aten/src/THCUNN/generic/ClassNLLCriterion.cu:110", "github.com/JDAI-CV/DCL/issues/5"),
    ("label_out_of_range", "/opt/conda/conda-bld/pytorch_1595629427478/work/aten/src/THCUNN/ClassNLLCriterion.cu:108: "
     "cunn_ClassNLLCriterion_updateOutput_kernel: block: [0,0,0], thread: [31,0,0] Assertion `t >= 0 && t < n_classes` "
     "failed.", "github.com/pytorch/pytorch/issues/25537"),
    ("embedding_index_out_of_range", "IndexError: index out of range in self",
     "github.com/huggingface/transformers/issues/12763 (fixed by resize_token_embeddings)"),
    # a warning that matters: predictions and targets broadcast against each other
    ("target_size_mismatch", "/home/ec2-user/anaconda3/envs/python3/lib/python3.6/site-packages/torch/nn/modules/loss.py"
     ":431: UserWarning: Using a target size (torch.Size([32, 1])) that is different to the input size "
     "(torch.Size([32])). This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
     "same size.", "github.com/deepset-ai/FARM/issues/229"),
    # TensorFlow 1's NaN guards: check_numerics on the loss or the global norm, the Estimator's NanTensorHook
    ("nonfinite_loss", "INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl."
     "InvalidArgumentError'>, LossTensor is inf or nan. : Tensor had NaN values", "github.com/tensorflow/models/issues/5516"),
    ("nonfinite_loss", "[  904/ 1000] loss = -4.0903835296630862019-05-24 13:48:54.633530: E tensorflow/core/kernels/"
     "check_numerics_op.cc:185] abnormal_detected_host @0x1020dc06000 = {1, 0} Found Inf or NaN global norm.",
     "github.com/Grzego/handwriting-generation/issues/13"),
    ("nonfinite_loss", "ERROR:tensorflow:Model diverged with loss = NaN.", "github.com/tensorflow/tensor2tensor/issues/106"),
    ("nonfinite_loss", "NaN detected", "github.com/ryankiros/visual-semantic-embedding/issues/10"),
    ("nonfinite_loss", "InvalidArgumentError: Nan in summary histogram for: Variable_2_1",
     "github.com/hi-abhi/tensorflow-value-iteration-networks/issues/4"),
    # the tail of DDP's unused-parameters error, pasted without its first line
    ("ddp_unused_parameters", "Parameter indices which did not receive grad for rank 0: 1", "tests/wild ddcap-ddp-unused-35"),
    # the copied early-stopping helper printing a NaN validation loss
    ("nan_checkpoint_metric", "Validation loss decreased (nan --> nan).  Saving model ...",
     "tests/wild tslib-vali-nan-prenorm-315"),
    # a process that died in native code: no cause by itself (error_readings.toml ranks what it may be)
    ("native_crash", "[Info: Device_0: train_Ep_11: loss: 4.38811e+02; avg_loss: 4.53619e+02]:  20%|| 11/56 "
     "[00:02<00:08,  5.02it/s]Segmentation fault (core dumped)", "github.com/Henry1iu/TNT-Trajectory-Prediction/issues/33"),
    ("native_crash", 'Thread 1 "python" received signal SIGSEGV, Segmentation fault.', "github.com/pytorch/pytorch/issues/6449"),
    ("native_crash", "[1]    122549 illegal hardware instruction (core dumped)  python predict.py "
     "pre-trained/semi-metal-classification.pth.tar", "github.com/pytorch/pytorch/issues/2714"),
    # out of memory in the wordings of older and other stacks
    ("cuda_oom", "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1513368888240/work/torch/lib/THC/generic/"
     "THCStorage.c line=82 error=2 : out of memory", "github.com/Cadene/vqa.pytorch/issues/47 (PyTorch 0.3)"),
    ("cuda_oom", "cuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.",
     "github.com/junjie18/CMT/issues/15 (spconv)"),
    # NCCL's own allocation on the GPU: an OOM, not a transport failure
    ("cuda_oom", "VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'",
     "github.com/NVIDIA/TensorRT-LLM/issues/1670"),
    ("cuda_oom", "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
     "github.com/NVIDIA/nccl/issues/1235"),
    ("tf_oom", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
     "4770354232 bytes.", "github.com/patrickbryant1/AFProfile/issues/8 (maintainer: needs a bigger GPU)"),
    # XLA's older capitalisation, the paste wrapped right after `Out`; the newer XLA allocator's wording
    ("tf_oom", "[1] 2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/"
     "local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out ", "tests/wild jax-xla-oom-fragmentation-788"),
    ("tf_oom", "Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device "
     "ordinal 0", "tests/wild jax-privacy-resource-exhausted-mem-fraction-10"),
    # the host's OOM killer as a shell, the kernel's syslog, a progress bar and torchrun report it
    ("host_oom", "./train.sh: line 1:  7364 Killed                  python3 train_Donly.py --name=D0 --warpN=0 "
     "--pertFG=0.2", "github.com/chenhsuanlin/spatial-transformer-GAN/issues/35"),
    ("host_oom", "  6%|######                 | 3787/62565 [04:47<1:10:53, 13.82it/s]Killed",
     "github.com/he-dhamo/simsg/issues/3 (bar abridged)"),
    # a Keras 1.x progress bar that the kernel killed mid-line, the word glued to the last loss printed
    ("host_oom", "165376/296960 [===============>..............] - ETA: 365s - loss: 2.1371Killed",
     "github.com/keras-team/keras/issues/3476 (fit_generator's workers and queue)"),
    # torchrun itself signalled from outside: its SIGTERMs to the ranks are that signal's, no rank's failure
    ("launcher_signalled", "torch.distributed.elastic.multiprocessing.api.SignalException: Process 9724 got signal: 15",
     "a continued-pretraining OLMo-1B log committed to a public repository (healthy to step 1010, then stopped)"),
    ("launcher_signalled", "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down "
     "workers", "a public project's docs on a job stopped with no other error above it (find_string)"),
    ("launcher_signalled", "W0616 00:37:22.830000 4015698 torch/distributed/elastic/agent/server/api.py:719] Received "
     "Signals.SIGTERM death signal, shutting down workers", "a public repository's error notes (find_string)"),
    ("host_oom", "Aug 18 03:19:11 169 kernel: Killed process 7748 (python) total-vm:12907828kB, anon-rss:11500204kB, "
     "file-rss:0kB", "github.com/systemd/systemd/issues/6966"),
    ("host_oom", "  traceback : Signal 9 (SIGKILL) received by PID 14750", "github.com/lzhxmu/CPPO/issues/6"),
    # NCCL losing a peer or a link
    ("nccl_network", "a100-st-p4d24xlarge-22:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by "
     "remote peer a100-st-p4d24xlarge-22.luciodelelis-92732890-0458-4f76-8369-c4fee80b23e7.pcluster<47861>",
     "github.com/NVIDIA/nccl/issues/795 (a remote rank crashed)"),
    ("nccl_network", "gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by "
     "remote peer gpu004.ds-a4-r02.abc.com<55693>", "github.com/NVIDIA/nccl-tests/issues/166"),
    ("nccl_network", "kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer "
     "10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)",
     "github.com/NVIDIA/nccl-tests/issues/252"),
    ("nccl_network", "user:16901:16967 [2] proxy.cc:1519 NCCL WARN [Proxy Service 2] Failed to execute operation "
     "Connect from rank 2, retcode 3", "github.com/NVIDIA/nccl-tests/issues/188"),
    ("nccl_network", "NCCL failure common.cu:921 'unhandled system error'", "github.com/NVIDIA/nccl-tests/issues/15"),
    ("nccl_network", "(LLMRayActor pid=32499, ip=10.65.0.3) ERROR 03-21 14:01:57 worker_base.py:581] socketStartConnect: "
     "Connect to 172.18.0.2<44801> failed : Software caused connection abort", "a public RL-on-Ray write-up's "
     "pasted vLLM worker error (NCCL's socket layer, no WARN prefix)"),
    # an index out of range inside a CUDA kernel
    ("embedding_index_out_of_range", "../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: "
     "[18,0,0], thread: [5,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
     "github.com/huggingface/transformers/issues/28104"),
    # images found without their labels or captions
    ("labels_not_found", "> No caption file found for 758 images. Training will continue without captions for these "
     "images. If class token exists, it will be used.", "github.com/bmaltais/kohya_ss/issues/1370 (tests/wild, tune "
     "half: caption_extension left at .caption for .txt files)"),
    ("labels_not_found", "AssertionError: train: No labels found in /home/wlixill/datasets/armor/labels/train2017.cache"
     ", can not start training. See https://github.com/ultralytics/yolov5/wiki/Train-Custom-Data",
     "github.com/ultralytics/yolov5/issues/11085"),
    ("labels_not_found", "train: WARNING: No labels found in /workspace/volume/private/GC_test/data/mybdd/images/"
     "train.cache. See https://github.com/ultralytics/yolov5/wiki/Train-Custom-Data",
     "a public YOLOv5-on-BDD100k training note (labels converted to the wrong folder: 0 found, 23573 missing)"),
    ("labels_not_found", "AssertionError: train: No labels in /workspace/volume/private/GC_test/data/mybdd/images/"
     "train.cache. Can not train without labels. See https://github.com/ultralytics/yolov5/wiki/Train-Custom-Data",
     "the same note: YOLOv5's older wording of the stop"),
    # NumPy's sum or difference of values already overflowed
    ("numpy_overflowed_operands", "/root/ray/python/ray/rllib/es/utils.py:81: RuntimeWarning: invalid value "
     "encountered in subtract", "github.com/ray-project/ray/issues/949 (reporter: sumsq and mean hold inf)"),
    ("numpy_overflowed_operands", "/Library/Python/2.7/site-packages/npmat.py:488: RuntimeWarning: invalid value "
     "encountered in multiply", "github.com/dnouri/nolearn/issues/23 (the loss nan after it)"),
    # LLaVA's sample masked whole for a conversation template that does not fit the tokenizer
    ("tokenization_mismatch", "WARNING: tokenization mismatch: 55 vs. 54. (ignored)",
     "github.com/Victorwz/LLaVA-Llama-3/issues/1 (tests/wild, tune half: the wrong --version, loss 0)"),
    # NumPy's overflow in arithmetic outside a data pipeline's file
    ("numpy_overflow", "d:\\sys\\openai_baselines\\baselines\\common\\mpi_adam.py:33: RuntimeWarning: overflow "
     "encountered in multiply.", "github.com/openai/baselines/issues/258 (tests/wild, tune half: all values NaN after)"),
    # TensorFlow's gather with an index past its tensor (an embedding's, a class table's)
    ("tf_gather_out_of_range", "tensorflow.python.framework.errors_impl.InvalidArgumentError: indices[2968] = "
     "30523 is not in [0, 30522)", "github.com/google-research/bert/issues/859"),
    ("tf_gather_out_of_range", "InvalidArgumentError (see above for traceback): indices[56,57] = 66 is not in "
     "[0, 65)", "github.com/zhaoqichang/AttentionDTA_BIBM/issues/1 (reporter: the SMILES vocabulary one short)"),
    ("tf_gather_out_of_range", "  (0) Invalid argument:  indices[23,617] = -26 is not in [0, 61196)",
     "github.com/keras-team/keras-io/issues/602"),
    ("tf_gather_out_of_range", "tensorflow.python.framework.errors_impl.InvalidArgumentError: indices = -1 is not "
     "in [0, 4) [Op:GatherV2]", "github.com/tensorflow/tensorflow/issues/35729"),
    ("device_assert", '/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:115: operator(): block: [0,0,0], '
     'thread: [1,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && "index out of bounds"` failed.',
     "github.com/xhw205/GPLinker_torch/issues/14 (maintainer: a data problem)"),
    # PaddlePaddle's allocator, its message on a line of its own after the operator's BadAlloc line
    ("cuda_oom", "Out of memory error on GPU 0. Cannot allocate 18.062744MB memory on GPU 0, available memory is "
     "only 17.537501MB.", "tests/wild ppdet-yolov3-roadsign-oom-batch-8-3100"),
    ("cuda_oom", "Out of memory error on GPU 0. Cannot allocate 6.933594GB memory on GPU 0, available memory is only "
     "726.750000MB.", "tests/wild pgl-node2vec-gpu-oom-batch-1024-26"),
    # a process started under spawn from a script without the __main__ guard: one line, or wrapped as posted
    ("spawn_without_main_guard", "RuntimeError: An attempt has been made to start a new process before the current "
     "process has finished its bootstrapping phase.", "tests/wild bpr-pytorch-spawn-bootstrapping-num-workers-1"),
    ("spawn_without_main_guard", "        current process has finished its bootstrapping phase.",
     "tests/wild dbpn-windows-dataloader-spawn-no-main-guard-36"),
    # Horovod stopping every rank after one raised or finished early
    ("horovod_shutdown", "[1,3]<stderr>:Horovod has been shut down. This was caused by an exception on one of the ranks "
     "or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the "
     "shutdown was caused by an exception, you should see the exception in the log before the first shutdown "
     "message.", "tests/wild opennmt-tf-horovod-shutdown-early-stopping-985"),
    # Keras's TerminateOnNaN callback
    ("nonfinite_loss", "  3/234 [..............................] - ETA: 33:37:24 - loss: 44.4110Batch 3: Invalid loss, "
     "terminating training", "github.com/manishsoni1908/Mobilenet-ssd-keras/issues/21"),
    # session 46: probes of threads outside tests/wild (the corpus stays unread), each a wording no signature had
    ("collective_mismatch", "init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and "
     "around rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
     "https://github.com/NVIDIA/nccl/issues/296"),
    ("corrupt_sample", "OSError: image file is truncated (23 bytes not processed)",
     "https://github.com/eg4000/SKU110K_CVPR19/issues/28"),
    ("corrupt_sample", "DataLossError: corrupted record at 15458974733", "https://github.com/AdaCompNUS/pfnet/issues/1"),
    ("host_oom", "(raylet) [2023-07-23 15:21:29,851 E 9751 9751] (raylet) node_manager.cc:3084: 4 Workers (tasks / "
     "actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: b287aac2de42b, "
     "IP: 172.28.0.12) over the last time period.", "https://github.com/flwrlabs/flower/issues/2157 (Ray's monitor)"),
    ("cuda_oom", "[17:36:58] /opt/mxnet/dmlc-core/include/dmlc/./logging.h:308: [17:36:58] "
     "src/storage/./pooled_storage_manager.h:111: cudaMalloc failed: out of memory",
     "https://github.com/zackchase/mxnet-the-straight-dope/issues/361"),
    ("cuda_oom", "[19:03:47] /home/deeper/mxnet/dmlc-core/include/dmlc/./logging.h:235: [19:03:47] "
     "src/storage/./pooled_storage_manager.h:62: Memory allocation failed.", "https://github.com/apache/mxnet/issues/2913"),
    ("cuda_oom", "Non-zero status code returned while running ReduceSum node. onnxruntime::BFCArena::AllocateRawInternal "
     "Failed to allocate memory for requested buffer of size 939524096", "https://github.com/microsoft/onnxruntime/issues/16307"),
    ("cuda_oom", "2024-09-05 15:15:49.9522079 [E:onnxruntime:, sequential_executor.cc:514 onnxruntime::ExecuteKernel] "
     "Non-zero status code returned while running FusedConv node. Name:'Conv_3' Status Message: D:\\a\\_work\\1\\s\\"
     "onnxruntime\\core\\framework\\bfc_arena.cc:376 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate "
     "memory for requested buffer of size 643840", "https://github.com/hacksider/Deep-Live-Cam/issues/547"),
    ("cuda_oom", "terminate called after throwing an instance of 'paddle::memory::allocation::BadAlloc'",
     "https://github.com/PaddlePaddle/Paddle/issues/42341"),
    ("dataloader_killed", "RuntimeError: unable to mmap 4096 bytes from file </torch_362873_3123855485_63350>: Cannot "
     "allocate memory (12)", "https://github.com/kohya-ss/sd-scripts/issues/1790 (DataLoader shared memory; fixed by "
     "raising vm.max_map_count)"),
    ("gloo_connect", "RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/"
     "pair.cc:152]", "https://github.com/aws-samples/aws-do-eks/pull/69"),
    ("store_barrier", "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
     "multihost_broadcast_sync0. Timed out task names:", "https://github.com/marin-community/levanter/issues/432"),
    ("store_barrier", "Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0. "
     "This usually happens because a task triggered the barrier too early or too slowly.",
     "https://github.com/AI-Hypercomputer/gpu-recipes/issues/2"),
    ("label_out_of_range", "W tensorflow/core/framework/op_kernel.cc:975] Invalid argument: Received a label value of 255 "
     "which is outside the valid range of [0, 10).  Label values: 65 229 184 161 102",
     "https://github.com/tensorflow/tensorflow/issues/5932"),
    ("label_out_of_range", "Exception: /paddle/paddle/fluid/operators/cross_entropy_op.h:159 Assertion `label >= 0 && "
     "label < feature_size_` failed (The label is out of the range. 1).", "https://github.com/PaddlePaddle/Paddle/issues/19423"),
    ("target_size_mismatch", "UserWarning: Using a target size (torch.Size([16, 1, 28, 28])) that is",
     "https://github.com/pytorch/examples/pull/220 (the warning wrapped after `that is`)"),
    ("empty_param_list", '    raise ValueError("optimizer got an empty parameter list")',
     "https://github.com/lxztju/pytorch_classification/issues/29"),
    ("empty_dataset", "ValueError: num_samples should be a positive integer value, but got num_samples=0",
     "https://github.com/zhou13/lcnn/issues/64"),
    ("label_shape_mismatch", "AssertionError: The num_classes (80) in Shared2FCBBoxHead of MMDataParallel does not matches "
     "the length of CLASSES 4) in CocoDataset", "https://github.com/SwinTransformer/Swin-Transformer-Object-Detection/issues/120"),
    ("label_shape_mismatch", "ValueError: Shapes (None, 8) and (None, 7) are incompatible",
     "https://github.com/tensorflow/tensorflow/issues/52060"),
    ("label_shape_mismatch", "logits and labels must have the same first dimension, got logits shape [32,271573] and labels "
     "shape [960]", "https://github.com/keras-team/keras/issues/17368"),
    ("numpy_var_dof", "/home/porte254/miniforge3/envs/whales/lib/python3.11/site-packages/numpy/_core/_methods.py:219: "
     "RuntimeWarning: Degrees of freedom <= 0 for slice", "https://github.com/microsoft/whales/issues/7 (NumPy's var/std; "
     "harmless in github.com/virajbdeshpande/AmpliconArchitect/issues/65, so medium)"),
    ("unequal_samples", "RuntimeError: stack expects each tensor to be equal size, but got [4, 128, 170] at entry 0 and "
     "[4, 96, 128] at entry 2", "https://github.com/bghira/SimpleTuner/issues/59"),
    ("unequal_samples", "pyarrow.lib.ArrowInvalid: Column 1 named input_ids expected length 599 but got length 1500",
     "https://github.com/huggingface/datasets/issues/1817"),
    ("label_set_error", "`ValueError: This solver needs samples of at least 2 classes in the data, but the data contains "
     "only one class: 1`", "https://github.com/iit-cs579/main/issues/298"),
    ("label_set_error", '{\'status\': \'Error\', \'message\': "y contains previously unseen labels: \'Private\'"}',
     "https://github.com/pplonski/my_ml_service/issues/4"),
    ("invalid_annotations_dropped", "Filtered out 3677 instances without valid segmentation. There might be issues in "
     "your dataset generation process.", "https://github.com/facebookresearch/detectron2/issues/1531"),
    ("input_contains_nan", "Input contains NaN, infinity or a value too large for dtype('float64').",
     "https://github.com/stratosphereips/zeek_anomaly_detector/issues/2 (no `ValueError:` before it)"),
    ("rank_failure", "mpirun detected that one or more processes exited with non-zero status, thus causing",
     "https://github.com/horovod/horovod/issues/1012"),
    ("pod_evicted", "4m11s       Warning   Evicted               pod/egg-<id here>    The node was low on resource: memory. "
     "Container egg was using 5053216Ki, which exceeds its request of 0.", "https://github.com/FederatedAI/KubeFATE/issues/64"),
    ("host_oom", "slurmstepd: Job 1171978 exceeded memory limit (18202456 > 16384000), being killed",
     "https://github.com/heronsystems/adeptRL/pull/13"),
    ("cuda_oom", "paddle.fluid.core.EnforceNotMet: enforce allocating <= available failed, 10513462067 > 1369702144",
     "https://github.com/PaddlePaddle/Paddle/issues/8992"),
    ("cuda_oom", "CUDA failure 2: out of memory ; GPU=0 ; hostname=L-156141402 ; expr=cudaMalloc((void**) &deviceBufferPtr, "
     "sizeof(AllocatedElemType) * AsMultipleOf(numElements, 2))", "https://github.com/microsoft/CNTK/issues/2607"),
    ("cuda_oom", 'vllm-1  | ERROR 11-18 18:07:28 engine.py:366]     raise ValueError("No available memory for the cache '
     'blocks. "', "https://github.com/vllm-project/vllm/issues/10439"),
    ("cuda_oom", "INFO 02-26 09:54:05 worker.py:267] model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch "
     "activation peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is -1.05GiB.",
     "https://github.com/vllm-project/vllm/issues/13882"),
    ("cuda_oom", "[ERROR] MD(14433,7fea2effd700,python):2021-12-12-14:13:43.932.181 [mindspore/ccsrc/minddata/dataset/util/"
     "arena.cc:250] Init] cudaHostAlloc failed, ret[2], out of memory", "https://github.com/mindspore-ai/mindspore/issues/172"),
    ("cuda_oom", "[ERROR] PRE_ACT(54175,fffdbcff91e0,python):2024-10-22-11:24:55.301.443 [mindspore/ccsrc/backend/common/"
     "mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics : 29356337664 plus "
     "TotalUsedByEventMemStatistics : 0 and plus alloc size : 301990400 is more than total mem size",
     "https://github.com/candle-org/MindAct/issues/1761 (the line's end as MindSpore prints it)"),
    ("dataloader_worker_error", "2021-04-09 11:54:56,779 - ERROR - DataLoader reader thread raised an exception!Traceback "
     "(most recent call last):", "https://github.com/PaddlePaddle/PaddleClas/issues/673"),
    ("dataloader_worker_error", "RuntimeError: Exception thrown from user defined Python function in dataset.",
     "https://github.com/mindspore-lab/mindyolo/issues/370"),
    ("no_labels_in_batch", "ValueError: The model did not return a loss from the inputs, only the following keys: "
     "logits. For reference, the inputs it received are input_ids,attention_mask.",
     "https://github.com/nlp-with-transformers/notebooks/issues/133"),
    ("empty_dataset", "ValueError: `Dataloader` returned 0 length. Please make sure that it returns at least 1 batch",
     "https://github.com/Morizeyao/GPT2-Chinese/issues/240 (Lightning's wording)"),
    ("empty_dataset", "ValueError: Dataloader returned 0 length. Please make sure that your Dataloader atleast returns "
     "1 batch", "Lightning 0.x's wording, without backticks (review of 16ab377)"),
    ("pod_evicted", "Message:        The node was low on resource: memory.", "https://github.com/kubeflow/trainer/issues/301"),
    ("corrupt_sample", "tensorflow.python.framework.errors_impl.DataLossError: truncated record at 40894' failed with "
     "Read less bytes than requested", "TF's truncated-record wording (review of d0ab36f)"),
    ("allocator_cache_flushes", "[2022-07-13 21:09:13,651] [WARNING] [stage3.py:2391:step] 2 pytorch allocator cache "
     "flushes since last step. this happens when there is high memory pressure and is detrimental to performance.",
     "https://github.com/deepspeedai/DeepSpeedExamples/issues/186 (OOM despite ZeRO-3)"),
    # session 52: out-of-memory wordings of other accelerators, allocators and hosts
    ("tf_dst_uninitialized", "InternalError (see above for traceback): Dst tensor is not initialized.",
     "https://github.com/naturomics/CapsNet-Tensorflow/issues/39 (maintainer: batch too big for the GPU; "
     "tensorflow #7025 made it `(are you out of memory?)`)"),
    ("cuda_oom", "RuntimeError: XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; 15.56 GiB total capacity; 0 bytes "
     "already allocated; 0 bytes reserved in total by PyTorch)",
     "https://github.com/intel/intel-extension-for-pytorch/issues/629"),
    ("cuda_oom", "RuntimeError: Current platform can NOT allocate memory block with size larger than 4GB! Tried to "
     "allocate 6.85 GiB (GPU  0; 15.56 GiB total capacity; 0 bytes already allocated; 0 bytes reserved in total by "
     "PyTorch)", "https://github.com/intel/intel-extension-for-pytorch/issues/629"),
    ("cuda_oom", "RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total capacity; "
     "59.57 GiB already allocated; 59.57 GiB current active; 16.54 MiB free; 60.06 GiB reserved in total by PyTorch)",
     "https://github.com/hiyouga/LlamaFactory/issues/5491 (Ascend 910B)"),
    ("cuda_oom", "[ERROR] RecentErrMsg: [PID: 1611576] 2026-03-24-12:14:32.900.217 Memory_Allocation_Failure(EL0004): "
     "Failed to allocate memory.", "https://github.com/hw-native-sys/PTOAS/pull/341 (Ascend runtime)"),
    ("cuda_oom", "                         Search for `hipErrorOutOfMemory' in https://rocm.docs.amd.com/projects/HIP/"
     "en/latest/index.html for more information.", "https://github.com/vladmandic/sdnext/issues/4801 (ROCm)"),
    ("cuda_oom", "2023-11-01 16:19:17.812101: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed "
     "to allocate 127.99TiB (140729850295296 bytes) from device: HIP_ERROR_OutOfMemory",
     "https://github.com/keras-team/keras/issues/13889 (tensorflow-rocm)"),
    ("cuda_oom", "  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
     "https://github.com/NVIDIA/cccl/issues/2092 (thrust)"),
    ("cuda_oom", "xgboost.core.XGBoostError: [10:21:03] ../src/common/device_helpers.cu:43: Memory allocation error on "
     "worker 0: Caching allocator", "XGBoost's dh::detail::ThrowOOMError wording (src/common/device_helpers.cu)"),
    ("cuda_oom", "RuntimeError: Device(id:0) memory isn't enough and alloc failed, kernel name: Default/Conv2D-op1, "
     "alloc size: 1073741824B.", "MindSpore's MS_LOG wording in its runtime actors (mindspore/ccsrc/runtime)"),
    ("cuda_oom", "  what():  Memory Object Allocation Failure",
     "https://github.com/lightgbm-org/LightGBM/issues/4480 (LightGBM's GPU learner on OpenCL)"),
    ("cuda_oom", "lightgbm.basic.LightGBMError: Memory Object Allocation Failure",
     "https://github.com/Kaggle/docker-python/pull/923 (JAX had taken the GPU's memory)"),
    ("host_oom", "**Your session crashed after using all available RAM.**",
     "https://github.com/googlecolab/colabtools/issues/2332"),
    ("host_oom", "lightgbm.basic.LightGBMError: Out of Host Memory", "https://github.com/lightgbm-org/LightGBM/issues/4492"),
    ("xla_remat_short", "2024-02-19 15:14:56.882326: W external/xla/xla/service/hlo_rematerialization.cc:2941] Can't "
     "reduce memory use below -30.29GiB (-32529110990 bytes) by rematerialization; only reduced to 49.62GiB "
     "(53280000080 bytes), down from 49.62GiB (53280000080 bytes) originally",
     "https://github.com/google-deepmind/mujoco/issues/1431 (Brax's replay buffer sized by num_timesteps)"),
]

# NCCL WARN lines printed while NCCL probes transports it then does without: the run goes on
HARMLESS_NCCL_WARNINGS = [
    ("65826-86bd789679-2dxbs:80744:80744 [1] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed",
     "github.com/zai-org/ImageReward/issues/65 (training went on over IB)"),
    ("65826-86bd789679-2dxbs:80746:80746 [3] transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_59",
     "github.com/zai-org/ImageReward/issues/65"),
    ("ml3:32632:32662 [0] misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]",
     "github.com/horovod/horovod/issues/685 (NCCL fell back to sockets)"),
]

BENIGN_LINES = [
    ("oom_avoided", "       # to avoid CUDA out of memory error.", "a public shell script's comment before "
     "`export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (reconstruct4D's run script)"),
    ("oom_avoided", "    # TODO: when large or xlarge is chosen, reduce batch_size to avoid CUDA out of memory",
     "a public YOLO trainer wrapper's source"),
    ("inference_only_params", "12/02/2023 18:33:58 - INFO - llmtuner.model.loader - This IS expected that the trainable "
     "params is 0 if you are using model for inference only.", "tests/wild llamafactory-export-trainable-params-zero-"
     "expected-1714"),
    ("darknet_empty_region", "Region 23 Avg IOU: nan, Class: nan, Obj: nan, No Obj: 0.514100, .5R: nan, .75R: nan,  "
     "count: 0", "tests/wild darknet-burn-in-rate-zero-normal-1082 (the maintainer: normal)"),
    ("darknet_empty_region", "Region 82 Avg IOU: -**nan**, Class: -**nan**, Obj: -**nan**, No Obj: 0.504497, .5R: "
     "-**nan**, .75R: -**nan**,  count: 0", "tests/wild darknet-yolov3-region-nan-count-zero-normal-600 (bolded as "
     "posted)"),
    ("head_size_mismatch", "Shape of head.cls_preds.0.weight in checkpoint is torch.Size([80, 128, 1, 1]), while shape "
     "of head.cls_preds.0.weight in model is torch.Size([8, 128, 1, 1]).", "tests/wild yolox-voc-cls-preds-shape-warning-"
     "healthy-1242 (YOLOX's wording)"),
    ("head_size_mismatch", "Initialize the weights. Loading mobilenet_v3_small-8427ecf0.pth The model and loaded "
     "state dict do not match exactly size mismatch for head.layers.1.fc.weight: copying a param with shape "
     "torch.Size([1", "tests/wild awesome-backbones-head-fc-size-mismatch-1000-classes-36"),
    ("tensorboard_nonfinite_scalar", " WARNING NaN or Inf found in input tensor", "tests/wild wenet-nan-inf-input-tensor-"
     "warning-1472 (github.com/wenet-e2e/wenet/issues/1472)"),
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
    ("loss_scale_search", "[2023-11-06 11:54:09,446] [INFO] [logging.py:96:log_dist] [Rank 0] Overflow detected. "
     "Skipping step. Attempted loss scale: 65536, reducing to 32768.0", "DeepSpeed's log_dist wording, in a public "
     "DeepSpeed-Chat training log (its run trains on)"),
    ("loss_scale_search", "[2024-09-23 10:11:01,021] [INFO] [fused_optimizer.py:345:_update_scale] Reducing dynamic "
     "loss scale from 32768.0 to 16384.0", "microsoft/MS-AMP cifar10_deepspeed example's output (loss 1.209 after it)"),
    ("loss_scale_search", "[2026-06-18 23:36:56,643] [INFO] [unfused_optimizer.py:207:step] [deepspeed] fp16 dynamic "
     "loss scale overflow! Skipping step. Attempted loss scale: 65536.0, reducing to 32768.0",
     "DeepSpeed's unfused optimizer, in a public fine-tuning log"),
    ("pretraining_head_unused", "Some weights of the model checkpoint at bert-large-uncased were not used when "
     "initializing BertModel: ['cls.predictions.transform.LayerNorm.bias', 'cls.predictions.transform.dense.weight', "
     "'cls.seq_relationship.weight', 'cls.predictions.bias', 'cls.predictions.transform.dense.bias', "
     "'cls.predictions.transform.LayerNorm.weight', 'cls.predictions.decoder.weight', 'cls.seq_relationship.bias']",
     "github.com/dmmiller612/bert-extractive-summarizer/issues/118 (expected, per huggingface/transformers#5421)"),
    ("ddp_no_unused_parameters", "[W reducer.cpp:1303] Warning: find_unused_parameters=True was specified in DDP "
     "constructor, but did not find any unused parameters in the forward pass. ", "github.com/cszn/KAIR/issues/103"),
    ("omp_threads_default", "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to "
     "avoid your system being overloaded, please further tune the variable for optimal performance in your application "
     "as needed. ", "github.com/ultralytics/yolov5/issues/8320"),
    ("meshgrid_indexing", "/usr/local/lib/python3.11/site-packages/torch/functional.py:507: UserWarning: torch.meshgrid: "
     "in an upcoming release, it will be required to pass the indexing argument. (Triggered internally at "
     "/Users/runner/work/pytorch/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:3550.)",
     "github.com/facebookresearch/nougat/issues/212"),
    ("dataparallel_scalar_gather", "UserWarning: Was asked to gather along dimension 0, but all input tensors were "
     "scalars; will instead unsqueeze and return a vector.",
     "github.com/huggingface/transformers/issues/852 (maintainer: it should be fine; tests/wild, tune half)"),
    ("tokenizer_length_notice", "Token indices sequence length is longer than the specified maximum sequence length "
     "for this model (2392 > 2048). Running this sequence through the model will result in indexing errors.",
     "tests/wild spin-token-len-warning-ok-8"),
    ("nccl_optional_plugin", "Unable to load libnccl-net.so : libnccl-net.so: cannot open shared object file: No "
     "such file or directory", "github.com/NVIDIA/nccl/issues/162 (maintainer: harmless)"),
    ("nccl_optional_plugin", "h0913n-ubuntu:12877:12877 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open "
     "libibverbs.so[.1]", "github.com/NVIDIA/nccl/issues/259 (maintainer: harmless)"),
    ("tf_queue_cancelled_at_end", "2021-10-22 14:42:01.299352: W tensorflow/core/kernels/queue_base.cc:277] "
     "_0_fifo_queue: Skipping cancelled enqueue attempt with queue not closed",
     "github.com/DeepLabCut/DeepLabCut/issues/1557 (maintainer: expected when training ends)"),
    ("cudnn_plan_failed", "/opt/conda/lib/python3.10/site-packages/torch/autograd/graph.py:744: UserWarning: Plan "
     "failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed "
     "cudnn_status: CUDNN_STATUS_NOT_SUPPORTED", "github.com/pytorch/pytorch/issues/121834 (maintainer: harmless)"),
    ("tf_end_of_sequence", "2018-11-29 13:20:56.276236: W tensorflow/core/framework/op_kernel.cc:1192] Out of range: "
     "End of sequence", "github.com/tnybny/Frame-level-anomalies-in-videos/issues/6 (maintainer: expected)"),
    ("deepspeed_scale_overflow_bare", "[deepspeed] fp16 dynamic loss scale overflow!",
     "github.com/TsinghuaAI/CPM-1-Finetune/issues/28 (maintainer: normal)"),
    ("process_group_not_destroyed", "[rank0]:[W602 08:42:46.129824551 ProcessGroupNCCL.cpp:1126] Warning: WARNING: "
     "process group has NOT been destroyed before we destruct ProcessGroupNCCL. ",
     "github.com/Lightning-AI/pytorch-lightning/pull/19931"),
    ("bitsandbytes_dtype_override", "Overriding torch_dtype=None with `torch_dtype=torch.float16` due to requirements "
     "of `bitsandbytes`", "github.com/bitsandbytes-foundation/bitsandbytes/issues/230"),
    ("cuda_driver_shutting_down", "ERROR: Check failed: error == cudaSuccess (29 vs. 0) driver shutting down",
     "github.com/NVIDIA/DIGITS/issues/1145 (at exit, after training)"),
    ("distributed_launch_deprecated", "The module torch.distributed.launch is deprecated and going to be removed in "
     "future. Migrate to torch.distributed.run", "github.com/pytorch/pytorch/issues/60262"),
    ("jax_backend_probe", "xla_bridge.py:841] Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: "
     "libtpu.so: cannot open shared object file: No such file or directory",
     "github.com/google-deepmind/alphafold3/issues/656"),
    ("scalar_target_size", "model.py:210: UserWarning: Using a target size (torch.Size([1])) that is different to the "
     "input size (torch.Size([])). This will likely lead to incorrect results due to broadcasting. Please ensure they "
     "have the same size.", "github.com/namisan/mt-dnn/issues/115 (maintainer: it seems fine)"),
    ("lightgbm_no_split", "[LightGBM] [Warning] No further splits with positive gain, best gain: -inf",
     "tests/wild ember-lightgbm-no-further-splits-36"),
    ("tf_unused_variables", "WARNING:tensorflow:Gradients do not exist for variables ['tf_bert_model/bert/pooler/dense/"
     "kernel:0', 'tf_bert_model/bert/pooler/dense/bias:0'] when minimizing the loss.",
     "github.com/huggingface/transformers/issues/2256 (the head reads the token outputs, not the pooler)"),
]


def _line(name: str) -> str:
    return next(line for n, line, _ in REAL_LINES if n == name)


def _passes_prefilter(line: str) -> bool:
    return any(lit in line for lit in prefilter_literals())


def test_the_c_scanner_holds_every_prefilter_literal():
    # analysis/ingest/_logscan.c keeps 255 literals of 2 bytes or more and drops the rest without a word
    literals = textlog_literals()      # the signatures' and the Trainer summary's
    assert len(literals) <= 255 and all(len(lit) >= 2 for lit in literals)


@pytest.mark.parametrize("name,line,source", REAL_LINES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(REAL_LINES)])
def test_real_line_names_its_signature(name, line, source):
    assert _passes_prefilter(line), f"the scanner would never hand this line to Python ({source})"
    event, _ = build_event("train.log", 1, [line])
    assert event is not None and event.signature == name, (source, event)


@pytest.mark.parametrize("line,source", HARMLESS_NCCL_WARNINGS, ids=range(len(HARMLESS_NCCL_WARNINGS)))
def test_an_nccl_warning_about_a_transport_it_does_without_is_no_failure(line, source):
    event, _ = build_event("train.log", 1, [line])
    assert event is None or event.code is None, source


def test_every_signature_has_a_real_line():
    named = {n for n, _, _ in REAL_LINES}
    untested = {s.name for s in signatures() if s.code} - named - {
        # older signatures with their own tests in test_analyzers / test_textlog
        "dataloader_worker_error", "var_dof", "anomaly_nan"}
    assert not untested


@pytest.mark.parametrize("name,line,source", BENIGN_LINES, ids=[n for n, _, _ in BENIGN_LINES])
def test_benign_warning_is_not_a_fault(name, line, source):
    assert _passes_prefilter(line), source
    assert match_benign(line).name == name


def test_a_checkpoint_whose_backbone_does_not_fit_is_no_head_fine_tuned():
    assert match_benign("size mismatch for backbone.conv1.weight: copying a param with shape torch.Size([64, 3, 3, 3]) "
                        "from checkpoint, the shape in current model is torch.Size([64, 3, 7, 7]).") is None
    assert match_benign("size mismatch for fc.weight: copying a param with shape torch.Size([1000, 2048]) from "
                        "checkpoint, the shape in current model is torch.Size([10, 2048]).").name == "head_size_mismatch"


def test_a_correlation_over_a_constant_set_is_the_fault_alone_and_nothing_before_a_run_that_learns(tmp_path):
    warning = ("/usr/lib/python3/dist-packages/scipy/stats/_stats_py.py:4781: ConstantInputWarning: An input array is "
               "constant; the correlation coefficient is not defined.\n  warnings.warn(stats.ConstantInputWarning(msg))\n")
    (tmp_path / "train.log").write_text(warning)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "zero_variance" and d.root_causes[0].severity == "medium"
    assert d.root_causes[0].fix
    (tmp_path / "train.log").write_text(warning + "".join(f"epoch {e} train_loss {1 - 0.02 * e:.3f} val_pearson "
                                                          f"{min(0.9, 0.03 * e):.3f}\n" for e in range(40)))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "healthy"


def test_a_loss_scale_driven_below_one_is_a_fault_not_the_scalers_search():
    line = "2020-03-23 11:48:04 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 0.000244140625"
    assert match_benign(line) is None
    event, _ = build_event("train.log", 1, [line])
    assert event.code == "numerical_instability" and event.fields["scale"] < 1
    # DeepSpeed at its min_loss_scale (a public Megatron-DeepSpeed log: 1585 of 2499 steps skipped)
    line = ("[2023-08-15 07:22:30,556] [INFO] [logging.py:96:log_dist] [Rank 0] Overflow detected. Skipping step. "
            "Attempted loss scale: 1, reducing to 1")
    assert match_benign(line) is None
    event, _ = build_event("train.log", 1, [line])
    assert event.code == "numerical_instability" and event.fields["scale"] == 1


def test_a_statistics_log2_of_0_and_yolos_validation_backgrounds_are_no_fault_beside_a_falling_loss(tmp_path):
    # scvi-tools #3028: a log2 of 0 and the subtract after it on one line of a statistic's code (the subtract's
    # warning makes no domain warning a fault); YOLO's validation set of backgrounds is no training set without labels
    for warning in ("/x/_differential.py:313: RuntimeWarning: divide by zero encountered in log2\n"
                    "/x/_differential.py:313: RuntimeWarning: invalid value encountered in subtract\n",
                    "/x/metrics.py:40: RuntimeWarning: overflow encountered in multiply\n"
                    "/x/metrics.py:41: RuntimeWarning: divide by zero encountered in log\n",
                    "WARNING ⚠️ no labels found in val set, can not compute metrics without labels\n"):
        (tmp_path / "train.log").write_text(warning + _learning_run())
        d, _ = diagnose(tmp_path)
        assert d.root_causes[0].code == "healthy", (warning, d.root_causes[0])


def test_caption_less_images_trained_on_their_class_token_are_by_design(tmp_path):
    line = ("No caption file found for 24 images. Training will continue without captions for these images. If class "
            "token exists, it will be used.\n")
    (tmp_path / "train.log").write_text(line + "[Subset 0 of Dataset 0]\n    class_tokens: sotsuaru dog\n"
                                        "    caption_extension: .caption\n")
    d, _ = diagnose(tmp_path)
    assert "data_pipeline_bug" not in [c.code for c in d.root_causes]
    (tmp_path / "train.log").write_text(line + "    class_tokens: None\n    caption_extension: .caption\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "data_pipeline_bug"


def test_a_trainer_that_stops_for_want_of_labels_says_it_in_a_traceback_and_is_critical(tmp_path):
    # yolov5 #13610: the dataset scan's assertion ends the run before its first step
    (tmp_path / "output.txt").write_text(
        "Traceback (most recent call last):\n  File \"train.py\", line 630, in <module>\n    main(opt)\n"
        "AssertionError: train: No labels found in D:\\data\\labels\\train.cache, can not start training. See "
        "https://docs.ultralytics.com/yolov5/tutorials/train_custom_data\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "data_pipeline_bug" and d.root_causes[0].severity == "critical"


def test_a_difference_of_overflowed_values_is_a_fault_alone_and_a_ratios_0_over_0_is_not(tmp_path):
    # animalai #4 (tests/wild, tune half): PPO's advantages normalised over episodes that never ended
    (tmp_path / "train.log").write_text(
        "INFO:mlagents.trainers: Learner: Step: 2000. No episode was completed since last summary. Training.\n"
        "/Users/x/animalai/trainers/ppo/trainer.py:335: RuntimeWarning: invalid value encountered in subtract\n"
        "  (advantages - advantages.mean()) / (advantages.std() + 1e-10))\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "numerical_instability" and d.root_causes[0].severity == "medium"
    (tmp_path / "train.log").write_text("/x/eval.py:61: RuntimeWarning: invalid value encountered in divide\n"
                                        "  iou = inter / union\n")
    d, _ = diagnose(tmp_path)
    assert "numerical_instability" not in [c.code for c in d.root_causes]


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
    ("RuntimeError: CUDA error: device-side assert triggered", "data_pipeline_bug"),
    ("Killed", "out_of_memory"),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "out_of_memory"),
    ("[rank1]: ncclInternalError: Internal check failed.", "distributed_failure"),
    ("RuntimeError: Socket Timeout", "distributed_failure"),
    ("./train.sh: line 1:  7364 Killed                  python3 train_Donly.py --name=D0", "out_of_memory"),
    ("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1513368888240/work/torch/lib/THC/generic/THCStorage.c "
     "line=82 error=2 : out of memory", "out_of_memory"),
    ("gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
     "gpu004.ds-a4-r02.abc.com<55693>", "distributed_failure"),
])
def test_one_line_pasted_as_output_txt_is_read_as_a_log(tmp_path, line, code):
    (tmp_path / "output.txt").write_text(line + "\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes and d.root_causes[0].code == code


def test_store_barrier_names_the_missing_worker(tmp_path):
    (tmp_path / "train.log").write_text(_line("store_barrier") + "\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "distributed_failure" and "7 workers registered for world_size 8" in d.root_causes[0].issue


def test_store_barrier_with_every_rank_arrived_is_no_fault(tmp_path):
    (tmp_path / "train.log").write_text(_line("store_barrier").replace("worker_count=7", "worker_count=8") + "\n")
    d, _ = diagnose(tmp_path)
    assert "distributed_failure" not in [c.code for c in d.root_causes]


def test_a_paste_of_warnings_that_name_no_failure_is_healthy_without_confidence(tmp_path):
    (tmp_path / "output.txt").write_text(
        "UserWarning: Failed to load image Python extension: libtorch_cuda_cu.so: cannot open shared object file\n"
        + BENIGN_LINES[0][1] + "\n")
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert d.status == "no_failure_found" and top.code == "healthy" and top.confidence < 0.8
    assert any("names no known failure" in e.text for e in top.evidence) and any("harmless" in e.text for e in top.evidence)


def test_a_warning_beside_an_error_is_not_healthy(tmp_path):
    (tmp_path / "output.txt").write_text("UserWarning: Failed to load image Python extension\n"
                                         "RuntimeError: shape '[-1, 400]' is invalid for input of size 300\n")
    d, _ = diagnose(tmp_path)
    assert "healthy" not in [c.code for c in d.root_causes]


def test_a_launcher_reporting_a_failed_rank_asks_for_that_ranks_own_error(tmp_path):
    (tmp_path / "output.txt").write_text(_line("rank_failure") + "\n" + "  exitcode  : 1 (pid: 78970)\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "distributed_failure" and d.root_causes[0].confidence < 0.8
    assert d.status == "needs_more_data" and "first rank that failed" in d.tell_apart


@pytest.mark.parametrize("status", ["RESOURCE_EXHAUSTED", "Resource exhausted", "resource exhausted"])
@pytest.mark.parametrize("rest", ["Out of memory while trying to allocate 5520758552 bytes.", "Out of memory allocating "
                                  "1048576 bytes.", "Failed to allocate request for 2.00GiB on device ordinal 1"])
def test_an_xla_allocation_failure_is_an_oom_in_any_case_and_cut_anywhere_after_its_first_word(status, rest):
    """A pasted line wraps or is cut where the terminal or the post did: the status and the first
    words of the allocator's message already say it is out of memory."""
    first = "Out" if rest.startswith("Out") else "Failed to alloc"
    for cut in range(len(first), len(rest) + 1):
        line = f"jaxlib.xla_extension.XlaRuntimeError: {status}: {rest[:cut]}"
        assert _passes_prefilter(line)
        event, _ = build_event("train.log", 1, [line])
        assert event is not None and event.code == "out_of_memory", line


def test_a_numpy_domain_warning_before_a_crash_is_a_nan_source_and_a_ratios_warning_is_nothing(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    (tmp_path / "a" / "output.txt").write_text(
        "/src/bbox_transform.py:26: RuntimeWarning: invalid value encountered in log\n"
        "  targets_dw = np.log(gt_widths / ex_widths)\nCommand terminated by signal 11\n")
    d, _ = diagnose(tmp_path / "a")
    top = d.root_causes[:2]
    # the log of a box's size (tf-faster-rcnn #107 and text-detection-ctpn #49, tests/wild tune half: boxes of
    # zero or negative size): the boxes first, the unguarded log second, as a warning
    assert [c.code for c in top] == ["data_pipeline_bug", "numerical_instability"]
    assert top[1].severity == "medium"
    # metric code dividing 0 by 0 for a class never predicted: no reading
    (tmp_path / "b" / "output.txt").write_text(
        "metrics.py:12: RuntimeWarning: invalid value encountered in divide\n  precision = tp / (tp + fp)\n")
    d, _ = diagnose(tmp_path / "b")
    assert "numerical_instability" not in [c.code for c in d.root_causes]


def test_a_numpy_domain_warning_alone_is_expected_values(tmp_path):
    # github.com/DiODeProject/MuMoT/issues/160 (maintainer: expected): a log of 0 in a plot's speed
    (tmp_path / "output.txt").write_text(
        "/srv/conda/lib/python3.5/site-packages/mumot/__init__.py:4160: RuntimeWarning: divide by zero encountered in "
        "log\n  self._speed = np.log(np.sqrt(self._Xdot ** 2 + self._Ydot ** 2))\n")
    d, _ = diagnose(tmp_path)
    assert "numerical_instability" not in [c.code for c in d.root_causes]


def test_a_target_size_warning_at_a_batch_of_one_is_a_mismatch_at_any_larger_batch(tmp_path):
    # github.com/sunjesse/shape-attentive-unet/issues/8: masks [1, 256, 256] against outputs [1, 1, 256, 256]
    (tmp_path / "output.txt").write_text(
        "ValueError: Using a target size (torch.Size([1, 256, 256])) that is different to the input size "
        "(torch.Size([1, 1, 256, 256])) is deprecated. Please ensure they have the same size.\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "data_pipeline_bug"


def test_an_oom_printed_as_a_row_of_a_batch_size_probe_is_no_fault(tmp_path):
    # github.com/PetervanLunteren/AddaxAI/issues/27 (maintainer: YOLOv5 raises the batch until it fails)
    table = ("      Params      GFLOPs  GPU_mem (GB)  forward (ms) backward (ms)                   input                  "
             "output\n\n   140045044       835.1         2.233         125.5         52.49      (1, 3, 1280, 1280)      "
             "              list\n\n")
    oom = ("CUDA out of memory. Tried to allocate 126.00 MiB (GPU 0; 8.00 GiB total capacity; 13.08 GiB already "
           "allocated; 0 bytes free; 13.51 GiB reserved in total by PyTorch)\n")
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    (tmp_path / "a" / "output.txt").write_text(table + oom)
    d, _ = diagnose(tmp_path / "a")
    assert all(c.code == "healthy" for c in d.root_causes)
    # training that then runs out of memory raises a traceback: that one is the fault
    (tmp_path / "b" / "output.txt").write_text(
        table + "Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n"
        "torch.cuda.OutOfMemoryError: " + oom)
    d, _ = diagnose(tmp_path / "b")
    assert d.root_causes[0].code == "out_of_memory"


def test_a_traceback_that_ends_in_a_harmless_message_is_harmless(tmp_path):
    # github.com/DeepLabCut/DeepLabCut/issues/1557 (maintainer: the queue is cancelled when training ends)
    (tmp_path / "output.txt").write_text(
        "2021-10-22 14:42:01.299352: W tensorflow/core/kernels/queue_base.cc:277] _0_fifo_queue: Skipping cancelled "
        "enqueue attempt with queue not closed\nException in thread Thread-1:\nTraceback (most recent call last):\n"
        '  File "/ext3/lib/python3.8/site-packages/tensorflow/python/client/session.py", line 1365, in _do_call\n'
        "    return fn(*args)\ntensorflow.python.framework.errors_impl.CancelledError: Enqueue operation was "
        "cancelled\n\t [[{{node fifo_queue_enqueue}}]]\n")
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes] == ["healthy"]


def test_a_python_warning_printed_with_its_path_is_a_warning_and_its_lines_are_not_read_for_words(tmp_path):
    # github.com/zhiyuanyou/UniAD/issues/7: the deprecation's lines name --local_rank, a distributed word
    (tmp_path / "output.txt").write_text(
        "home/ubuntu/anaconda3/envs/bisenet/lib/python3.6/site-packages/torch/distributed/launch.py:186: FutureWarning: "
        "The module torch.distributed.launch is deprecated\nand will be removed in future. Use torchrun.\n"
        "If your script expects `--local_rank` argument to be set, please\nchange it to read from "
        "`os.environ['LOCAL_RANK']` instead.\n  FutureWarning,\n")
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes] == ["healthy"]


def test_a_keras_checkpoint_that_cannot_improve_on_inf_saw_a_nan_loss(tmp_path):
    # github.com/yu4u/age-gender-estimation/issues/97 (settled: the LR): any finite val_loss improves on inf
    (tmp_path / "output.txt").write_text("Epoch 00001: val_loss did not improve from inf\n")
    d, _ = diagnose(tmp_path)
    assert {"numerical_instability", "lr_too_high"} <= {c.code for c in d.root_causes[:2]}


def test_a_quota_that_is_exhausted_is_no_oom():
    event, _ = build_event("train.log", 1, ["grpc: RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Requests'"])
    assert event is None or event.code != "out_of_memory"


def test_paddle_oom_sizes_are_read():
    event, _ = build_event("output.txt", 1, ["Out of memory error on GPU 0. Cannot allocate 6.933594GB memory on GPU 0, "
                                             "available memory is only 726.750000MB."])
    assert event.fields["tried"] == 6.933594e9 and event.fields["free"] == 726.75e6 and event.fields["gpu"] == 0


def test_xla_oom_sizes_are_read():
    event, _ = build_event("train.log", 1, ["RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB "
                                            "(184549376B) on device ordinal 0"])
    assert event.fields.get("tried") == 176 * 2**20
    event, _ = build_event("train.log", 1, ["Resource exhausted: Out of memory while trying to allocate 5520758552 bytes."])
    assert event.fields.get("tried") == 5520758552


def test_oom_sizes_printed_with_an_exponent_are_read_and_a_missing_size_breaks_nothing(tmp_path):
    # tests/wild deepspeed-zero-offload-oom-3869's line, its numbers reprinted as the excerpt probe does
    line = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.8e+02 MiB (GPU 0; 4.000e+00 GiB "
            "total capacity; 1.680000 GiB already allocated; 0 bytes free; 2.7200000 GiB reserved in total by PyTorch)")
    event, _ = build_event("traceback.txt", 1, [line])
    assert event.fields["tried"] == 980 * 2**20 and event.fields["capacity"] == 4 * 2**30
    # with no size read at all, the OOM is still named (the fragmentation check once raised a KeyError)
    (tmp_path / "traceback.txt").write_text("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                                            "lots (GPU 0; 0 bytes free)\n")
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes][:1] == ["out_of_memory"] and not d.engine.get("failed_analyzers")


def test_a_grpc_quota_out_of_requests_is_no_oom():
    event, _ = build_event("train.log", 1, ["grpc: RESOURCE_EXHAUSTED: Out of quota for metric requests"])
    assert event is None or event.code != "out_of_memory"


def test_a_summary_that_counts_no_trainable_parameter_is_a_model_that_cannot_learn(tmp_path):
    """PEFT's print_trainable_parameters() counting 0 (an adapter loaded frozen, or target_modules that match
    nothing): nothing to update. A frozen backbone's Keras summary beside the whole model's, which counts its
    head, is a freeze on purpose. (The lines are the two printers' formats, not taken from a thread: both PEFT
    threads the search returned are in tests/wild's measuring half.)"""
    (tmp_path / "output.txt").write_text("trainable params: 0 || all params: 124,439,808 || trainable%: 0.0\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "no_parameter_updates" and d.root_causes[0].severity == "high"
    (tmp_path / "output.txt").write_text("Total params: 2,257,984\nTrainable params: 0\nNon-trainable params: "
                                         "2,257,984\n\nTotal params: 2,276,434\nTrainable params: 18,450\n"
                                         "Non-trainable params: 2,257,984\n")
    d, _ = diagnose(tmp_path)
    assert "no_parameter_updates" not in [c.code for c in d.root_causes]


def test_no_trainable_parameter_in_a_model_loaded_for_inference_is_expected(tmp_path):
    """hiyouga/LLaMA-Factory #1714 (tests/wild, tune half): merging a LoRA adapter loads the model frozen, and the
    library says that 0 trainable parameters is then expected. Without that line the count is still read."""
    count = "12/02/2023 18:33:58 - INFO - llmtuner.model.loader - trainable params: 0 || all params: 6738415616 || " \
            "trainable%: 0.0000\n"
    said = "12/02/2023 18:33:58 - INFO - llmtuner.model.loader - This IS expected that the trainable params is 0 if " \
           "you are using model for inference only.\n"
    (tmp_path / "output.txt").write_text(count + said)
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes][:1] == ["healthy"]
    (tmp_path / "output.txt").write_text(count)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "no_parameter_updates"


def test_a_named_bce_assert_leads_the_device_side_assert_it_raised(tmp_path):
    """The device-side assert's generic reading (a label out of range) gives way to the assert that names the
    check: BCELoss's input outside [0, 1] is a prediction gone NaN, with the LR as its second reading."""
    (tmp_path / "output.txt").write_text(
        "/opt/conda/conda-bld/pytorch_1695392067780/work/aten/src/ATen/native/cuda/Loss.cu:94: operator(): block: "
        "[0,0,0], thread: [96,0,0] Assertion `input_val >= zero && input_val <= one` failed.\n"
        "RuntimeError: CUDA error: device-side assert triggered\n")
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes[:2]] == ["numerical_instability", "lr_too_high"]


@pytest.mark.parametrize("line,source", [
    ("RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #2 'target' in call "
     "to _thnn_nll_loss2d_forward", "github.com/qubvel-org/segmentation_models.pytorch/issues/466"),
    ("RuntimeError: expected scalar type Long but found Float", "github.com/WenjiaWang0312/TextZoom/issues/57"),
])
def test_labels_in_the_wrong_dtype_are_the_batch_not_the_precision(tmp_path, line, source):
    (tmp_path / "output.txt").write_text(line + "\n")
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes] == ["data_pipeline_bug"], source


def test_opencv_given_an_empty_image_is_an_image_not_read(tmp_path):
    (tmp_path / "output.txt").write_text(
        "cv2.error: OpenCV(4.5.1) /tmp/pip-req-build/opencv/modules/imgproc/src/color.cpp:182: error: "
        "(-215:Assertion failed) !_src.empty() in function 'cvtColor'\n")
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes[:2]] == ["dataloader_failure", "data_pipeline_bug"]


def test_a_value_on_a_harmless_line_is_its_words_not_a_metric(tmp_path):
    """LightGBM's `best gain: -inf` is the start of its split search: beside another warning, the paste is still
    one of warnings that name no failure, not a metric gone Inf that no analyzer explains."""
    (tmp_path / "output.txt").write_text(
        "UserWarning: Failed to load image Python extension: libtorch_cuda_cu.so: cannot open shared object file\n"
        "[LightGBM] [Warning] No further splits with positive gain, best gain: -inf\n")
    d, _ = diagnose(tmp_path)
    assert d.status == "no_failure_found" and d.root_causes[0].code == "healthy"


def test_a_warning_listing_many_names_that_hold_the_keyword_twice_is_matched_in_time():
    """Each name of TensorFlow's unused-variable list matches one way only (the keyword is looked for ahead):
    forty names holding `moving_mean` twice, before a name that fails the list, take no time."""
    import time

    line = ("Gradients do not exist for variables [" + "'moving_mean/moving_mean', " * 40 + "'dense/kernel:0']")
    t0 = time.perf_counter()
    assert match_benign(line) is None
    assert time.perf_counter() - t0 < 0.5


def test_a_garbled_trainable_count_is_no_event_and_non_trainable_is_not_trainable(tmp_path):
    assert signatures() and build_event("train.log", 1, ["Trainable params: ,"])[0] is None
    (tmp_path / "output.txt").write_text("Non-trainable params: 0, Trainable params: 5,000\n")
    d, _ = diagnose(tmp_path)
    assert "no_parameter_updates" not in [c.code for c in d.root_causes]


def test_a_numpy_domain_warning_on_a_box_size_is_the_boxes_even_alone(tmp_path):
    # eragonruan/text-detection-ctpn #49 (tests/wild, tune half): negative ground-truth heights; the source line
    # NumPy prints under its warning takes the log of the box heights
    (tmp_path / "output.txt").write_text(
        "text-detection-ctpn-master1/lib/fast_rcnn/bbox_transform.py:29: RuntimeWarning: invalid value encountered "
        "in log\n  targets_dh = np.log(gt_heights / ex_heights)\n")
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and [e.locator for e in top.evidence] == ["line 1", "line 2"]
    assert "numerical_instability" in [c.code for c in d.root_causes[1:]]


def test_the_box_targets_source_line_is_found_past_a_progress_bars_carriage_returns(tmp_path):
    # `\r` redraws of a progress bar are no lines to the events; the line after the warning is its source
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    (tmp_path / "a" / "output.txt").write_text(
        "Epoch 1:  10%|#  | 1/10\rEpoch 1:  20%|## | 2/10\n"
        "lib/rpn/anchor_target_layer.py:140: RuntimeWarning: invalid value encountered in log\n"
        "  targets_dh = np.log(gt_heights / ex_heights)\n", newline="")
    d, _ = diagnose(tmp_path / "a")
    assert d.root_causes[0].code == "data_pipeline_bug"
    # a line after a library's warning that only mentions boxes is no source line of it
    (tmp_path / "b" / "output.txt").write_text(
        "Epoch 1:  10%|#  | 1/10\rEpoch 1:  20%|## | 2/10\nnum gt_boxes per image: 12.4\n"
        "/opt/conda/lib/python3.8/site-packages/sklearn/metrics/_ranking.py:999: RuntimeWarning: invalid value "
        "encountered in log\nprocessed gt_boxes for 5000 images\n", newline="")
    d, _ = diagnose(tmp_path / "b")
    assert "data_pipeline_bug" not in [c.code for c in d.root_causes]


def test_numpys_log_warning_beside_the_unguarded_log_it_came_from_is_the_fault(tmp_path):
    # DSRG #11 (tests/wild dsrg-tf-log-zero-feat-constrain-loss-zero-11, tune half): the warning, then its source
    # line as pasted; the fix was `np.log(feat + 1e-5)`. A blog's cost (daimami.com/other/918197.htm): the warning
    # beside the pasted cost, a hand-written cross-entropy
    for name, files in (("a", {"output.txt": "RuntimeWarning: divide by zero encountered in log\n\n"
                                             "    unary = -np.log(feat)\n"}),
                        ("b", {"output.txt": "RuntimeWarning: divide by zero encountered in log\n",
                               "train.py": "cost = -1 / m * np.sum(Y * np.log(A) + (1 - Y) * np.log(1 - A))\n"})):
        (tmp_path / name).mkdir()
        for f, text in files.items():
            (tmp_path / name / f).write_text(text)
        d, _ = diagnose(tmp_path / name)
        top = d.root_causes[0]
        assert top.code == "numerical_instability" and top.severity == "medium"
        assert any("nothing keeps above 0" in e.text for e in top.evidence)
    # a guarded log under the same warning (the zero came from elsewhere), and the warning alone, stay harmless
    # (review of session 47) nor the safe entropy idiom under np.where, a torch log (no NumPy warning comes from it),
    # a log10 of a PSNR's zero error, or a constant's log in the code when the warning's own source line is another
    shown = "metrics.py:17: RuntimeWarning: divide by zero encountered in log\n"
    for name, files in (("c", {"output.txt": shown + "  unary = -np.log(feat + 1e-5)\n"}),
                        ("d", {"output.txt": shown}),
                        ("e", {"output.txt": shown + "  ent = -np.sum(np.where(p > 0, p * np.log(p), 0.0))\n"}),
                        ("f", {"output.txt": shown + "  nll_loss = -torch.log(probs[range(n), y])\n"}),
                        ("g", {"output.txt": "eval.py:9: RuntimeWarning: divide by zero encountered in log10\n"
                                             "  psnr = 10 * np.log10(1.0 / mse)\n"}),
                        ("h", {"output.txt": shown + "  score = np.log(np.maximum(ratio, 1e-12))\n",
                               "train.py": "chance_loss = np.log(n_classes)\nloss = -np.log(p_true)\n"})):
        (tmp_path / name).mkdir()
        for f, text in files.items():
            (tmp_path / name / f).write_text(text)
        d, _ = diagnose(tmp_path / name)
        assert not any(c.code == "numerical_instability" and c.severity != "low" for c in d.root_causes), name


# trl DPO under gradient checkpointing (tests/wild peft-dpo-gradient-checkpointing-no-input-grad-1056, tune half):
# the checkpoint's warning, then a backward that fails; the same warning alone under a ViT frozen on purpose
# (tests/wild videochat2-frozen-vit-qformer-checkpoint-no-grad-warning-235, tune half) is harmless
CHECKPOINT_WARNING = ("/usr/lib/python3.9/site-packages/torch/utils/checkpoint.py:31: UserWarning: None of the inputs "
                      "have requires_grad=True. Gradients will be None\n"
                      '  warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")\n')
BACKWARD_FAILS = ("Traceback (most recent call last):\n"
                  '  File "dpo_llama2.py", line 221, in <module>\n    dpo_trainer.train()\n'
                  '  File "/usr/lib/python3.9/site-packages/accelerate/accelerator.py", line 1985, in backward\n'
                  "    loss.backward(**kwargs)\n"
                  '  File "/usr/lib/python3.9/site-packages/torch/_tensor.py", line 487, in backward\n'
                  "    torch.autograd.backward(\n")


def test_the_checkpoint_warning_before_a_failed_backward_is_no_update(tmp_path):
    (tmp_path / "traceback.txt").write_text(CHECKPOINT_WARNING + BACKWARD_FAILS)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "no_parameter_updates"
    assert "enable_input_require_grads" in d.root_causes[0].fix
    # accelerator.py's backward is every Hugging Face step's, not the distributed layer
    assert "distributed_failure" not in [c.code for c in d.root_causes]


def test_the_checkpoint_warning_alone_is_healthy(tmp_path):
    (tmp_path / "output.txt").write_text(CHECKPOINT_WARNING)
    d, _ = diagnose(tmp_path)
    assert [c.code for c in d.root_causes][:1] == ["healthy"]
    assert all(c.severity in ("info", "low") for c in d.root_causes)


def test_the_checkpoint_warning_beside_a_forward_oom_is_the_oom_alone(tmp_path):
    (tmp_path / "traceback.txt").write_text(CHECKPOINT_WARNING + "torch.cuda.OutOfMemoryError: CUDA out of memory. "
                                            "Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity)\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "out_of_memory"
    assert "no_parameter_updates" not in [c.code for c in d.root_causes]


def test_numpys_overflow_is_the_datas_only_where_a_data_pipeline_file_raised_it():
    # OpenPCDet #341 (tests/wild, tune half): the augmentor scaled points read as 1e31; the same warning from a
    # loss or a model file is left to the NaN readings
    data = _line("numpy_overflow_in_data")
    assert build_event("train.log", 1, [data])[0].signature == "numpy_overflow_in_data"
    for line in ("/mnt/datasets/alice/proj/models/losses/focal_loss.py:41: RuntimeWarning: overflow encountered in exp",
                 "/home/u/proj/models/head.py:41: RuntimeWarning: overflow encountered in multiply"):
        event, _ = build_event("train.log", 1, [line])
        assert event is None or event.signature != "numpy_overflow_in_data", line
    for line in ("mmdet/datasets/pipelines/transforms.py:300: RuntimeWarning: overflow encountered in multiply",
                 "/src/transforms.py:12: RuntimeWarning: overflow encountered in square",
                 "C:\\proj\\data_utils.py:9: RuntimeWarning: overflow encountered in add"):
        assert build_event("train.log", 1, [line])[0].signature == "numpy_overflow_in_data", line


def test_numpys_overflow_in_arithmetic_is_read_but_not_an_exps_nor_an_integers(tmp_path):
    from analysis.diagnose import diagnose
    # NumPy 1.25 on says `scalar multiply` of integers (which wrap) and floats alike; an array of integers says nothing
    for line in ("/home/u/proj/models/head.py:41: RuntimeWarning: overflow encountered in exp",
                 "/home/u/proj/utils.py:9: RuntimeWarning: overflow encountered in long_scalars",
                 "/home/u/proj/utils/seeding.py:22: RuntimeWarning: overflow encountered in scalar multiply"):
        event, _ = build_event("train.log", 1, [line])
        assert event is None or event.signature != "numpy_overflow", line
    old_float = "/home/u/proj/rl/returns.py:30: RuntimeWarning: overflow encountered in double_scalars"
    assert build_event("train.log", 1, [old_float])[0].signature == "numpy_overflow"
    (tmp_path / "train.log").write_text(_line("numpy_overflow") + "\n")
    d, _ = diagnose(tmp_path)
    assert (d.root_causes[0].code, d.root_causes[0].severity) == ("numerical_instability", "medium")


def test_numpys_overflow_in_the_data_passes_when_the_run_learns_on(tmp_path):
    from analysis.diagnose import diagnose
    warn = _line("numpy_overflow_in_data") + "\n"
    (tmp_path / "train.log").write_text(warn + "".join(f"epoch {i} loss {2.0 - 0.1 * i:.2f}\n" for i in range(12)))
    d, _ = diagnose(tmp_path)
    assert "data_pipeline_bug" not in [c.code for c in d.root_causes]
    (tmp_path / "train.log").write_text(warn)
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "data_pipeline_bug"


def test_an_uncaught_cpp_exception_whose_message_a_signature_knows_is_that_signature():
    # sooftware/kospeech #2 (tests/wild, tune half): a label past the vocabulary; libstdc++ prints the message on
    # the line after `terminate called`
    head = "terminate called after throwing an instance of 'c10::Error'"
    what = "  what():  CUDA error: device-side assert triggered (record at /pytorch/aten/src/ATen/cuda/CUDAEvent.h:116)"
    event, used = build_event("train.log", 1, [head, what])
    assert (event.signature, event.code, used) == ("device_assert", "data_pipeline_bug", 2)
    assert "device-side assert" in event.text
    event, _ = build_event("train.log", 1, [head, "  what():  basic_string::_M_construct null not valid"])
    assert event.signature == "uncaught_cpp"


def test_a_theano_allocation_that_failed_for_another_reason_is_no_critical_oom(tmp_path):
    # review of session 43: Theano raises `CudaNdarray_ZEROS: allocation failed` for any failed cudaMalloc; the line
    # before it names why (a display GPU's watchdog killed a long kernel)
    (tmp_path / "output.txt").write_text(
        "Error allocating 4194304 bytes of device memory (the launch timed out and was terminated). free=0, total=0\n"
        "Traceback (most recent call last):\n  File \"train_rnn.py\", line 88, in <module>\n"
        "    err = train_fn(inputs, targets)\nRuntimeError: CudaNdarray_ZEROS: allocation failed.\n")
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.severity == "medium" and "launch timed out" in top.issue
    assert not any(c.code == "out_of_memory" and c.severity == "critical" for c in d.root_causes)


def test_a_nan_check_on_the_loss_as_the_last_frame_reads_as_a_nan_loss(tmp_path):
    # RecBole #1726 cut before its error line: the NaN check raised on the loss, so it is read as `Loss is nan`
    # is, with the data's reading beside the overflow's and the LR's
    (tmp_path / "traceback.txt").write_text(
        '  File "D:\\anaconda3\\lib\\site-packages\\recbole\\trainer\\trainer.py", line 177, in _train_epoch\n'
        "    self._check_nan(loss)\n"
        '  File "D:\\anaconda3\\lib\\site-packages\\recbole\\trainer\\trainer.py", line 248, in _check_nan\n')
    d, _ = diagnose(tmp_path)
    assert {"numerical_instability", "lr_too_high", "data_pipeline_bug"} <= {c.code for c in d.root_causes[:3]}


@pytest.mark.parametrize("name", ["numpy_var_dof", "allocator_cache_flushes", "invalid_annotations_dropped",
                                  "horovod_stall", "pod_evicted"])
def test_a_warning_a_run_can_live_with_is_a_medium_reading_not_an_alarm(tmp_path, name):
    # NumPy's std over one value was harmless in AmpliconArchitect #65 and the fault in whales #7; DeepSpeed's cache
    # flushes are a step at the edge of memory; detectron2 drops a few degenerate polygons in sound datasets too
    (tmp_path / "train.log").write_text(_line(name) + "\n")
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.severity == "medium" and top.code == next(s.code for s in signatures() if s.name == name)
    assert not [c for c in d.root_causes if c.severity in ("critical", "high")]


def _learning_run() -> str:
    """A real tiny run's per-batch loss (tests/scenarios/minibatch_noise.py), falling from its start."""
    return "".join(f"step {i} loss {v:.4f}\n" for i, v in enumerate(regression_losses(0)[:80:2]))


def test_a_barrier_at_shutdown_after_a_finished_run_is_no_failure(tmp_path):
    # JAX's exit barrier (`Id: Shutdown::...`) times out when one task exits first; the init barrier is the fault
    (tmp_path / "train.log").write_text(_learning_run() + "E1206 coordination_service_agent.cc:332] Failed to "
                                        "disconnect from coordination service with status: DEADLINE_EXCEEDED: Barrier "
                                        "timed out. Id: Shutdown::5468\n")
    d, _ = diagnose(tmp_path)
    assert "distributed_failure" not in [c.code for c in d.root_causes]


def test_a_task_ray_killed_for_memory_and_retried_is_a_note_where_the_run_learned_on(tmp_path):
    ray = next(line for _, line, _ in REAL_LINES if "raylet" in line)
    (tmp_path / "train.log").write_text(ray + "\n" + _learning_run())
    d, _ = diagnose(tmp_path)
    assert not [c for c in d.root_causes if c.code == "out_of_memory" and c.severity in ("critical", "high")]
    assert [c.severity for c in d.root_causes if c.code == "out_of_memory"] == ["low"]


@pytest.mark.parametrize("sizes,fault", [("[1])) that is\ndifferent to the input size (torch.Size([]))", False),
                                         ("[16, 1, 28, 28])) that is\ndifferent to the input size (torch.Size([16, "
                                          "784]))", True)])
def test_a_target_size_warning_wrapped_after_that_is_reads_its_next_line(tmp_path, sizes, fault):
    # the first is the harmless scalar pair, the second github.com/pytorch/examples/pull/220's, both wrapped
    (tmp_path / "train.log").write_text(f"model.py:210: UserWarning: Using a target size (torch.Size({sizes}). This "
                                        "will likely lead to incorrect results due to broadcasting.\n")
    d, _ = diagnose(tmp_path)
    assert ("data_pipeline_bug" in [c.code for c in d.root_causes]) is fault


@pytest.mark.parametrize("said", ["# set LOAD_TRUNCATED_IMAGES to avoid 'image file is truncated' errors",
                                  "WARNING: skipping bad sample 1734: OSError: image file is truncated (23 bytes not "
                                  "processed)"])
def test_a_truncated_image_named_in_passing_by_a_run_that_learned_is_no_failure(tmp_path, said):
    (tmp_path / "train.log").write_text(said + "\n" + _learning_run())
    d, _ = diagnose(tmp_path)
    assert not [c for c in d.root_causes if c.severity in ("critical", "high")]


def test_ranks_calling_different_collectives_is_the_cause_over_the_invalid_usage_it_raises(tmp_path):
    (tmp_path / "train.log").write_text(
        "node1:1234:1300 [1] enqueue.cc:1556 NCCL WARN Mismatched collective detected, please check your collective "
        "calls at and around rank 1. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs\n"
        "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    dist.all_reduce(t)\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
        "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "distributed_failure" and "different collectives" in d.root_causes[0].issue


@pytest.mark.parametrize("name", ["allocator_cache_flushes", "invalid_annotations_dropped", "horovod_stall", "pod_evicted",
                                  "numpy_overflowed_operands", "labels_not_found", "numpy_overflow",
                                  "tokenization_mismatch"])
def test_a_warning_the_run_learned_on_past_is_left_behind(tmp_path, name):
    (tmp_path / "train.log").write_text(_line(name) + "\n" + _learning_run())
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "healthy"


def test_a_corrupt_record_that_stopped_the_program_stays_the_cause_though_a_relaunch_learned(tmp_path):
    (tmp_path / "train.log").write_text(
        "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    batch = next(it)\n"
        "tensorflow.python.framework.errors_impl.DataLossError: corrupted record at 40894\nRestarting...\n"
        + _learning_run())
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "dataloader_failure" and d.root_causes[0].severity == "critical"


@pytest.mark.parametrize("said", ["Input contains NaN values in 3 rows: imputing with column median",
                                  "Input contains NaN: False"])
def test_a_print_that_says_contains_nan_is_no_nan(tmp_path, said):
    (tmp_path / "train.log").write_text(said + "\n" + _learning_run())
    d, _ = diagnose(tmp_path)
    assert not [c for c in d.root_causes if c.severity in ("critical", "high")]


@pytest.mark.parametrize("after", ["RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total "
                                   "capacity; 13.20 GiB already allocated; 1.19 GiB free)", "step 1 loss nan"])
def test_the_line_after_a_warning_that_ends_in_that_is_keeps_its_own_reading(tmp_path, after):
    (tmp_path / "train.log").write_text("UserWarning: Using a target size (torch.Size([32])) that is\n" + after + "\n")
    d, _ = diagnose(tmp_path)
    assert {"out_of_memory" if "memory" in after else "numerical_instability"} <= {c.code for c in d.root_causes}


def test_a_finished_runs_kill_by_mpirun_is_no_host_oom(tmp_path):
    (tmp_path / "train.log").write_text(_learning_run() + "Training complete.\nmpirun noticed that process rank 0 with "
                                        "PID 21183 on node host01 exited on signal 9 (Killed).\n")
    d, _ = diagnose(tmp_path)
    assert not [c for c in d.root_causes if c.severity in ("critical", "high")]


@pytest.mark.parametrize("name", ["allocator_cache_flushes", "pod_evicted"])
def test_a_memory_warning_is_no_ranks_own_error_that_silences_the_launchers_report(tmp_path, name):
    (tmp_path / "train.log").write_text(
        _line(name) + "\n" + _learning_run() + "torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
        "(exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "distributed_failure" and d.root_causes[0].severity == "critical"


@pytest.mark.parametrize("line,numeric", [("OverflowError: math range error", True),
                                          # PaddlePaddle v2's SWIG binding given a cost past a float (tests/wild
                                          # paddle-v2-overflowerror-finishbatch-smaller-lr-10691: a smaller LR fixed it)
                                          ("OverflowError: in method 'ParameterUpdater_finishBatch', argument 2 of type "
                                           "'float'", True),
                                          ("OverflowError: out of range integral type conversion attempted", False)])
def test_only_a_float_overflow_reads_as_an_overflow(tmp_path, line, numeric):
    (tmp_path / "traceback.txt").write_text("Traceback (most recent call last):\n  File \"train.py\", line 40, in "
                                            "<module>\n    out = step(x)\n" + line + "\n")
    d, _ = diagnose(tmp_path)
    assert ("numerical_instability" in [c.code for c in d.root_causes]) is numeric


def test_llavas_mismatch_warned_all_through_a_run_whose_loss_falls_is_left_behind(tmp_path):
    # the review of session 51: a few odd samples warned through a healthy run (the rest are trained on)
    lines = []
    for i in range(30):
        lines.append(f"{{'loss': {1.58 - 0.02 * i:.4f}, 'learning_rate': 2e-05, 'epoch': {i / 30:.2f}}}")
        if i % 12 == 4:
            lines.append("WARNING: tokenization mismatch: 1023 vs. 1021. (ignored)")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "healthy", d.root_causes[0]
    # FastChat's wording is the same warning; prose that mentions one is none
    turn = "WARNING: tokenization mismatch: 312 vs. 315. #turn = 2. (ignored)"
    assert build_event("train.log", 1, [turn])[0].signature == "tokenization_mismatch"
    prose = "Note: a tokenization mismatch: 3 vs. 4 tokens between the slow and fast tokenizer is expected"
    event, _ = build_event("train.log", 1, [prose])
    assert event is None or event.signature != "tokenization_mismatch"


@pytest.mark.parametrize("warning,error", [
    ("/home/u/proj/eval/metrics.py:40: RuntimeWarning: overflow encountered in multiply\n  sq = diff * diff\n",
     "KeyError: 'image'"),
    ("WARNING: tokenization mismatch: 1023 vs. 1021. (ignored)\n",
     "AttributeError: 'LlamaModel' object has no attribute 'initialize_vision_modules'"),
])
def test_an_error_no_signature_names_is_still_read_beside_a_passing_warning(tmp_path, warning, error):
    # the reviews of session 51: a warning the run may pass is no error that stopped it
    (tmp_path / "train.log").write_text(warning + "Traceback (most recent call last):\n  File \"train.py\", line 88, "
                                        "in <module>\n    main()\n" + error + "\n")
    d, _ = diagnose(tmp_path)
    assert any(error.split(":")[0] in c.issue for c in d.root_causes), [c.issue for c in d.root_causes]


def test_xla_s_estimate_before_a_run_that_trains_on_is_no_out_of_memory(tmp_path):
    # XLA's rematerialization warning, then the steps it was said not to fit: the estimate was not the limit
    (tmp_path / "train.log").write_text(
        "W external/xla/xla/service/hlo_rematerialization.cc:2941] Can't reduce memory use below 10.64GiB "
        "(11428802214 bytes) by rematerialization; only reduced to 71.27GiB (76527210496 bytes)\n"
        + "".join(f"step {s} loss {2.9 - s / 700:.3f}\n" for s in range(100, 1100, 100)))
    d, _ = diagnose(tmp_path)
    assert "out_of_memory" not in [c.code for c in d.root_causes], [c.issue for c in d.root_causes]


def test_an_allocator_retry_in_gib_before_a_run_that_trains_on_is_no_crash(tmp_path):
    # current TSL prints the size as `14.95GiB` (older TensorFlow `14.95G`): a retry the run went on after
    (tmp_path / "train.log").write_text(
        "I tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate 14.95GiB "
        "(16049923584 bytes) from device: HIP_ERROR_OutOfMemory\n"
        + "".join(f"Epoch {e}/9\n100/100 - 5s - loss: {1.2 - e * 0.1:.4f} - accuracy: {0.6 + e * 0.03:.4f}\n"
                  for e in range(1, 10)))
    d, _ = diagnose(tmp_path)
    assert not any(c.code == "out_of_memory" and c.severity in ("critical", "high") for c in d.root_causes)


def test_nccls_own_error_is_no_timeout_and_a_watchdogs_is(tmp_path):
    # an `unhandled system error` names a failed system or network call: the fix is the interface, not the timeout
    (tmp_path / "traceback.txt").write_text(
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.14.3\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")
    top = diagnose(tmp_path)[0].root_causes[0]
    assert top.code == "distributed_failure" and "timed out" not in top.issue and "NCCL_SOCKET_IFNAME" in top.fix
    (tmp_path / "traceback.txt").write_text(REAL_NCCL_WATCHDOG + "\n")
    top = diagnose(tmp_path)[0].root_causes[0]
    assert top.code == "distributed_failure" and "timed out" in top.issue


def test_an_allocators_out_of_memory_is_no_avoided_one():
    assert match_benign("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB") is None


def test_a_rendezvous_that_never_formed_and_a_windows_paging_file_get_their_own_fixes(tmp_path):
    # no rank trained: the endpoint, not a rank's traceback; Windows' virtual memory, not the kernel's OOM killer
    (tmp_path / "traceback.txt").write_text(
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n")
    top = diagnose(tmp_path)[0].root_causes[0]
    assert top.code == "distributed_failure" and "never formed" in top.issue and "MASTER_ADDR" in top.fix
    (tmp_path / "traceback.txt").write_text(
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
        '"C:\\Python38\\lib\\site-packages\\torch\\lib\\caffe2_detectron_ops_gpu.dll" or one of its dependencies.\n')
    top = diagnose(tmp_path)[0].root_causes[0]
    assert top.code == "out_of_memory" and "paging file" in top.fix and "dmesg" not in top.fix


def test_a_dataloader_that_timed_out_is_a_stuck_worker_not_a_dead_one(tmp_path):
    (tmp_path / "traceback.txt").write_text("RuntimeError: DataLoader timed out after 120 seconds\n")
    top = diagnose(tmp_path)[0].root_causes[0]
    assert top.code == "dataloader_failure" and "died" not in top.issue and "num_workers=0" in top.fix


@pytest.mark.parametrize("message,elsewhere", [
    # a public training script's note: "Process 32777 ... is someone else's process"
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 750.00 MiB. GPU 0 has a total capacity of 14.57 "
     "GiB of which 426.75 MiB is free. Process 2493055 has 12.02 GiB memory in use. Including non-PyTorch memory, "
     "this process has 2.11 GiB memory in use. Of the allocated memory 1.76 GiB is allocated by PyTorch, and 151.65 "
     "MiB is reserved by PyTorch but unallocated.", True),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 192.00 MiB. GPU 0 has a total capacity of 23.52 "
     "GiB of which 12.00 MiB is free. Including non-PyTorch memory, this process has 23.48 GiB memory in use. Of the "
     "allocated memory 22.86 GiB is allocated by PyTorch, and 182.60 MiB is reserved by PyTorch but unallocated.",
     False),
])
def test_a_gpu_another_process_holds_is_said_so(tmp_path, message, elsewhere):
    # both public (a shared GPU; a model that filled its own): only the first is another process's memory
    (tmp_path / "traceback.txt").write_text(message + "\n")
    top = diagnose(tmp_path)[0].root_causes[0]
    assert top.code == "out_of_memory" and ("Another process" in top.fix) == elsewhere, top.fix


def test_an_oom_in_the_trainers_evaluation_gather_names_eval_accumulation(tmp_path):
    # frames as transformers' Trainer has them (evaluation_loop -> nested_concat): the logits of every eval batch
    (tmp_path / "traceback.txt").write_text(
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/site-packages/transformers/trainer.py", line 3360, in evaluation_loop\n'
        "    all_preds = logits if all_preds is None else nested_concat(all_preds, logits, padding_index=-100)\n"
        '  File "/usr/local/lib/python3.10/site-packages/transformers/trainer_pt_utils.py", line 123, in nested_concat\n'
        "    return torch_pad_and_concatenate(tensors, new_tensors, padding_index=padding_index)\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.77 GiB. GPU 0 has a total capacity of 39.39 GiB "
        "of which 5.20 GiB is free. Including non-PyTorch memory, this process has 34.19 GiB memory in use.\n")
    top = diagnose(tmp_path)[0].root_causes[0]
    assert top.code == "out_of_memory" and "eval_accumulation_steps" in top.fix
