"""The optimizer a pasted log names is read as its config's `optimizer`, so the LR-range rules judge the
LR by that optimizer's family (analysis/ingest/log_settings.py)."""
import pytest

from analysis.analyzers.common import optimizer_family, peak_lr
from analysis.ingest import load_run

CASES = [
    # a notebook's `print("Optimizer:", optimizer)`, as stored in a public repository (find_string
    # "Parameter Group 0"): PyTorch's repr of the optimizer
    ("\n".join(["Loss before training: 2.2682154178619385", "", "Optimizer: Adam (", "Parameter Group 0",
                "    amsgrad: False", "    betas: (0.9, 0.999)", "    eps: 1e-08", "    lr: 0.001",
                "    weight_decay: 0", ")"]), "adam", 3, 0.001),
    # the same repr without a label before it (mmengine's docs print a built optimizer this way)
    ("\n".join(["SGD (", "Parameter Group 0", "    dampening: 0", "    lr: 0.1", "    momentum: 0.9", ")",
                "epoch 1 loss 2.30"]), "sgd", 1, 0.1),
    ("optimizer: AdamW\nepoch 1 loss 2.30", "adam", 1, None),
    ("Optimizer: SGD (lr=0.5, momentum=0.9)\nepoch 1 loss 2.30", "sgd", 1, 0.5),
    ("{'optimizer': 'lion', 'batch_size': 32}\nepoch 1 loss 2.30", "lion", 1, None),
]


@pytest.mark.parametrize("text,family,line,lr", CASES)
def test_optimizer_named_in_a_log(tmp_path, text, family, line, lr):
    (tmp_path / "train.log").write_text(text + "\n")
    run = load_run(tmp_path)
    got = optimizer_family(run)
    assert got is not None and got[0] == family
    assert got[1].artifact == "train.log" and got[1].locator == f"line {line}"
    peak = peak_lr(run)
    assert (peak and peak[0]) == lr or (lr is None and peak is None)


def test_a_log_without_an_optimizer_has_no_config(tmp_path):
    (tmp_path / "train.log").write_text("optimizer state loaded from ckpt.pt\nepoch 1 loss 2.30\n")
    run = load_run(tmp_path)
    assert optimizer_family(run) is None and not run.configs
