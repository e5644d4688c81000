"""A VAE whose KL term is ~0 beside its reconstruction term (World Models' Keras VAE: `vae_r_loss: 0.1416 -
vae_kl_loss: 3.8347e-07`): the posterior equals the prior for every input, so the latent carries nothing and
the decoder writes the same average output whatever it is given, posterior collapse. An encoder at its
initialisation also starts near KL 0, so it is read where it holds at the last HELD_REPORTS reports (at every
report of a shorter log; one report alone at a lower confidence). A KL with no reconstruction term beside it
(an RL policy's KL to its reference, a distillation's KL to its teacher) is another quantity and is not read.

Thresholds: 0 < KL < KL_ZERO = 1e-4 nats (a KL printed as exactly 0 is a term not computed, or weighted 0 while
it is annealed in), and below KL_SHARE = 1e-3 of the reconstruction term at the same report."""
from __future__ import annotations

import re

import numpy as np

from analysis.metrics import Series, fmt
from analysis.model import Evidence, Finding
from analysis.run import Run

NAME = "posterior_collapse"
KL_ZERO, KL_SHARE = 1e-4, 1e-3
HELD_REPORTS = 3
ONE_REPORT, HELD = 0.45, 0.6
# `kl` alone is the canonical name of an RL policy's KL (metric_names.toml: approx_kl, objective/kl), not a VAE's
_KL = re.compile(r"(?:^|[_/])(?:vae_)?(?:kl|kld|kl_div|kl_divergence)(?:_loss|_term)?$", re.I)
_RECON = re.compile(r"(?:^|[_/])(?:vae_r|rec|recon|reconstruction|recons)(?:_loss|_term)?$", re.I)
# a KL weighted 0 (annealing's first epochs) is not computed into the loss, whatever it prints
_KL_WEIGHT = ("kl_weight", "beta", "kl_beta", "kl_coef")


def _named(run: Run, pattern: re.Pattern) -> Series | None:
    return next((s for n in run.metrics.names() if n != "kl" and pattern.search(n)
                 and (s := run.metrics.get(n)) is not None and len(s)), None)


def analyze(run: Run) -> list[Finding]:
    kl, recon = _named(run, _KL), _named(run, _RECON)
    if kl is None or recon is None or len(kl) != len(recon):
        return []
    k, r = kl.values, recon.values
    # a KL printed as exactly 0 is a term not computed (or weighted 0), not a collapsed one (~1e-7)
    zero = np.isfinite(k) & np.isfinite(r) & (k > 0) & (k < KL_ZERO) & (k < KL_SHARE * np.abs(r))
    weight = next((w for n in _KL_WEIGHT if (w := run.metrics.get(n)) is not None and len(w)), None)
    if not zero[-HELD_REPORTS:].all() or (weight is not None and float(weight.values[-1]) == 0.0):
        return []
    held = len(k) >= HELD_REPORTS
    said = (f"{kl.name} {fmt(float(k[-1]))} beside {recon.name} {fmt(float(r[-1]))}"
            + (f", under {KL_ZERO:g} at each of the last {HELD_REPORTS} reports" if held else ""))
    return [Finding(code="mode_collapse", severity="medium", confidence=HELD if held else ONE_REPORT,
                    issue="The VAE's KL term is ~0: the posterior collapsed to the prior, so the latent carries "
                          "nothing and the decoder gives the same output whatever the input",
                    evidence=[Evidence(said, kl.artifact, kl.span_locator(max(0, len(k) - HELD_REPORTS), len(k) - 1))],
                    fix="Anneal the KL weight from 0 to 1 over the first epochs, or give the KL free bits (a floor of "
                        "~0.5 nats per latent dimension); a decoder strong enough to ignore z (an autoregressive one) "
                        "needs a weaker decoder or word dropout",
                    analyzer=NAME, quick_fix="Anneal the KL weight")]
