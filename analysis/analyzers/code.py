"""The training code, read statically (AST, never imported or run): a loop that computes
gradients but never applies them, gradients that are never cleared between steps, divisions by
a spread or a norm with no epsilon, softmax fed to a cross-entropy loss that applies its own,
fp16 without a gradient scaler, a training DataLoader that never shuffles, and a model frozen
before its optimizer is built. Each finding names the file and line, and the patch text makes the
change."""
from __future__ import annotations

import ast
import re

from analysis.analyzers import code_suspects, code_updates
from analysis.analyzers.code_updates import OPTIMIZER_CLASSES
from analysis.ingest.configs import CodeFile
from analysis.model import Evidence, Finding
from analysis.patches import insert_code_before, replace_line
from analysis.run import Run

NAME = "code"
_SPREADS = ("std", "var", "norm", "sqrt", "vector_norm")


def optimizers(code: CodeFile) -> dict[str, tuple[str, int]]:
    """Variables assigned an optimizer: name -> (constructor, line)."""
    return {var: (callee, ln) for var, (callee, ln) in code.built.items()
            if callee.rsplit(".", 1)[-1] in OPTIMIZER_CLASSES}


def _unguarded_division(code: CodeFile) -> Finding | None:
    """`x / std` where std comes from .std()/.var()/.norm() and nothing keeps it from 0. Python's
    `math` works on plain numbers (`/ math.sqrt(d_k)`, `gain / math.sqrt(fan_in)`): a constant of the
    model's shape, never a spread of the data."""
    spreads = {var for var, (callee, _) in code.built.items()
               if callee.rsplit(".", 1)[-1] in _SPREADS and not callee.startswith("math.")}
    for line_no, divisor in code.divisions:
        direct = any(f".{f}(" in divisor or divisor.startswith(f"{f}(") for f in _SPREADS)
        direct = direct and not divisor.startswith("math.")
        if not (divisor in spreads or direct) or "eps" in divisor or "+" in divisor or "clamp" in divisor:
            continue
        line = code.text.splitlines()[line_no - 1]
        fixed = line.replace(f"/ {divisor}", f"/ ({divisor} + 1e-6)", 1)
        if fixed == line:
            continue
        return Finding(code="numerical_instability",
                       issue=f"{code.artifact} line {line_no} divides by {divisor} with no epsilon: an input "
                             "with zero spread gives 0/0 = NaN",
                       severity="low",
                       confidence=0.4,
                       evidence=[Evidence(f"{line.strip()}: divides by {divisor}, which "
                                          "is 0 for a constant input",
                                          code.artifact, f"line {line_no}")],
                       fix=f"Guard the division: / ({divisor} + 1e-6), or clamp the spread from below",
                       expected_impact="constant inputs give zeros instead of NaN and training continues",
                       patch=replace_line(code, line_no, fixed),
                       analyzer=NAME,
                       quick_fix=f"Add an epsilon to the division by {divisor}")
    return None


_CE = ("cross_entropy", "CrossEntropyLoss", "criterion", "loss_fn", "nll_loss")


def _softmax_into_cross_entropy(code: CodeFile) -> Finding | None:
    """`cross_entropy(softmax(logits), y)`: the loss applies log-softmax itself, so the model's
    outputs are squashed twice and the gradient w.r.t. the logits shrinks to a sliver."""
    for line_no, outer, inner in code.nested:
        if outer.rsplit(".", 1)[-1] in _CE and inner.rsplit(".", 1)[-1] in ("softmax", "Softmax"):
            line = code.text.splitlines()[line_no - 1]
            return Finding(code="vanishing_gradients",
                           issue=f"{code.artifact} line {line_no} feeds softmax probabilities to a "
                                 "cross-entropy loss, which applies log-softmax itself: the outputs are "
                                 "squashed twice and the gradients shrink",
                           severity="medium",
                           confidence=0.6,
                           evidence=[Evidence(f"{line.strip()}: softmax, then a loss that expects raw logits",
                                              code.artifact, f"line {line_no}")],
                           fix="Pass the raw logits to the cross-entropy loss (drop the softmax; keep it "
                               "only for reporting probabilities)",
                           expected_impact="full-size gradients; the loss falls below its plateau",
                           analyzer=NAME,
                           quick_fix="Drop the softmax before the cross-entropy loss")
    return None


# A softmax over a layer of one unit: Keras' `Dense(1, activation='softmax')` (or `tf.nn.softmax`), whose softmax
# runs over the last axis, the one unit. Softmax of one value is exp(x)/exp(x) = 1.0 for every input: the output is
# constant and its gradient 0, so no weight before it is updated (the loss repeats to the digit, as in tests/wild
# keras-constant-loss-acc-output-layer-mismatch-4784, tune half), and the accuracy is the positive class's share
# whatever is trained. (PyTorch's `nn.Linear(h, 1), nn.Softmax(dim=1)` is attention pooling where dim 1 is a
# sequence: not read.)
_ONE_UNIT_SOFTMAX = re.compile(r"\bDense\(\s*(?:units\s*=\s*)?1\s*,[^)\n]{0,80}?activation\s*=\s*"
                               r"(?:['\"]softmax['\"]|[\w.]{0,40}\bsoftmax\b)")


def _softmax_over_one_unit(code: CodeFile) -> Finding | None:
    for n, full in enumerate(code.text.splitlines(), start=1):
        line = full.split("#", 1)[0]          # a comment's `was Dense(1, activation='softmax')` is no layer
        if _ONE_UNIT_SOFTMAX.search(line):
            return Finding(code="no_parameter_updates",
                           issue=f"{code.artifact} line {n} puts a softmax over one output unit: softmax of one "
                                 "value is 1.0 for every input and its gradient is 0, so no weight is updated and "
                                 "the model predicts the positive class whatever it sees",
                           severity="high", confidence=0.8,
                           evidence=[Evidence(f"{full.strip()}: a softmax over 1 unit", code.artifact, f"line {n}")],
                           fix="For two classes use one unit with a sigmoid and binary cross-entropy "
                               "(Dense(1, activation='sigmoid'), BCEWithLogitsLoss), or two units with a softmax "
                               "and sparse categorical cross-entropy",
                           patch=replace_line(code, n, re.sub(r"(['\"])softmax\1", r"\1sigmoid\1", full))
                           if re.search(r"['\"]softmax['\"]", line) else None,
                           expected_impact="the accuracy leaves the positive class's share and the loss falls",
                           analyzer=NAME, quick_fix="Use a sigmoid on the one output unit")
    return None


# float16 compute: autocast to it, .half(), torch.float16, or a config's dtype = 'float16' (nanoGPT)
FLOAT16 = (r"autocast\([^)]*float16|\.half\(\)|dtype=torch\.float16|torch\.float16"
           r"|\bdtype\s*=\s*['\"]float16['\"]")


def _half_without_scaler(code: CodeFile) -> Finding | None:
    """fp16 autocast or .half() with no GradScaler: small gradients underflow to 0, large ones overflow."""
    if code.uses("GradScaler"):
        return None
    for n, line in enumerate(code.text.splitlines(), start=1):
        if re.search(FLOAT16, line) and "bfloat16" not in line:
            return Finding(code="numerical_instability",
                           issue=f"{code.artifact} line {n} computes in float16 with no GradScaler: "
                                 "gradients under 6e-8 flush to zero and activations over 65504 become inf",
                           severity="low",
                           confidence=0.4,
                           evidence=[Evidence(f"{line.strip()}: float16, and no "
                                              "GradScaler anywhere in the file",
                                              code.artifact, f"line {n}")],
                           fix="Use bf16 (torch.autocast(dtype=torch.bfloat16)), or wrap the step in "
                               "torch.amp.GradScaler "
                               "(scaler.scale(loss).backward(); scaler.step(opt); scaler.update())",
                           analyzer=NAME,
                           quick_fix="Use bf16 or add a GradScaler")
    return None


def _call_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _unshuffled_training_loader(code: CodeFile) -> Finding | None:
    """A DataLoader over the training set with shuffle off (or not given, whose default is off) and
    no sampler: batches come in the dataset's order, so data stored by class or source makes the
    loss drop and jump at the boundaries and the model drift toward what it saw last."""
    try:
        tree = ast.parse(code.text)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _call_name(node.func) == "DataLoader"):
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        data = node.args[0] if node.args else kw.get("dataset")
        training_data = data is not None and "train" in ast.unparse(data).lower()
        if not training_data or {"sampler", "batch_sampler"} & kw.keys():
            continue
        shuffle = kw.get("shuffle")
        if shuffle is not None and not (isinstance(shuffle, ast.Constant) and shuffle.value is False):
            continue            # shuffled, or decided by a flag the paste does not show
        line = code.text.splitlines()[node.lineno - 1]
        fixed = (line.replace("shuffle=False", "shuffle=True", 1) if shuffle is not None else
                 line[:line.rindex(")")] + ", shuffle=True" + line[line.rindex(")"):]
                 if node.end_lineno == node.lineno and ")" in line else line)
        said = "shuffle=False" if shuffle is not None else "no shuffle argument (the default is False)"
        return Finding(code="data_pipeline_bug",
                       issue=f"{code.artifact} line {node.lineno} loads the training set with {said}: every "
                             "epoch sees the batches in the same, stored order",
                       severity="low",
                       confidence=0.4,
                       evidence=[Evidence(f"{line.strip()}: the training DataLoader does not shuffle",
                                          code.artifact, f"line {node.lineno}")],
                       fix="Shuffle the training data (DataLoader(..., shuffle=True) or a sampler); data "
                           "stored by class or by source otherwise gives batches of one kind, and the loss "
                           "drops and jumps at the boundaries",
                       expected_impact="smooth epoch curves without periodic drops",
                       analyzer=NAME,
                       patch=replace_line(code, node.lineno, fixed) if fixed != line else None,
                       quick_fix="Shuffle the training DataLoader")
    return None


# a special token set to one the vocabulary has (`{'pad_token': tokenizer.eos_token}`): no new id
_EXISTING_TOKENS = re.compile(r"add_special_tokens\(\s*\{\s*['\"]\w+['\"]\s*:\s*\w+\.\w+_token\s*\}\s*\)")


def _tokens_without_resize(code: CodeFile) -> Finding | None:
    """Tokens added to a tokenizer (`add_tokens`, `add_special_tokens`) in code that never resizes the model's
    embeddings: the new ids index past the embedding table (an IndexError on the CPU, a device-side assert on
    the GPU) or, where the table had spare rows, read rows no one trained."""
    added = sorted((ln, callee.rsplit(".", 1)[0]) for callee, lines in code.calls.items() if "." in callee
                   and callee.rsplit(".", 1)[1] in ("add_tokens", "add_special_tokens") for ln in lines
                   if not _EXISTING_TOKENS.search(code.line(ln)))
    if not added or any(callee.endswith("resize_token_embeddings") for callee in code.calls):
        return None
    n, tokenizer = added[0]
    resize = f"model.resize_token_embeddings(len({tokenizer}))"
    return Finding(code="data_pipeline_bug",
                   issue=f"{code.artifact} line {n} adds tokens to {tokenizer} and the model's embeddings are never "
                         "resized: the new tokens' ids are past the embedding table",
                   severity="high", confidence=0.6,
                   evidence=[Evidence(f"{code.line(n)}: new ids, and no resize_token_embeddings anywhere in the file",
                                      code.artifact, f"line {n}")],
                   fix=f"Resize the embeddings after adding the tokens ({resize}), and train them (they start "
                       "random): with LoRA, add the embeddings to modules_to_save",
                   # (where a `model` exists by then, one built further down being resized there, and after a call
                   # on one line: inside a call spread over lines the line would land within its parentheses)
                   patch=insert_code_before(code, n + 1, resize) if min(code.names.get("model", [n])) < n
                   and n < len(code.text.splitlines()) and code.line(n).count("(") == code.line(n).count(")")
                   else None,
                   analyzer=NAME, quick_fix="Call model.resize_token_embeddings(len(tokenizer))")


def _constants(tree: ast.Module) -> dict[str, float]:
    """Module-level names assigned a number (`learning_rate = 1e-5`): what an `lr=learning_rate` reads."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, (int, float)) and not isinstance(node.value.value, bool):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = float(node.value.value)
    return out


def _lr_above_range(code: CodeFile) -> Finding | None:
    """An optimizer built in the script with a literal learning rate above its family's usual range
    (common.LR_RANGE: Adam's tops out near 1e-2, SGD's near 0.1): the line, and the LR a tenth of it."""
    from analysis.analyzers.common import LR_RANGE  # here: at module level the import would be circular
    try:
        tree = ast.parse(code.text)
    except SyntaxError:
        return None
    names = _constants(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = _call_name(node.func)
        fam = _family(callee) if callee in OPTIMIZER_CLASSES else None
        lr_node = next((k.value for k in node.keywords if k.arg in ("lr", "learning_rate")), None)
        if fam is None or lr_node is None:
            continue
        lr = (lr_node.value if isinstance(lr_node, ast.Constant)
              else names.get(lr_node.id) if isinstance(lr_node, ast.Name) else None)
        if not isinstance(lr, (int, float)) or isinstance(lr, bool) or lr <= LR_RANGE[fam][1]:
            continue
        line = code.text.splitlines()[node.lineno - 1]
        return Finding(code="lr_too_high",
                       issue=f"{code.artifact} line {node.lineno} builds {callee} with lr={lr:g}, above the "
                             f"usual range of {fam} (up to ~{LR_RANGE[fam][1]:g})",
                       severity="medium",
                       confidence=0.5,
                       evidence=[Evidence(f"{line.strip()}: lr {lr:g} for {callee}", code.artifact,
                                          f"line {node.lineno}")],
                       fix=f"Lower the learning rate to ~{lr / 10:g} (a tenth) and add a warm-up; raise it "
                           "back only while the loss keeps falling",
                       expected_impact="the loss falls instead of diverging or stalling",
                       analyzer=NAME,
                       quick_fix="Lower the LR 10x")
    return None


# optimizer class name (lower case) -> LR_RANGE family
_FAMILIES = (("adam", "adam"), ("lion", "lion"), ("muon", "muon"), ("adafactor", "adafactor"),
             ("rmsprop", "rmsprop"), ("sgd", "sgd"))
_FREEZES = re.compile(r"requires_grad(_\(False\)|\s*=\s*False)")
_UNFREEZES = re.compile(r"requires_grad(_\(True\)|\s*=\s*True)")


def _family(optimizer_class: str) -> str | None:
    return next((family for key, family in _FAMILIES if key in optimizer_class.lower()), None)


def _frozen(code: CodeFile, opts: dict[str, tuple[str, int]]) -> Finding | None:
    """Every parameter set to requires_grad=False and never back to True before training."""
    lines = code.text.splitlines()
    off = [n for n, ln in enumerate(lines, start=1) if _FREEZES.search(ln)]
    on = [n for n, ln in enumerate(lines, start=1) if _UNFREEZES.search(ln)]
    if not off or on or not opts:
        return None
    var, (callee, built_at) = next(iter(opts.items()))
    return Finding(code="no_parameter_updates",
                   issue=f"{code.artifact} freezes the model's parameters (requires_grad=False) and never "
                         f"unfreezes them, so {var} has nothing to update",
                   severity="high",
                   confidence=0.7,
                   evidence=[Evidence(f"{lines[off[0] - 1].strip()}: parameters frozen", code.artifact,
                                      f"line {off[0]}"),
                             Evidence(f"{code.line(built_at)}: the optimizer", code.artifact,
                                      f"line {built_at}")],
                   fix="Unfreeze the layers meant to train (requires_grad=True) before building the "
                       "optimizer, and build it over [p for p in model.parameters() if p.requires_grad]",
                   analyzer=NAME,
                   quick_fix="Unfreeze the trainable layers")


# with any `*head(s)`: the layers that turn features into the output the loss reads
_HEADS = ("classifier", "fc")
_BACKBONES = ("backbone", "encoder", "features", "body")


def _frozen_modules(tree: ast.Module) -> dict[str, int]:
    """Modules whose every parameter is frozen, unconditionally: `for p in X.parameters():
    p.requires_grad = False` (or named_parameters) and `X.requires_grad_(False)`: X -> line."""
    out: dict[str, int] = {}
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
             and isinstance(n.iter.func, ast.Attribute)
             and n.iter.func.attr in ("parameters", "named_parameters")]
    for loop in loops:
        body = [ast.unparse(stmt) for stmt in loop.body if isinstance(stmt, (ast.Assign, ast.Expr))]
        if any(_FREEZES.search(stmt) for stmt in body):
            out.setdefault(ast.unparse(loop.iter).rsplit(".", 1)[0], loop.lineno)
    params = {ast.unparse(n) for loop in loops for n in ast.walk(loop.target)}   # `p`, `(n, p)`, `n`
    for node in ast.walk(tree):      # `X.requires_grad_(False)`, not a keyword in another call
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "requires_grad_" and node.args and \
                isinstance(node.args[0], ast.Constant) and node.args[0].value is False and \
                ast.unparse(node.func.value) not in params:
            out.setdefault(ast.unparse(node.func.value), node.lineno)
    return out


def _frozen_head(code: CodeFile) -> Finding | None:
    """A paste with no optimizer that freezes the output head(s) and another part (the backbone):
    the layers the loss is computed from do not train, nor what feeds them; whatever the paste
    leaves trainable (a name filter) may match nothing, and backward() then fails with `element 0
    of tensors does not require grad`."""
    try:
        frozen = _frozen_modules(ast.parse(code.text))
    except SyntaxError:
        return None
    # heads and the backbone under them both frozen (an LLM recipe freezing embeddings and lm_head
    # trains the blocks between); not a part of a module frozen whole (a distillation's teacher)
    whole = [m for m in frozen if not any(m.startswith(f + ".") for f in frozen)]
    heads = [m for m in whole if (last := m.rsplit(".", 1)[-1].lower()).endswith(("head", "heads"))
             or last in _HEADS]
    backbone = any(m.rsplit(".", 1)[-1].lower() in _BACKBONES for m in whole)
    if not heads or not backbone or any(_UNFREEZES.search(ln) for ln in code.text.splitlines()):
        return None
    rest = [m for m in frozen if m not in heads]
    return Finding(code="no_parameter_updates",
                   issue=f"{code.artifact} freezes {', '.join(heads)} (the output head) and "
                         f"{', '.join(rest)}: the layers the loss is read from do not train, and what is "
                         "left trainable may be nothing",
                   severity="medium",
                   confidence=0.55,
                   evidence=[Evidence(f"{code.line(frozen[m]).rstrip(':')}: every parameter of {m} frozen",
                                      code.artifact, f"line {frozen[m]}") for m in heads + rest][:3],
                   fix="Keep the head(s) trainable (and the parts between them and the layers you mean to "
                       "train); build the optimizer over [p for p in model.parameters() if p.requires_grad] "
                       "and check that list is not empty",
                   analyzer=NAME,
                   quick_fix="Unfreeze the head")


def _step_call(callee: str) -> bool:
    """An optimizer's step: `optimizer.step()`, `opt_g.step()`, `scaler.step(opt)`; not a scheduler's."""
    recv, _, attr = callee.rpartition(".")
    last = recv.rsplit(".", 1)[-1].lower()
    return attr == "step" and ("opt" in last or "scaler" in last) and "sched" not in last


def _events(nodes: list[ast.stmt]) -> list[tuple[int, str, frozenset]]:
    """backward/step/zero_grad calls under `nodes`, in source order, outside nested defs, each with
    the branches it sits in ((id of an if, which side)): two sides of one `if` never both run."""
    out = []
    todo: list[tuple[ast.AST, frozenset]] = [(n, frozenset()) for n in nodes]
    while todo:
        node, path = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            callee = ast.unparse(node.func)
            kind = ("backward" if callee.endswith("backward") else "zero_grad" if callee.endswith("zero_grad")
                    else "step" if _step_call(callee) else None)
            if kind:
                out.append((node.lineno, kind, path))
        if isinstance(node, ast.If):
            todo.append((node.test, path))
            todo += [(n, path | {(id(node), 0)}) for n in node.body]
            todo += [(n, path | {(id(node), 1)}) for n in node.orelse]
            continue
        todo += [(n, path) for n in ast.iter_child_nodes(node)]
    return sorted(out, key=lambda e: e[:2])


def _exclusive(a: frozenset, b: frozenset) -> bool:
    """Whether two events sit on different sides of one `if`."""
    sides = dict(a)
    return any(k in sides and sides[k] != side for k, side in b)


def _backward_after_step(events: list[tuple[int, str, frozenset]]) -> tuple[int, int] | None:
    """The first (step line, backward line) with no zero_grad between them, and a step after the
    backward that applies the sum (a backward after the last step, a saliency map, applies nothing)."""
    step: tuple[int, frozenset] | None = None
    for i, (line, kind, path) in enumerate(events):
        if kind == "step":
            step = (line, path)
        elif kind == "zero_grad":
            step = None
        elif step is not None and not _exclusive(step[1], path) and any(
                k == "step" and not _exclusive(path, p) for _, k, p in events[i + 1:]):
            return step[0], line
    return None


def _uncleared_between_steps(code: CodeFile) -> Finding | None:
    """A backward() that runs after an optimizer step with no zero_grad() between them, read in
    the order the code runs: a block's statements top to bottom, and a loop's body twice (its end
    runs into its start). The second backward adds its gradient to the one already applied, so
    every step applies the running sum."""
    if re.search(r"\.grad\s*=\s*None|\.grad\.zero_\(", code.text):
        return None                  # gradients cleared by hand
    try:
        tree = ast.parse(code.text)
    except SyntaxError:
        return None
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef))]
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While, ast.AsyncFor))]
    for found in ([_backward_after_step(_events(s.body)) for s in scopes] +
                  [_backward_after_step(_events(n.body) * 2) for n in loops]):
        if found is None:
            continue
        step, back = found
        where = f"line {back}" if back > step else f"line {back}, at the loop's next pass"
        return Finding(code="exploding_gradients",
                       issue=f"{code.artifact}: backward() at {where} runs after the step at line {step} "
                             "with no zero_grad() between them, so each step applies the sum of every "
                             "gradient since the last clear",
                       severity="high",
                       confidence=0.6,
                       evidence=[Evidence(f"{code.line(step)}: the step, and no zero_grad() after it",
                                          code.artifact, f"line {step}"),
                                 Evidence(f"{code.line(back)}: adds to the gradients already applied",
                                          code.artifact, f"line {back}")],
                       fix="Call optimizer.zero_grad() once per step: after optimizer.step(), or before "
                           "loss.backward()",
                       expected_impact="the gradient stays at the scale of one batch's and the loss stops "
                                       "growing",
                       analyzer=NAME,
                       quick_fix="Add optimizer.zero_grad() after each step")
    return None


def analyze(run: Run) -> list[Finding]:
    out: list[Finding] = []
    for code in run.code:
        if code.parse_error:
            continue
        opts = optimizers(code)
        checks = (_unguarded_division(code), _softmax_into_cross_entropy(code), _softmax_over_one_unit(code),
                  _half_without_scaler(code),
                  _unshuffled_training_loader(code), _lr_above_range(code), _frozen(code, opts),
                  _tokens_without_resize(code),
                  # with an optimizer in the paste, the two rules above and below speak
                  None if opts else _frozen_head(code),
                  None if opts and "zero_grad" not in code.calls else _uncleared_between_steps(code))
        out += [f for f in checks if f is not None] + code_updates.analyze(code, bool(opts))
        backward = sorted(code.calls.get("backward", []))
        if not opts or not backward:
            continue
        var, (callee, built_at) = next(iter(opts.items()))
        stepped = [v for v in opts if f"{v}.step" in code.calls]
        built = Evidence(f"{code.line(built_at)}: the optimizer", code.artifact, f"line {built_at}")
        if not stepped:
            out.append(Finding(code="no_parameter_updates",
                               issue=f"{code.artifact} calls backward() but never {var}.step(): the "
                                     "gradients are computed and thrown away, so the weights never change",
                               severity="critical",
                               confidence=0.8,
                               evidence=[Evidence(f"{code.line(backward[0])}: gradients computed, and no "
                                                  f"{var}.step() anywhere in the file",
                                                  code.artifact, f"line {backward[0]}"), built],
                               fix=f"Call {var}.step() after loss.backward() in the training loop",
                               expected_impact="the weights change and the loss starts to fall",
                               patch=insert_code_before(code, backward[0] + 1, f"{var}.step()"),
                               analyzer=NAME,
                               quick_fix=f"Add {var}.step() after backward()"))
            continue
        if "zero_grad" not in code.calls:
            step_line = min(code.calls[f"{stepped[0]}.step"])
            out.append(Finding(code="exploding_gradients",
                               issue=f"Gradients are never cleared in {code.artifact}: no zero_grad() "
                                     f"before backward(), so each {stepped[0]}.step() applies the sum of "
                                     "every gradient since the start",
                               severity="high",
                               confidence=0.7,
                               evidence=[Evidence(f"{code.line(backward[0])}: accumulates into .grad, and no "
                                                  "zero_grad() anywhere in the file",
                                                  code.artifact, f"line {backward[0]}"),
                                         Evidence(f"{code.line(step_line)}: applies the accumulated gradient",
                                                  code.artifact, f"line {step_line}")],
                               fix=f"Call {stepped[0]}.zero_grad() once per step, before loss.backward()",
                               expected_impact="the gradient norm stays at the scale of one batch's gradient "
                                               "and the loss stays finite",
                               patch=insert_code_before(code, backward[0], f"{stepped[0]}.zero_grad()"),
                               analyzer=NAME,
                               quick_fix=f"Add {stepped[0]}.zero_grad() before backward()"))
    # code pasted alone with no known bug in it still gets a differential
    return out or code_suspects.suspects(run)
