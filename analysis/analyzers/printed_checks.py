"""The checks a reporter ran and pasted with their answers: a debugger or REPL session (`ipdb> `,
`(Pdb) `, `>>> `, `In [3]: `) or `print(...)` lines followed by what they printed.

- A NaN/Inf count or test on the data (`torch.isnan(data["y"]).sum()` answering `tensor(2994)`,
  `np.isnan(X_train).any()` answering `True`): the inputs or targets hold non-finite values, a data bug,
  whatever the loss did after (and the cause of weights that did not change beside it).
- The same test on the data answering 0 or False, and on an operation over it answering a count
  (`np.isnan(F.log_softmax(input)).sum()` -> 7733): finite inputs that one operation turns NaN, the
  numerics of that operation.
- Parameters compared before and after training (`np.array_equal(ckpt.params[...], params[...])`,
  `torch.equal(w0, model.fc.weight)`) answering True every time: training did not change them.

A prompt's check is answered on the very next line, a block of `print(check)` lines by as many answer
lines after it; a check whose answer is not shown that way says nothing. Not read: a negated check
(`~`, `not`), one on a model's output, an activation (`x`) or the loss, a reload or a gradient
compared, and a vector answered (`tensor([False, True])`).
"""
from __future__ import annotations

import re

from analysis.analyzers.common import pasted_texts
from analysis.ingest.dressing import undress
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "printed_checks"
MAX_BYTES = 256 * 1024
LINE_MAX = 400              # longer lines are not tried (bounded regex work)
DATA_NAN_CONF = 0.7         # the reporter's own count of NaNs in the data: as direct as a paste gets
OP_NAN_CONF = 0.65          # finite inputs, NaN after one operation
SAME_PARAMS_CONF = 0.65     # parameters equal before and after training

_PROMPT = re.compile(r"^\s{0,8}(?:ipdb>|\(Pdb\)|>>>|In \[\d{1,6}\]:)\s{0,8}(?:p\s{1,4})?")
_PRINT = re.compile(r"^\s{0,8}print\(")
_NAN_TEST = re.compile(r"\bis(nan|inf|null|na|finite)\(")
_SAME_TEST = re.compile(r"\b(array_equal|allclose|equal)\(")
# what a check prints: a bool or a count, bare or in torch/numpy dress (`tensor(2994, device='cuda:0')`,
# `array(True)`, `np.int64(3)`, `np.True_`); a vector (`tensor([False, True])`) is no answer to read
_ANSWER = re.compile(r"^\s{0,8}(?:(?:tensor|array|np\.\w{1,12})\(\s{0,4})?(?:np\.)?(True|False|\d{1,15})_?"
                     r"(?:\s{0,4},[^()\[\]]{0,80})?\)?\s{0,8}$")
# a check that negates its own answer (`(~torch.isnan(x)).all()`, `not torch.equal(a, b)`): not read
_NEGATED = re.compile(r"~|\bnot\b|logical_not|!=|==\s{0,4}(?:False|0)\b")
# calls that only move, view or convert the data: no operation on it
_VIEWS = re.compile(r"\.(?:data|cpu|numpy|detach|float|double|cuda|contiguous|clone|values|to_numpy|item|astype|"
                    r"sum|any|all|to)\b(?:\([^()]{0,80}\))?|\b(?:np|numpy|torch|tf)\.(?:array|asarray|tensor|"
                    r"as_tensor|from_numpy|convert_to_tensor)\(")
_STRING = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"")
_REDUCTION = re.compile(r"\.(sum|any|all)\(\s{0,4}\)")
_WORD = re.compile(r"[A-Za-z_]\w{0,60}")
# names that are the data a loader hands the model; `x`, `y` and `features` are as often a layer's tensors
DATA_WORDS = frozenset({"data", "input", "inputs", "target", "targets", "label", "labels", "batch", "image",
                        "images", "imgs", "sample", "samples", "df", "dataset", "x_train", "y_train", "x_test",
                        "y_test", "x_val", "y_val", "train_x", "train_y", "gt"})
NOT_DATA = frozenset({"loss", "losses", "out", "output", "outputs", "pred", "preds", "prediction", "predictions",
                      "logits", "grad", "grads", "weight", "weights", "param", "params", "prob", "probs", "model",
                      "net", "forward", "module", "encoder", "decoder", "backbone", "hidden", "activation"})
PARAM_WORDS = ("param", "weight", "state_dict", "bias")
# one side of a parameter comparison taken before training: a copy, the initial values, a checkpoint
BEFORE_WORDS = re.compile(r"(?i)before|init|orig|old|prev|start|ckpt|checkpoint|snapshot|copy|clone|\b[wp]0\b")


def _argument(line: str, start: int) -> str:
    """The text inside the parenthesis that opens just before `start`, up to its match (or the line's end)."""
    depth = 1
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[start:i]
    return line[start:]


def _kind(expr: str) -> str:
    """'data' for the inputs or targets themselves, 'op' for one operation over them, '' otherwise (a
    model's forward pass, an activation, the loss: NaN weights or the numerics, not this reading's)."""
    bare = _VIEWS.sub("", expr)
    words = {w.lower() for w in _WORD.findall(bare)}
    called = re.search(r"[\w\]]\s{0,2}\(", bare) is not None
    if words & NOT_DATA or not words & DATA_WORDS:
        return ""
    return "op" if called else "data"


def _check(line: str) -> tuple[str, str] | None:
    """(kind, the check as printed) of a line that asks a NaN or an equality question, else None."""
    if _NEGATED.search(_STRING.sub("''", line)):        # a key's `~` or `not` inside quotes negates nothing
        return None
    if m := _NAN_TEST.search(line):
        rest = line[m.end() + len(_argument(line, m.end())) + 1:]
        red = _REDUCTION.match(rest)
        if (k := _kind(_argument(line, m.end()))) and red:
            test = "finite" if m.group(1) == "finite" else "nan"
            return f"{test}.{red.group(1)}:{k}", line.strip()
    elif (m := _SAME_TEST.search(line)) and (arg := _argument(line, m.end())).count(",") >= 1:
        low = arg.lower()
        if any(w in low for w in PARAM_WORDS) and BEFORE_WORDS.search(arg) and "grad" not in low:
            return "same", line.strip()
    return None


def _checks(text: str):
    """(line number, kind, check, answer) for every check whose answer the paste shows: a prompt's check
    answered on the very next line, or a block of `print(check)` lines answered by as many lines after
    them (blank lines between allowed). Lines are split on newlines only, as the events count them."""
    raw = [ln if len(ln) <= LINE_MAX else "" for ln in text.split("\n")]
    lines = [undress(ln) for ln in raw]
    printed: list[tuple[int, str, str]] = []
    i = 0
    while i < len(lines):
        # a prompt before undress, which takes `>>>` for quote markers, or after it (`> ipdb> ...` quoted)
        line = raw[i] if _PROMPT.match(raw[i]) else lines[i]
        prompt = _PROMPT.match(line)
        c = _check(line[prompt.end():] if prompt else line)
        if prompt and c and i + 1 < len(lines) and (ans := _ANSWER.match(lines[i + 1])):
            yield i + 1, c[0], c[1], ans.group(1)
            i += 2
            continue
        if not prompt and _PRINT.match(line):
            printed.append((i + 1, *c) if c else (i + 1, "", ""))
            i += 1
            continue
        if printed and not line.strip():
            i += 1
            continue
        if printed:
            block = lines[i:i + len(printed)]
            answers = [_ANSWER.match(b) for b in block]
            after = lines[i + len(printed)] if i + len(printed) < len(lines) else ""
            if len(block) == len(printed) and all(answers) and not _ANSWER.match(after):
                for (n, kind, shown), ans in zip(printed, answers):
                    if kind and ans:
                        yield n, kind, shown, ans.group(1)
                i += len(printed)
            printed = []
            continue
        i += 1


def _shows_nonfinite(kind: str, answer: str) -> bool | None:
    """Whether the answer says non-finite values are there (None: it says nothing either way)."""
    test, _, reduction = kind.partition(":")[0].partition(".")
    if answer not in ("True", "False"):
        return int(answer) > 0 if reduction == "sum" and test == "nan" else None
    true = answer == "True"
    if test == "finite":      # all() False: some are not finite; any() says nothing of the rest
        return (not true) if reduction == "all" else None
    return {"any": true, "all": True if true else None}.get(reduction)   # isnan(x).all() False: some may be


def analyze(run: Run) -> list[Finding]:
    out: list[Finding] = []
    for a, text in pasted_texts(run, ("log", "traceback", "samples"), MAX_BYTES):
        checks = list(_checks(text))
        data = [c for c in checks if c[1].endswith(":data") and _shows_nonfinite(c[1], c[3]) is not None]
        dirty = [c for c in data if _shows_nonfinite(c[1], c[3])]
        if dirty:
            n, _, expr, ans = dirty[0]
            out.append(Finding(
                code="data_pipeline_bug",
                issue="The data holds NaN or Inf values: the reporter's own check of the inputs says so",
                severity="high", confidence=DATA_NAN_CONF,
                evidence=[Evidence(f"{expr} -> {ans}", a.path, f"line {n}")],
                fix="Find the rows with non-finite values before training (np.isnan(X).any(axis=1), "
                    "df.isna().sum()), impute or drop them, and assert torch.isfinite(batch).all() in the loader",
                expected_impact="a finite loss from the first step",
                analyzer=NAME, quick_fix="Drop or impute the NaN rows in the data"))
        ops = [(n, e, ans) for n, k, e, ans in checks if k.endswith(":op") and _shows_nonfinite(k, ans)]
        if data and not dirty and ops:
            n, expr, ans = ops[0]
            clean = data[0]
            out.append(Finding(
                code="numerical_instability",
                issue="The inputs are finite, and one operation over them turns them NaN or Inf",
                severity="high", confidence=OP_NAN_CONF,
                evidence=[Evidence(f"{clean[2]} -> {clean[3]}", a.path, f"line {clean[0]}"),
                          Evidence(f"{expr} -> {ans}", a.path, f"line {n}")],
                fix="Use the numerically stable form of that operation (log_softmax rather than log(softmax), "
                    "logsumexp, a clamp or an epsilon before log, sqrt or a division) or compute it in float32",
                analyzer=NAME, quick_fix="Use the stable form of the operation"))
        same = [(n, e, ans) for n, k, e, ans in checks if k == "same"]
        # beside NaN in the data, unchanged weights are its consequence (every step's gradient NaN, skipped
        # by a loss scaler or poisoning nothing yet): the data's finding stands alone
        if same and all(ans == "True" for _, _, ans in same) and not dirty:
            out.append(Finding(
                code="no_parameter_updates",
                issue=f"The parameters compared before and after training are identical ({len(same)} of "
                      f"{len(same)} checks): training did not change them",
                severity="high", confidence=SAME_PARAMS_CONF,
                evidence=[Evidence(f"{e} -> {ans}", a.path, f"line {n}") for n, e, ans in same[:3]],
                fix="Check that the optimizer holds these parameters (built over model.parameters() after the "
                    "model is final), that optimizer.step() runs after backward(), that their gradients are "
                    "non-zero and that they are not frozen (requires_grad, a stop_gradient, a filter on the "
                    "trainable set)",
                expected_impact="the parameters change from the first step",
                analyzer=NAME, quick_fix="Check the optimizer holds and steps these parameters"))
    return out
