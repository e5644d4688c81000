"""What a paste adds in front of the lines a trainer printed, taken off again: Markdown quote
markers (`> `), a launcher's rank prefix (`[rank0]:`, torchrun's `[default1]:`, srun's `3: `, mpirun's
`[1,3]<stderr>:`), a logger's
timestamp and level (`2024-03-01 10:22:03,120 - INFO - `, `[2024-03-01 10:22:03]`, `10:22:03`,
glog's `I0301 10:22:32.389 1234 train.py:88]`), and ANSI colour anywhere in the line.

The readers that anchor at a line's start (bare rows of numbers, a YOLO validation row, a confusion
matrix, an exception line) read `undress(line)`. Every pattern is anchored and bounded (no `+`
over digits), so a line costs time linear in its length whatever it holds. The indentation after
a prefix is kept: a traceback's frames are told from its exception line by it.
"""
from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[A-Za-z]")
_DATE = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"
_CLOCK = r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
_GLOG = r"[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9} {1,8}\d{1,10} [\w.-]{1,200}:\d{1,7}\]"
_LEVEL = r"(?:\[?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\]?:?)"
# one prefix: a quote marker, a rank, or a timestamp with its level (each followed by blanks or a
# separator); tried again after each one taken (`> [rank0]: 2024-... - INFO - loss: 2.0`)
_PREFIX = re.compile(
    r"(?:>[ \t]?"
    r"|\d{1,6}:[ \t]"                 # srun --label's `3: `: a colon and a blank, never a clock
    r"|\[(?:rank|default)\d{0,6}\]:?[ \t]?|rank\d{1,6}:[ \t]?|\[(?:\d{1,6},)?\d{1,6}\]<std(?:err|out)>:[ \t]?"
    rf"|(?:\[{_DATE}\]|{_DATE}|\[{_CLOCK}\]|{_CLOCK}|{_GLOG})(?:[ \t]{{0,4}}[-|][ \t]{{0,4}}|[ \t]{{1,4}})"
    rf"(?:{_LEVEL}(?:[ \t]{{0,4}}[-|][ \t]{{0,4}}|[ \t]{{1,4}}))?"
    rf"|{_LEVEL}[ \t]{{0,4}}[-|][ \t]{{0,4}})")
MAX_PREFIXES = 4


def undress(line: str) -> str:
    """The line as the trainer printed it (see the module docstring)."""
    if "\x1b" in line:
        line = ANSI.sub("", line)
    for _ in range(MAX_PREFIXES):
        m = _PREFIX.match(line)
        if m is None or not m.end():
            break
        line = line[m.end():]
    return line
