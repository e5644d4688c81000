"""Every hostile run folder of tests/hostile.py, through the real CLI in a child process: exit 0
or 2, valid JSON, the artifact named with its reason (or read, when the fix is to read it), under
15 s and 1 GB of peak RSS, and nothing outside the run read or reported."""
import json

import pytest

from tests import hostile


@pytest.mark.parametrize("name", list(hostile.CASES))
def test_hostile_run_folder(tmp_path, name):
    canaries = hostile.plant_canary(tmp_path / "outside")
    case = hostile.CASES[name](tmp_path)
    try:
        out = hostile.diagnose_in_child(case.run)
    finally:
        hostile.remove_tree(case.run)

    assert out.rc in (0, 2), out.stderr[-500:]
    assert "Traceback" not in out.stdout + out.stderr
    doc = json.loads(out.stdout)
    said = hostile.reason_for(doc, case.artifact)
    if case.reason:
        assert said is not None and case.reason in said.lower(), said
    else:                   # the fix is to read it: no problem reported on it
        art = next(a for a in doc["run"]["artifacts"] if a["path"] == case.artifact)
        assert "problem" not in art, art
    good = [a for a in doc["run"]["artifacts"] if a["path"] == "train.log" != case.artifact]
    assert all("problem" not in a for a in good), good        # the rest of the run is still read
    assert out.wall_s < hostile.TIME_LIMIT_S and not out.killed, (out.wall_s, out.killed)
    assert out.peak_mb < hostile.RSS_LIMIT_MB, out.peak_mb
    assert hostile.canary_read(canaries) == []
    text = out.stdout + out.stderr
    assert hostile.CANARY not in text and "canary_tensor" not in text and str(tmp_path / "outside") not in text
    assert "header length" not in text


def test_the_canary_detects_a_read(tmp_path):
    """The atime trick works on this file system: without it the test above could not fail."""
    canaries = hostile.plant_canary(tmp_path / "outside")
    assert hostile.canary_read(canaries) == []
    canaries[0].read_text()
    assert hostile.canary_read(canaries) == [str(canaries[0])]
