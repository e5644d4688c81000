"""A linear regression trained by minibatch SGD on CPU (batch 16, lr 0.05, targets with noise 0.5), its per-batch loss
noisy. `regression_losses`: nothing wrong in it; its start falls, its second half has converged and only wanders,
the batch noise a short pasted window of a healthy run shows. `rising_losses`: the same run once converged, its LR
then raised past what minibatch SGD on it stays stable at; the loss climbs, unevenly, through that same noise."""
from __future__ import annotations

import torch

STEPS = 600
CONVERGED = 300      # steps at lr 0.05 before `rising_losses` raises the LR
RISE_STEPS = 150
SEEN_RISE = 1.5      # a window of `rising_losses` shows a rise where its last third is this many times its first


def _train(seed: int, steps: int, lr_at: dict[int, float]) -> list[float]:
    torch.manual_seed(seed)                     # the layer's initial weights
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4096, 8, generator=g)
    y = x @ torch.randn(8, 1, generator=g) + 0.5 * torch.randn(4096, 1, generator=g)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    out = []
    for step in range(steps):
        if step in lr_at:
            for group in opt.param_groups:
                group["lr"] = lr_at[step]
        i = torch.randint(0, 4096, (16,), generator=g)
        loss = torch.nn.functional.mse_loss(model(x[i]), y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def regression_losses(seed: int) -> list[float]:
    """The per-batch training loss at each of STEPS steps, the same for a seed on any CPU."""
    return _train(seed, STEPS, {})


def rising_losses(seed: int, lr: float) -> list[float]:
    """The per-batch loss for RISE_STEPS steps after the LR goes from 0.05 to `lr` (0.6-0.75: past the stable range
    of SGD at batch 16 on this problem, so the weights drift off, in bursts it partly comes back from). A window of
    it shows the fault where `rose` says so; callers check that of each window they take."""
    return _train(seed, CONVERGED + RISE_STEPS, {CONVERGED: lr})[CONVERGED:]


def rose(window: list[float]) -> bool:
    """Whether a window's last third sits SEEN_RISE times its first third or more (medians): a rise a reader sees."""
    third = max(1, len(window) // 3)
    first, last = sorted(window[:third])[third // 2], sorted(window[-third:])[third // 2]
    return last >= SEEN_RISE * first
