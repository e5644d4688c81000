"""The confidence map: fitted on first-sight runs or on out-of-suite probes (bench/calibrate.py),
stored as data, applied to every diagnosis."""
import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from analysis.calibration import DATA, calibrated, thin_paste
from tests.scenarios import FAMILIES

ROOT = Path(__file__).resolve().parents[1]


def _calibrate_module():
    spec = importlib.util.spec_from_file_location("calibrate", ROOT / "bench" / "calibrate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["calibrate"] = mod      # a dataclass looks its module up while it is built
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("pairs,prior,knots", [
    # a level right every time is pulled toward its raw confidence, not to 1.0
    ([(0.8, True)] * 4, 4.0, [(0.8, 0.9, 4)]),
    # a higher level that is right less often than a lower one: pooled (isotonic)
    ([(0.7, True)] * 2 + [(0.9, False)] * 2, 0.0, [(0.8, 0.5, 4)]),
    # 0.8 and 0.7999 are one level; ordered levels stay apart
    ([(0.8, True), (0.7999, False), (0.9, True)], 0.0, [(0.8, 0.5, 2), (0.9, 1.0, 1)]),
])
def test_fit_is_isotonic_and_shrunk(pairs, prior, knots):
    assert _calibrate_module().fit(pairs, prior) == knots


def test_held_out_scores_say_when_shrinking_helps_a_new_group():
    mod = _calibrate_module()
    # every group finds the raw level 0.6 always right: the unshrunk map predicts the group left out
    agree = mod.held_out_scores([[(0.6, True)] * 5] * 3)
    assert agree[0.0] == 0.0 and all(agree[p] > 0 for p in mod.PRIORS[1:])
    # groups that contradict each other at one level: each predicts the other badly unless the
    # blocks are pulled hard toward the raw level
    contradict = mod.held_out_scores([[(0.5, True)] * 4, [(0.5, False)] * 4])
    assert contradict[0.0] == 1.0 and min(contradict, key=contradict.get) == max(mod.PRIORS)


def test_a_family_written_name_slash_n_counts_its_first_runs():
    mod = _calibrate_module()
    fams = {f.name: f for f in FAMILIES}
    fam = next(f for f in FAMILIES if f.split == "tuning" and len(f.variants) > 1)
    assert mod.first_runs(fams, fam.name) == list(fam.writers())
    assert mod.first_runs(fams, f"{fam.name}/1") == list(fam.writers())[:1]


def test_stored_map_names_its_command_and_only_tuning_families():
    text = DATA.read_text()
    data = tomllib.loads(text)
    split = {f.name: f.split for f in FAMILIES}
    if "probes" in data:
        assert "python bench/calibrate.py --probes" in text and "must NEVER be tuned on" in text
        assert data["probes"]["shifts"] and _calibrate_module().RESERVED not in data["probes"]["shifts"]
        families = data["probes"]["families"]
    else:
        assert "python bench/calibrate.py --group" in text
        families = [name.partition("/")[0] for group in data["groups"] for name in group["families"]]
    assert families and all(split[name] == "tuning" for name in families)
    raws = [k[0] for k in data["knots"]]
    cals = [k[1] for k in data["knots"]]
    assert raws == sorted(raws) and cals == sorted(cals)


def test_map_is_monotone_and_keeps_unmeasured_low_levels():
    xs = [i / 100 for i in range(101)]
    ys = [calibrated(x) for x in xs]
    assert all(a <= b for a, b in zip(ys, ys[1:]))
    lowest = tomllib.loads(DATA.read_text())["knots"][0]
    unmeasured = round(min(lowest[0], lowest[1]) / 2, 2)     # under the lowest knot: kept as it is
    assert calibrated(unmeasured) == unmeasured
    assert calibrated(lowest[0]) == round(lowest[1], 2) and calibrated(1.0) == 1.0


def test_a_thin_paste_keeps_its_own_map_and_a_refit_carries_it_over(tmp_path, scenario):
    from analysis.diagnose import diagnose
    from analysis.ingest import load_run
    paste = tomllib.loads(DATA.read_text())["paste"]["knots"]
    ys = [calibrated(i / 100, paste=True) for i in range(101)]
    assert all(a <= b for a, b in zip(ys, ys[1:])) and calibrated(paste[0][0], paste=True) == round(paste[0][1], 2)
    # one Keras epoch pasted (kerastuner #167, tests/wild tune half): a paste, read through its own knots
    (tmp_path / "train.log").write_text("Epoch 50/50\n45000/45000 [====] - 449s 10ms/sample - loss: 0.0350 - "
                                        "acc: 0.9890 - val_loss: 1.6329 - val_acc: 0.7362\n")
    d, run = diagnose(tmp_path)
    assert thin_paste(run) and d.root_causes[0].confidence == calibrated(d.root_causes[0].raw_confidence, paste=True)
    assert not thin_paste(load_run(scenario("lr_above_range_2")))          # a run folder
    assert "[paste]" in "\n".join(_calibrate_module().paste_section())


def test_calibrate_refuses_measuring_families(monkeypatch):
    mod = _calibrate_module()
    measuring = next(f.name for f in FAMILIES if f.split == "measuring")
    monkeypatch.setattr("sys.argv", ["calibrate.py", "--group", f"HEAD:{measuring}"])
    with pytest.raises(SystemExit, match="never looked at"):
        mod.main()


def test_probes_are_tuning_variants_the_suite_does_not_hold():
    mod = _calibrate_module()
    suite = {(f.name, v) for f in FAMILIES for v in f.variants}
    tuned = {(p.family, p.variant) for p in mod.probes([mod.RESERVED])}
    split = {f.name: f.split for f in FAMILIES}
    got = mod.probes([2, 3])
    assert got and all(split[p.family] == "tuning" for p in got)
    assert not {(p.family, p.variant) for p in got} & (suite | tuned)
    assert len({p.folder for p in got}) == len(got)
    # the run's folder names neither the family nor the code
    assert not any(p.family in str(p.folder) or p.code in str(p.folder) for p in got)


def test_calibrate_refuses_the_tuning_shift(monkeypatch):
    mod = _calibrate_module()
    monkeypatch.setattr("sys.argv", ["calibrate.py", "--probes", f"2,{mod.RESERVED}"])
    with pytest.raises(SystemExit, match="tuned on"):
        mod.main()
