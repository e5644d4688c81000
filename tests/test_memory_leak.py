"""Memory that grows step over step (analysis/analyzers/memory.py), in a run's length of reports and in
the few a paste shows."""
from __future__ import annotations

from analysis.diagnose import diagnose


def _diagnose(tmp_path, values: list[float]):
    lines = []
    for i, v in enumerate(values):
        lines += [f"iter: {i} memory_allocated: {v}", ""]
    (tmp_path / "output.txt").write_text("\n".join(lines))
    d, _ = diagnose(tmp_path)
    return d


def test_a_few_iterations_that_each_add_the_same_memory_are_a_leak(tmp_path):
    # sentence-transformers #3204 (tests/wild sentence-transformers-trainer-gpu-memory-leak-accelerate-fix-3204,
    # tune half): ~0.25 GB more at every iteration, fixed by an accelerate upgrade
    d = _diagnose(tmp_path, [0.2649, 0.5132, 0.7610, 1.0093, 1.2576])
    top = d.root_causes[0]
    assert top.code == "out_of_memory" and "leak" in top.issue and "per step" in top.issue


def test_memory_that_settles_after_the_first_steps_is_no_leak(tmp_path):
    # the optimizer's state and the allocator's cache arrive in the first steps, then memory holds
    d = _diagnose(tmp_path, [0.26, 0.51, 0.76, 0.77, 0.77, 0.77])
    assert "out_of_memory" not in [c.code for c in d.root_causes]


def test_a_peak_that_climbs_unevenly_is_no_leak(tmp_path):
    # a max-memory field (mmdet's `memory:`) climbs as larger batches come, by uneven amounts
    d = _diagnose(tmp_path, [3000, 3900, 4000, 4350, 6500])
    assert "out_of_memory" not in [c.code for c in d.root_causes]
