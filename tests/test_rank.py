"""The ranking's rules, one table row each, on hand-made findings: every rule is shown to be the
one that decides its case (without it the ranking comes out otherwise), rivals stay on the list as
alternatives with their own evidence, and the question's words never move a confidence."""
from __future__ import annotations

import copy
import dataclasses

import pytest

from analysis.model import Evidence, Finding
from analysis.rank import RULES, combine, tell_apart


def F(code: str, conf: float, sev: str = "high", analyzer: str = "loss", onset: float | None = None,
      where: str = "line 1", artifact: str = "train.log") -> Finding:
    return Finding(code, f"{code} seen", sev, conf, [Evidence(f"{code} evidence", artifact, where)],
                   fix="fix it", analyzer=analyzer, onset_step=onset)


# (rule, findings, ranked codes expected, confidences expected after ranking)
TABLE = [
    ("gradients_before_nan",
     [F("exploding_gradients", 0.7, "critical", "gradients", 10, "line 10"),
      F("numerical_instability", 0.85, "critical", "loss", 20, "line 20")],
     ["exploding_gradients", "numerical_instability"], {"exploding_gradients": 0.9, "numerical_instability": 0.8}),
    ("lr_jump_explains_what_follows",
     [F("lr_too_high", 0.92, "critical", "learning_rate", 100, "line 100"),
      F("exploding_gradients", 0.95, "critical", "gradients", 120, "line 120")],
     ["lr_too_high", "exploding_gradients"], {"lr_too_high": 0.92, "exploding_gradients": 0.82}),
    ("gradients_explain_divergence",
     [F("lr_too_high", 0.55, "critical", "loss", 50, "lines 50-90"),
      F("exploding_gradients", 0.5, "critical", "gradients", 40, "line 40")],
     ["exploding_gradients", "lr_too_high"], {"exploding_gradients": 0.85, "lr_too_high": 0.55}),
    ("evidence_rules_out_a_rival",
     [F("lr_too_high", 0.7, "high", "learning_rate", 20, "line 20"),
      dataclasses.replace(F("exploding_gradients", 0.6, "critical", "gradients", 1, "line 1"),
                          rules_out=("lr_too_high",))],
     ["exploding_gradients", "lr_too_high"], {"exploding_gradients": 0.85, "lr_too_high": 0.7}),
    ("spike_inside_a_failure",
     [F("numerical_instability", 0.8, "critical", "loss", 10, "line 10"),
      F("loss_spikes", 0.85, "medium", "loss", 30, "line 30")],
     ["numerical_instability"], {"numerical_instability": 0.8}),
    ("parameter_budget_explains_collapse",
     [F("architecture_imbalance", 0.6, "high", "parameters"),
      F("mode_collapse", 0.85, "high", "outputs", where="line 7")],
     ["architecture_imbalance", "mode_collapse"], {"architecture_imbalance": 0.9, "mode_collapse": 0.8}),
    ("crash_outranks_trends",
     [F("out_of_memory", 0.75, "critical", "crashes", where="line 9"), F("overfitting", 0.8, "critical", "excerpt")],
     ["out_of_memory", "overfitting"], {"out_of_memory": 0.75, "overfitting": 0.65}),
    ("stall_cause_explains_chance",
     [F("data_pipeline_bug", 0.8, "high", "loss"), F("lr_too_low", 0.6, "high", "learning_rate", where="line 3")],
     ["lr_too_low", "data_pipeline_bug"], {"lr_too_low": 0.9, "data_pipeline_bug": 0.8}),
    ("dead_units_explain_rise",
     [F("dead_relu", 0.5, "high", "weights", where="tensors of model.pt"),
      F("lr_too_high", 0.55, "critical", "loss", 30, "lines 30-60")],
     ["dead_relu", "lr_too_high"], {"dead_relu": 0.5, "lr_too_high": 0.4}),
    ("zero_variance_explains_nan",
     [F("zero_variance", 0.6, "high", "crashes", where="line 4"),
      F("numerical_instability", 0.8, "critical", "loss", 10, "line 10")],
     ["zero_variance", "numerical_instability"], {"zero_variance": 0.6, "numerical_instability": 0.5}),
    ("divergence_to_nan_is_the_lr",
     [F("numerical_instability", 0.7, "critical", "loss", 12, "line 12"),
      F("lr_too_high", 0.55, "critical", "excerpt", 8, "lines 8-11")],
     ["lr_too_high", "numerical_instability"], {"lr_too_high": 0.75, "numerical_instability": 0.7}),
    ("slow_weights_are_not_still",
     [F("no_parameter_updates", 0.9, "critical", "learning_rate", where="lines 2-241"),
      F("lr_too_low", 0.7, "high", "weights", where="step_60.safetensors vs step_240.safetensors",
        artifact="step_240.safetensors")],
     ["lr_too_low", "no_parameter_updates"], {"lr_too_low": 0.9, "no_parameter_updates": 0.8}),
    ("low_lr_cannot_diverge",
     [F("lr_too_high", 0.75, "high", "loss", where="lines 18-300"), F("lr_too_low", 0.8, "high", "learning_rate")],
     ["lr_too_low", "lr_too_high"], {"lr_too_low": 0.8, "lr_too_high": 0.7}),
    ("lasting_gap_over_passing_spikes",
     [F("loss_spikes", 0.8, "medium", "loss", where="line 10"),
      F("overfitting", 0.78, "medium", "loss", where="line 11")],
     ["overfitting", "loss_spikes"], {"overfitting": 0.8, "loss_spikes": 0.7}),
    ("fault_outranks_health",
     [F("healthy", 0.6, "info", "excerpt", where="lines 1-4"), F("overfitting", 0.3, "medium", "excerpt")],
     ["overfitting"], {"overfitting": 0.3}),
]


def _codes(causes):
    return [c.code for c in causes]


@pytest.mark.parametrize("rule,findings,order,confidences", TABLE, ids=[row[0] for row in TABLE])
def test_rule_decides_its_case(rule, findings, order, confidences):
    ranked = combine(copy.deepcopy(findings))
    assert _codes(ranked) == order
    assert {c.code: c.confidence for c in ranked if c.code in confidences} == confidences
    # the rule named is the one that decides: without it, the ranking or the confidences differ
    without = combine(copy.deepcopy(findings), rules=tuple(r for r in RULES if r.__name__ != rule))
    assert ([(c.code, c.confidence) for c in without] != [(c.code, c.confidence) for c in ranked]), rule


def test_every_rule_is_in_the_table_and_says_what_it_weighs():
    assert {r.__name__ for r in RULES} - {"spikes_inside_divergence"} <= {row[0] for row in TABLE}
    assert all(r.__doc__ and len(r.__doc__.split()) >= 10 for r in RULES)


def test_spikes_inside_a_divergence_are_cited_there():
    lr = F("lr_too_high", 0.55, "high", "loss", 50, "lines 50-90")
    spk = F("loss_spikes", 0.5, "low", "loss", 60, "line 60")
    ranked = combine([lr, spk])
    assert "loss_spikes evidence" in [e.text for e in ranked[0].evidence]


@pytest.mark.parametrize("rule,findings,order,confidences", TABLE, ids=[row[0] for row in TABLE])
def test_ranking_invents_no_cause_and_keeps_each_alternatives_own_evidence(rule, findings, order, confidences):
    ranked = combine(copy.deepcopy(findings))
    assert set(_codes(ranked)) <= {f.code for f in findings}
    for c in ranked:
        assert f"{c.code} evidence" in [e.text for e in c.evidence], c.code


def test_the_question_breaks_ties_but_is_never_evidence():
    a, b = F("overfitting", 0.6, "medium", "excerpt"), F("lr_too_high", 0.6, "medium", "excerpt")
    plain = combine(copy.deepcopy([a, b]))
    asked = combine(copy.deepcopy([a, b]), ["why did it diverge?"])
    assert [c.confidence for c in asked] == [c.confidence for c in plain] == [0.6, 0.6]
    assert _codes(asked)[0] == "lr_too_high"
    weaker = combine([F("overfitting", 0.65, "medium", "excerpt"), F("lr_too_high", 0.6, "medium", "excerpt")],
                     ["why did it diverge?"])
    assert _codes(weaker)[0] == "overfitting"      # a symptom does not outweigh evidence


def test_tell_apart_names_the_number_that_separates_the_leaders():
    ranked = combine([F("numerical_instability", 0.6, "critical", "excerpt", 5),
                      F("lr_too_high", 0.45, "high", "excerpt", 5)])
    text = tell_apart(ranked)
    assert text.startswith("To tell numerical_instability from lr_too_high") and "1e-3" in text
    assert all(c.settle for c in ranked)
    one = combine([F("out_of_memory", 0.6, "critical", "crashes")])
    assert tell_apart(one).startswith("To confirm out_of_memory") and "batch size" in tell_apart(one)
    assert tell_apart([]) == ""


def test_a_rival_ruled_out_by_a_calm_lr_still_wins_with_an_lr_jump():
    """Gradients that rule the LR out do not overrule an LR raised right before the blow-up."""
    jump = F("lr_too_high", 0.92, "critical", "learning_rate", 100, "line 100")
    exp = dataclasses.replace(F("exploding_gradients", 0.8, "critical", "gradients", 1, "line 1"),
                              rules_out=("lr_too_high",))
    assert [c.code for c in combine([jump, exp])][0] == "lr_too_high"


def test_a_gradient_growth_over_long_before_an_lr_jump_is_not_its_consequence(tmp_path):
    # a real log: grad_norm grows from step 0 to 600 and holds, the LR goes x10 at step 2000
    import math

    from analysis.diagnose import diagnose

    lines = []
    for s in range(0, 3000, 10):
        g = math.exp(s / 60) if s < 600 else math.exp(10) * (1 + 0.05 * math.sin(s))
        loss = 2.0 * math.exp(-s / 500) + 0.3 if s < 2000 else 0.3 + (s - 2000) / 100
        lines.append(f"step {s} loss={loss:.4f} grad_norm={g:.4g} lr={1e-3 if s < 2000 else 1e-2:g}\n")
    (tmp_path / "train.log").write_text("".join(lines))
    d, _ = diagnose(tmp_path)
    grads = [c for c in d.root_causes if c.code == "exploding_gradients"]
    assert grads and grads[0].severity in ("critical", "high")


def test_a_faded_signal_leads_units_that_no_input_reaches():
    """Units off for every input because the input's signal faded on the way (the gradients'
    analyzer rules dead ReLUs out when the checkpoint shows the fade) are vanishing gradients; the
    dead units stay listed as the alternative, with their own evidence. Without the fade, the dead
    units lead."""
    dead = F("dead_relu", 0.85, "high", "weights", where="tensor 0.weight", artifact="model.safetensors")
    faded = dataclasses.replace(F("vanishing_gradients", 0.8, "high", "gradients", where="tensor 12.weight",
                                  artifact="model.safetensors"), rules_out=("dead_relu",))
    ranked = combine(copy.deepcopy([dead, faded, F("data_pipeline_bug", 0.5, "medium")]))
    assert _codes(ranked) == ["vanishing_gradients", "dead_relu", "data_pipeline_bug"]
    assert ranked[0].confidence == 0.85 and ranked[1].confidence == 0.75
    plain = dataclasses.replace(faded, rules_out=())
    assert _codes(combine(copy.deepcopy([dead, plain])))[0] == "dead_relu"
