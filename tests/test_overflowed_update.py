"""NumPy's overflow warning on a hand-written update scaled by the learning rate is the LR (a tensor
factorisation's `step_S += lrS * e_ijk * ...`, tests/wild tune half, read as a harmless warning before). Real
runs: matrix factorisation by SGD in NumPy, its stderr as the reporter pasted it; at a small LR it prints
nothing, and an overflow on a line that scales by no LR (a softmax's exp) is no LR reading."""
import subprocess
import sys

import pytest

from analysis import diagnose

MF = """import numpy as np
rng = np.random.default_rng({seed})
R = rng.random((20, 15)) * 5
P, Q = rng.random((20, 3)), rng.random((15, 3))
lr = {lr}
for epoch in range(50):
    for i in range(20):
        for j in range(15):
            e = R[i, j] - P[i] @ Q[j]
            P[i] += lr * e * Q[j]
            Q[j] += lr * e * P[i]
print("rmse", float(np.sqrt(((R - P @ Q.T) ** 2).mean())))
"""

SOFTMAX = """import numpy as np
logits = np.array([10.0, 800.0, 3.0])
probs = np.exp(logits) / np.exp(logits).sum()
print("probs", probs)
"""


def _stderr(tmp_path, source: str) -> str:
    script = tmp_path / "mf.py"
    script.write_text(source)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120).stderr


@pytest.mark.parametrize("seed", [0, 1])
def test_an_sgd_update_that_overflows_is_the_learning_rate(tmp_path, seed):
    err = _stderr(tmp_path, MF.format(seed=seed, lr=0.5))
    assert "RuntimeWarning: overflow encountered" in err       # the fault shows, whatever the seed
    (tmp_path / "output.txt").write_text(err)
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and top.severity == "high"
    assert any("lr * e" in e.text for e in top.evidence)


@pytest.mark.parametrize("stamp", ["2024-03-01 10:22:41,424 - INFO - ", "[rank0]: ",
                                   "I0301 10:22:10.042 1234 train.py:88] "])
def test_the_same_stderr_under_a_loggers_stamp_is_read_the_same(tmp_path, stamp):
    # a job runner that stamps each line of the child's stderr: the source line under the warning is still that
    err = _stderr(tmp_path, MF.format(seed=0, lr=0.5))
    (tmp_path / "output.txt").write_text("".join(stamp + line for line in err.splitlines(keepends=True)))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "lr_too_high" and d.root_causes[0].severity == "high"


def test_the_same_factorisation_at_a_small_rate_warns_nothing(tmp_path):
    assert _stderr(tmp_path, MF.format(seed=0, lr=0.01)) == ""


def test_an_overflow_on_a_line_with_no_learning_rate_is_no_lr_reading(tmp_path):
    err = _stderr(tmp_path, SOFTMAX)
    assert "RuntimeWarning: overflow encountered in exp" in err
    (tmp_path / "output.txt").write_text(err)
    d, _ = diagnose(tmp_path)
    assert "lr_too_high" not in [c.code for c in d.root_causes]


LOGREG = """import numpy as np
rng = np.random.default_rng(0)
X = rng.normal(size=(1000, 2))
y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float)
X[:5, 0] = -5000.0; y[:5] = 0                     # a few unscaled records: exp(-z) overflows to a correct 0
lr = 0.1
w = np.zeros(2)
for epoch in range(1, 501):
    w -= lr * X.T @ (1 / (1 + np.exp(-X @ w)) - y) / len(y)
    if epoch % 50 == 0:
        z = np.clip(X @ w, -30, 30); p = 1 / (1 + np.exp(-z))
        loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
        print(f"epoch {epoch} loss {loss:.4f} acc {np.mean((p > 0.5) == y):.3f}", flush=True)
"""

ASCENT = """import numpy as np
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3)); y = X @ np.array([1.5, -2.0, 0.5]) + 0.1 * rng.normal(size=200)
w = np.zeros(3)
lr = 0.05
for epoch in range(1, 20001):
    w += lr * X.T @ (X @ w - y) / len(y)
"""


def test_a_sigmoids_exp_overflow_under_an_update_that_learns_is_no_lr_reading(tmp_path):
    # review of session 43: the exp overflows to a correct 0 on far-out samples; the loss falls under it
    script = tmp_path / "logreg.py"
    script.write_text(LOGREG)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert "overflow encountered in exp" in p.stderr and "epoch 500" in p.stdout
    (tmp_path / "output.txt").write_text(p.stderr + p.stdout)
    d, _ = diagnose(tmp_path)
    assert "lr_too_high" not in [c.code for c in d.root_causes]


def test_an_update_that_adds_the_gradient_names_the_sign_first(tmp_path):
    # review of session 43: `w += lr * X.T @ (X @ w - y)` climbs the loss at any LR
    err = _stderr(tmp_path, ASCENT)
    assert "RuntimeWarning: overflow encountered" in err
    (tmp_path / "output.txt").write_text(err)
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and "sign" in top.issue and top.raw_confidence < 0.5
    assert top.fix.startswith("Make the update subtract the gradient")
