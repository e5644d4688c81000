"""Suggested patch text: unified diffs against files of the run. Printed, never applied."""
from __future__ import annotations

import difflib
import re

from analysis.ingest.configs import CodeFile, ConfigFile


def _diff(path: str, old: list[str], new: list[str]) -> str:
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}", n=1))


def format_value(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer() and abs(value) >= 1:
        return str(int(value))
    return f"{value:.1e}" if abs(value) < 1e-3 else f"{value:g}"


def set_config_value(cfg: ConfigFile, key: str, value) -> str | None:
    """A diff that sets `key` (dotted, as in cfg.values) to `value` on the line where it is
    written. None when the key's line cannot be located."""
    line_no = cfg.lines.get(key)
    if not line_no:
        return None
    old = cfg.text.splitlines(keepends=True)
    line = old[line_no - 1]
    leaf = re.escape(key.rsplit(".", 1)[-1])
    text = format_value(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
    if cfg.format == "json" and isinstance(value, str):
        text = f'"{value}"'
    pattern = re.compile(rf"""^(\s*(?:-\s*)?["']?{leaf}["']?\s*[:=]\s*)([^,#\n]*?)(\s*(?:,|#.*)?\s*)$""")
    if cfg.format == "argparse":
        pattern = re.compile(rf"""(\b{leaf}=)([^,)]*)()""")
        new_line = pattern.sub(lambda m: m.group(1) + text + m.group(3), line, count=1)
    else:
        m = pattern.match(line.rstrip("\n"))
        if not m:
            return None
        new_line = m.group(1) + text + m.group(3) + ("\n" if line.endswith("\n") else "")
    if new_line == line:
        return None
    new = old[:line_no - 1] + [new_line] + old[line_no:]
    return _diff(cfg.artifact, old, new)


def replace_in_config(cfg: ConfigFile, line_no: int, old_text: str, new_text: str) -> str | None:
    old = cfg.text.splitlines(keepends=True)
    if not 0 < line_no <= len(old) or old_text not in old[line_no - 1]:
        return None
    new = list(old)
    new[line_no - 1] = old[line_no - 1].replace(old_text, new_text, 1)
    return _diff(cfg.artifact, old, new)


def insert_code_before(code: CodeFile, line_no: int, statement: str) -> str:
    """A diff inserting `statement` before line `line_no`, at that line's indentation."""
    old = code.text.splitlines(keepends=True)
    target = old[line_no - 1]
    indent = target[: len(target) - len(target.lstrip())]
    new = old[: line_no - 1] + [indent + statement + "\n"] + old[line_no - 1:]
    return _diff(code.artifact, old, new)


def replace_line(code: CodeFile, line_no: int, new_line: str) -> str:
    """A diff replacing line `line_no` of a code file with `new_line` (its indentation included)."""
    old = code.text.splitlines(keepends=True)
    new = old[: line_no - 1] + [new_line.rstrip("\n") + "\n"] + old[line_no:]
    return _diff(code.artifact, old, new)
