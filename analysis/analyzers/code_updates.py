"""Training code whose loss never reaches the weights the optimizer holds, read statically (AST, never
imported or run): layers kept in a plain Python list (not registered, so `parameters()` skips them) or
built anew inside forward(), an optimizer built over a model that is then replaced by a new one, a loss
re-wrapped as a new tensor or computed from an output cut off from the graph (`.detach()`, `.data`,
`torch.no_grad()`), weights that stop being leaves when moved or scaled after `requires_grad=True`, and a
loop that calls backward() with no optimizer step anywhere in the paste. Each finding names the file and
line."""
from __future__ import annotations

import ast
import re

from analysis.ingest.configs import SNIPPET_BYTES, CodeFile
from analysis.model import Evidence, Finding
from analysis.patches import replace_line

NAME = "code"
OPTIMIZER_CLASSES = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                     "LBFGS", "Lion", "Adafactor", "Muon", "SparseAdam", "AdamW8bit", "Adam8bit")
OPTIMIZERS = re.compile(r"(?:^|\.)(?:" + "|".join(OPTIMIZER_CLASSES) + r")$")
# layers that hold weights, as constructors: `nn.Linear(...)`, `torch.nn.Conv2d(...)` (`th.nn`), or a bare
# `Linear(...)` imported by name (an activation, a dropout or a loss module holds none)
_WEIGHTED = re.compile(r"(?:^|\bnn\.)(?:Linear|Bilinear|Conv[123]d|ConvTranspose[123]d|Embedding|EmbeddingBag|LSTM|"
                       r"GRU|RNN|BatchNorm[123]d|LayerNorm|GroupNorm|InstanceNorm[123]d|MultiheadAttention|PReLU|"
                       r"Sequential|Parameter|Transformer(?:Encoder|Decoder)?(?:Layer)?)$")
# what makes a tensor with no history: its value is kept, the graph to the weights is not
_CUTS = {"detach", "item", "numpy", "tolist"}
_MOVES = {"cuda", "to", "double", "float", "half", "cpu", "type"}
# a trainer that steps for the loop (Lightning, Keras, Hugging Face, fastai), gradients read by hand (`w -= lr *
# w.grad`, `p.data.add_(p.grad, ...)`, an autograd demo printing x.grad) or another framework's step (torch_xla's
# `xm.optimizer_step`, TF's `apply_gradients`)
_STEPPED = re.compile(r"\bTrainer\b|\.fit\(|training_step|manual_backward|optimizer_step|apply_gradients|\.grad\b")
# Keras and TF track layers held in lists: the plain-list rule is PyTorch's
_KERAS = re.compile(r"^\s*(?:import|from)\s+(?:tensorflow|keras|tf_keras)\b", re.M)


def _name(node: ast.expr) -> str:
    return ast.unparse(node)


def _callee(node: ast.Call) -> str:
    return _name(node.func)


def _finding(code: CodeFile, line: int, issue: str, why: str, fix: str, quick: str, conf: float,
             patch: str | None = None) -> Finding:
    return Finding(code="no_parameter_updates", issue=f"{code.artifact} line {line}: {issue}", severity="high",
                   confidence=conf, evidence=[Evidence(f"{code.line(line)}: {why}", code.artifact, f"line {line}")],
                   fix=fix, patch=patch, analyzer=NAME, quick_fix=quick,
                   expected_impact="the weights change and the loss starts to fall")


def _layers_in_a_list(code: CodeFile, tree: ast.Module) -> Finding | None:
    """`self.layers = [nn.Linear(...) for _ in range(n)]` in a module's __init__: a Python list is not a
    module, so its layers are not registered; model.parameters() (and .to(device), state_dict) skip them.
    Not where the list is registered after (ModuleList, Sequential, add_module), nor in Keras code."""
    if _KERAS.search(code.text):
        return None
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"):
            for node in ast.walk(fn):
                if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(t := node.targets[0], ast.Attribute) and _name(t.value) == "self"):
                    continue
                value = node.value
                held = value.elt if isinstance(value, ast.ListComp) else value.elts[0] if (
                    isinstance(value, ast.List) and value.elts) else None
                if isinstance(value, ast.BinOp) and isinstance(value.left, ast.List) and value.left.elts:
                    held = value.left.elts[0]                    # `[nn.Linear(8, 8)] * 3`
                if not (isinstance(held, ast.Call) and _WEIGHTED.search(_callee(held))):
                    continue
                if re.search(rf"(?:ModuleList|ModuleDict|Sequential)\((?:[^)]*\W)?self\.{re.escape(t.attr)}\b",
                             code.text) or re.search(r"\b(?:add_module|register_module)\(", code.text):
                    continue                                     # registered once built
                text = code.line(node.lineno)
                patch = None
                if node.end_lineno == node.lineno and (src := ast.get_source_segment(code.text, value)) \
                        and not isinstance(value, ast.BinOp):    # `[layer] * 3` is one layer thrice: no patch
                    full = code.text.splitlines()[node.lineno - 1]
                    patch = replace_line(code, node.lineno, full.replace(src, f"nn.ModuleList({src})", 1))
                return _finding(code, node.lineno, f"the layers of self.{t.attr} are kept in a plain Python list: "
                                "they are not registered, so model.parameters() leaves them out and the optimizer "
                                "never updates them (nor does .to(device) move them)",
                                f"{text.split('=')[0].strip()} is a list, not an nn.ModuleList",
                                "Hold them in nn.ModuleList([...]) (nn.ModuleDict for a dict), then build the "
                                "optimizer over model.parameters()", "Wrap the list in nn.ModuleList", 0.7, patch)
    return None


def _layers_built_in_forward(code: CodeFile, tree: ast.Module) -> Finding | None:
    """`conv = nn.Conv2d(...)` inside a module's forward(), held in a local or called at once: a new layer with
    new random weights at every call, never registered, so no optimizer ever holds (or updates) them. A layer
    assigned to self there is a lazy initialisation, built once."""
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"):
            kept = {id(v) for n in ast.walk(fn) if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Attribute) and _name(t.value) == "self" for t in n.targets)
                    for v in ast.walk(n.value)}
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and id(node) not in kept and _WEIGHTED.search(_callee(node)) \
                        and not _callee(node).endswith(("Sequential", "Parameter")) and not any(
                            k.arg in ("elementwise_affine", "affine") and isinstance(k.value, ast.Constant)
                            and k.value.value is False for k in node.keywords):   # a norm with no weights
                    return _finding(code, node.lineno, f"{_callee(node)} is built inside {cls.name}.forward(): a "
                                    "new layer with new random weights at every call, never registered, so no "
                                    "optimizer updates it", "a layer constructed in forward()",
                                    "Build the layer once in __init__ (self.conv = nn.Conv2d(...)) and call it in "
                                    "forward()", "Move the layer into __init__", 0.7)
    return None


def _model_replaced(code: CodeFile, tree: ast.Module) -> Finding | None:
    """`opt = SGD(model.parameters())` and then `model = Net()` (or a loaded one) before the loop: the optimizer
    holds the first model's parameters and the loop trains the second, so nothing it uses changes."""
    for scope in _scopes(tree):
        nodes = _own(scope)
        found = _replaced_in(code, sorted((n for n in nodes if isinstance(n, ast.Assign)), key=lambda n: n.lineno),
                             nodes)
        if found is not None:
            return found
    return None


def _scopes(tree: ast.Module) -> list[ast.AST]:
    return [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]


def _own(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a module or function body, not those of the functions and classes defined in it."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _bound(node: ast.Assign) -> set[str]:
    """The names an assignment binds, a tuple's included (`dl, model, opt = accelerator.prepare(...)`)."""
    return {_name(n) for t in node.targets for n in ast.walk(t) if isinstance(n, (ast.Name, ast.Attribute))}


def _optimizer_over(node: ast.Assign) -> str | None:
    """The model an assignment builds an optimizer over (`opt = SGD(model.parameters(), ...)`), if it does."""
    call = node.value
    if isinstance(call, ast.Call) and OPTIMIZERS.search(_callee(call)) and call.args \
            and isinstance(arg := call.args[0], ast.Call) and isinstance(arg.func, ast.Attribute) \
            and arg.func.attr in ("parameters", "named_parameters"):
        return _name(arg.func.value)
    return None


def _replaced_in(code: CodeFile, assigns: list[ast.Assign], nodes: list[ast.AST]) -> Finding | None:
    bound = [(a, _bound(a), _optimizer_over(a)) for a in assigns]       # each assignment read once
    for opt, _, model in bound:
        if model is None or not (len(opt.targets) == 1 and isinstance(opt.targets[0], ast.Name)):
            continue
        var = opt.targets[0].id
        # training by this optimizer: backward() anywhere, or its own step()
        trained = [n.lineno for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                   and (n.func.attr == "backward" or n.func.attr == "step" and _name(n.func.value) == var)]
        for later, names, over in (b for b in bound if b[0].lineno > opt.lineno):
            if var in names or over == model and later is not opt:
                break                     # the optimizer is rebuilt, or another is built over the new model
            value = later.value
            if not (len(later.targets) == 1 and _name(later.targets[0]) == model and isinstance(value, ast.Call)):
                continue
            if any(isinstance(n, ast.expr) and _name(n) == model for n in ast.walk(value)) or \
                    not any(ln > later.lineno for ln in trained):
                continue      # the same model moved or wrapped (`model.to(dev)`, `DDP(model)`), or none trains after
            if any(o == model and a.lineno > later.lineno for a, _, o in bound):
                continue      # a new optimizer is built over the new model (a second model trained after the first)
            return _finding(code, later.lineno, f"{model} is replaced after {var} was built over its parameters "
                            f"(line {opt.lineno}): the optimizer updates the first model, the loop trains the "
                            "second", f"a new {model}, while {var} holds the old one's parameters",
                            f"Build {var} after the final {model} exists (move line {opt.lineno} below line "
                            f"{later.lineno})", f"Build the optimizer after {model}", 0.7)
    return None


def _cut(node: ast.expr) -> bool:
    """A value with no history: `.detach()`, `.item()`, `.numpy()`, `.data` anywhere in it."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CUTS
               or isinstance(n, ast.Attribute) and n.attr == "data" for n in ast.walk(node))


def _leading_cut(node: ast.expr) -> bool:
    """Whether a term's leading factor is a value off the graph: `x.detach().numpy() * reward`, `out.item()`;
    not `log_prob * (R - value.detach())`, whose detached part is a coefficient."""
    while isinstance(node, ast.BinOp):
        node = node.left
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CUTS \
        or isinstance(node, ast.Attribute) and node.attr == "data"


def _with_grad(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant)
                                              and k.value.value is True for k in node.keywords)


def _backpropagated(tree: ast.Module) -> set[str]:
    return {n.func.value.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "backward" and isinstance(n.func.value, ast.Name)}


def _rewrapped_loss(code: CodeFile, tree: ast.Module) -> Finding | None:
    """`loss = torch.tensor(loss.item(), requires_grad=True)` (or Variable(loss.data, requires_grad=True)):
    a new leaf that holds the loss's value and none of its graph; backward() stops at it. Only for what is
    backpropagated or named a loss: a leaf input made so on purpose (FGSM's `x_adv`) is sound."""
    backward = _backpropagated(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(t := node.targets[0], ast.Name)
                and ("loss" in t.id.lower() or t.id in backward)):
            continue
        call = node.value
        if isinstance(call, ast.Call) and _callee(call).rsplit(".", 1)[-1] in ("tensor", "Variable", "as_tensor") \
                and call.args and _cut(call.args[0]) and _with_grad(call):
            return _finding(code, node.lineno, "the loss is re-made as a new tensor from its value: it has no "
                            "graph back to the weights, so backward() computes no gradient for them",
                            "a new leaf tensor: requires_grad=True on it does not reconnect the graph",
                            "Call backward() on the loss the criterion returned; take .item() only for logging",
                            "Backpropagate the criterion's own loss", 0.75)
    return None


# what a loss variable for logging is called: `running_loss += loss.item()` is no loss to backpropagate
_LOGGED = re.compile(r"(?i)^(?:running|total|epoch|avg|average|mean|sum|cum|cumulative|train|val|valid|test|eval|"
                     r"batch|print|log)_?loss|loss_?(?:sum|total|avg|meter|log|hist|history|list|value|val)s?$")


def _loss_from_values(code: CodeFile, tree: ast.Module) -> Finding | None:
    """A loss built up from terms whose leading factor is a value taken off the graph (`rl_loss -=
    log_probs[0, a].detach().numpy() * reward`, `loss += out.item()`), backpropagated or decreased as a
    policy-gradient loss is: it holds numbers, not the graph to the log-probabilities. A detached coefficient
    (an advantage, a target) in a live term is sound, and so is a running total kept for printing."""
    backward = _backpropagated(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
                and "loss" in node.target.id.lower() and not _LOGGED.search(node.target.id)
                and _leading_cut(node.value)):
            continue
        name = node.target.id
        if name in backward or isinstance(node.op, ast.Sub):
            return _finding(code, node.lineno, f"{name} is built from values taken off the graph (.detach(), "
                            ".numpy(), .item()): it holds numbers, so backward() on it reaches no weight",
                            f"{name} accumulates numbers, not tensors with their graph",
                            f"Accumulate the tensors themselves ({name} = {name} - log_prob * reward, with no "
                            ".detach()/.numpy()/.item()); take .item() only to print", f"Keep {name} a tensor", 0.6)
    return None


def _detached_output(code: CodeFile, tree: ast.Module) -> Finding | None:
    """A loss computed only from a model output cut off from the graph before it (`out = model(x).detach()`,
    or assigned inside `with torch.no_grad():`) and then backpropagated, within one function: no gradient
    reaches the model. Any other assignment of the name (a training pass's, a tuple's, a subscript's) makes
    it live, and so does any call in the loss besides the criterion (a model called inline, `self.q(s)`)."""
    for scope in _scopes(tree):
        found = _detached_in(code, _own(scope))
        if found is not None:
            return found
    return None


def _detached_in(code: CodeFile, nodes: list[ast.AST]) -> Finding | None:
    guarded = {id(s) for n in nodes if isinstance(n, ast.With) and any("no_grad" in _name(i.context_expr)
                                                                       for i in n.items)
               for b in n.body for s in ast.walk(b)}
    cut: dict[str, int] = {}
    live: set[str] = set()
    for stmt in (n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        value = stmt.value
        single = len(targets) == 1 and isinstance(targets[0], ast.Name)
        output = value is not None and any(isinstance(n, ast.Call) and not (
            isinstance(n.func, ast.Attribute) and n.func.attr in _CUTS) for n in ast.walk(value))
        if single and output and (id(stmt) in guarded or value is not None and _cut(value)):
            cut.setdefault(names[0], stmt.lineno)   # `out = model(x).detach()`, or assigned under no_grad
        else:
            live.update(names)
    cut = {k: v for k, v in cut.items() if k not in live}
    if not cut:
        return None
    made_at: dict[str, list[ast.Assign]] = {}
    for a in sorted((n for n in nodes if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
        if len(a.targets) == 1 and isinstance(a.targets[0], ast.Name):
            made_at.setdefault(a.targets[0].id, []).append(a)
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
                and isinstance(node.func.value, ast.Name)):
            continue
        before = [a for a in made_at.get(node.func.value.id, []) if a.lineno < node.lineno]
        if not before or not isinstance(value := before[-1].value, ast.Call):
            continue
        refs = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        inner = [n for n in ast.walk(value) if isinstance(n, ast.Call) and n is not value]
        used = [name for name in refs & set(cut) if cut[name] < node.lineno]
        if used and not inner and not (refs & live - {node.func.value.id}) and not _cut(value):
            name = sorted(used)[0]
            return _finding(code, cut[name], f"the loss backpropagated at line {node.lineno} is computed from "
                            f"{name}, which is cut off from the graph here: no gradient reaches the model",
                            f"{name} holds values without the graph (.detach(), .data or torch.no_grad())",
                            f"Compute {name} with the graph (drop .detach()/.data, move the forward pass out of "
                            "torch.no_grad()) for the loss you backpropagate", f"Keep {name} in the graph", 0.65)
    return None


def _moved_leaf(code: CodeFile, tree: ast.Module) -> Finding | None:
    """`w = torch.randn(3, 2, requires_grad=True).cuda()` or `* 0.01`, `self.t = nn.Parameter(...).cuda()`: the
    name holds a computed copy, not the leaf that would receive .grad (nor a registered parameter). Only for a
    weight: a module's attribute or a name handed to an optimizer (an input made to take a gradient, or a
    loss started as `torch.tensor(0., requires_grad=True) + ...`, is no weight)."""
    optimized = " ".join(ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Call)
                         and OPTIMIZERS.search(_callee(n)))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        v, target = node.value, _name(node.targets[0])
        moved = isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in _MOVES \
            and (_with_grad(v.func.value) or isinstance(v.func.value, ast.Call)
                 and _callee(v.func.value).endswith("Parameter"))      # `nn.Parameter(...).cuda()`: no longer one
        weight = target.startswith("self.") or re.search(rf"\b{re.escape(target)}\b", optimized) is not None
        scaled = isinstance(v, ast.BinOp) and (_with_grad(v.left) or _with_grad(v.right))
        if (moved or scaled) and weight and "loss" not in target.lower():
            how = f".{v.func.attr}()" if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) \
                else "arithmetic"
            return _finding(code, node.lineno, f"{target} is made with requires_grad=True and then "
                            f"passed through {how}: it is a computed tensor, not a leaf, so its .grad stays None "
                            "and an optimizer cannot update it", "requires_grad set before the tensor is moved or "
                            "scaled", "Create it on its device at its scale first, then mark it: "
                            "(torch.randn(3, 2, device=dev) * 0.01).requires_grad_(), or wrap it in nn.Parameter",
                            "Set requires_grad after moving the tensor", 0.65)
    return None


def _backward_without_step(code: CodeFile, tree: ast.Module) -> Finding | None:
    """A pasted loop that calls backward() with no optimizer, no step and no update by hand anywhere in the
    paste: the gradients are computed and thrown away (the paste may be cut: medium)."""
    looped = sorted({n.lineno for loop in ast.walk(tree) if isinstance(loop, (ast.For, ast.While))
                     for n in ast.walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                     and n.func.attr == "backward"})
    if not looped or any(c.endswith(".step") or c == "step" for c in code.calls) or _STEPPED.search(code.text):
        return None
    return Finding(code="no_parameter_updates", issue=f"{code.artifact} calls backward() and nothing applies the "
                   "gradients: no optimizer step in the code shown", severity="medium", confidence=0.5,
                   evidence=[Evidence(f"{code.line(looped[0])}: gradients computed, and no .step() in the paste",
                                      code.artifact, f"line {looped[0]}")],
                   fix="Call optimizer.step() after loss.backward() (and optimizer.zero_grad() before it) in the "
                       "training loop", analyzer=NAME, quick_fix="Add optimizer.step() after backward()")


def analyze(code: CodeFile, has_optimizer: bool) -> list[Finding]:
    """The rules above on a pasted snippet (at most SNIPPET_BYTES, the size ingest repairs): a larger file is a
    repository's, read by code.py's rules alone (these walk the tree per name). With an optimizer in the
    paste, code.py's own backward-without-step rule speaks instead of this one's."""
    if len(code.text) > SNIPPET_BYTES:
        return []
    try:
        tree = ast.parse(code.text)
    except SyntaxError:
        return []
    found = [_layers_in_a_list(code, tree), _layers_built_in_forward(code, tree), _model_replaced(code, tree),
             _rewrapped_loss(code, tree), _loss_from_values(code, tree), _detached_output(code, tree),
             _moved_leaf(code, tree), None if has_optimizer else _backward_without_step(code, tree)]
    return [f for f in found if f is not None]
