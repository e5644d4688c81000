"""The scenario suite itself: the fault must be found from the evidence, never read off a label."""
import re

from tests.scenarios import SCENARIOS, cache_all

CODES = sorted({code for _, code in SCENARIOS.values() if code != "healthy"})
TELLS = re.compile("|".join(CODES + [r"\bexploding", r"\bvanishing", "overfit", "collapse", "corrupt", "shuffl",
                                     r"\bleak", r"\bfault\b", "inject", "diverg", r"\bdead\b", r"\bbug\b", "instab",
                                     "imbalanc", "spike", "chance"]), re.I)


def test_suite_covers_every_code_twice_and_healthy_runs():
    per_code = {}
    for writer, code in SCENARIOS.values():
        per_code.setdefault(code, set()).add(writer.__name__)
    assert all(len(writers) >= 2 for writers in per_code.values()), per_code
    assert len(per_code["healthy"]) >= 4


def test_no_artifact_names_its_fault():
    for name, folder in cache_all().items():
        assert not TELLS.search(folder.name), (name, folder.name)    # the folder names the run
        for f in folder.rglob("*"):
            if not f.is_file():
                continue
            rel = str(f.relative_to(folder))
            assert not TELLS.search(rel), (name, rel)
            try:
                text = f.read_text()
            except UnicodeDecodeError:
                continue
            hit = TELLS.search(text)
            assert hit is None, (name, rel, text[max(0, hit.start() - 60): hit.end() + 20])
