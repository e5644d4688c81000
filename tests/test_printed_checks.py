"""The checks a reporter ran and pasted with their answers (analysis/analyzers/printed_checks.py)."""
from __future__ import annotations

import pytest

from analysis.analyzers import printed_checks
from analysis.diagnose import diagnose


def _diagnose(tmp_path, text: str, name: str = "output.txt"):
    (tmp_path / name).write_text(text)
    d, _ = diagnose(tmp_path)
    return d


def _ours(d) -> list[str]:
    return [c.code for c in d.root_causes if c.analyzer == printed_checks.NAME]


# neuralhydrology #8 (tests/wild neuralhydrology-nan-static-attributes-8, tune half): NaN in the
# static attributes; the reporter counted them in ipdb
NEURALHYDROLOGY = ("RuntimeError: Loss was NaN for 1 times in a row. Stopped training.\n\n"
                   'ipdb> torch.isnan(data["y"]).sum()\n'
                   "tensor(2994, device='cuda:0')\n")

# pytorch #795 (tests/wild pytorch-log-softmax-nan-large-input-795, tune half): log_softmax of a finite
# input came out NaN
LOG_SOFTMAX = ("ipdb> np.isnan(input.data.cpu().numpy()).sum()\n0\n"
               "ipdb> np.isnan((F.log_softmax(input).data.cpu().numpy())).sum()\n7733\n"
               "ipdb> np.isnan((F.softmax(input).data.cpu().numpy())).sum()\n0\n")

# google-deepmind graphcast #118 (tests/wild gencast-grads-only-params-unchanged-118, tune half)
GENCAST = "".join(f'print(np.array_equal(ckpt.params["mlp/~/linear_{i}"]["w"], params["mlp/~/linear_{i}"]["w"]))\n'
                  for i in range(3)) + "\nTrue\nTrue\nTrue\n"


def test_a_nan_count_in_the_data_is_a_data_bug_first(tmp_path):
    d = _diagnose(tmp_path, NEURALHYDROLOGY)
    top = d.root_causes[0]
    assert top.code == "data_pipeline_bug" and top.analyzer == printed_checks.NAME
    assert top.evidence[0].locator == "line 3" and "2994" in top.evidence[0].text


def test_finite_inputs_made_nan_by_one_operation_is_its_numerics(tmp_path):
    d = _diagnose(tmp_path, LOG_SOFTMAX)
    top = d.root_causes[0]
    assert top.code == "numerical_instability" and top.analyzer == printed_checks.NAME
    assert [e.locator for e in top.evidence] == ["line 1", "line 3"]
    assert "data_pipeline_bug" not in _ours(d)


def test_parameters_equal_after_training_are_not_updated(tmp_path):
    d = _diagnose(tmp_path, GENCAST)
    assert d.root_causes[0].code == "no_parameter_updates"
    assert "3 of 3" in d.root_causes[0].issue


def test_one_parameter_that_changed_says_training_ran(tmp_path):
    d = _diagnose(tmp_path, GENCAST.replace("True\nTrue\nTrue", "True\nFalse\nTrue"))
    assert "no_parameter_updates" not in _ours(d)


def test_clean_data_alone_and_a_nan_loss_count_say_nothing_here(tmp_path):
    # a clean count on the data with no operation shown, and a count on the loss (the loss's own NaN is
    # read elsewhere): no reading of this module
    d = _diagnose(tmp_path, "ipdb> torch.isnan(inputs).any()\ntensor(False)\n"
                            "ipdb> torch.isnan(loss).sum()\ntensor(1)\n")
    assert _ours(d) == []


def test_a_check_without_its_answer_says_nothing(tmp_path):
    d = _diagnose(tmp_path, 'ipdb> torch.isnan(data["x"]).sum()\n*** NameError: name \'data\' is not defined\n')
    assert _ours(d) == []


def test_isfinite_all_false_on_the_inputs_is_a_data_bug(tmp_path):
    d = _diagnose(tmp_path, ">>> torch.isfinite(batch).all()\ntensor(False)\n")
    assert _ours(d) == ["data_pipeline_bug"]


def test_a_long_line_costs_linear_time(tmp_path):
    import time
    # lines under the length cap, each as hostile as it can be for the readers: open parentheses, a check's
    # start repeated, answer-shaped digits
    lines = ["ipdb> np.isnan(" + "(" * 380, "print(torch.equal(" + "w0," * 120, "9" * 399, ">>> " + "isnan(" * 60]
    t = time.perf_counter()
    list(printed_checks._checks("\n".join(lines * 500) + "\n"))
    assert time.perf_counter() - t < 2.0


def test_each_check_takes_the_answer_on_its_own_next_line(tmp_path):
    # a check that failed (NameError) takes no later answer: the next check's answer is the next check's
    d = _diagnose(tmp_path, "ipdb> np.isnan(F.log_softmax(input).data.cpu().numpy()).sum()\n"
                            "*** NameError: name 'F' is not defined\n"
                            "ipdb> import torch.nn.functional as F\n" + LOG_SOFTMAX)
    assert _ours(d) == ["numerical_instability"]


def test_a_vector_answer_and_an_unrelated_number_say_nothing(tmp_path):
    d = _diagnose(tmp_path, ">>> torch.isnan(batch).any(dim=1)\ntensor([False, False, False, False])\n"
                            ">>> len(dataset)\n50000\n")
    assert _ours(d) == []


def test_guard_code_and_a_debuggers_source_echo_are_no_checks(tmp_path):
    d = _diagnose(tmp_path, "for batch in loader:\n    if torch.isnan(batch).any():\n        continue\n\n"
                            "num batches:\n1563\n")
    assert _ours(d) == []
    d = _diagnose(tmp_path, "-> if torch.isnan(inputs).any():\n(Pdb) p inputs.shape[0]\n32\n"
                            "(Pdb) p torch.isnan(inputs).any()\ntensor(False)\n")
    assert _ours(d) == []


@pytest.mark.parametrize("text", [
    ">>> (~torch.isnan(inputs)).all()\ntensor(True)\n",                     # negated: no NaN
    ">>> torch.isnan(inputs).logical_not().all()\ntensor(True)\n",
    ">>> not torch.equal(w0, model.fc.weight)\nTrue\n",                     # they changed
    ">>> torch.equal(model.state_dict()['fc.weight'], model2.state_dict()['fc.weight'])\nTrue\n",   # a reload
    ">>> torch.allclose(manual_grad_weight, layer.weight.grad, atol=1e-6)\nTrue\n",     # a gradient check
    "ipdb> torch.isnan(x).sum()\ntensor(512, device='cuda:0')\n",            # an activation, not the data
    ">>> torch.isnan(inputs).any()\ntensor(False)\n>>> torch.isnan(net(inputs)).any()\ntensor(True)\n",   # a model
])
def test_checks_that_say_no_fault_or_not_of_the_data_are_not_read_as_one(tmp_path, text):
    assert _ours(_diagnose(tmp_path, text)) == []


def test_a_converted_array_is_the_data_itself(tmp_path):
    d = _diagnose(tmp_path, ">>> np.isnan(X_train).sum()\n0\n>>> np.isnan(np.array(y_train)).sum()\n37\n")
    assert _ours(d) == ["data_pipeline_bug"]


def test_a_print_block_answers_one_to_one_or_not_at_all(tmp_path):
    # two checks, three answers: the block is not read
    text = ('print(np.array_equal(ckpt.params["a"], params["a"]))\n'
            'print(np.array_equal(ckpt.params["b"], params["b"]))\n\nTrue\nTrue\nTrue\n')
    assert _ours(_diagnose(tmp_path, text)) == []


def test_nan_in_the_data_beside_unchanged_weights_is_the_data_alone(tmp_path):
    d = _diagnose(tmp_path, ">>> torch.equal(w0, model.fc.weight)\nTrue\n"
                            '>>> torch.isnan(batch["input"]).sum()\ntensor(128)\n')
    assert _ours(d) == ["data_pipeline_bug"] and d.root_causes[0].code == "data_pipeline_bug"
