"""Run configuration and training code, read as data: YAML, JSON, TOML, argparse dumps, and Python
source through `ast` (never imported, never executed).

A config becomes a flat dict of dotted keys with the line each key sits on, so that a patch can
change exactly that line.
"""
from __future__ import annotations

import ast
import bisect
import json
import re
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from analysis.budget import DEFAULT, Budget, OverBudget


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
    pasted: str | None = None       # the text as posted, where `text` is a repair of it (_blank_unparsable)

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


# The key a line writes: `key:`, `- key:`, `"key":`, `key =`, or a TOML table `[a.b]`.
_LINE_KEY = re.compile(r"""^\s*(?:-\s*)?(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'\[][^:=\n]*?))\s*[:=]""")
_TABLE = re.compile(r"^\s*\[([^\[\]\n]+)\]\s*$")


def _key_lines(text: str, keys) -> dict[str, int]:
    """Where each dotted key is written: the line of its last component, searched after the line
    of its parent, which is how YAML, TOML and indented JSON lay nested keys out. One pass over
    the lines indexes where each name is written; each key is then a few binary searches (a
    pretty-printed tokenizer.json has tens of thousands of keys and lines)."""
    at: dict[str, list[int]] = {}          # name (or "[dotted.table]") -> 0-based lines, ascending
    for i, line in enumerate(text.splitlines()):
        m = _LINE_KEY.match(line)
        if m:
            name = next(g for g in m.groups() if g is not None)
            at.setdefault(name, []).append(i)
            if m.group(3) is not None and name != name.strip("'\""):
                at.setdefault(name.strip("'\""), []).append(i)
        t = _TABLE.match(line)
        if t:
            at.setdefault(f"[{t.group(1).strip()}]", []).append(i)

    def first(name: str, start: int) -> int:
        found = at.get(name, ())
        j = bisect.bisect_left(found, start)
        return found[j] if j < len(found) else -1

    out: dict[str, int] = {}
    for key in keys:
        start = 0
        parts = key.split(".")
        for depth, part in enumerate(parts):
            hits = [h for h in (first(part, start), first(f"[{'.'.join(parts[:depth + 1])}]", start)) if h >= 0]
            if not hits:
                start = -1
                break
            start = min(hits) + (0 if depth == len(parts) - 1 else 1)
        if start >= 0:
            out[key] = start + 1
    return out


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses a document whose aliases expand past `max_nodes` nodes (a
    "billion laughs" of nested aliases is a few hundred bytes) or refer to themselves."""

    max_nodes = DEFAULT.yaml_nodes

    def compose_document(self):
        node = super().compose_document()
        memo: dict[int, int | None] = {}
        if _expanded(node, memo, self.max_nodes) > self.max_nodes:
            raise OverBudget(f"its YAML aliases expand to over {self.max_nodes:,} nodes (an alias bomb?); not read")
        return node


def _expanded(node, memo: dict[int, int | None], cap: int) -> int:
    """Nodes in `node` with every alias expanded, counted once per distinct node (memo), stopping
    past `cap`."""
    key = id(node)
    if key in memo:
        known = memo[key]
        if known is None:
            raise OverBudget("its YAML aliases refer to themselves (a recursive alias); not read")
        return known
    memo[key] = None
    n = 1
    if isinstance(node, yaml.SequenceNode):
        for child in node.value:
            n += _expanded(child, memo, cap)
            if n > cap:
                break
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            n += _expanded(k, memo, cap) + _expanded(v, memo, cap)
            if n > cap:
                break
    memo[key] = n
    return n


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


def _read_capped(path: Path, cap: int, what: str) -> str:
    size = path.stat().st_size
    if size > cap:
        raise OverBudget(f"{what} of {size / 2**20:,.1f} MB, over the {cap / 2**20:,.0f} MB cap; not read")
    return path.read_text(encoding="utf-8", errors="replace")


def logged_scalar(text: str) -> object:
    """A logged value as the type it was logged from: MLflow writes `str(value)` (`0.001`, `True`), a launch
    command its flags' values."""
    if text in ("True", "False"):
        return text == "True"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def mlflow_param(name: str, text: str, artifact: str) -> ConfigFile:
    """One MLflow `params/<name>` file (the value is the file's content) as a one-key config, so
    the analyzers see a logged optimizer and LR as they see a config's. Nested names
    (`optimizer/lr`) become dotted keys."""
    key = name.replace("/", ".")
    return ConfigFile(artifact, "mlflow_param", {key: logged_scalar(text)}, {key: 1}, text)


def parse_config(path: Path, artifact: str, budget: Budget = DEFAULT) -> ConfigFile:
    """Raises ValueError with a readable message when the file is not valid in its format, and
    OverBudget when it would cost more than its budget to read."""
    text = _read_capped(path, budget.config_bytes, "a config")
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        fmt = "yaml"
        loader = type("Loader", (_BoundedLoader,), {"max_nodes": budget.yaml_nodes})
        try:
            data = yaml.load(text, Loader=loader)      # a SafeLoader subclass (_BoundedLoader) with a node cap
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


REPAIRS = 20     # lines of a pasted snippet that may be blanked for the rest to parse
_BOLD = re.compile(r"\*\*([^*\s](?:[^*]*[^*\s])?)\*\*")   # markdown bold in a pasted line of code
SNIPPET_BYTES = 64 << 10    # a pasted snippet: repaired here, read by code_updates; a larger file is parsed as it is


def _blank_unparsable(text: str) -> tuple[str, ast.Module] | None:
    """A pasted snippet (at most SNIPPET_BYTES) with the lines Python cannot parse made `pass` at their own
    indentation (an elision `....`, a Python 2 `print x`, a line cut mid-expression), up to REPAIRS of them:
    the rest parses with the same line numbers and the same blocks. A line the poster marked up in bold
    (`self.d(**x.detach()**, f)`, to point at the suspect call) first loses the markup."""
    if len(text) > SNIPPET_BYTES:
        return None
    lines = text.splitlines()
    blanked = 0
    while blanked <= REPAIRS:       # unbolding shortens a line, so this ends
        try:
            return "\n".join(lines) + "\n", ast.parse("\n".join(lines))
        except SyntaxError as exc:
            at = (exc.lineno or 0) - 1
            if not 0 <= at < len(lines) or not lines[at].strip() or lines[at].strip() == "pass":
                return None
            line = lines[at]
            unbolded = _BOLD.sub(r"\1", line)
            if unbolded == line:
                blanked += 1
                unbolded = line[: len(line) - len(line.lstrip())] + "pass"
            lines[at] = unbolded
    return None


def parse_code(path: Path, artifact: str, budget: Budget = DEFAULT) -> CodeFile:
    """Training code through `ast`, up to `budget.code_bytes` (parsing costs ~100x the source
    in memory)."""
    text = _read_capped(path, budget.code_bytes, "source file")
    pasted = None
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        # a snippet cut from inside a method keeps its indentation (`        for v in self...`):
        # dedented, it parses with the same line numbers
        repaired = _blank_unparsable(textwrap.dedent(text))
        if repaired is None:
            return CodeFile(artifact, text, parse_error=f"syntax error at line {exc.lineno}")
        pasted, (text, tree) = text, repaired
    code = CodeFile(artifact, text, pasted=pasted)
    v = _Visitor()
    v.visit(tree)
    code.calls, code.names, code.built, code.divisions, code.nested = v.calls, v.names, v.built, v.divisions, v.nested
    return code
