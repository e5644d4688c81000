"""Lines as each framework prints them (the format of its logger, values of our own), and the numbers
that must come out of them. One table row per dialect: the framework, where its format comes from,
the text, and per canonical name the values read; `steps` where the line carries one. A name that
must NOT come out (validation read as training) is listed with an empty list."""
from pathlib import Path

import numpy as np
import pytest

import analysis.ingest.textlog as textlog
from analysis.ingest import logscan_fallback
from analysis.ingest.textlog import parse_text_log

BAR = "\u2588" * 10

DIALECTS = [
    ("LightGBM (python callback log_evaluation)", "\n".join([
        "[LightGBM] [Info] Number of positive: 3515, number of negative: 16485",
        "[1]\ttraining's auc: 0.873412\ttraining's binary_logloss: 0.439771\tvalid_1's auc: 0.848853\t"
        "valid_1's binary_logloss: 0.452011",
        "[2]\ttraining's auc: 0.881201\ttraining's binary_logloss: 0.423672\tvalid_1's auc: 0.853412\t"
        "valid_1's binary_logloss: 0.440012",
        "[3]\tvalid_0's l2: 0.51\ttest's auc: 0.71",
    ]), {"auc": [0.873412, 0.881201], "train_loss": [0.439771, 0.423672], "val_auc": [0.848853, 0.853412],
         "val_loss": [0.452011, 0.440012, 0.51], "test_auc": [0.71]}),
    ("XGBoost (train() evals, sklearn eval_set)", "\n".join([
        "[0]\ttrain-auc:0.841227\teval-auc:0.500000\ttrain-logloss:0.61",
        "[1]\tvalidation_0-auc:0.862391\tvalidation_0-logloss:0.58",
    ]), {"auc": [0.841227], "val_auc": [0.5, 0.862391], "train_loss": [0.61], "val_loss": [0.58]}),
    ("mmdet v2 (mmcv TextLoggerHook)", "\n".join([
        "2020-11-11 18:27:52,420 - mmdet - INFO - Epoch [1][2150/29317]\tlr: 2.000e-02, eta: 1 day, 16:24:41, time: 0.391, "
        "data_time: 0.009, memory: 3946, loss_rpn_cls: 0.1059, loss_rpn_bbox: 0.0825, loss_cls: 0.4929, acc: 90.0684, "
        "loss_bbox: 0.3225, loss: 1.0037",
        "2020-11-11 18:28:12,003 - mmdet - INFO - Epoch [1][2200/29317]\tlr: 2.000e-02, eta: 1 day, 16:21:04, time: 0.391, "
        "data_time: 0.009, memory: 3946, loss_rpn_cls: 0.1057, loss_rpn_bbox: nan, loss_cls: 0.4423, acc: 90.4268, "
        "loss_bbox: 0.3018, loss: nan",
        "2020-11-11 19:00:00,000 - mmdet - INFO - Epoch(val) [1][5000]\tbbox_mAP: 0.0010, bbox_mAP_50: 0.0030, loss: 9.9",
    ]), {"epoch": [1, 1, 1], "lr": [0.02, 0.02], "train_loss": [1.0037, np.nan], "train_loss/cls": [0.4929, 0.4423],
         "memory_allocated": [3946, 3946], "step_time": [0.391, 0.391], "train_acc": [90.0684, 90.4268],
         "val_loss": [9.9]}),
    ("mmdet v3 (mmengine LoggerHook)", "\n".join([
        "07/04 08:12:50 - mmengine - INFO - Epoch(train)  [1][ 750/7393]  base_lr: 3.7531e-05 lr: 3.7531e-05  eta: 3 days, "
        "9:40:59  time: 0.5451  data_time: 0.0148  memory: 14765  grad_norm: 45.8713  loss: 37.4994  loss_cls: 0.5150  "
        "d0.loss_cls: 0.5015",
        "07/04 09:00:00 - mmengine - INFO - Epoch(val) [1][500/500]    coco/bbox_mAP: 0.0010  data_time: 0.0021  time: 0.0634",
        "07/04 09:10:00 - mmengine - INFO - Iter(train) [  50/90000]  lr: 1.0000e-02  eta: 9:00:00  time: 0.4  loss: 2.5",
    ]), {"epoch": [1, 1], "lr": [3.7531e-05, 1e-2], "grad_norm": [45.8713], "train_loss": [37.4994, 2.5],
         "step_time": [0.5451, 0.4], "train_loss/cls": [0.5150]}),
    ("detectron2 (CommonMetricPrinter)", "\n".join([
        "[04/05 01:30:24 d2.utils.events]:  eta: 0:03:35  iter: 19  total_loss: 1.36  loss_cls: 0.6522  loss_box_reg: 0.5817"
        "  loss_rpn_cls: 0.07138  loss_rpn_loc: 0.003773  time: 0.3636  data_time: 0.1102  lr: 3.8077e-06  max_mem: 433M",
        "[04/05 01:30:31 d2.utils.events]:  eta: 0:03:14  iter: 39  total_loss: 1.353  loss_cls: 0.6354  loss_box_reg: 0.637"
        "  loss_rpn_cls: 0.0653  loss_rpn_loc: 0.00412  time: 0.3633  data_time: 0.0641  lr: 7.5527e-06  max_mem: 433M",
    ]), {"train_loss": [1.36, 1.353], "steps": [19, 39], "lr": [3.8077e-06, 7.5527e-06], "memory_allocated": [433, 433],
         "data_time": [0.1102, 0.0641], "train_loss/box_reg": [0.5817, 0.637]}),
    ("detectron2 (FloatingPointError with the loss dict)", "\n".join([
        "FloatingPointError: Loss became infinite or NaN at iteration=27!",
        "loss_dict = {'loss_cls': tensor(nan, device='cuda:0', grad_fn=), 'loss_box_reg': tensor(0.2576, device='cuda:0', grad_fn=)}",
    ]), {"train_loss": [np.nan], "train_loss/cls": [np.nan], "train_loss/box_reg": [0.2576]}),
    ("maskrcnn-benchmark (MetricLogger, value and running average)",
     "2019-05-27 10:48:54,461 maskrcnn_benchmark.trainer INFO: eta: 0:17:37  iter: 87940  loss: 0.6097 (0.9191)  "
     "loss_classifier: 0.1472 (0.3151)  loss_box_reg: 0.0702 (0.1441)  time: 0.5063 (0.5132)  data: 0.0062 (0.0078)  "
     "lr: 0.000025  max mem: 4358",
     {"train_loss": [0.6097], "steps": [87940], "step_time": [0.5063], "lr": [0.000025], "memory_allocated": [4358]}),
    ("fairseq (progress_bar: train_inner, train and valid rows)", "\n".join([
        "2020-03-23 11:38:13 | INFO | train | epoch 002 | loss 9.803 | nll_loss 8.89 | ppl 474.37 | wps 31194.9 | ups 0.07 | "
        "wpb 430468 | bsz 14485.4 | num_updates 695 | lr 0.00017375 | gnorm 55.005 | loss_scale 0 | train_wall 4512 | wall 9786",
        "2020-03-23 11:38:31 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 9.393 | nll_loss 8.328 | ppl 321.26 | "
        "wps 84912.1 | wpb 11298 | bsz 382.5 | num_updates 695 | best_loss 9.393",
        "2020-03-23 11:39:44 | INFO | train_inner | epoch 003:      5 / 356 loss=9.44, nll_loss=8.44, ppl=347.28, "
        "wps=30690.8, ups=0.07, wpb=427295, bsz=14390.4, num_updates=700, lr=0.000175, gnorm=156.036, loss_scale=0, "
        "train_wall=1281, wall=9877",
    ]), {"train_loss": [9.803, 9.44], "val_loss": [9.393], "steps": [695, 700], "grad_norm": [55.005, 156.036],
         "throughput": [31194.9, 30690.8], "perplexity": [474.37, 347.28], "val_perplexity": [321.26],
         "loss_scale": [0, 0], "epoch": [2, 2, 3]}),
    ("Keras 2 progbar (epoch line, then `- key: value` pairs)", "\n".join([
        "Epoch 1/10",
        "9595/9595 [==============================] - 1s - loss: 0.6242 - acc: 0.6295 - val_loss: 0.5265 - val_acc: 0.7470",
        "Epoch 2/10",
        "9595/9595 [==============================] - 1s - loss: nan - acc: 0.4117 - val_loss: nan - val_acc: 0.0000e+00",
    ]), {"epoch": [1, 2], "train_loss": [0.6242, np.nan], "train_acc": [0.6295, 0.4117], "val_loss": [0.5265, np.nan],
         "val_acc": [0.7470, 0.0]}),
    ("tf.keras progbar (step time and long names)",
     "1875/1875 [==============================] - 3s 2ms/step - loss: 0.2950 - accuracy: 0.9151 - val_loss: 0.1436 - "
     "val_accuracy: 0.9573",
     {"train_loss": [0.2950], "train_acc": [0.9151], "val_loss": [0.1436], "val_acc": [0.9573]}),
    ("Hugging Face Trainer (log dicts)", "\n".join([
        "{'loss': 6.4776, 'learning_rate': 1.9914000000000003e-05, 'epoch': 4.17}",
        "{'loss': 2.0588, 'grad_norm': 12.5, 'learning_rate': 1.9814000000000004e-05, 'epoch': 8.33}",
        "{'eval_loss': 2.5, 'eval_accuracy': 0.61, 'eval_runtime': 1.2, 'eval_samples_per_second': 80.0, 'epoch': 8.33}",
    ]), {"train_loss": [6.4776, 2.0588], "lr": [1.9914000000000003e-05, 1.9814000000000004e-05], "val_loss": [2.5],
         "val_acc": [0.61], "grad_norm": [12.5], "throughput": []}),
    ("Keras `print(history.history)` (a list per key, one value per epoch)", "\n".join([
        "{'loss': [0.6931, 0.6012, 0.9843, 2.7710], 'accuracy': [0.51, 0.66, 0.58, 0.5], "
        "'val_loss': [0.6822, 0.6523, 1.2001, 3.1025], 'val_accuracy': [0.55, 0.63, 0.52, 0.49]}",
        "[2024-09-11 17:52:18,030] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[1e-05, 1e-05]",
    ]), {"train_loss": [0.6931, 0.6012, 0.9843, 2.7710], "val_loss": [0.6822, 0.6523, 1.2001, 3.1025],
         "train_acc": [0.51, 0.66, 0.58, 0.5], "val_acc": [0.55, 0.63, 0.52, 0.49], "lr": [1e-05]}),
    ("Hugging Face Trainer (notebook table pasted as text, tab-separated)", "\n".join([
        "Epoch\tTraining Loss\tValidation Loss\tAccuracy",
        "1\tNo log\t0.693100\t0.500000",
        "2\t0.686900\t0.690200\t0.520000",
        "3\t0.650000\tnan\t0.510000",
    ]), {"epoch": [1, 2, 3], "train_loss": [0.6869, 0.65], "val_loss": [0.6931, 0.6902, np.nan],
         "train_acc": [0.5, 0.52, 0.51]}),
    ("PyTorch Lightning (tqdm bar, rewritten with \\r)",
     f"Epoch 0:  97%|{BAR}| 1651/1702 [13:00<00:24,  2.11it/s, loss=0.158, v_num=0, train_loss=0.149]\r"
     f"Epoch 0:  98%|{BAR}| 1660/1702 [13:02<00:19,  2.12it/s, loss=0.157, v_num=0, train_loss=0.150]\n"
     f"Epoch 1: 100%|{BAR}| 2/2 [00:00<00:00, 12.05it/s, loss=2.29, v_num=0, val_acc=0.166]",
     {"epoch": [0, 1], "train_loss": [0.157, 2.29], "val_acc": [0.166]}),
    ("PyTorch Lightning (RichProgressBar)",
     "Epoch 3/9  \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501 100/100 0:00:05 \u2022 0:00:00 20.00it/s v_num: 0 train_loss: 0.500 "
     "val_loss: 0.400",
     {"epoch": [3], "train_loss": [0.5], "val_loss": [0.4]}),
    ("TensorFlow 1 Estimator (`INFO:tensorflow:loss = x, step = n`)", "\n".join([
        "INFO:tensorflow:loss = 0.6931472, step = 1",
        "INFO:tensorflow:global_step/sec: 95.2",
        "INFO:tensorflow:loss = 0.31274, step = 101 (1.051 sec)",
    ]), {"train_loss": [0.6931472, 0.31274], "steps": [1, 101]}),
    ("Weights & Biases run summary printed at the end", "\n".join([
        "wandb: Run history:",
        "wandb:       loss \u2588\u2587\u2586\u2585\u2584\u2583\u2582\u2581",
        "wandb: Run summary:",
        "wandb:       loss 0.12345",
        "wandb:   val_loss 0.2",
    ]), {"train_loss": [0.12345], "val_loss": [0.2]}),
    ("YOLOv8 (ultralytics): a header row per epoch, then the row, then the validation table", "\n".join([
        "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
        f"      21/55      9.95G     0.2338       5.07      2.977         12        640: 100%|{BAR}| 787/787 [09:07<00:00,  1.44it/s]",
        f"                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|{BAR}| 66/66 [00:34<00:00]",
        "                   all       1049       1186      0.914      0.898      0.938      0.559",
        "",
        "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
        f"      22/55      9.87G        nan        nan        nan         11        640: 100%|{BAR}| 787/787 [09:06<00:00,  1.44it/s]",
    ]), {"epoch": [21, 22], "memory_allocated": [9.95, 9.87], "train_loss/box": [0.2338, np.nan],
         "train_loss": [0.2338 + 5.07 + 2.977, np.nan]}),
    ("YOLOv3 (a `|` table: header, rule, rows)", "\n".join([
        "epoch|mem|box_loss|obj_loss|cls_loss|targets|imgsize",
        "-|-|-|-|-|-|-",
        "0/299|7.17G| 3.28| 2.15|0.816|    5|  576|",
        "1/299|7.35G| 3.46| 1.92|0.969|    5|  512|",
    ]), {"epoch": [0, 1], "memory_allocated": [7.17, 7.35], "train_loss/obj": [2.15, 1.92],
         "train_loss": [3.28 + 2.15 + 0.816, 3.46 + 1.92 + 0.969]}),
    ("YOLOv5 early / YOLOv3 (ultralytics): `total` is the loss as a column, nothing as a key", "\n".join([
        "     Epoch   gpu_mem       box       obj       cls     total   targets  img_size",
        "     0/299     4.11G   0.06629   0.02983         0    0.0961        37       416",
        "     1/299     4.11G   0.05912   0.02811         0    0.0872        41       416",
        "Total: 1234 images, obj: 5",
    ]), {"epoch": [0, 1], "train_loss": [0.0961, 0.0872], "train_loss/box": [0.06629, 0.05912]}),
    ("Time-Series-Library (`Vali Loss`; `Steps:` counts the steps of an epoch)", "\n".join([
        "Epoch: 1, Steps: 3 | Train Loss: 1.5646304 Vali Loss: 1.6120000 Test Loss: 1.6440242",
        "Validation loss decreased (inf --> 1.612000).  Saving model ...",
        "Epoch: 2, Steps: 3 | Train Loss: 1.3646304 Vali Loss: nan Test Loss: 1.4440242",
    ]), {"epoch": [1, 2], "train_loss": [1.5646304, 1.3646304], "val_loss": [1.612, np.nan],
         "test_loss": [1.6440242, 1.4440242], "steps": [1, 2]}),   # at the epoch printed
    ("PyTorch ImageNet example (ProgressMeter: `Epoch: [0][ 10/5005]`, value (average))", "\n".join([
        "Epoch: [0][  10/5005]\tTime  0.500 ( 0.600)\tData  0.100 ( 0.200)\tLoss 6.9100e+00 (6.9500e+00)\tAcc@1   0.00 (  0.10)",
        "Epoch: [0][  20/5005]\tTime  0.480 ( 0.590)\tData  0.090 ( 0.190)\tLoss 6.8800e+00 (6.9300e+00)\tAcc@1   0.39 (  0.12)",
        "Test: [ 10/196]\tTime  0.300 ( 0.400)\tLoss 6.9000e+00 (6.9000e+00)\tAcc@1   0.00 (  0.10)",
    ]), {"epoch": [0, 0], "train_loss": [6.91, 6.88], "step_time": [0.5, 0.48], "test_loss": [6.9]}),
    ("PyTorch MNIST example (`[128/60000 (0%)]` counter)", "\n".join([
        "Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.305400",
        "Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.359780",
        "Test set: Average loss: 0.1018, Accuracy: 9663/10000 (97%)",
    ]), {"epoch": [1, 1], "train_loss": [2.3054, 1.35978], "test_loss": [0.1018]}),
    ("OpenNMT-py (`Step 50/100000000;` and `;`-separated pairs)", "\n".join([
        "[2018-08-01 18:29:48,221 INFO] Step 50/100000000; acc:   0.00; ppl: 26881171418161356094253400435962903554686976.00; "
        "xent: 6776.20; lr: 2.00000; 4132/2064 tok/s;     52 sec",
        "[2018-08-01 18:35:00,000 INFO] Validation perplexity: 5.2",
        "[2018-08-01 18:35:00,000 INFO] Validation accuracy: 60.1",
    ]), {"steps": [50], "train_acc": [0.0], "train_loss": [6776.2], "lr": [2.0], "perplexity": [2.6881171418161356e43],
         "val_perplexity": [5.2], "val_acc": [60.1]}),
    ("Caffe (solver: `Iteration N, loss = x`, train/test net outputs)", "\n".join([
        "I0420 16:50:00.000001 29735 solver.cpp:228] Iteration 100, loss = 0.5312",
        "I0420 16:50:00.000002 29735 solver.cpp:244]     Train net output #0: loss = 0.5312 (* 1 = 0.5312 loss)",
        "I0420 16:50:00.000003 29735 sgd_solver.cpp:106] Iteration 100, lr = 0.01",
        "I0420 16:54:21.603490 29735 solver.cpp:315]     Test net output #0: accuracy = 0.9012",
        "I0420 16:54:21.603502 29735 solver.cpp:315]     Test net output #1: loss = 0.3321 (* 1 = 0.3321 loss)",
    ]), {"steps": [100, 100], "train_loss": [0.5312, 0.5312], "lr": [0.01], "test_acc": [0.9012], "test_loss": [0.3321]}),
    ("nanoGPT (`iter N: loss x, time y ms, mfu z%`)", "\n".join([
        "step 2000: train loss 1.7050, val loss 1.8530",
        "iter 2000: loss 1.7200, time 12.34ms, mfu 3.20%",
    ]), {"steps": [2000, 2000], "train_loss": [1.705, 1.72], "val_loss": [1.853], "step_time": [12.34], "mfu": [3.2]}),
    ("Megatron-LM (`|`-separated multi-word keys)",
     " iteration      100/  500000 | consumed samples:        51200 | elapsed time per iteration (ms): 1200.5 | learning "
     "rate: 1.500E-04 | global batch size:   512 | lm loss: 7.403930E+00 | loss scale: 65536.0 | grad norm: 1.234 | "
     "number of skipped iterations:   0 | number of nan iterations:   0 |",
     {"steps": [100], "lr": [1.5e-4], "train_loss": [7.40393], "loss_scale": [65536.0], "grad_norm": [1.234]}),
    ("DeepSpeed (log_dist: `step=N, skipped=M, lr=[x]`)",
     "[2024-09-11 17:52:18,030] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=2, lr=[1e-05], mom=[(0.9, 0.999)]",
     {"steps": [10], "lr": [1e-05]}),
    ("ESPnet (`key=value` with `[train]`/`[valid]` sections)",
     "[host] 2021-06-01 12:00:00,000 (trainer:259) INFO: 1epoch results: [train] iter_time=1.2e-04, loss=100.5, "
     "loss_att=50.2, loss_ctc=150.1, acc=0.1, lr_0=1.0e-05, [valid] loss=54.4, acc=0.5",
     {"train_loss": [100.5], "train_acc": [0.1], "lr": [1e-05], "val_loss": [54.4], "val_acc": [0.5]}),
    ("hand-written print loop (multi-word keys, `/` counters)", "\n".join([
        "Epoch 1/10, Train Loss: 0.5000, Train Acc: 0.8000, Val Loss: 0.6000, Val Acc: 0.7500",
        "epoch: 2 | loss: inf | accuracy score: 0.81 | learning rate = 3e-4",
        "[Epoch 3] loss=-inf acc=0.82",
        "epoch 4: loss is nan, gnorm value: 3.5",
        "Epoch 5 finished with loss 0.45 and best acc 0.83",
    ]), {"epoch": [1, 2, 3, 4, 5], "train_loss": [0.5, np.inf, -np.inf, np.nan, 0.45], "train_acc": [0.8, 0.81, 0.82, 0.83],
         "grad_norm": [3.5], "val_loss": [0.6],
         "val_acc": [0.75], "lr": [3e-4]}),
    ("PaddleOCR (a training line, then the evaluation's `cur metric, acc:`)", "\n".join([
        "[2021/11/22 17:44:02] root INFO: epoch: [54/72], iter: 12630, lr: 0.000083, loss: 0.017296, acc: 1.000000, "
        "norm_edit_dis: 1.000000, reader_cost: 0.00039 s, batch_cost: 0.29536 s, samples: 640, ips: 216.68324",
        "[2021/11/22 17:45:10] root INFO: cur metric, acc: 0.130999869000131, norm_edit_dis: 0.34419208, fps: 2178.53",
    ]), {"train_loss": [0.017296], "train_acc": [1.0], "val_acc": [0.130999869000131]}),
    ("ParallelWaveGAN (`(Steps: N) train/<name> = value.` per line: a name no alias knows kept at its NaN)",
     "\n".join([
         "2022-05-12 14:56:20,955 (train:487) INFO: (Steps: 1000) train/embed_loss = nan.",
         "2022-05-12 14:56:20,955 (train:487) INFO: (Steps: 1000) train/spk_similariy = nan.",
         "2022-05-12 14:56:20,956 (train:487) INFO: (Steps: 1000) eval/map_small = nan.",
         "2022-05-12 14:56:20,956 (train:487) INFO: (Steps: 1000) train/fps = inf.",
         "2022-05-12 14:56:20,956 (train:487) INFO: (Steps: 1000) train/best_score = -inf.",
         "2022-05-12 14:56:20,956 (train:487) INFO: (Steps: 1000) Train/mel_loss = nan.",
     ]), {"nonfinite/train/embed_loss": [np.nan], "nonfinite/train/spk_similariy": [np.nan],
          "nonfinite/eval/map_small": [], "nonfinite/train/fps": [], "nonfinite/train/best_score": [],
          "nonfinite/train/mel_loss": [np.nan]}),
    ("Python logging (`- key: value -` with a level and a logger)",
     "2024-01-01 12:00:00,000 - trainer - INFO - Epoch 3 - step 1500 - train_loss: 0.3000 - val_loss: 0.4000 - lr: 1e-4",
     {"epoch": [3], "steps": [1500], "train_loss": [0.3], "val_loss": [0.4], "lr": [1e-4]}),
    ("a dict of NumPy 2 / torch values (`np.float64(x)`, `tensor([x])` reprs)",
     "{'loss': np.float64(0.6931), 'lr': tensor([1.0000e-03]), 'grad_norm': np.float32(nan), 'epoch': 1}",
     {"train_loss": [0.6931], "lr": [1e-3], "grad_norm": [np.nan], "epoch": [1]}),
    ("a print loop written in Chinese (full-width colon)", "\n".join([
        "第 1 轮 loss：2.3051, acc：0.1120, 学习率 lr：0.01",
        "第 2 轮 loss：nan, acc：0.0980, 学习率 lr：0.01",
    ]), {"train_loss": [2.3051, np.nan], "train_acc": [0.112, 0.098], "lr": [0.01, 0.01]}),
    # Lines below are copied from public threads (not in tests/wild), each cited.
    ("darknet (value first; Windows' `1.#QNAN0`)", "\n".join([
        # github.com/AlexeyAB/darknet/issues/1020
        " 2: 519.797913, 519.720886 avg loss, 0.000000 rate, 2.054143 seconds, 128 images",
        # github.com/AlexeyAB/darknet/issues/429 (darknet.exe on Windows: MSVC prints a NaN as 1.#QNAN0)
        "Detection Avg IOU: 1.#QNAN0, Pos Cat: 1.#QNAN0, All Cat: 1.#QNAN0, Pos Obj: 1.#QNAN0, Any Obj: 1.#QNAN0, count: 92",
        "1.#QNAN0 loss, -1.#QNAN0 avg loss, 0.001000 rate, 6.230000 seconds, /64 images",
    ]), {"train_loss": [519.720886, np.nan]}),
    ("caffe solver (`Iteration N, loss = x`, `Test net output #k: name = x`)", "\n".join([
        # github.com/BVLC/caffe/issues/2436
        "I0509 19:47:26.425755 20669 solver.cpp:315]     Test net output #0: accuracy = 0.16014",
        "I0509 19:47:26.425858 20669 solver.cpp:315]     Test net output #1: loss = 5.5315 (* 1 = 5.5315 loss)",
        "I0509 19:47:26.917171 20669 solver.cpp:189] Iteration 7000, loss = 4.15675",
        "I0509 19:47:26.917232 20669 solver.cpp:464] Iteration 7000, lr = 0.01",
        # github.com/BVLC/caffe/issues/361
        "I0425 10:13:21.205826  9167 solver.cpp:208] Iteration 220, lr = 0.01",
        "I0425 10:13:21.206111  9167 solver.cpp:65] Iteration 220, loss = nan",
    ]), {"test_acc": [0.16014], "test_loss": [5.5315], "train_loss": [4.15675, np.nan], "lr": [0.01, 0.01]}),
    ("TensorFlow 1 (Estimator `loss = x, step = N (t sec)`, slim `global step N: loss = x`)", "\n".join([
        # github.com/tensorflow/tensorflow/issues/43014
        "INFO:tensorflow:loss = 96.96749, step = 0",
        "INFO:tensorflow:loss = 4.264659, step = 100 (124.394 sec)",
        # github.com/ardiya/HashtagPrediction/issues/6
        "INFO:tensorflow:global step 2457: loss = 0.6953 (1.61 sec/step)",
        "INFO:tensorflow:global step 2458: loss = nan (2.34 sec/step)",
    ]), {"train_loss": [96.96749, 4.264659, 0.6953, np.nan]}),
    ("Keras through CloudWatch (SageMaker writes `\\r` as `#015`, a backspace as `#010`)",
     # github.com/aws-samples/amazon-sagemaker-script-mode/issues/11: the last state of the line counts
     "#0151/4 [======>.......................] - ETA: 0s - loss: 521.6073#010#010#010#010#010#010#010#010#010#010"
     "#0154/4 [==============================] - 0s 56ms/step - loss: 522.4297",
     {"train_loss": [522.4297]}),
    ("a TF1-era print loop that calls the loss a cost", "\n".join([
        # github.com/xiaohu2015/DeepLearning_tutorials/issues/16
        "Epoch 0 cost: 71.95003230701798",
        "Epoch 1 cost: nan",
        # github.com/ryankiros/visual-semantic-embedding/issues/10
        "Epoch  2 Update  520 Cost  118.96719 UD  0.695561885834",
        # a duration is no cost
        "epoch 3 time cost: 12.5s",
    ]), {"train_loss": [71.95003230701798, np.nan, 118.96719], "step_time": [12.5], "epoch": [0, 1, 2, 3]}),
    ("markdown table a user typed into the thread", "\n".join([
        "| Epoch | Train Loss | Val Loss |",
        "|---|---|---|",
        "| 1 | 0.90 | 0.95 |",
        "| 2 | 0.70 | 1.10 |",
    ]), {"epoch": [1, 2], "train_loss": [0.9, 0.7], "val_loss": [0.95, 1.1]}),
    # Lines as posted in public threads (the thread beside each): the forms issue 14 lists.
    ("Megatron-DeepSpeed (`iteration N/ M |`, `E-04`, `grad norm: nan`)",
     # github.com/bigscience-workshop/Megatron-DeepSpeed/issues/396
     " iteration     5426/  250000 | consumed samples:        43408 | consumed tokens:     88899584 | elapsed time per "
     "iteration (ms): 4247.9 | learning rate: 2.999E-04 | global batch size:     8 | loss scale: 1.0 | grad norm: nan | "
     "actual seqlen:  2048 | number of skipped iterations:   0 | number of nan iterations:   0 | samples per second: "
     "1.883 | TFLOPs: 78.36 |",
     {"grad_norm": [np.nan], "lr": [2.999e-4], "loss_scale": [1.0], "steps": [5426]}),
    ("fastai v2 (tab-separated table with nan cells)", "\n".join([
        # github.com/timeseriesAI/tsai/issues/639
        "epoch\ttrain_loss\tvalid_loss\taccuracy\ttime",
        "0\tnan\tnan\t0.958595\t00:03",
        "1\tnan\tnan\t0.958595\t00:03",
    ]), {"epoch": [0, 1], "train_loss": [np.nan, np.nan], "val_loss": [np.nan, np.nan]}),
    ("nanoGPT evaluation (`train loss x, val loss y`) and tiny-universe (`N | loss nan | lr 0.000000e+00`)", "\n".join([
        # github.com/datawhalechina/tiny-universe/issues/31
        "step 100000: train loss nan, val loss nan",
        "100000 | loss nan | lr 0.000000e+00 | 2006.12ms | mfu 1.68%",
    ]), {"train_loss": [np.nan, np.nan], "val_loss": [np.nan], "lr": [0.0]}),
    ("Time-LLM (`iters: N, epoch: E | loss: nan speed: s/iter`)",
     # github.com/KimMeen/Time-LLM/issues/14
     "\titers: 600, epoch: 1 | loss: nan speed: 0.6871s/iter; left time: 9247.2732s",
     {"train_loss": [np.nan], "epoch": [1]}),
    ("Keras progbar mid-epoch (`ETA: ... - loss: inf`)", "\n".join([
        # github.com/manishsoni1908/Mobilenet-ssd-keras/issues/21
        "Epoch 1/10",
        "  3/234 [..............................] - ETA: 33:37:24 - loss: 44.4110",
        "  4/234 [..............................] - ETA: 25:09:00 - loss: inf ",
    ]), {"train_loss": [44.411, np.inf]}),
    ("harvardnlp seq2seq (`Epoch 10 ; Iter 50/213 ; LR 1.0000 ; PPL nan ;`)", "\n".join([
        # github.com/harvardnlp/data2text/issues/9
        "Epoch 10 ; Iter 50/213 ; LR 1.0000 ; Target tokens/s 2135 ; PPL nan ;",
        "Epoch 10 ; Iter 100/213 ; LR 1.0000 ; Target tokens/s 2122 ; PPL nan ;",
        "Validation perplexity: nan",
    ]), {"perplexity": [np.nan, np.nan], "lr": [1.0, 1.0], "val_perplexity": [np.nan]}),
    ("text_gcn (`key= value` with a blank after `=`)",
     # github.com/yao8839836/text_gcn/issues/95
     "Epoch: 0111 train_loss= 0.00122 train_acc= 0.04547 val_loss= nan val_acc= 0.06101 time= 8.46537",
     {"train_loss": [0.00122], "train_acc": [0.04547], "val_loss": [np.nan], "val_acc": [0.06101], "epoch": [111]}),
    ("mxnet Speedometer (`Epoch[0]` with its counter attached, `Train-accuracy=`, `Validation-accuracy=`)", "\n".join([
        # github.com/apache/mxnet/issues/4900
        "INFO:root:Epoch[0] Batch [900]  Speed: 14762.29 samples/sec     Train-accuracy=0.950313",
        "INFO:root:Epoch[0] Validation-accuracy=0.958002",
    ]), {"train_acc": [0.950313], "val_acc": [0.958002], "epoch": [0, 0]}),
    ("udacity print loop (`Training Loss:` / `Validation Loss:`, tab-separated)", "\n".join([
        # github.com/udacity/deep-learning-v2-pytorch/issues/341
        "Epoch: 1 \tTraining Loss: 0.173275 \tValidation Loss: 0.072151",
        "Epoch: 2 \tTraining Loss: 0.180673 \tValidation Loss: 0.073222",
    ]), {"epoch": [1, 2], "train_loss": [0.173275, 0.180673], "val_loss": [0.072151, 0.073222]}),
    ("a name no alias knows turning NaN (`lb=nan`: kept where non-finite, under nonfinite/)", "\n".join([
        # tests/wild adgm-batchnorm-nan-epoch133-1 (github.com/larsmaaloee/auxiliary-deep-generative-models/issues/1)
        "epoch=0132; time=115.77; lb=196.7117; lb-labeled=54.7303; lb-unlabeled=89.8130; test=2.48%; validation=2.51%;",
        "epoch=0133; time=115.43; lb=nan; lb-labeled=nan; lb-unlabeled=nan; test=90.20%; validation=90.09%;",
    ]), {"epoch": [132, 133], "nonfinite/lb": [np.nan], "nonfinite/lb-labeled": [np.nan], "nonfinite/time": []}),
    ("keras-frcnn (`key,value` pairs; a NaN in them)", "\n".join([
        # tests/wild keras-frcnn-lr-1e-7-pushed-25 (github.com/yhenon/keras-frcnn/issues/25); the second line ours
        "loss_rpn_cls,0.77,loss_rpn_regr,0.11,loss_class_cls,1.49,loss_class_regr,0.36,class_acc,0.57,elapsed_time,9.77",
        "loss_rpn_cls,nan,loss_rpn_regr,0.11,loss_class_cls,1.49,loss_class_regr,0.36",
    ]), {"train_loss/rpn_cls": [0.77, np.nan], "train_loss/class_regr": [0.36, 0.36], "train_loss": [2.73, np.nan]}),
    ("keras-frcnn verbose block (labels of three words: `Loss RPN classifier: x`; prose labels read as nothing)",
     "\n".join([
         # the prints of yhenon/keras-frcnn train_frcnn.py, as a README of a fork shows them (values its)
         "Mean number of bounding boxes from RPN overlapping ground truth boxes: 1.391304347826087",
         "Classifier accuracy for bounding boxes from RPN: 0.9",
         "Loss RPN classifier: 4.342926752567291",
         "Loss RPN regression: 0.42844736129045485",
         "Loss Detector classifier: nan",
         "Elapsed time: 94.26770877838135",
         "Epoch end Validation Loss: 0.3",     # ours: a longer label is read by its last words
     ]), {"train_loss/rpn_classifier": [4.342926752567291], "train_loss/rpn_regression": [0.42844736129045485],
          "train_loss/detector_classifier": [np.nan], "step_time": [94.26770877838135], "val_loss": [0.3],
          "train_loss": []}),
    ("`key, value` and Keras' zipped `metrics_names` (`('loss', 0.35)`)", "\n".join([
        "Test loss, 0.2317",
        "[('loss', 0.35), ('acc', nan)]",
    ]), {"test_loss": [0.2317], "train_loss": [0.35], "train_acc": [np.nan]}),
    ("Keras CSVLogger pasted (a comma-separated header once, then rows; pandas' index column)", "\n".join([
        "epoch,acc,loss,val_acc,val_loss",
        "0,0.51,0.69,0.50,0.70",
        "1,0.62,0.65,0.49,inf",
        "",
        ",epoch,loss,val_loss",
        "0,1,0.9,1.0",
        "1,2,0.8,nan",
    ]), {"train_acc": [0.51, 0.62], "val_acc": [0.50, 0.49], "train_loss": [0.69, 0.65, 0.9, 0.8],
         "val_loss": [0.70, np.inf, 1.0, np.nan], "epoch": [0, 1, 1, 2]}),
    ("Keras ModelCheckpoint (`val_loss improved from a to b`: b; `did not improve from a`: nothing)", "\n".join([
        # stored public notebooks' Keras output (find_string "val_loss improved from inf to")
        "Epoch 00001: val_loss improved from inf to 0.34005, saving model to cnn_tf.model.best.hdf5",
        "Epoch 23: val_loss did not improve from 0.12966",
        "Epoch 00024: val_loss improved from 0.12966 to nan, saving model to m.h5",      # ours
        # ours: an announcement of a move is no value of the step it is printed at
        "Epoch 25: lr reduced from 0.1 to 0.001",
    ]), {"val_loss": [0.34005, np.nan], "epoch": [1, 23, 24, 25], "lr": []}),
    ("pandas `print(pd.DataFrame(history.history))` (the index under the header's leading blanks)", "\n".join([
        # a public repository's comment with the printed frame (find_string "loss  accuracy  val_loss  val_accuracy")
        "       loss  accuracy  val_loss  val_accuracy",
        "0  0.419479  0.850200  0.330585        0.8809",
        "1  0.288706  0.895633  0.289766        0.8931",
        "2  0.243420  0.910300       NaN        0.9002",      # ours: the NaN
    ]), {"train_loss": [0.419479, 0.288706, 0.243420], "train_acc": [0.850200, 0.895633, 0.910300],
         "val_loss": [0.330585, 0.289766, np.nan], "val_acc": [0.8809, 0.8931, 0.9002]}),
    ("a print loop's header once, names one blank apart (`print('epoch', 'loss', 'acc')`, then the values)",
     "\n".join([
         "epoch loss acc val_loss",
         "1 0.9 0.5 1.0",
         "2 nan 0.1 inf",
         "3 0.5",                       # a row of another width is no row of this table
         "Plot loss and acc curves",    # prose naming fewer than half metrics is no header
         "4 0.1 0.2 0.3 0.4",
     ]), {"epoch": [1, 2], "train_loss": [0.9, np.nan], "train_acc": [0.5, 0.1], "val_loss": [1.0, np.inf]}),
    ("bentrevett's sentiment tutorial print (`Val. Loss:`: an abbreviation's dot inside a two-word name)", "\n".join([
        # a public repository's README training log (find_string "|  Val. Acc: ")
        "\tEpoch: 40 | Train Loss: 1.320 | Train Acc: 58.56%",
        "\t Val. Loss: 1.524 |  Val. Acc: 37.06% ",
        "",
        "\tEpoch: 41 | Train Loss: 1.318 | Train Acc: 58.62%",
        "\t Val. Loss: 1.525 |  Val. Acc: 37.01% ",
    ]), {"epoch": [40, 41], "train_loss": [1.320, 1.318], "train_acc": [58.56, 58.62], "val_loss": [1.524, 1.525],
         "val_acc": [37.06, 37.01]}),
    ("PyTorch finetuning tutorial (`val Loss: x Acc: y`: the Acc after a two-word `val Loss` is val's)", "\n".join([
        # the torchvision finetuning tutorial's printed output for the model trained from scratch
        "Epoch 0/14",
        "----------",
        "train Loss: 0.7131 Acc: 0.4959",
        "val Loss: 0.6931 Acc: 0.4575",
        "",
        "Epoch 1/14",
        "----------",
        "train Loss: 0.6930 Acc: 0.5041",
        "val Loss: 0.6931 Acc: 0.4575",
        # a stored public note's print loop: both sections on one line; then ours, with an LR after them
        "Epoch 1/2 | Train Loss: 0.6932 Acc: 0.5000 | Val Loss: 0.6931 Acc: 0.6667",
        "Epoch 3 train loss 0.5 acc 0.8 val loss 0.6 acc 0.7 lr 0.001",
    ]), {"train_loss": [0.7131, 0.6930, 0.6932, 0.5], "train_acc": [0.4959, 0.5041, 0.5, 0.8],
         "val_loss": [0.6931, 0.6931, 0.6931, 0.6], "val_acc": [0.4575, 0.4575, 0.6667, 0.7], "lr": [0.001]}),
    ("PyTorch MNIST example's test line (`Accuracy: 1135/10000 (11.35%)`: a count of a total is their ratio)",
     "\n".join([
         # stored public training logs (find_string "Test set: Average loss: 2.30")
         "Loss=2.2949304580688477 Batch_id=468 Accuracy=10.97: 100%|\u2588\u2588| 469/469 [00:16<00:00, 28.29it/s]",
         "Test set: Average loss: 2.3009, Accuracy: 1135/10000 (11.35%)",
         "Epoch 3/100 acc 45/64",        # ours: an epoch's `/100` is its end, an accuracy's `/64` its total
     ]), {"train_loss": [2.2949304580688477], "train_acc": [10.97, 45 / 64], "test_loss": [2.3009],
          "test_acc": [0.1135], "epoch": [3]}),
    ("PyTorch-GAN (`[Epoch 3/200] [Batch 5/938] [D loss: x] [G loss: y]`)", "\n".join([
        # the print of eriklindernoren/PyTorch-GAN implementations/gan/gan.py; values ours
        "[Epoch 0/200] [Batch 0/938] [D loss: 0.693241] [G loss: 0.702115]",
        "[Epoch 3/200] [Batch 5/938] [D loss: nan] [G loss: inf]",
    ]), {"epoch": [0, 3], "d_loss": [0.693241, np.nan], "g_loss": [0.702115, np.inf]}),
    ("bracketed counters run together, a tqdm bar's `loss=` postfix turning NaN (ours, both)", "\n".join([
        "[epoch 3/100][batch 200/600] loss: 0.512 acc: 0.81",
        f"Epoch 4:  45%|{BAR}| 45/100 [00:01<00:01, 40.00it/s, loss=nan, lr=1e-3]",
    ]), {"epoch": [3, 4], "train_loss": [0.512, np.nan], "train_acc": [0.81], "lr": [1e-3]}),
    ("a counter inside the label, the value after it (tensorflow_cookbook #129, tests/wild tune half; "
     "word2vec_basic's `Average loss at step`; ours for an epoch)", "\n".join([
        "Loss at step 100 : nan",
        "Average loss at step  2000 :  4.37",
        "val loss at epoch 3: 0.5",
        "at step 5: 3",
    ]), {"train_loss": [np.nan, 4.37], "steps": [100, 2000], "val_loss": [0.5], "epoch": [3]}),
    ("...with `for`, `in`, `of`, `on` or `after` before the counter (a print loop committed to a public "
     "repository; ours)", "\n".join([
        "Loss for Iter 1: 0.521861, acc = 0.09",
        "Loss for Iter 2: 0.498120, acc = 0.12",
        "loss in epoch 3: 0.4",
        "loss with epoch 4: 0.3",
    ]), {"train_loss": [0.521861, 0.498120, 0.4], "train_acc": [0.09, 0.12], "epoch": [3, 4]}),
    ("gluoncv's detection scripts: the loss as its functions' parts (a NaN in one is the loss's), parts per head; "
     "the epoch line's `Training cost` is its seconds (gluoncv scripts/detection/ssd/train_ssd.py, faster_rcnn)", "\n".join([
        "INFO:root:[Epoch 0][Batch 99], Speed: 25.331 samples/sec, CrossEntropy=1.831, SmoothL1=0.003",
        "INFO:root:[Epoch 0] Training cost: 312.215, CrossEntropy=1.697, SmoothL1=0.003",
        "INFO:root:[Epoch 1][Batch 99], Speed: 7.1 samples/sec, RPN_Conf=0.200, RPN_SmoothL1=0.050, "
        "RCNN_CrossEntropy=0.400, RCNN_SmoothL1=0.100",
        "INFO:root:[Epoch 1][Batch 199], Speed: 25.331 samples/sec, CrossEntropy=1.500, SmoothL1=nan",
    ]), {"train_loss": [1.834, 1.7, 0.75, np.nan], "train_loss/smoothl1": [0.003, 0.003, np.nan],
         "train_loss/rcnn_crossentropy": [0.4], "epoch": [0, 0, 1, 1]}),
    ("a loss printed as a cost, where its line prints no loss under another name (TF1 tutorials; ours)", "\n".join([
        "Epoch: 0001 cost= 2.302585",
        "After 1 epochs:",
        "\tTraining Cost: 0.69",
        "\tValidation Cost: 0.71",
        "Epoch 2 time cost: 3.5 loss: 0.6",
        "Epoch 3 Training cost: 30.1 loss: 0.5",
        "Loading model cost 0.644 seconds.",       # jieba's, printed in front of Chinese NLP logs: prose, no cost
        "avg cost= 0.4",
        "254/15000 batch done in 5.082s. at epoch 0.85. loss cost = 39.408169, reg cost = 0.000001, ppl2 = 29.19",
        "recon cost = 2.5",
        "Epoch 4 cost: 41.2s",                     # a unit of time after it: a duration
    ]), {"train_loss": [2.302585, 0.69, 0.6, 0.5, 0.4, 39.408169, 2.5], "val_loss": [0.71], "step_time": [3.5]}),
    ("an epoch's batch counter is the step, restarting each epoch (pytorch/examples mnist's `Train Epoch`, the "
     "ImageNet example's ProgressMeter, MiniMind's pre-training print; a validation counter is none)", "\n".join([
        "Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.300000",
        "Train Epoch: 1 [57600/60000 (96%)]\tLoss: 0.300000",
        "Train Epoch: 2 [0/60000 (0%)]\tLoss: 0.290000",
        "Test: [ 10/196]\tTime  0.1\tLoss 9.0e-01 (9.0e-01)",
        "Epoch: [2][ 100/60000]\tTime  0.330 ( 0.412)\tLoss 2.5e-01 (2.6e-01)",
        "Epoch:[2/20](200/60000) loss:0.240 lr:0.000100",
        "Epoch(val) [2][7/7]  loss: 0.5",
        "Epoch [2][ 300 / 60000] loss: 0.2",      # blanks around its slash: no counter
        "Train Epoch: 3 [0/60000 (0%)]\tLoss: 0.190000",
        "Val Epoch: 3 [10/50]\tLoss: 0.45",         # a validation pass's own counter: no step, no total
        "Train Epoch: 4 [0/60000 (0%)]\tLoss: 0.180000",
    ]), {"train_loss": [2.3, 0.3, 0.29, 0.25, 0.24, 0.2, 0.19, 0.18],
         "steps": [0, 57600, 60000, 60100, 60200, 120000, 180000], "val_loss": [0.5, 0.45]}),
    ("...where the log starts at a later epoch (a resumed run), its first step is past epoch 1's end, no step 0 "
     "(the ImageNet example's ProgressMeter after `--resume`)", "\n".join([
        "Epoch: [30][  0/500]\tTime  0.330 ( 0.412)\tLoss 3.1200e+02 (3.1200e+02)",
        "Epoch: [30][100/500]\tTime  0.330 ( 0.412)\tLoss 2.9600e+02 (3.0400e+02)",
        "Epoch: [31][  0/500]\tTime  0.330 ( 0.412)\tLoss 2.9000e+02 (2.9000e+02)",
    ]), {"train_loss": [312, 296, 290], "steps": [14500, 14600, 15000]}),
    ("PaddleDetection (its stats as quoted strings; PaddleDetection #1444, found by a session 47 helper)", "\n".join([
        "2020-09-22 02:35:51,570-INFO: iter: 340, lr: 0.005000, 'loss_xy': '1.523', 'loss_obj': '4.100', "
        "'loss': '12.345', time: 33.556, eta: 7:49:46",
        "2020-09-22 02:44:51,570-INFO: iter: 360, lr: 0.005000, 'loss_xy': 'nan', 'loss_obj': 'nan', 'loss': 'nan', "
        "time: 33.556, eta: 7:49:46",
        # ...and quoted strings that only start like a number are no values (a date, a precision, a call)
        "{'precision': '16-mixed', 'time': '2024-03-01 10:00:00', 'mode': 'nan-safe', 'lr': 'inverse_sqrt(5e-4)'}",
    ]), {"train_loss": [12.345, np.nan], "train_loss/xy": [1.523, np.nan], "steps": [340, 360], "step_time": [33.556, 33.556],
         "lr": [0.005, 0.005]}),
    ("Hugging Face Trainer's end-of-training summary: its train_loss is the run's mean, no report (the tail of a run "
     "at 6e-4 read as blown up to 0.18: tests/wild qwen-deepspeed-warmuplr-overrides-cosine-lr-constant-672, tune half)",
     "\n".join([
        "{'loss': 0.0008, 'learning_rate': 0.0003, 'epoch': 159.0}",
        "{'loss': 0.0006, 'learning_rate': 0.0003, 'epoch': 160.0}",
        "{'train_runtime': 187.6818, 'train_samples_per_second': 10.656, 'train_steps_per_second': 1.066, "
        "'train_loss': 0.18313224196434022, 'epoch': 160.0}",
        # (wandb's end-of-run block is the same: `wandb:   train_loss 0.1832`)
        "wandb: Run summary:", "wandb:           train_loss 0.1832",
    ]), {"train_loss": [0.0008, 0.0006]}),
    ("...but a NaN mean still says a loss went NaN", "\n".join([
        "{'train_runtime': 187.6818, 'train_samples_per_second': 10.656, 'train_loss': nan, 'epoch': 3.0}",
    ]), {"train_loss": [np.nan]}),
    ("A hand-written loop naming each set before its pairs", "\n".join([
        "Epoch 1 | train: loss 0.912 acc 0.612 | val: loss 0.950 acc 0.601",
        "Epoch 2 | train: loss 0.701 acc 0.702 | val: loss 0.990 acc 0.611",
        "Epoch 3: Train [loss=0.453, acc=0.811] Valid [loss=1.140, acc=0.603]",
    ]), {"train_loss": [0.912, 0.701, 0.453], "train_acc": [0.612, 0.702, 0.811], "val_loss": [0.95, 0.99, 1.14],
         "val_acc": [0.601, 0.611, 0.603]}),
    ("a step out of its total that restarts each epoch (pytorch-tutorial's `Epoch [3/5], Step [200/600], Loss: x`)",
     "\n".join(f"Epoch [{e}/5], Step [{k}/600], Loss: {x}" for e, k, x in (
         (1, 100, 0.5123), (1, 200, 0.4011), (2, 100, 0.3512), (2, 200, 0.3301), (3, 100, 0.3104), (3, 200, "nan"))),
     {"train_loss": [0.5123, 0.4011, 0.3512, 0.3301, 0.3104, np.nan], "steps": [100, 200, 700, 800, 1300, 1400]}),
    ("...and one printed once an epoch, at its end (`Epoch [2/40], Step [100/100], Loss: x`)",
     "\n".join(f"Epoch [{e}/40], Step [100/100], Loss: {x}" for e, x in ((1, 1.99), (2, 1.98), (3, 1.97))),
     {"train_loss": [1.99, 1.98, 1.97], "steps": [100, 200, 300]}),
    ("counts with thousands separators (tqdm, the HF Trainer's banner; a decimal comma or a list is no count)",
     "\n".join([
         "Step 100/5000 | Loss: 2.412 | Tokens/s: 15,234 | Step time: 1.07s",
         "Step 200/5000 | Loss: 2.101 | Tokens/s: 1,210 | Step time: 13.54s",
         "step 300 loss 0,912 lr=1,2 tokens/s: 1,234.5",
     ]), {"throughput": [15234, 1210, 1], "train_loss": [2.412, 2.101, 0], "steps": [100, 200, 300]}),
    ("Lightning's model summary, then its bar (a summary row's number is a parameter count, not a loss)", "\n".join([
        "  | Name      | Type             | Params | Mode",
        "-------------------------------------------------------",
        "0 | backbone  | ResNet           | 23.5 M | train",
        "1 | head      | Linear           | 20.5 K | train",
        "2 | loss_fn   | CrossEntropyLoss | 0      | train",
        "3 | accuracy  | Accuracy         | 0      | train",
        "-------------------------------------------------------",
        f"Epoch 0: 100%|{BAR}| 100/100 [00:30<00:00, 3.30it/s, v_num=2, train_loss=nan]",
        "  | 100000 | loss nan | lr 0.000000e+00 |",
    ]), {"train_loss": [np.nan, np.nan], "train_acc": [], "lr": [0.0]}),
    ("Lightning's test results (a table drawn in box characters)", "\n".join([
        "\u250f" + "\u2501" * 27 + "\u2533" + "\u2501" * 27 + "\u2513",
        "\u2503        Test metric        \u2503       DataLoader 0        \u2503",
        "\u2502         test_acc          \u2502    0.9812000393867493     \u2502",
        "\u2502         test_loss         \u2502    0.06123400107026100    \u2502",
    ]), {"test_acc": [0.9812000393867493], "test_loss": [0.061234001070261]}),
    ("DeepSpeed's loss-scale search, then the HF Trainer's dicts (a step printed once, in prose)", "\n".join([
        "[2023-11-06 11:54:09,446] [INFO] [fused_optimizer.py:347:_update_scale] Grad overflow on iteration 0",
        "[2023-11-06 11:54:09,446] [INFO] [fused_optimizer.py:348:_update_scale] Reducing dynamic loss scale from "
        "65536 to 32768.0",
        "{'loss': 2.3, 'learning_rate': 2e-05, 'epoch': 0.02}",
        "{'loss': 2.2, 'learning_rate': 2e-05, 'epoch': 0.04}",
        "{'loss': 2.1, 'learning_rate': 2e-05, 'epoch': 0.06}",
    ]), {"train_loss": [2.3, 2.2, 2.1], "steps": [0, 1, 2]}),
]


def _read(tmp_path: Path, text: str) -> dict:
    p = tmp_path / "train.log"
    p.write_text(text + "\n")
    return {s.name: s for s in parse_text_log(p, "train.log").series}


@pytest.fixture(params=["c", "python"])
def scanner(request, monkeypatch):
    """Each dialect through the C scanner and through its pure-Python twin."""
    if request.param == "python":
        monkeypatch.setattr(textlog, "_scan", logscan_fallback.scan)
    elif not textlog._FAST:
        pytest.skip("the C scanner is not built here")


@pytest.mark.parametrize("framework,text,want", DIALECTS, ids=[d[0].split(" (")[0] for d in DIALECTS])
def test_dialect(tmp_path, scanner, framework, text, want):
    series = _read(tmp_path, text)
    for name, values in want.items():
        if name == "steps":
            got = series["train_loss"] if "train_loss" in series else next(iter(series.values()))
            assert sorted(set(got.steps.tolist())) == sorted(set(values)), framework
            continue
        got = series[name].values.tolist() if name in series else []
        assert len(got) == len(values), (framework, name, got)
        np.testing.assert_allclose(got, values, rtol=1e-12, err_msg=f"{framework}: {name}")
