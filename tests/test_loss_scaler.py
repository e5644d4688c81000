"""Whether a run declares a dynamic loss scaler (analysis/analyzers/common.py `loss_scaler`): under
one, the first steps' non-finite gradient norms are skips by design (the watch's streak rule and the
post-mortem read them so); under bf16, or a scaler switched off, a NaN gradient is news."""
from __future__ import annotations

import json

import pytest

from analysis.analyzers.common import loss_scaler
from analysis.ingest import load_run

LOG = "".join(f"step {i} loss {2.0 - i / 100:.3f} grad_norm 1.0\n" for i in range(1, 30))


@pytest.mark.parametrize("files,declared", [
    # Hugging Face TrainingArguments saved as JSON
    ({"config.json": json.dumps({"learning_rate": 2e-5, "fp16": True})}, True),
    ({"config.json": json.dumps({"learning_rate": 2e-5, "fp16": False, "bf16": True})}, False),
    # DeepSpeed: the fp16 section switched on, with its initial scale
    ({"ds_config.json": json.dumps({"fp16": {"enabled": True, "loss_scale": 0, "initial_scale_power": 16}})}, True),
    # ...and the shape transformers' ds_config templates ship for a bf16 run: fp16 off, its keys left in
    ({"ds_config.json": json.dumps({"fp16": {"enabled": False, "loss_scale": 0, "initial_scale_power": 16},
                                    "bf16": {"enabled": True}})}, False),
    ({"ds_config.json": json.dumps({"fp16": {"enabled": "auto", "initial_scale_power": 16}})}, False),
    # a GradScaler in the code, and nanoGPT's, which is off under its default bf16
    ({"train.py": "import torch\nscaler = torch.amp.GradScaler('cuda')\n"}, True),
    ({"train.py": "import torch\ndtype = 'bfloat16'\n"
                  "scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))\n"}, False),
    ({}, False),
])
def test_a_declared_scaler(tmp_path, files, declared):
    (tmp_path / "train.log").write_text(LOG)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert loss_scaler(load_run(tmp_path)) is declared
