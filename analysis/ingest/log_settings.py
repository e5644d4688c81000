"""The optimizer a training log names, read as a one-key config (`optimizer`), as an MLflow param is:
the LR-range rules judge the LR by its optimizer's family, wherever the run said which one it used.
And the command a paste shows launching the run (`python train.py --lr 1.0 --optimizer adam`), whose
`--key value` pairs are the settings it ran with.

Trainers print it where the run starts: `optimizer: AdamW`, `Optimizer: SGD (lr=0.1, momentum=0.9)`,
`'optimizer': 'adamw'`, or PyTorch's `print(optimizer)` (`Adam (` then `Parameter Group 0`). Only
the head of a log is read (HEAD_BYTES): a 1 GB log costs no second pass. The LR on such a line is
the scanner's (`lr=0.1` is a pair like any other); the name is kept as written, and the analyzers
decide which family, if any, it is.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from analysis.ingest.configs import ConfigFile, logged_scalar, parse_argparse_dump

HEAD_BYTES = 1 << 20
_NAME = r"([A-Za-z_][\w.]{0,63})"
# `optimizer: AdamW`, `Optimizer = SGD (`, `'optim': 'adam'`, `optimizer_type=sgd`, `optimizer : FusedAdam (`
_DECLARED = re.compile(r"(?i)(?<![\w.])optim(?:izer)?(?:[_ ](?:name|type))?['\"]?[ \t]*[:=][ \t]*['\"]?" + _NAME)
# PyTorch's `print(optimizer)`: matched only on the line before its `Parameter Group 0` (found first:
# tried at every offset of the head, the name's repeat would backtrack on a hostile log)
_REPR = re.compile(_NAME + r" \([ \t]*\r?\n[^\n]*?Parameter Group 0\b")
_GROUP = "Parameter Group 0"


def _repr(text: str) -> re.Match | None:
    at = text.find(_GROUP)
    if at < 0:
        return None
    start = text.rfind("\n", 0, text.rfind("\n", 0, at)) + 1       # the start of the line before
    return _REPR.search(text, start, at + len(_GROUP))


def settings_in_log(path: Path, artifact: str) -> list[ConfigFile]:
    """What the log's head says of the run's settings: its optimizer, its launch command, its `print(args)`."""
    with open(path, "rb") as f:
        text = f.read(HEAD_BYTES).decode("utf-8", "replace")
    found = (optimizer_in_log(text, artifact), command_line_in_log(text, artifact), namespace_in_log(text, artifact))
    return [c for c in found if c is not None]


def optimizer_in_log(text: str, artifact: str) -> ConfigFile | None:
    hits = [m for m in (_repr(text), _DECLARED.search(text)) if m]
    if not hits:
        return None
    m = min(hits, key=lambda m: m.start())
    line = text.count("\n", 0, m.start(1)) + 1
    # text is the matched snippet, not the file: `lines` counts in the log, which no patch may edit
    return ConfigFile(artifact, "log_line", {"optimizer": m.group(1)}, {"optimizer": line}, m.group(0))


# a launch: `python train.py ...`, `python3 -m pkg.train ...`, `torchrun ... train.py ...`, `accelerate launch`;
# looked for line by line, in lines of at most LAUNCH_LINE characters (a hostile head cannot make it slow)
_LAUNCH = re.compile(r"\b(?:python[\d.]*|torchrun|deepspeed|accelerate launch)\b")
LAUNCH_LINE = 4096
# a package install is no training launch (`python -m pip install --upgrade pip` opens many CI logs)
_INSTALL = re.compile(r"-m\s+pip\b|\bpip3?\s+install\b|\bconda\s+install\b")
ARGS_LINE = 1 << 16
CONTINUED = 30        # lines a launch command may continue over with `\`
_FLAG = re.compile(r"^--([A-Za-z][\w.-]{0,63})(?:=(.*))?$")


def command_line_in_log(text: str, artifact: str) -> ConfigFile | None:
    """The `--key value` (and `--key=value`) settings of the first launch command in the log's head; a
    flag with no value is True. Dashes in keys become underscores (`--learning-rate` is learning_rate)."""
    lines = text.splitlines()
    for line, command in enumerate(lines, 1):
        if len(command) > LAUNCH_LINE or not _LAUNCH.search(command) or _INSTALL.search(command):
            continue
        for more in lines[line:line + CONTINUED]:       # `python train.py \` then `  --lr 1e-3 \` ...
            if not command.rstrip().endswith("\\") or len(command) > LAUNCH_LINE:
                break
            command = command.rstrip()[:-1] + " " + more.strip()
        if " --" in command:
            break
    else:
        return None
    try:
        words = [w.strip("'\"") for w in shlex.split(command, posix=False)]   # a Windows path keeps its \\
    except ValueError:
        words = command.split()
    values: dict[str, object] = {}
    for i, word in enumerate(words):
        flag = _FLAG.match(word)
        if not flag:
            continue
        key = flag.group(1).replace("-", "_")
        if flag.group(2) is not None:
            values[key] = logged_scalar(flag.group(2))
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            values[key] = logged_scalar(words[i + 1])
        else:
            values[key] = True
    if not values:
        return None
    # the text keeps the command at its line in the log (blank lines before it), so evidence and a patch of
    # the command (`--lr 1.0` -> `--lr 0.005`) point where the paste shows it
    return ConfigFile(artifact, "command_line", values, {k: line for k in values}, "\n" * (line - 1) + command)


def namespace_in_log(text: str, artifact: str) -> ConfigFile | None:
    """The settings of the first `print(args)` line in the log's head (`Namespace(lr=20, batch_size=20, ...)`,
    PyTorch's examples print it before training; fairseq's and Megatron's run to several KB): the run's
    arguments as the script parsed them. Found with one `find`, so a hostile head costs one pass."""
    at = text.find("Namespace(")
    if at < 0:
        return None
    end = text.find("\n", at)
    dump = text[at:end if end >= 0 else len(text)].rstrip()
    values = parse_argparse_dump(dump) if len(dump) <= ARGS_LINE else None
    if not values:
        return None
    line = text.count("\n", 0, at) + 1
    return ConfigFile(artifact, "argparse", values, {k: line for k in values}, "\n" * (line - 1) + dump)
