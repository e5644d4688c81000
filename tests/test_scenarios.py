"""The scenario suite itself: broad enough, split once by generator, and the fault must be found from
the evidence, never read off a label. (The tuning set's hand-written scenarios are asserted one by one
in test_diagnose_e2e; the measuring set is measured by bench/accuracy.py, never asserted.)"""
import re
from collections import defaultdict
from pathlib import Path

from tests.scenarios import ALL, FAMILIES, GENERATOR, MEASURING, SCENARIOS, SPLIT, TUNING, cache_all
from tests.scenarios.grid import FORMATS

CODES = sorted({code for _, code in ALL.values() if code != "healthy"})
# codes the suite cannot produce on a CPU-only machine: none today (OOM is host memory, ranks use gloo)
NEEDS_A_GPU_OR_CLUSTER: set[str] = set()
TELLS = re.compile("|".join(CODES + [r"\bexploding", r"\bvanishing", "overfit", "collapse", "corrupt", "shuffl",
                                     r"\bleak", r"\bfault\b", "inject", "diverg", r"\bdead\b", r"\bbug\b", "instab",
                                     "imbalanc", "spike", "chance"]), re.I)
LONG = 100_000


def test_six_variants_per_code_and_ten_healthy_runs():
    per_code = defaultdict(list)
    for name, (_, code) in ALL.items():
        per_code[code].append(name)
    assert all(len(names) >= 6 for code, names in per_code.items() if code not in NEEDS_A_GPU_OR_CLUSTER), \
        {code: len(names) for code, names in per_code.items()}
    assert len(per_code["healthy"]) >= 10


def test_both_sets_hold_every_code():
    for split in (TUNING, MEASURING):
        assert {code for _, code in split.values()} == set(CODES) | {"healthy"}


def test_split_by_generator_once():
    assert set(SPLIT.values()) == {"tuning", "measuring"} and set(SPLIT) == set(ALL)
    assert all(SPLIT[name] == "tuning" for name in SCENARIOS)          # the hand-written ones are tuned on
    splits = defaultdict(set)
    for name, generator in GENERATOR.items():
        splits[generator].add(SPLIT[name])
    assert all(len(s) == 1 for s in splits.values()), splits
    # no writer function feeds two families in different sets
    by_fn = defaultdict(set)
    for fam in FAMILIES:
        by_fn[fam.fn].add(fam.split)
    assert all(len(s) == 1 for s in by_fn.values())


def test_measuring_generators_live_apart():
    """A measuring generator sits in a measuring_*.py module and nothing tuned on imports one, so that
    reading the tuning families never shows a measuring one."""
    for fam in FAMILIES:
        apart = fam.fn.__module__.rsplit(".", 1)[-1].startswith("measuring_")
        assert apart == (fam.split == "measuring"), (fam.name, fam.fn.__module__)
    root = Path(__file__).resolve().parents[1]
    allowed = {root / "tests" / "scenarios" / "__init__.py", Path(__file__).resolve()}
    for f in [*root.joinpath("tests").rglob("*.py"), *root.joinpath("bench").glob("*.py"),
              *root.joinpath("analysis").rglob("*.py")]:
        if f not in allowed and not f.name.startswith("measuring_") and ".scenario-cache" not in f.parts:
            assert not re.search(r"\bmeasuring_\w+\b", f.read_text()), f


def test_variants_vary_and_folders_are_unique():
    variants = [v for fam in FAMILIES for v in fam.variants]
    assert {v.arch for v in variants} >= {"mlp", "cnn", "lstm", "lm", "regression"}
    assert {v.opt for v in variants} >= {"sgd", "momentum", "adam", "adamw", "rmsprop"}
    assert {v.sched for v in variants} >= {"constant", "step", "cosine", "warmup"}
    assert {v.fmt for v in variants} >= set(FORMATS)
    folders = [writer.__name__ for writer, _ in ALL.values()]
    assert len(folders) == len(set(folders))


def test_long_runs_in_both_sets():
    for split in ("tuning", "measuring"):
        long = [fam for fam in FAMILIES if fam.split == split and any(v.steps >= LONG for v in fam.variants)]
        assert {fam.code for fam in long} - {"healthy"}, split


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
