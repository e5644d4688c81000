"""Training code pasted alone, with no known bug in it: the faults that most often hide in such code,
ranked, each with the lines of the paste where it would be.

People paste the part of their code they suspect and ask why training fails. When none of the rules in
code.py and code_updates.py find a bug, "nothing shows a fault" helps no one: the reply is a
differential. The order is what threads settle for code pastes (the wild corpus's tuning half: updates
that never reach the weights 8 of 17, a data bug 5, numerics 3, the LR 1), and a suspect the paste points
at moves up: a `.detach()` or `requires_grad` line for the updates, a transform on a mask or label for
the data, fp16 or a log for the numerics. Every suspect stays at a low confidence; the one artifact that
separates them (the loss per step) is what the reply asks for. Only for code alone: a log line, an error
or a config speaks for itself."""
from __future__ import annotations

import re

from analysis.ingest.configs import CodeFile
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "code"
POINTED = 0.1      # what a line aimed at a suspect adds to its prior (fp16 puts numerics above plain priors)
MOST_LINES = 3      # evidence lines quoted per suspect

# code, prior, the lines that point at it (a comment, a print or an import never does), why, what to check and
# its quick form; every script sets an LR, so its lines are quoted but add nothing
_SUSPECTS = (
    ("no_parameter_updates", 0.30,
     # (not `no_grad` or `.eval()`: every sound script's validation block has both; code_updates reads a
     # training output cut off by no_grad from the tree)
     re.compile(r"\.detach\(|(?<!tf)\.data\b(?!\.)|\brequires_grad\s*=\s*False|\.requires_grad_\(False|"
                r"\btrainable\s*=\s*False|param_groups|\bfreeze"),
     "the loss may not reach the weights the optimizer holds (an output detached or computed under "
     "no_grad, frozen or unregistered layers, an optimizer over other parameters)",
     "Print each layer's weight sum before and after one optimizer step, and check that "
     "sum(p.numel() for g in optimizer.param_groups for p in g['params']) counts the model's trainable "
     "parameters: weights that do not change name the layer the loss never reaches",
     "Check the weights change after one step"),
    ("data_pipeline_bug", 0.28,
     # anchored at the line's start: an unanchored `y = .*` would be quadratic on a long line of `y=y=`
     re.compile(r"^\s*(?:self\.)?(?:mask|label|target|y)\w*\s*=[^=].*\b(?:tfm|transforms?|ToTensor|to_tensor)\b|"
                r"\.zip\(|__getitem__|shuffle\s*[=:]\s*False|\b(?:label|target|y)\w*\.(?:view|reshape|squeeze)\("),
     "the inputs, labels or targets may not be what the loss compares (labels rescaled by a transform, "
     "targets of another shape broadcast against the predictions, pairs out of step, an unshuffled loader)",
     "Print one batch as the loss sees it: the prediction's and the target's shape, dtype and value range, "
     "and a few (input, label) pairs: a target of (N,) against (N, 1) predictions, mask values in [0, 1] "
     "where class indices are expected, or labels not matching their inputs is the fault",
     "Print one batch's shapes and values"),
    ("numerical_instability", 0.22,
     # (an epsilon under 1e-7 is 0 in half precision, where fp16's smallest value is 6e-8: `clamp(1e-16)`; a
     # compiler's fast math, Theano's `[nvcc] fastmath=True` or `--use_fast_math`, approximates exp, log and
     # division and flushes tiny values to 0)
     # (mixed precision switched on by a trainer's flag: `amp = True`, `use_amp`, a GradScaler)
     re.compile(r"\.half\(|float16|fp16|cudaHalf|autocast|\b(?:use_)?amp\s*=\s*True\b|GradScaler|"
                r"\bprecision\s*=\s*['\"]?16\b|"
                r"\blog\(|\bsqrt\(|\bexp\(|"
                r"(?:clamp\(\s*(?:min\s*=\s*)?|\beps\s*=\s*)1e-(?:0?[89]|[1-9]\d)\b|"
                r"(?i:\bfastmath\s*=\s*(?:true|1)\b)|use_fast_math|-ffast-math"),
     "a value may overflow or leave its domain (fp16 overflow, a log or sqrt of 0, an epsilon that rounds "
     "to 0 in half precision)",
     "Run one step with torch.autograd.set_detect_anomaly(True) (or check torch.isfinite on each "
     "intermediate): the first op to give inf or NaN is the fault",
     "Run a step under detect_anomaly"),
    ("lr_too_high", 0.18,
     re.compile(r"\blr\b|learning_rate|initial_lr"),
     "the learning rate may be too high for the inputs' scale (unnormalized inputs make any LR large)",
     "Lower the LR 10x, or normalize the inputs and targets to unit scale, and compare the first 100 "
     "steps' loss",
     "Lower the LR 10x"),
    # (listed only where a line sets up the processes: most scripts never start a process group)
    ("distributed_failure", 0.15,
     re.compile(r"init_process_group|InitProcessGroupKwargs|DistributedDataParallel|\bDDP\(|\bmp\.spawn\(|"
                r"\b(?:dist|distributed)\.(?:barrier|all_reduce|all_gather|broadcast)\(|\bNCCL_\w+|MASTER_(?:ADDR|PORT)"),
     "the processes may not meet (a rank that never reaches a collective, a collective outlasting the process "
     "group's timeout, a port or an interface the ranks cannot share)",
     "Run with NCCL_DEBUG=INFO and TORCH_DISTRIBUTED_DEBUG=DETAIL and read each rank's last line: the rank "
     "that stops first, or a collective that waits past the timeout, is the fault",
     "Rerun with NCCL_DEBUG=INFO"),
)
_ONLY_POINTED = {"distributed_failure"}
_NOT_CODE = re.compile(r"^\s*(?:#|--|//|print\b|import\s|from\s+\S+\s+import\b)")
# a line that switches the thing it names off (`GradScaler(enabled=False)`, `autocast(enabled=False)`) points at nothing
_SWITCHED_OFF = re.compile(r"\benabled\s*=\s*False\b")
# the paste's own output shown in a comment (`# nan`, `# tensor([nan])`; not a comment that only speaks of NaN):
# the numbers went NaN, which points at the numerics whatever line made them
_SHOWN_NAN = re.compile(r"^\s*#\s*(?:tensor\(\[*|\[+)?\s*[-+]?nan\b", re.I)


def _alone(run: Run) -> bool:
    """Code with nothing else to read: no metric, no event, no config, no checkpoint."""
    return bool(run.code) and not run.metrics.names() and not run.events and not run.configs \
        and not run.checkpoints


def _lines(code: CodeFile) -> list[str]:
    """The paste as posted: a line the repair blanked (Python 2, a bolded call) may be the one pointed at."""
    return (code.pasted or code.text).splitlines()


def _text_like(text: str) -> bool:
    """Mostly printable characters: code in any language, not bytes named train.py."""
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in text[:4096])
    return printable >= 0.95 * min(len(text), 4096)


def _pointed(lines: list[str], pattern: re.Pattern, shown: re.Pattern | None) -> list[int]:
    return [i for i, line in enumerate(lines, 1)
            if not _NOT_CODE.match(line) and pattern.search(line) and not _SWITCHED_OFF.search(line)
            or shown is not None and shown.match(line)]


def suspects(run: Run) -> list[Finding]:
    """The differential for code pasted alone; code.py calls it where its own rules found nothing."""
    if not _alone(run) or all(c.parse_error and not _text_like(c.text) for c in run.code):
        return []               # (bytes, not code: nothing to suspect)
    read = ("No known bug found in the code" if any(not c.parse_error for c in run.code) else
            "The code could not be parsed (not Python, or cut mid-block), so it was read as text only")
    lines = {c.artifact: _lines(c) for c in run.code}
    out = []
    for code_name, prior, pattern, why, check, quick in _SUSPECTS:
        shown = _SHOWN_NAN if code_name == "numerical_instability" else None
        hits = [(c, i) for c in run.code for i in _pointed(lines[c.artifact], pattern, shown)][:MOST_LINES]
        ev = [Evidence(f"{lines[c.artifact][i - 1].strip()}: where this would be", c.artifact, f"line {i}")
              for c, i in hits]
        if not ev:
            if code_name in _ONLY_POINTED:
                continue
            n = len(lines[run.code[0].artifact])
            ev = [Evidence(f"no line of the paste points at it; no known bug of this kind in its {n} lines",
                           run.code[0].artifact, f"lines 1-{n}")]
        pointed = bool(hits) and code_name != "lr_too_high"
        out.append(Finding(code=code_name, issue=f"{read}; a suspect: {why}",
                           severity="medium", confidence=prior + POINTED * pointed, evidence=ev,
                           fix=check, analyzer=NAME, quick_fix=quick))
    return out
