"""A paste that ends at the processes' setup: the last line a distributed job printed before it hung.

People who ask why a multi-GPU job hangs paste what the console shows, and what it shows is the setup's
last message (Lightning's `initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2` or `All DDP processes
registered. Starting ddp with 2 processes`, Paddle's `init nccl context nranks: 4 ...`, torch's store-based
barrier key, DeepSpeed's `Initializing TorchBackend ...`), with no error under it: a job that stops there is
waiting for a rank that never joined. The same lines open every healthy distributed run, so the reading
needs the paste to end at one (nothing after it but more setup, rules and blank lines) and no error in it."""
from __future__ import annotations

import re

from analysis.analyzers.common import pasted_texts
from analysis.ingest.dressing import undress
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "excerpt"
MAX_BYTES = 256 * 1024
CONFIDENCE = 0.45       # a hang's likeliest place, not a failure seen: the rank that never joined is not in the paste

SETUP = re.compile(r"(?i:initializing ddp\b)|Initializing distributed: GLOBAL_RANK|"
                   r"All (?:DDP|distributed) processes registered|init nccl context nranks|"
                   r"Added key: store_based_barrier_key|Initializing TorchBackend in DeepSpeed|"
                   r"^\s*distributed_backend=\w+\s*$")
# what a console prints around the setup's messages and says nothing: rules, blank lines
_RULE = re.compile(r"^[\s\-=*#_~]*$")


def _last_said(text: str) -> tuple[int, str] | None:
    """The numbered last line of the paste that is neither a rule nor blank."""
    lines = text.split("\n")
    for n in range(len(lines), 0, -1):
        line = undress(lines[n - 1])
        if not _RULE.match(line):
            return n, line.strip()
    return None


def stopped_at_setup(run: Run) -> list[Finding]:
    if any(e.code is not None for e in run.events):
        return []               # an error in the paste says why the job stopped
    # a one-line paste may be taken for a file of model outputs: read it where it is the paste itself
    kinds = ("log", "traceback", "samples") if len(run.usable()) == 1 else ("log", "traceback")
    for a, text in pasted_texts(run, kinds, MAX_BYTES):
        last = _last_said(text)
        if last is None or not SETUP.search(last[1]):
            continue
        n, line = last
        return [Finding(
            code="distributed_failure", severity="medium", confidence=CONFIDENCE, analyzer=NAME,
            issue="The paste ends at the distributed setup, with no error: a job that stops here waits for a "
                  "rank that never joined",
            evidence=[Evidence(f"{line}: the last line printed, and no step, metric or error after it", a.path,
                               f"line {n}")],
            fix="Check that every rank starts and prints this same line: rerun with NCCL_DEBUG=INFO and "
                "TORCH_DISTRIBUTED_DEBUG=DETAIL; unset NODE_RANK, LOCAL_RANK or MASTER_ADDR left set by a cluster "
                "or a launcher; point NCCL_SOCKET_IFNAME at the network interface the nodes share; try "
                "NCCL_P2P_DISABLE=1 where GPUs cannot reach each other directly",
            quick_fix="Rerun with NCCL_DEBUG=INFO")]
    return []
