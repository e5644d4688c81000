"""The checks a reporter ran and pasted with their answers: a debugger or REPL session (`ipdb> `,
`(Pdb) `, `>>> `, `In [3]: `) or `print(...)` lines followed by what they printed.

- A NaN/Inf count or test on the data (`torch.isnan(data["y"]).sum()` answering `tensor(2994)`,
  `np.isnan(X).any()` answering `True`): the inputs or targets hold non-finite values, a data bug,
  whatever the loss did after.
- The same test on the data answering 0 or False, and on an operation over it answering a count
  (`np.isnan(F.log_softmax(input)).sum()` -> 7733): finite inputs that one operation turns NaN, the
  numerics of that operation.
- Parameters compared before and after training (`np.array_equal(ckpt.params[...], params[...])`,
  `torch.equal(w0, model.fc.weight)`) answering True every time: training did not change them.

Each check is paired with the next answer-shaped line after it, in order (several `print` lines
then their outputs pair one to one). A check whose answer is not shown says nothing.
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

_PROMPT = re.compile(r"^\s{0,8}(?:ipdb>|\(Pdb\)|>>>|\.\.\.|In \[\d{1,6}\]:)\s{0,8}")
_NAN_TEST = re.compile(r"\bis(nan|inf|null|na|finite)\(")
_SAME_TEST = re.compile(r"\b(array_equal|allclose|equal)\(")
# what a check prints: a bool or a count, bare or in torch/numpy dress (`tensor(2994, device='cuda:0')`,
# `array(True)`, `np.int64(3)`, `np.True_`)
_ANSWER = re.compile(r"^\s{0,8}(?:(?:tensor|array|np\.\w{1,12})\(\s{0,4})?(?:np\.)?(True|False|\d{1,15})_?"
                     r"(?:\s{0,4},[^()]{0,80})?\)?\s{0,8}$")
# calls that only move or view a tensor: not an operation on the data
_VIEWS = re.compile(r"\.(?:data|cpu|numpy|detach|float|double|cuda|contiguous|clone|values|to_numpy|item|"
                    r"sum|any|all|to)\b(?:\([^()]{0,80}\))?")
_WORD = re.compile(r"[A-Za-z_]\w{0,60}")
DATA_WORDS = frozenset({"data", "x", "y", "input", "inputs", "target", "targets", "label", "labels", "batch",
                        "features", "feature", "feats", "image", "images", "img", "imgs", "sample", "samples",
                        "df", "dataset", "x_train", "y_train", "x_test", "y_test", "x_val", "y_val",
                        "train_x", "train_y", "src", "tgt", "inp", "gt"})
NOT_DATA = frozenset({"loss", "losses", "out", "output", "outputs", "pred", "preds", "prediction", "predictions",
                      "logits", "grad", "grads", "weight", "weights", "param", "params", "prob", "probs", "model"})
PARAM_WORDS = ("param", "weight", "state_dict", "ckpt", "checkpoint", "bias")


def _argument(line: str, start: int) -> str:
    """The text inside the parenthesis that opens just before `start`, up to its match (or the line's end)."""
    depth = 1
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[start:i]
    return line[start:]


def _kind(expr: str) -> str:
    """'data' for the inputs or targets themselves, 'op' for an operation over them, '' otherwise."""
    bare = _VIEWS.sub("", expr)
    words = {w.lower() for w in _WORD.findall(bare)}
    called = re.search(r"[\w\]]\s{0,2}\(", bare) is not None
    if words & NOT_DATA or not words & DATA_WORDS:
        return ""
    return "op" if called else "data"


def _checks(text: str):
    """(line number, kind, expression, answer) for every check whose answer the paste shows, where
    kind is 'nan:data', 'nan:op', 'finite:data', 'finite:op' or 'same'."""
    pending: list[tuple[int, str, str]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if len(raw) > LINE_MAX:
            continue
        line = _PROMPT.sub("", undress(raw), count=1)
        answer = _ANSWER.match(line)
        if answer and pending:
            at, kind, expr = pending.pop(0)
            yield at, kind, expr, answer.group(1)
            continue
        if m := _NAN_TEST.search(line):
            expr = _argument(line, m.end())
            if k := _kind(expr):
                pending.append((n, f"{'finite' if m.group(1) == 'finite' else 'nan'}:{k}", line.strip()))
        elif (m := _SAME_TEST.search(line)) and any(w in _argument(line, m.end()).lower() for w in PARAM_WORDS):
            pending.append((n, "same", line.strip()))


def _shows_nonfinite(kind: str, answer: str) -> bool | None:
    """Whether the answer says non-finite values are there (None: it says nothing either way)."""
    if kind.startswith("finite"):
        return {"True": False, "False": True}.get(answer)   # isfinite(...).all(): False means some are not
    if answer in ("True", "False"):
        return answer == "True"
    return int(answer) > 0


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
        if same and all(ans == "True" for _, _, ans in same):
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
