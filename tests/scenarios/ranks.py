"""One rank of a gloo job, started by system_runs._two_ranks or grid_system:
`python -m tests.scenarios.ranks RANK PORT MODE LOG [WORLD AT]`. At step AT (25) the last rank:
MODE `exit`: its process ends; `stall`: it stops for 3.5 s, past the 2 s collective timeout;
`raise`: its data raises and the traceback ends the process; `mismatch`: it reduces a tensor of
another shape than the other ranks."""
from __future__ import annotations

import datetime
import os
import sys
import time
import traceback
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn


def main(rank: int, port: int, mode: str, log_path: str, world: int = 2, at: int = 25) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=2))
    last = world - 1
    torch.manual_seed(rank)
    model = nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    lines = []
    for step in range(1, 41):
        x = torch.randn(16, 8)
        loss = nn.functional.cross_entropy(model(x), (x[:, 0] > 0).long())
        opt.zero_grad()
        loss.backward()
        if rank == last and step == at:
            Path(log_path).write_text("\n".join(lines) + "\n")
            if mode == "exit":
                os._exit(1)
            if mode == "raise":
                try:
                    raise OSError(f"[Errno 5] Input/output error: '/data/shard-{rank:05d}.bin'")
                except OSError:
                    lines += [f"[rank{rank}]: " + ln for ln in traceback.format_exc().rstrip().split("\n")]
                Path(log_path).write_text("\n".join(lines) + "\n")
                os._exit(1)
            if mode == "stall":
                time.sleep(3.5)
        try:
            for p in model.parameters():
                grad = p.grad
                if mode == "mismatch" and rank == last and step >= at:
                    grad = torch.cat([grad.flatten(), torch.zeros(3)])
                dist.all_reduce(grad)
                p.grad /= world
        except RuntimeError:
            lines += [f"[rank{rank}]: " + ln for ln in traceback.format_exc().rstrip().split("\n")]
            break
        opt.step()
        lines.append(f"[rank{rank}] step {step} loss {loss.item():.4f}")
    Path(log_path).write_text("\n".join(lines) + "\n")
    os._exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], *map(int, sys.argv[5:7]))
