"""The training code, read statically (AST, never imported or run): a loop that computes
gradients but never applies them, gradients that are never cleared between steps, and divisions
by a spread or a norm with no epsilon. Each finding names the file and line, and the patch text
makes the change."""
from __future__ import annotations

from analysis.ingest.configs import CodeFile
from analysis.model import Evidence, Finding
from analysis.patches import insert_code_before, replace_line
from analysis.run import Run

NAME = "code"
_SPREADS = ("std", "var", "norm", "sqrt", "vector_norm")
OPTIMIZER_CLASSES = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS",
                     "Lion", "Adafactor", "Muon", "SparseAdam", "AdamW8bit", "Adam8bit")


def optimizers(code: CodeFile) -> dict[str, tuple[str, int]]:
    """Variables assigned an optimizer: name -> (constructor, line)."""
    return {var: (callee, ln) for var, (callee, ln) in code.built.items()
            if callee.rsplit(".", 1)[-1] in OPTIMIZER_CLASSES}


def _unguarded_division(code: CodeFile) -> Finding | None:
    """`x / std` where std comes from .std()/.var()/.norm() and nothing keeps it from 0."""
    spreads = {var for var, (callee, _) in code.built.items() if callee.rsplit(".", 1)[-1] in _SPREADS}
    for line_no, divisor in code.divisions:
        direct = any(f".{f}(" in divisor or divisor.startswith(f"{f}(") for f in _SPREADS)
        if not (divisor in spreads or direct) or "eps" in divisor or "+" in divisor or "clamp" in divisor:
            continue
        line = code.text.splitlines()[line_no - 1]
        fixed = line.replace(f"/ {divisor}", f"/ ({divisor} + 1e-6)", 1)
        if fixed == line:
            continue
        return Finding(
            "numerical_instability", f"{code.artifact} line {line_no} divides by {divisor} with no epsilon: an input "
            "with zero spread gives 0/0 = NaN", "low", 0.4,
            [Evidence(f"{line.strip()}: divides by {divisor}, which is 0 for a constant input", code.artifact, f"line {line_no}")],
            fix=f"Guard the division: / ({divisor} + 1e-6), or clamp the spread from below",
            expected_impact="constant inputs give zeros instead of NaN and training continues",
            patch=replace_line(code, line_no, fixed), analyzer=NAME, quick_fix=f"Add an epsilon to the division by {divisor}")
    return None


def analyze(run: Run) -> list[Finding]:
    out: list[Finding] = []
    for code in run.code:
        if code.parse_error:
            continue
        division = _unguarded_division(code)
        if division is not None:
            out.append(division)
        opts = optimizers(code)
        backward = sorted(code.calls.get("backward", []))
        if not opts or not backward:
            continue
        var, (callee, built_at) = next(iter(opts.items()))
        stepped = [v for v in opts if f"{v}.step" in code.calls]
        built = Evidence(f"{code.line(built_at)}: the optimizer", code.artifact, f"line {built_at}")
        if not stepped:
            out.append(Finding(
                "no_parameter_updates", f"{code.artifact} calls backward() but never {var}.step(): the gradients are "
                "computed and thrown away, so the weights never change",
                "critical", 0.8,
                [Evidence(f"{code.line(backward[0])}: gradients computed, and no {var}.step() anywhere in the file",
                          code.artifact, f"line {backward[0]}"), built],
                fix=f"Call {var}.step() after loss.backward() in the training loop",
                expected_impact="the weights change and the loss starts to fall",
                patch=insert_code_before(code, backward[0] + 1, f"{var}.step()"), analyzer=NAME,
                quick_fix=f"Add {var}.step() after backward()"))
            continue
        if "zero_grad" not in code.calls:
            step_line = min(code.calls[f"{stepped[0]}.step"])
            out.append(Finding(
                "exploding_gradients", f"Gradients are never cleared in {code.artifact}: no zero_grad() before backward(), "
                f"so each {stepped[0]}.step() applies the sum of every gradient since the start",
                "high", 0.7,
                [Evidence(f"{code.line(backward[0])}: accumulates into .grad, and no zero_grad() anywhere in the file",
                          code.artifact, f"line {backward[0]}"),
                 Evidence(f"{code.line(step_line)}: applies the accumulated gradient", code.artifact, f"line {step_line}")],
                fix=f"Call {stepped[0]}.zero_grad() once per step, before loss.backward()",
                expected_impact="the gradient norm stays at the scale of one batch's gradient and the loss stays finite",
                patch=insert_code_before(code, backward[0], f"{stepped[0]}.zero_grad()"), analyzer=NAME,
                quick_fix=f"Add {stepped[0]}.zero_grad() before backward()"))
    return out
