"""One taxonomy: the codes and severities in `analysis/model.py` are the team's TAXONOMY.md (kept
beside the repository, in `../shared/`), and the agent's submission schema offers exactly them."""
import os
import re
from pathlib import Path

import pytest

from analysis.model import CODES, SEVERITIES
from bot.agent.verify import SUBMIT

TAXONOMY = Path(os.environ.get("MLTD_TAXONOMY_MD") or Path(__file__).resolve().parents[2] / "shared" / "TAXONOMY.md")


@pytest.fixture
def taxonomy() -> str:
    if not TAXONOMY.is_file():
        pytest.skip(f"{TAXONOMY} is not beside this checkout (set MLTD_TAXONOMY_MD)")
    return TAXONOMY.read_text()


def test_the_codes_are_the_taxonomys_in_its_order(taxonomy):
    table = re.findall(r"^\| `([a-z_]+)` \|", taxonomy, re.M)
    assert tuple(table) == CODES


def test_the_severities_are_the_taxonomys(taxonomy):
    listed = re.search(r"`severity` \(([a-z, ]+)\)", taxonomy.replace("\n", " ").replace("  ", " "))
    assert listed and tuple(s.strip() for s in listed.group(1).split(",")) == SEVERITIES


def test_the_agent_may_submit_exactly_the_taxonomy():
    cause = SUBMIT["input_schema"]["properties"]["root_causes"]["items"]["properties"]
    assert tuple(cause["code"]["enum"]) == CODES and tuple(cause["severity"]["enum"]) == SEVERITIES
