"""One rank of a two-process gloo job, started by system_runs._two_ranks:
`python -m tests.scenarios.ranks RANK PORT MODE LOG`. MODE `exit`: rank 1's process ends at step 25;
`stall`: rank 1 stops for 3.5 s there, past the 2 s collective timeout."""
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


def main(rank: int, port: int, mode: str, log_path: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=2))
    torch.manual_seed(rank)
    model = nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    lines = []
    for step in range(1, 41):
        x = torch.randn(16, 8)
        loss = nn.functional.cross_entropy(model(x), (x[:, 0] > 0).long())
        opt.zero_grad()
        loss.backward()
        if rank == 1 and step == 25:
            Path(log_path).write_text("\n".join(lines) + "\n")
            if mode == "exit":
                os._exit(1)
            time.sleep(3.5)
        try:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= 2
        except RuntimeError:
            lines += [f"[rank{rank}]: " + ln for ln in traceback.format_exc().rstrip().split("\n")]
            break
        opt.step()
        lines.append(f"[rank{rank}] step {step} loss {loss.item():.4f}")
    Path(log_path).write_text("\n".join(lines) + "\n")
    os._exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
