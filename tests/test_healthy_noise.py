"""A loss that wanders at one level is no fall: the healthy verdict says "falls steadily" (0.85) only where the loss
fell past its report-to-report noise. Real tiny CPU run: a linear regression trained by minibatch SGD, its per-batch
loss printed; the run's start falls, a 30-report window of its converged stretch only wanders (its last tenth 5% under
its first by chance, which read as a steady fall before)."""
import numpy as np

from analysis import diagnose
from analysis.signals import relative_change
from tests.scenarios.minibatch_noise import STEPS
from tests.scenarios.minibatch_noise import regression_losses as _losses

WINDOW = 30


def _converged_window(losses: list[float]) -> list[float]:
    """A window of the converged stretch whose last tenth sits 2% or more below its first: a fall by the old
    measure, made of batch noise alone (checked here, whatever the seed)."""
    for start in range(STEPS // 2, STEPS - WINDOW):
        w = losses[start:start + WINDOW]
        if relative_change(np.asarray(w)) > 0.05:
            return w
    raise AssertionError("no converged window that looks like a fall")


def _verdict(tmp_path, losses: list[float]):
    (tmp_path / "train.log").write_text("".join(f"loss: {v:.4f}\n" for v in losses))
    d, _ = diagnose(tmp_path)
    return d.root_causes[0]


def test_a_converged_stretch_that_only_wanders_is_no_steady_fall(tmp_path):
    for seed in (0, 1):
        losses = _losses(seed)
        (tmp_path / f"start{seed}").mkdir()
        start = _verdict(tmp_path / f"start{seed}", losses[:WINDOW])
        assert start.code == "healthy" and "falls steadily" in start.issue and start.confidence >= 0.8
        (tmp_path / f"late{seed}").mkdir()
        late = _verdict(tmp_path / f"late{seed}", _converged_window(losses))
        assert late.code == "healthy" and "no clear fall" in late.issue and late.confidence < 0.8
