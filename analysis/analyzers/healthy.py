"""A run that trains well: a loss that falls steadily (with the grad norm's range beside it), else a
GAN in balance (`adversarial`), else an accuracy or mAP that rises report after report. A verdict
of health, so `diagnose` consults it only when no critical, high or medium cause showed and the
run neither crashed nor lost an analyzer; it is not in `ANALYZERS`."""
from __future__ import annotations

import numpy as np

from analysis.analyzers import adversarial
from analysis.analyzers.common import train_loss
from analysis.metrics import fmt, fmt_step
from analysis.model import Evidence, Finding
from analysis.run import Run
from analysis.signals import relative_change

NAME = "healthy"
HEALTHY_POINTS = 3          # a falling loss over three reports already says the run learns
LOSS_FELL = 0.02            # the loss must fall by more than 2% of its start to count as falling
# Where a paste holds no loss: the metrics whose rise says the run learns, in the order tried
IMPROVING = ("val_acc", "train_acc", "map", "val_map", "map50", "mAP")
METRIC_ROSE = 1.02          # its last report above 1.02x its first...
RISING_SHARE = 0.5          # ...with at least half of the steps between reports not going down


def _improving_metric(run: Run) -> Finding | None:
    """Healthy where a paste holds no loss but an accuracy or mAP that rises report after report."""
    for name in IMPROVING:
        s = run.metrics.get(name)
        if s is None or len(s) < HEALTHY_POINTS or not np.isfinite(s.values).all():
            continue
        v = s.values
        if v[-1] > v[0] * METRIC_ROSE and (np.diff(v) >= 0).mean() >= RISING_SHARE:
            rose = f"{name} rose from {fmt(float(v[0]))} to {fmt(float(v[-1]))}"
            return Finding(
                code="healthy", severity="info", confidence=0.7, analyzer=NAME,
                issue=f"The run looks healthy: {rose}, with no divergence, NaN, crash or "
                      "warning that points to a fault",
                evidence=[Evidence(f"{rose} over {s.step_kinds} "
                                   f"{fmt_step(s.steps[0])}-{fmt_step(s.steps[-1])}",
                                   s.artifact, s.span_locator(0, len(s) - 1))],
                fix="Nothing to fix; keep training")
    return None


def analyze(run: Run) -> list[Finding]:
    s = train_loss(run)
    if s is None:
        metric = _improving_metric(run)
        return adversarial.analyze(run) or ([metric] if metric else [])
    if len(s) < HEALTHY_POINTS:
        return []
    change = relative_change(s.values)
    if change <= LOSS_FELL:
        return []
    fell = f"loss fell {change * 100:.0f}% from {fmt(float(s.values[0]))} to {fmt(float(s.values[-1]))}"
    evidence = [Evidence(f"{fell} over {s.step_kinds} {fmt_step(s.steps[0])}-{fmt_step(s.steps[-1])}",
                         s.artifact, s.span_locator(0, len(s) - 1))]
    g = run.metrics.get("grad_norm")
    if g is not None and len(g):
        evidence.append(Evidence(f"grad_norm stayed between {fmt(float(g.values.min()))} and "
                                 f"{fmt(float(g.values.max()))}", g.artifact, g.span_locator(0, len(g) - 1)))
    return [Finding(code="healthy", severity="info", confidence=0.85, evidence=evidence, analyzer=NAME,
                    issue="The run looks healthy: the loss falls steadily, with no divergence, NaN, crash or "
                          "warning that points to a fault",
                    fix="Nothing to fix; keep training")]
