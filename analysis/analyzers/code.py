"""The training code, read statically (AST, never imported or run): a loop that computes
gradients but never applies them, and gradients that are never cleared between steps. Each
finding names the file and line, and the patch text adds the missing call."""
from __future__ import annotations

from analysis.ingest.configs import CodeFile
from analysis.model import Evidence, Finding
from analysis.patches import insert_code_before
from analysis.run import Run

NAME = "code"
OPTIMIZER_CLASSES = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS",
                     "Lion", "Adafactor", "Muon", "SparseAdam", "AdamW8bit", "Adam8bit")


def optimizers(code: CodeFile) -> dict[str, tuple[str, int]]:
    """Variables assigned an optimizer: name -> (constructor, line)."""
    return {var: (callee, ln) for var, (callee, ln) in code.built.items()
            if callee.rsplit(".", 1)[-1] in OPTIMIZER_CLASSES}


def analyze(run: Run) -> list[Finding]:
    out: list[Finding] = []
    for code in run.code:
        if code.parse_error:
            continue
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
