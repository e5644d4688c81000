"""Run configuration and training code, read as data: YAML, JSON, TOML, argparse dumps, and Python
source through `ast` (never imported, never executed).

A config becomes a flat dict of dotted keys with the line each key sits on, so that a patch can
change exactly that line.
"""
from __future__ import annotations

import ast
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass
class ConfigFile:
    artifact: str
    format: str
    values: dict[str, object]
    lines: dict[str, int]          # dotted key -> 1-based line number
    text: str

    def find(self, *names: str) -> tuple[str, object] | None:
        """The first key whose last component is one of `names` (case-insensitive)."""
        wanted = [n.lower() for n in names]
        for want in wanted:
            for key, value in self.values.items():
                if key.rsplit(".", 1)[-1].lower() == want:
                    return key, value
        return None


@dataclass
class CodeFile:
    artifact: str
    text: str
    calls: dict[str, list[int]] = field(default_factory=dict)   # dotted callee -> lines
    names: dict[str, list[int]] = field(default_factory=dict)   # attribute/name uses -> lines
    built: dict[str, tuple[str, int]] = field(default_factory=dict)   # `x = f(...)`: x -> (dotted f, line)
    divisions: list[tuple[int, str]] = field(default_factory=list)    # (line, source of the divisor)
    nested: list[tuple[int, str, str]] = field(default_factory=list)  # f(g(...)): (line, f, g), dotted
    parse_error: str | None = None

    def line(self, n: int) -> str:
        lines = self.text.splitlines()
        return lines[n - 1].strip() if 0 < n <= len(lines) else ""

    def uses(self, *names: str) -> bool:
        return any(n in self.calls or n in self.names for n in names)

    def first_line(self, *names: str) -> int | None:
        found = [ln for n in names for ln in self.calls.get(n, []) + self.names.get(n, [])]
        return min(found) if found else None


def _flatten(obj, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = obj
    return out


def _key_lines(text: str, keys) -> dict[str, int]:
    """Where each dotted key is written: the line of its last component, searched after the line
    of its parent, which is how YAML, TOML and indented JSON lay nested keys out."""
    lines = text.splitlines()
    out: dict[str, int] = {}
    for key in keys:
        start = 0
        parts = key.split(".")
        for depth, part in enumerate(parts):
            pat = re.compile(rf"""^\s*(?:-\s*)?["']?{re.escape(part)}["']?\s*[:=]|^\s*\[{re.escape(".".join(parts[:depth + 1]))}\]\s*$""")
            for i in range(start, len(lines)):
                if pat.search(lines[i]):
                    start = i + (0 if depth == len(parts) - 1 else 1)
                    break
            else:
                start = -1
                break
        if start >= 0:
            out[key] = start + 1
    return out


_NAMESPACE = re.compile(r"Namespace\((.*)\)\s*$", re.S)


def parse_argparse_dump(text: str) -> dict[str, object] | None:
    """`Namespace(lr=0.1, batch_size=32, ...)` as `print(args)` writes it."""
    m = _NAMESPACE.search(text.strip())
    if not m:
        return None
    try:
        call = ast.parse(f"f({m.group(1)})", mode="eval").body
    except SyntaxError:
        return None
    out = {}
    for kw in getattr(call, "keywords", []):
        try:
            out[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, SyntaxError):
            out[kw.arg] = ast.unparse(kw.value)
    return out


def parse_config(path: Path, artifact: str) -> ConfigFile:
    """Raises ValueError with a readable message when the file is not valid in its format."""
    text = path.read_text(encoding="utf-8", errors="replace")
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        fmt = "yaml"
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"invalid YAML: {str(exc).splitlines()[0]}") from None
    elif suffix == ".json":
        fmt = "json"
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"invalid JSON: {exc}") from None
    elif suffix == ".toml":
        fmt = "toml"
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"invalid TOML: {exc}") from None
    else:
        fmt = "argparse"
        data = parse_argparse_dump(text)
        if data is None:
            raise ValueError("not a recognised config format")
    if not isinstance(data, dict):
        raise ValueError(f"{fmt} file does not hold a mapping")
    values = _flatten(data)
    lines = _key_lines(text, values) if fmt != "argparse" else {k: 1 for k in values}
    return ConfigFile(artifact, fmt, values, lines, text)


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.calls: dict[str, list[int]] = {}
        self.names: dict[str, list[int]] = {}
        self.built: dict[str, tuple[str, int]] = {}
        self.divisions: list[tuple[int, str]] = []
        self.nested: list[tuple[int, str, str]] = []

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Div):
            self.divisions.append((node.lineno, ast.unparse(node.right)))
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        callee = _dotted(node.value.func) if isinstance(node.value, ast.Call) else None
        if callee:
            for target in node.targets:
                name = _dotted(target)
                if name:
                    self.built[name] = (callee, node.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        if name and node.args and isinstance(node.args[0], ast.Call):
            inner = _dotted(node.args[0].func)
            if inner:
                self.nested.append((node.lineno, name, inner))
        if name:
            self.calls.setdefault(name, []).append(node.lineno)
            self.calls.setdefault(name.rsplit(".", 1)[-1], []).append(node.lineno)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.names.setdefault(node.attr, []).append(node.lineno)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        self.names.setdefault(node.id, []).append(node.lineno)


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def parse_code(path: Path, artifact: str) -> CodeFile:
    text = path.read_text(encoding="utf-8", errors="replace")
    code = CodeFile(artifact, text)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        code.parse_error = f"syntax error at line {exc.lineno}"
        return code
    v = _Visitor()
    v.visit(tree)
    code.calls, code.names, code.built, code.divisions, code.nested = v.calls, v.names, v.built, v.divisions, v.nested
    return code
