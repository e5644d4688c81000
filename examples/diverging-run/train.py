import math

import torch
from torch import nn


def grad_norm(model: nn.Module) -> float:
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += float(p.grad.detach().pow(2).sum())
    return math.sqrt(total)


def train_mlp(cfg: dict, on_step) -> nn.Module:
    """SGD on an MLP; the learning rate follows cfg["schedule"]: [[first_epoch, lr], ...]."""
    seed_all(cfg["seed"])
    x, y = blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = nn.Sequential(nn.Linear(cfg["dim"], cfg["hidden"]), nn.ReLU(), nn.Linear(cfg["hidden"], cfg["classes"]))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["schedule"][0][1], momentum=0.9)
    bs = cfg["batch_size"]
    step = 0
    for epoch in range(cfg["epochs"]):
        for first_epoch, lr in cfg["schedule"]:
            if epoch >= first_epoch:
                for group in opt.param_groups:
                    group["lr"] = lr
        perm = torch.randperm(len(x))
        for i in range(0, len(x) - bs + 1, bs):
            idx = perm[i:i + bs]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            gn = grad_norm(model)
            opt.step()
            step += 1
            on_step(step=step, epoch=epoch, loss=float(loss), lr=opt.param_groups[0]["lr"], grad_norm=gn)
    return model
