"""Fit the confidence map (analysis/data/calibration.toml) on first-sight outcomes.

A map fitted on runs the rules were tuned on only learns that they are right (the tuning set is
100% by construction), so it would push every confidence up. What a confidence should mean is how
often the top cause is right on a run of a shape the rules have not seen. That is measured here
the only honest way the tuning set allows: the rules as they were *before* some tuning families
existed (a git ref) diagnose those families' runs, which they had never been fitted
to. The (raw top confidence, right?) pairs are fitted with isotonic regression (pool adjacent
violators), each block shrunk toward its own mean raw confidence by `--prior` pseudo-runs, so a
block of a few runs cannot swing the map to 0 or 1. The map is for predicting a batch of families
it was not fitted on, so the header also says, for each prior of PRIORS, how well the map fitted on
all groups but one predicts the group left out (Brier score): on 229 runs it hardly moves
(0.110-0.111 from 0 to 32 pseudo-runs), so the prior stays at 4 for what it is for, the small blocks
at the ends.

    python bench/calibrate.py \
        --group a44f084:wide_init_start,explodes_late,lr_below_range,saturating_stack,lr_above_range,restarts_noise \
        --group f22a5ea:residual_unnormalised,loss_summed/4,...

Each `--group REF:FAMILIES` names the rules as they were before those families existed; the groups'
first-sight pairs are pooled into one fit. A family written `name/N` counts its first N runs only:
the ones it held when those rules first saw it; runs appended later, each beside the rule change
that caught it, were chosen for being missed and are no sample of new shapes.

Only tuning families are accepted: a measuring run is never looked at one by one.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.calibration import through  # noqa: E402
from tests.scenarios import ALL, FAMILIES, cached  # noqa: E402

OUT = ROOT / "analysis" / "data" / "calibration.toml"
ALARM = ("critical", "high")
PRIORS = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)      # pseudo-runs toward the raw level, scored held out
RUN = "import sys; sys.path.insert(0, sys.argv[1]); from handlers.cli import main; sys.exit(main(sys.argv[2:]))"


def export_rules(ref: str, dest: Path) -> None:
    """The engine (analysis, bot, handlers) as it was at `ref`, with its own C scanners built: the
    Python twins are ~100x slower, and a log the time budget cut short would not be the ref's reading."""
    archive = subprocess.run(["git", "archive", ref, "analysis", "bot", "handlers", "setup.py"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    # the raw confidences are what is fitted: a map the rules at `ref` already carried comes off
    (dest / "analysis" / "data" / "calibration.toml").unlink(missing_ok=True)
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=dest, check=True,
                   capture_output=True)


def first_runs(fams: dict, spec: str) -> list[str]:
    """The runs of family `name`, or of `name/N` its first N (those it held at first sight)."""
    name, _, n = spec.partition("/")
    runs = list(fams[name].writers())
    return runs[:int(n)] if n else runs


def first_sight(rules: Path, name: str) -> tuple[float, bool]:
    out = subprocess.run([sys.executable, "-c", RUN, str(rules), "diagnose", str(cached(name)), "--format", "json"],
                         capture_output=True, text=True, cwd=rules)
    if out.returncode != 0:
        raise SystemExit(f"diagnose {name} exited {out.returncode}: {out.stderr[-400:]}")
    causes = json.loads(out.stdout)["root_causes"]
    expected = ALL[name][1]
    got = causes[0]["code"] if causes else "(none)"
    alarm = expected == "healthy" and (got != "healthy" or any(c["severity"] in ALARM for c in causes))
    return (causes[0]["confidence"] if causes else 0.0), got == expected and not alarm


def fit(pairs: list[tuple[float, bool]], prior: float) -> list[tuple[float, float, int]]:
    """Isotonic blocks over the raw confidence: (mean raw confidence, calibrated, runs), each
    block's accuracy shrunk toward its mean raw confidence by `prior` pseudo-runs."""
    blocks: list[list[float]] = []     # [sum raw, sum right, n]
    for raw, right in sorted((round(raw, 2), right) for raw, right in pairs):     # 0.8 and 0.7999 are one level
        if blocks and round(blocks[-1][0] / blocks[-1][2], 2) == raw:
            b = blocks[-1]
            b[0], b[1], b[2] = b[0] + raw, b[1] + right, b[2] + 1
        else:
            blocks.append([raw, float(right), 1])

    def value(b: list[float]) -> float:
        return (b[1] + prior * b[0] / b[2]) / (b[2] + prior)

    merged: list[list[float]] = []
    for b in blocks:
        merged.append(b)
        while len(merged) > 1 and value(merged[-2]) >= value(merged[-1]):
            top = merged.pop()
            merged[-1] = [merged[-1][i] + top[i] for i in range(3)]
    return [(round(b[0] / b[2], 4), round(value(b), 4), int(b[2])) for b in merged]


def held_out_brier(groups: list[list[tuple[float, bool]]], prior: float) -> float:
    """The mean Brier score of each group's runs under the map fitted on the other groups: how well a
    map said what a new batch of families (the next group, or the measuring set) would score."""
    scores = []
    for i, held in enumerate(groups):
        knots = [(raw, cal) for raw, cal, _ in fit([p for j, g in enumerate(groups) if j != i for p in g], prior)]
        scores += [(through(knots, raw) - right) ** 2 for raw, right in held]
    return sum(scores) / len(scores)


def held_out_scores(groups: list[list[tuple[float, bool]]]) -> dict[float, float]:
    """`held_out_brier` for each prior of PRIORS: how much the prior matters to a new batch of families."""
    return {p: round(held_out_brier(groups, p), 4) for p in PRIORS}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--group", action="append", required=True, metavar="REF:FAMILIES",
                    help="a git ref of the rules before the families existed, and those tuning families "
                         "(comma-separated); repeat for families added at different times")
    ap.add_argument("--prior", type=float, default=4.0, help="pseudo-runs pulling a block toward its raw confidence")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    groups = [(ref, fams.split(",")) for ref, _, fams in (g.partition(":") for g in args.group)]
    fams = {f.name: f for f in FAMILIES}
    wanted = [n.partition("/")[0] for _, names in groups for n in names]
    unknown = [n for n in wanted if n not in fams]
    if unknown:
        raise SystemExit(f"unknown families: {', '.join(unknown)}")
    measuring = [n for n in wanted if fams[n].split != "tuning"]
    if measuring:
        raise SystemExit(f"measuring families are never looked at one by one: {', '.join(measuring)}")
    by_group: list[list[tuple[float, bool]]] = []
    sighted: list[int] = []
    for ref, names in groups:
        runs = [name for n in names for name in first_runs(fams, n)]
        with tempfile.TemporaryDirectory() as tmp:
            export_rules(ref, Path(tmp))
            with ThreadPoolExecutor(args.jobs) as pool:
                got = list(pool.map(lambda n: first_sight(Path(tmp), n), runs))
        print(f"{ref}: {len(got)} first-sight runs, {sum(r for _, r in got)} right", file=sys.stderr)
        sighted.append(len(got))
        by_group.append([(raw, right) for raw, right in got if raw > 0])     # no cause named: no confidence to map
    pairs = [p for g in by_group for p in g]
    held_out = ", ".join(f"{p:g}: {b}" for p, b in held_out_scores(by_group).items())
    knots = fit(pairs, args.prior)
    right = sum(r for _, r in pairs)
    lines = [
        "# The top cause's confidence, mapped to how often a cause given it was right on runs of shapes the",
        "# rules had never been fitted to (analysis/calibration.py interpolates between the knots).",
        "# Written by:",
        "#   python bench/calibrate.py " + " ".join(f"--group {g}" for g in args.group)
        + (f" --prior {args.prior:g}" if args.prior != 4.0 else ""),
        f"# {len(pairs)} first-sight runs, {right} right at top-1 ({right / len(pairs):.3f}); mean raw confidence "
        f"{sum(c for c, _ in pairs) / len(pairs):.3f}.",
        "",
        f"# Each group predicted by the map fitted on the others, mean Brier score by prior: {held_out}.",
        f"prior = {args.prior:g}",
        "# [raw confidence (block mean), calibrated, runs in the block]",
        "knots = [",
        *[f"    [{raw}, {cal}, {n}]," for raw, cal, n in knots],
        "]",
        "",
        "# the rules each group of first-sight families was diagnosed with; its runs and how many were right",
        *[line for (ref, names), n, got in zip(groups, sighted, by_group)
          for line in ("[[groups]]", f'rules = "{ref}"', f"families = {json.dumps(names)}",
                       f"runs = {n}", f"right = {sum(r for _, r in got)}", "")],
    ]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
