"""The pure-Python scanner (for an install without a compiler) gives what the C one gives, byte for
byte: on the bundled example, on every tuning case of tests/wild, and on lines built to be awkward."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.ingest import logscan_fallback
from analysis.ingest.textlog import _Families, _literals, _section_initials

_logscan = pytest.importorskip("analysis.ingest._logscan", reason="the C scanner is not built here")

ROOT = Path(__file__).resolve().parents[1]
WILD = ROOT / "tests" / "wild"


def _named(result, families: _Families):
    """A scan's result with family ids replaced by names (each scanner met them in its own order)."""
    lines, rows, columns, hits, malformed, last_step, first_raw, last_raw, cr = result
    cols = {families.names[f]: (r, ln, np.frombuffer(st, np.float64).tobytes(), v) for f, r, ln, st, v in columns}
    return lines, rows, cols, hits, malformed, np.array([last_step, first_raw, last_raw]).tobytes(), cr


def _same(data: bytes) -> None:
    fast, slow = _Families(), _Families()
    c = _named(_logscan.scan(data, fast.resolve, _literals(), _section_initials()), fast)
    py = _named(logscan_fallback.scan(data, slow.resolve, _literals(), _section_initials()), slow)
    assert c[:2] == py[:2] and c[3:] == py[3:]
    assert c[2].keys() == py[2].keys()
    for name in c[2]:
        assert c[2][name] == py[2][name], name


def _tune_files():
    labels = json.loads((WILD / "labels.json").read_text())
    return [f for lab in labels if lab["split"] == "tune" for f in sorted((WILD / "cases" / lab["id"]).iterdir())]


def test_same_on_the_bundled_example():
    _same((ROOT / "examples" / "diverging-run" / "train.log").read_bytes())


@pytest.mark.parametrize("path", _tune_files(), ids=lambda p: p.parent.name)
def test_same_on_every_tuning_case(path):
    _same(path.read_bytes())


TRICKY = [
    "Epoch 1:  45%|####  | 450/1000 [00:10<00:12, 43.21it/s, loss=2.31]\rEpoch 1:  46%|####  | 460/1000 [00:10<00:12, loss=1.99]\r\r",
    "\x1b[1mstep=1\x1b[0m loss=2.5 \x1b[31mlr=1e-3\x1b[0m \x1b[?25h \x1b]junk",
    "step=3 loss=nan grad_norm=inf lr=-inf acc=NaN val_loss=-nan x=INF lr=Infinity loss_scale=infinityX",
    "step=4 lr=-Infinity grad_norm=INFINITY loss=+inf",
    "loss= lr=, grad_norm: ; acc=} | loss | lr:",
    "info inflation nanny loss: nanometer lr: 1e5x",
    "err     nan", "  err\t-inf  \r", "err     0.5", "NaN or Inf found in input tensor", "word nan more",
    "Epoch 1 | train: loss 0.912 acc 0.6 | val: loss 0.95 | test: [1/2] | Train [loss=0.9, acc=0.6] Valid [ loss 1]",
    "val: data/val.txt | train: True | val: loss | Valid [] loss=0.5 | valid:loss=0.7",
    "2 | loss_fn | CrossEntropyLoss | 0 | train | loss | 0.5 | name | x | y | 1",
    "Step [100/600] loss 1\nStep [200/600] loss 2\nStep [100/600] loss 3\nstep 5/3 loss 4\nstep 2 loss 5\nStep [1/0] x 1",
    "Step [100/100] a 1\nStep [100/100] a 2\nstep 100 a 3\nStep [100/100] a 4\nStep [100/200] a 5\nStep [100/200] a 6",
    "tokens/s: 15,234 n=124,439,808 a: 1,2345 b: 12,345, c: 0,912 d: 1,234.5 e: 9999,999 f: '1,234' g: 1,23",
    "\u2502 test_acc \u2502 0.98 \u2502\u2503 loss \u2503 0.5 \u2503 \u2502\u2502 acc \u25020.1",
    "step 1 loss 1e 2 lr 1.e-3 grad_norm .5 acc 5. ppl 1" + "0" * 70 + ".5 wps 9007199254740993",
    "loss: " + "9" * 63 + " lr: 1e-400 grad_norm: 1e400 acc: 0.1234567890123456789e-5",
    "\x00\xff garbage \x80 loss=1.5 \xe2\x96\x88\xe2\x96\x88 lr=2",
    "2020-03-23 11:38:31 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 9.393 | nll_loss 8.328 | ppl 321.26 | wps 84912.1 | num_updates 695",
    "2020-03-23 11:39:44 | INFO | train_inner | epoch 003:      5 / 356 loss=9.44, nll_loss=8.44, ppl=347.28, gnorm=156.036, num_updates=700",
    "Epoch(val) [1][625]  bbox_mAP: 0.3 loss: 0.9",
    "Epoch(train)  [1][  50/1000]  base_lr: 2.0000e-02 lr: 2.0000e-02  eta: 1 day, 6:35:57  time: 0.4  loss: 1.5  loss_cls: 0.5",
    "Epoch [1][50/7330]\tlr: 1.996e-03, eta: 1 day, 6:35:57, time: 0.633, data_time: 0.052, memory: 3837, loss_cls: 1.5, acc: 85.4, loss: 2.4",
    "Test: [ 10/100]\tTime  0.5 ( 0.6)\tLoss 6.9 (6.9)\tAcc@1 0.0 ( 0.1)",
    "Epoch: [0][  10/5005]\tTime  0.5 ( 0.6)\tData 0.1\tLoss 6.9 (6.9)",
    " eta: 0:10:00  iter: 19  total_loss: 2.1  loss_cls: 0.7  loss_box_reg: 0.1  time: 0.5  lr: 0.0002  max_mem: 3000M",
    "9595/9595 [==============================] - 1s - loss: 0.6242 - acc: 0.6295 - val_loss: 0.5265 - val_acc: 0.7470",
    "Train Epoch: 1 [128/60000 (0%)]\tLoss: 2.301 Accuracy score: 0.5 Training Loss: 2.0 Validation Loss: 2.2",
    # the same name twice on a line, the second non-finite (MMSA's `mmilb loss: ... main loss: nan`), or finite
    "MMSA - TRAIN-(mmim) [1/2/2] >> mmilb loss: 0.0042 main loss: nan  Has0_acc_2: 0.5701",
    "a loss: 0.5 b loss: 0.7 c loss: inf", "step 3 loss: nan loss: 0.2",
    # a table under a logger's stamps (the header's stamp says its rows have one), glog's, a bracketed clock, a
    # level in brackets; stamps cut short or with a dash before a negative number; a `time` column under no stamp
    "2024-03-01 10:22:30,809 - INFO - box         obj              cls     total    labels  img_size",
    "2024-03-01 10:22:31,249 - INFO - nan       0.007422         0       nan        22      1280",
    "2024-03-01T10:22:31.249Z -0.5       0.007422         0       nan        22      1280",
    "I0301 10:22:10.042 1234 train.py:88] box  obj  cls  total",
    "I0301 10:22:11.042 1234 train.py:88] 0.5  0.1  0  0.6",
    "[10:22:03] [WARNING]: box  obj  cls  total", "[10:22:04] | 0.5  0.1  0  0.6", "[10:22:0 box  obj  cls  total",
    "2024-03-01 10:2 box  obj  cls  total", "I0301 10:22:10.042 train.py:88] box  obj  cls", "10:22:04 INFOX box  obj",
    "time  loss  acc", "00:01:23  0.5  0.9", "00:01:24  0.4  0.91",
    # a YOLO table: header, a row with a progress bar, a validation table that is no header, rows
    "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size",
    "      1/100      2.61G      1.234      2.345     1.1234         45        640: 100%|\xe2\x96\x88\xe2\x96\x88| 8/8 [00:02<00:00,  3.21it/s]",
    "                 Class     Images  Instances          P          R      mAP50   mAP50-95: 100%|##| 4/4",
    "                   all        128        929      0.669      0.588      0.642      0.472",
    "      2/100      2.61G        nan      2.345     1.1234         45        640:",
    "      3/100     12.5ms    0.9x/2     1.2abc    1.1abcd         45        640:",
    "",
    "epoch|mem|mloss0|mloss1|targets|imgsize|p|r|map",
    "-|-|-|-|-|-|-|-|-",
    "0/299|7.17G| 3.28| 2.15|    5|  576|0.409|0.723|0.623|",
    "1/299|7.35G| 3.46|     |    5|  512| 0.49|0.709|0.647|",
    "Epoch\tTraining Loss\tValidation Loss\tAccuracy",
    "1\tNo log\t0.4\t0.8",
    "2\t0.35\t0.3\t0.85",
    "| Epoch | Train Loss | Val Loss |",
    "|---|---|---|",
    "| 3 | 0.25 | 0.28 |",
    "step=10 loss=1.0",
    "4 0.1 0.2",
    "elbo=nan; kl: inf x=-inf y=nan% z|nan q = NaN fooBar=1.#QNAN lb=12 lb=nan w nan",
    # a nameless value is kept from its first non-finite report on: finite again after it, it is read too
    "elbo=-3.5; kl: 0.2 x=1 best_val=inf bits_per_dim=nan beta=inf q = 2 lb: 4", "lb=5 elbo: 1e3",
    "Step  Training Loss  Validation Loss   a  b  c  d  e  f  g  h  i  j  k  l  m  n  o  p  q  r  s  t  u  v  w  x  y  z "
    + "  ".join(f"c{i}" for i in range(50)),
    "{'loss': np.float64(0.25), 'lr': tensor([1e-3]), 'grad_norm': array(2.5, dtype=float32), 'acc': f(}",
    "训练 loss：0.5, lr： 1e-3, acc：, epoch：1/10",
    "{'loss': [0.6931, 0.52, nan, inf], 'accuracy': [0.5, 0.7], 'val_loss': [ 0.6 ,0.55,], 'lr': [1e-3, x]}",
    "{\"loss\": [1, 2, 3], 'loss': [4, 5]} lr=[1e-05, 1e-05] step=3",
    "I0420 16:54:21.603490 29735 solver.cpp:315]     Test net output #0: accuracy = 0.9 loss = 0.3",
    "I0420 16:54:21.603490 29735 solver.cpp:228] Iteration 100, loss = 0.5",
    "{'loss': 6.4776, 'learning_rate': 1.9914000000000003e-05, 'epoch': 4.17}",
    # MSVC's non-finite values and darknet's value-first pairs (AlexeyAB/darknet#429, #1020)
    "1.#QNAN0 loss, -1.#QNAN0 avg loss, 0.001000 rate, 6.230000 seconds, /64 images",
    " 2: 519.797913, 519.720886 avg loss, 0.000000 rate, 2.054143 seconds, 128 images",
    "loss 1.#INF00 lr -1.#IND acc 1.#SNAN grad_norm 1.#J x 12#INF y 1.# z -1.#QNAN",
    "3 loss, 4 lr 5 acc, 6 avg loss 7, 8 grad norm, 9 step, 1e5 epoch, 2.5 valid, 0.5 acc",
    # CloudWatch's `#015` for `\r` and `#010` for a backspace (aws-samples/amazon-sagemaker-script-mode#11)
    "#0151/4 [======>....] - ETA: 0s - loss: 521.6073#010#010#010#0154/4 [=====] - 0s 56ms/step - loss: 522.4297",
    "loss: 1.5#015#015", "#015", "##015#0", "Test net output #015: accuracy = 0.9",
    # a split's accuracy as a percentage on a counted line (rasbt's deeplearning-models), not a split's
    # share or tqdm's progress
    "Epoch: 001/010 | Train: 10.000% | Loss: 2.303", "Epoch: 002/005 | Train: 92.72% | Validation: 90.29%",
    "Train: 80% Test: 20%", "Epoch 1 Train:  45%|####  | 450/1000", "step 5 valid: 9.5% test: 3%",
    "Traceback (most recent call last):",
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB",
    # a comma after a key, labels of several words, a value replaced, a count of a total, a two-word section
    "loss_rpn_cls,0.77,loss_rpn_regr,nan,class_acc,0.57,x,", "[('loss', 0.35), ('acc', 0.9)] loss ,1 lr, x",
    "Loss RPN classifier: 0.3", "a b c d e f loss: 1", "Classifier accuracy for bounding boxes from RPN: 0.9",
    "Epoch 00001: val_loss improved from inf to 0.34005, saving", "val_loss did not improve from 0.1",
    "x from 1 to 2", "step from 1 to 2", "loss scale decreased from 65536 to 32768", "lr from 1 to",
    "Test set: Average loss: 2.3026, Accuracy: 980/10000 (10%)", "Epoch 3/100 acc 5/0 loss 1.5/3 acc 7/5",
    "val Loss: 0.6931 Acc: 0.4575 lr 0.1", "Train Loss: 0.5 Acc: 0.8 | Val. Loss: 0.6 Acc: 0.7",
    # tables: a CSV header once (pandas' index too), a frame printed, names one blank apart
    "epoch,acc,loss,val_loss", "0,0.5,0.69,0.7", "1,0.6,nan,", ",epoch,loss,acc", "0,1,0.9,0.5",
    "       loss  accuracy  val_loss", "0  0.419479  0.850200  0.330585", "12  0.3  0.8  0.2",
    "epoch loss acc val_loss", "1 0.9 0.5 1.0", "2 nan 0.1", "3 0.5 0.5 0.5 0.5", "Plot loss and acc curves",
    # YAML's non-finite values (RLlib's result dump) and SB3's `| key | value |` cells, beside look-alikes
    "episode_reward_mean: .nan", "lb: -.inf", "x: .Inf y: .NAN z: .info w: .5 v: .nanx", "model.inf: 3",
    "|    ep_rew_mean     | nan      |", "|    loss            | 0.52     |", "| a | inf | b |.nan|",
    # a two-column pandas frame (its index under the header's blanks) beside two-name lines that are none
    "    loss  accuracy", "0  1.0637  0.9642", "1  nan  nan", "loss acc", "1 2", "loss,acc", "0.5,0.9",
    "  loss  prose words", "3  4", "| loss | acc |", "| 0.5 | 0.9 |",
    # dashes drawn around a name (public threads' print loops) beside a CLI's `--lr 0.1` and a negative
    "-----Step 3 --LOSS-- tensor(2.3075, device='cuda:0', grad_fn=<AddBackward0>)",
    "-----------loss------------:  tensor(nan, device='cuda:3', dtype=torch.float16)",
    "python train.py --lr 0.1 --batch-size 32", "x --lr-- 0.5 -loss 3 ---acc: 0.5 -- --- ---- -1 --2 ---3e4",
    "--a--b-- 1 ---_x: 2 ---",
    # a counter inside the label, the value after it (tf cookbook's print loop, word2vec's `Average loss at step`)
    "Loss at step 100 : nan", "Average loss at step  2000 :  4.37", "loss at epoch 3: 0.5", "at step 5: 3",
    "Loss at step 100", "the loss at step 7 = 2.5", "| valid | loss at step 4 : 2", "Loss at step 1 : x",
    "Loss RPN classifier at step 3: 0.2", "x at step 3 : nan", "loss at  step 3: 1", "loss  at step 3: 1",
    "loss at step 3 :: 1", "loss at step 3 : 1 acc: 0.5", "lr at iter 3: 0.1 loss at step 4: 2",
    "Loss for Iter 1: 0.521861, acc = 0.09", "loss in epoch 3: 0.4", "loss of epoch 3 : nan", "loss on step 2: 1",
    "loss after epoch 3: 0.2", "loss with epoch 3: 1", "loss fore step 3: 1", "for step 3: 1",
    # an epoch's batch counter (mnist, mmcv, the ImageNet example, MiniMind) beside near misses
    "Train Epoch: 1 [12800/60000 (21%)]\tLoss: 0.5", "Epoch [3][200/500]\tlr: 1e-2, loss: 0.4",
    "Epoch: [0][  10/5005]\tLoss 6.9e+00 (6.9e+00)", "Epoch:[0/20](22300/41914) loss:2.656", "Epoch 3 [9/3] loss 1",
    "Epoch 3 [2/] loss 1", "Epoch 3 (4/5 (9%)) loss 1", "Epoch 3 (4/5 (9%) loss 1", "Epoch 3 [4/5) loss 1",
    "Epoch(val) [3][4/5] loss 1", "Test epoch 3 [4/5] loss 1", "Epoch 3 [nan/5] x", "Epoch 3 step 7 [4/5] loss 1",
    "Epoch 3/10 ] [ 4/5 ] loss 1", "Epoch 3 [4/5][6/7] loss: 2", "Epoch 3 [4/0] loss 1", "epoch 1 [-3/5] loss 1",
    "Val Epoch: 3 [10/50] Loss: 0.9", "Test Epoch: 3 [10/50] Loss: 0.9", "Epoch: [30][  0/500] Loss 3.1",
    "Epoch: [2][ 0/9] Loss 3", "Epoch: [0][ 0/9] Loss 3", "Epoch: [nan][ 0/9] Loss 3", "Epoch: [-4][ 0/9] Loss 3",
    # quoted numbers after quoted keys (PaddleDetection), beside quoted words and unquoted keys
    "iter: 360, lr: 0.005, 'loss_xy': 'nan', 'loss': '12.5', \"acc\": \"-.5\", 'name': 'net', loss: '3', 'lr': '", "'loss': 'inf",
    "{'precision': '16-mixed', 'time': '2024-03-01 10:00:00', 'epoch': '3/10', 'mode': 'nan-safe', 'x': '5\x00'}",
    "{'loss': 'nn.CrossEntropyLoss(0.1)', 'lr': 'inverse_sqrt(5e-4)', 'acc': '0.5%', \"loss\": \"0.25\"}",
    # possessives (LightGBM's sets) beside apostrophes that are none
    "[1]\tvalid_0's auc: 0.5\ttraining's l2: 0.3", "the model's loss: 0.5", "x's\tloss: 1", "a 's loss: 2", "it's 3",
    "valid_0's: 0.5", "valid_0'sauc: 1", "loss's", "'s x: 1", "--x's auc: 1",
    # a table quoted in Markdown (its markers before the header and each row), beside markers that are none
    "> box         obj              cls     total    labels  img_size", "> nan       0.007422         0       nan  22  1280",
    ">\t> epoch  loss  acc  lr", "> > 3  0.5  0.9  0.1", ">> 3  0.5  0.9  0.1", ">>> loss: 0.5", ">", "> ", ">loss: 1",
]


def test_same_on_awkward_lines():
    text = "\n".join(TRICKY).encode("utf-8", "surrogateescape")
    _same(text)
    _same(text + b"\n")
    _same(b"")
    for i in range(0, len(TRICKY), 3):       # every slice of it, so tables and sections start anywhere
        _same("\n".join(TRICKY[i:]).encode())


def test_without_the_extension_the_install_says_so_once(tmp_path):
    """A Python that cannot import the C scanner reads the same numbers and says once that it is slow."""
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\nstep=2 loss=nan\n")
    code = (
        "import sys; sys.modules['analysis.ingest._logscan'] = None\n"
        "from pathlib import Path\n"
        "from analysis.ingest.textlog import parse_text_log\n"
        f"for _ in range(2): r = parse_text_log(Path({str(log)!r}), 'train.log')\n"
        "print([s.values.tolist() for s in r.series if s.name == 'train_loss'])\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert p.stdout.strip() == "[[2.0, nan]]"
    assert p.stderr.count("fast log scanner") == 1


def test_same_on_random_lines():
    """Lines assembled at random from the pieces logs are made of (fixed seed: the same every run)."""
    pieces = ["loss", "Loss", "val", "valid", "Test", "Epoch", "epoch", "step", "iter", "lr", "acc", "Training Loss",
              "grad norm", "loss_cls", "box_loss", "eval_loss", "GPU_mem", "x", "'loss'", '"lr"', "train",
              "=", ":", "|", " ", "  ", "\t", " - ", ", ", "[", "]", "(", ")", "(val)", "tensor(", "%", "ms", "G",
              "1", "0.5", "-2.5e-3", "1/100", "nan", "-inf", "Infinity", "7.", ".5", "1e", "12:00:00", "\r", "\x1b[32m",
              "100%|##|", "\u2588", "\uff1a", "np.float64(", "', '", "Traceback", "CUDA out of memory",
              ",", " from ", " to ", "Val.", "980/10000", "improved", "Loss RPN classifier",
              " at ", "at step ", " at epoch "]
    rng = np.random.default_rng(14)
    lines = ["".join(rng.choice(pieces, rng.integers(0, 14))) for _ in range(3000)]
    _same("\n".join(lines).encode())


def test_the_build_succeeds_without_a_compiler(tmp_path):
    """Both C extensions are optional: a build whose compiler fails still succeeds, without them."""
    import os
    lib = tmp_path / "lib"
    p = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(lib), "--build-temp",
                        str(tmp_path / "tmp")], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "CC": "/bin/false", "LDSHARED": "/bin/false"})
    assert p.returncode == 0, p.stderr[-2000:]
    assert not list(lib.rglob("*.so")) and "_logscan" in p.stderr


def test_same_on_random_bytes():
    """Arbitrary bytes (a binary file named .log, a truncated UTF-8 paste) read alike and never crash."""
    rng = np.random.default_rng(17)
    alphabet = np.frombuffer(b"loss=:|[]()'\" \t\r\n\x1b\xef\xbc\x9a0123456789.-eEnaifLTtvV_,%/", np.uint8)
    _same(rng.choice(alphabet, 200_000).tobytes())
    _same(rng.integers(0, 256, 100_000, dtype=np.uint8).tobytes())
