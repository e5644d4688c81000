"""Does a reading survive a rewrite that keeps its meaning? The tuning half of tests/wild/ (never the measuring
half), each case the analyzers read right diagnosed again with its pasted text rewritten as another tool or
another paste would carry it.

    python bench/wild_rewrites.py                    # every rewrite (about 2.5 min each on 2 cores)
    python bench/wild_rewrites.py --rewrites crlf,quote

Prints, per rewrite, how many right cases flipped to a wrong answer, and the flips. A code file (`.py`) is kept
as it is. A rewrite that drops a line's evidence is no test of this: each here keeps every word and number.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.wild import WILD, diagnose, judge  # noqa: E402


def _lines(f: Callable[[str], str]) -> Callable[[str], str]:
    def rewrite(text: str) -> str:
        body, end = (text[:-1], "\n") if text.endswith("\n") else (text, "")
        return "\n".join(f(ln) if ln.strip() else ln for ln in body.split("\n")) + end
    return rewrite


_VALUE = r"(?=[-+]?\.?\d|nan|inf)"
REWRITES: dict[str, Callable[[str], str]] = {
    "rank": _lines(lambda ln: "[rank0]: " + ln),                          # torchrun's prefix
    "quote": _lines(lambda ln: "> " + ln),                                # a Markdown quote
    "stamp": _lines(lambda ln: "2024-05-01 12:00:00,123 - INFO - " + ln),  # a logger's timestamp and level
    "crlf": lambda t: t.replace("\n", "\r\n"),                            # saved on Windows
    "blank": lambda t: t.replace("\n", "\n\n"),                           # a paste that doubled its line ends
    "equals": _lines(lambda ln: re.sub(rf"([A-Za-z_)\]])[ \t]*:[ \t]+{_VALUE}", r"\1=", ln)),
    "capital": _lines(lambda ln: re.sub(rf"\b([a-z])(\w*)(?=[ \t]*[:=][ \t]*{_VALUE})",
                                        lambda m: m.group(1).upper() + m.group(2), ln)),
    "scientific": _lines(lambda ln: re.sub(r"(?<![\w.])(\d+\.\d{3,})(?![\w.])",
                                           lambda m: f"{float(m.group(1)):.6e}", ln)),
    "wrap80": _lines(lambda ln: "\n".join(ln[i:i + 80] for i in range(0, len(ln), 80))),
}


def _rewritten(case: Path, rewrite: Callable[[str], str], tmp: Path) -> Path:
    out = tmp / case.name
    shutil.copytree(case, out)
    for f in out.iterdir():
        if f.is_file() and f.suffix != ".py":
            f.write_bytes(rewrite(f.read_text(encoding="utf-8", errors="replace")).encode())
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rewrites", default=",".join(REWRITES), help="comma-separated: " + ", ".join(REWRITES))
    args = p.parse_args()
    labels = [lab for lab in json.loads((WILD / "labels.json").read_text()) if lab["split"] == "tune"]
    with ThreadPoolExecutor(2) as ex:
        right = [lab for lab, r in zip(labels, ex.map(lambda lab: judge(lab, diagnose(WILD / "cases" / lab["id"])),
                                                       labels)) if r["top1"]]
    print(f"tuning half: {len(right)}/{len(labels)} right as pasted")
    for name in args.rewrites.split(","):
        with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as ex:
            rows = list(ex.map(lambda lab: judge(lab, diagnose(_rewritten(WILD / "cases" / lab["id"],
                                                                          REWRITES[name], Path(tmp)))), right))
        flips = [r for r in rows if not r["top1"]]
        print(f"{name:11} {len(flips):3}/{len(right)} flipped")
        for r in flips:
            print(f"   flip {r['id']:50} want {r['want']:22} got {r['got']}")


if __name__ == "__main__":
    main()
