"""A run with nothing wrong in it whose per-batch loss is noisy: a linear regression trained by minibatch SGD on CPU
(600 steps, batch 16, lr 0.05, targets with noise 0.5). Its start falls; its second half has converged and only
wanders, the batch noise a short pasted window of a healthy run shows."""
from __future__ import annotations

import torch

STEPS = 600


def regression_losses(seed: int) -> list[float]:
    """The per-batch training loss at each of STEPS steps, the same for a seed on any CPU."""
    torch.manual_seed(seed)                     # the layer's initial weights
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4096, 8, generator=g)
    y = x @ torch.randn(8, 1, generator=g) + 0.5 * torch.randn(4096, 1, generator=g)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    out = []
    for _ in range(STEPS):
        i = torch.randint(0, 4096, (16,), generator=g)
        loss = torch.nn.functional.mse_loss(model(x[i]), y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out
