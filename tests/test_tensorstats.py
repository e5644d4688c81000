"""Streamed tensor statistics against a float64 reference, across block edges and dtypes."""
import numpy as np
import pytest
import torch
from safetensors.torch import save_file

import analysis.tensorstats as ts
from analysis.ingest.checkpoints import load_safetensors


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(ts, "BLOCK", 1000)           # many blocks, uneven edges


def reference(x: np.ndarray) -> tuple[float, int]:
    x = x.astype(np.float64).ravel()
    ok = np.isfinite(x)
    return float(np.sqrt((x[ok] ** 2).sum())), int((~ok).sum())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_norm_nonfinite_and_zero_rows(tmp_path, small_blocks, dtype):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(257, 33, generator=g)
    w[5] = 0.0                                          # a row that never moved from zero
    w[100, 3], w[200, 7] = float("nan"), float("inf")
    big = torch.full((5000,), 3e19)                    # squares overflow float32, values do not
    save_file({"emb.weight": w.to(dtype), "big": big.to(torch.float32)}, tmp_path / "m.safetensors")
    ck = load_safetensors([tmp_path / "m.safetensors"], "m.safetensors")
    by = {t.name: t for t in ck.tensors}
    norm, bad = reference(w.to(dtype).float().numpy())
    assert by["emb.weight"].nonfinite == bad == 2
    assert by["emb.weight"].norm == pytest.approx(norm, rel=1e-5)
    assert by["emb.weight"].zero_rows == 1
    assert by["big"].norm == pytest.approx(reference(big.numpy())[0], rel=1e-6) and by["big"].nonfinite == 0
