"""A paste that ends at the processes' setup: the last line a distributed job printed before it hung.

People who ask why a multi-GPU job hangs paste what the console shows, and what it shows is the setup's
last message (Lightning's `initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2` or `All DDP processes
registered. Starting ddp with 2 processes`, Paddle's `init nccl context nranks: 4 ...`, torch's store-based
barrier key, DeepSpeed's `Initializing TorchBackend ...`), with no error under it: a job that stops there is
waiting for a rank that never joined or, once every rank registered, hangs in its first collective. The same lines
open every healthy distributed run, so the reading needs every log of the paste to end at one (nothing after it but
more setup, rules and blank lines), nothing read as a step or a metric, and no error in it (a warning is none)."""
from __future__ import annotations

import re

from analysis.analyzers.common import metrics_read, paste_kinds, pasted_texts
from analysis.analyzers.error_readings import UNKNOWN
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
# every rank has joined (Lightning's `All DDP processes registered. Starting ddp with 2 processes`): what hangs is the
# first collective, NCCL setting up its communicator between the GPUs
JOINED = re.compile(r"processes registered")
# the job's size where the line says it: `MEMBER: 1/2`, `Starting ddp with 2 processes`, `nranks: 4`
WORLD = re.compile(r"MEMBER: \d+/(\d+)|with (\d+) processes|nranks: (\d+)")
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


def _world(text: str) -> int | None:
    sizes = [int(next(g for g in m.groups() if g)) for m in WORLD.finditer(text)]
    return max(sizes) if sizes else None


def stopped_at_setup(run: Run) -> list[Finding]:
    if any(e.code is not None or e.signature in UNKNOWN for e in run.events):
        return []               # an error or a traceback in the paste, named or not, says why the job stopped
    if metrics_read(run):
        return []               # a step or a metric read anywhere: the job ran (another rank's log, a metrics file)
    ends = []
    for a, text in pasted_texts(run, paste_kinds(run), MAX_BYTES):
        last = _last_said(text)
        if last is None:
            continue
        if not SETUP.search(last[1]):
            return []           # every log the paste holds ends there (one rank's log at its setup beside another's
                                # run is that rank's start)
        ends.append((a, text, last))
    if not ends:
        return []
    a, text, (n, line) = ends[0]
    if _world(text) == 1:
        return []               # a job of one process has no rank to wait for
    if JOINED.search(line):
        issue = ("The paste ends after every rank registered, with no error: a job that stops here hangs in its "
                 "first collective, NCCL setting up its communicator between the GPUs")
        fix = ("Rerun with NCCL_DEBUG=INFO and read where each rank stops: try NCCL_P2P_DISABLE=1 where GPUs cannot "
               "reach each other directly (consumer cards, some virtual machines), NCCL_IB_DISABLE=1 without "
               "InfiniBand, and NCCL_SOCKET_IFNAME set to the interface the nodes share")
    else:
        issue = ("The paste ends at the distributed setup, with no error: a job that stops here waits for a rank "
                 "that never joined")
        fix = ("Check that every rank starts and prints this same line: rerun with NCCL_DEBUG=INFO and "
               "TORCH_DISTRIBUTED_DEBUG=DETAIL; unset NODE_RANK, LOCAL_RANK or MASTER_ADDR left set by a cluster or "
               "a launcher; point NCCL_SOCKET_IFNAME at the network interface the nodes share")
    return [Finding(code="distributed_failure", severity="medium", confidence=CONFIDENCE, analyzer=NAME, issue=issue,
                    evidence=[Evidence(f"{line}: the last line printed, and no step, metric or error after it",
                                       a.path, f"line {n}")],
                    fix=fix, quick_fix="Rerun with NCCL_DEBUG=INFO")]
