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

    python bench/calibrate.py --probes 2,3

The second source, out-of-suite probes: first-sight runs measure old rules facing mechanisms they
were never given, so they say less of the current rules than the current rules deserve; the
question a confidence answers is how often the *current* rules are right on a run of a kind the
suite covers but that they have never seen. Each tuning family's first two variants are written
again under a probe shift s (seed + 100*s + j, the format moved 3*s + j along grid.FORMATS), by the
family's own writer (a variant whose generation check fails is skipped and counted), and diagnosed
by the rules at `--rules` (HEAD) with the map removed. Shift 1 is reserved for tuning; the shifts
fitted on (2 and 3) must never be tuned on, or the map measures a fit. The runs are cached in
tests/.probe-cache/<scenario code version>, so a refit does not retrain.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.calibration import through  # noqa: E402
from tests.scenarios import ALL, FAMILIES, _version, cached  # noqa: E402
from tests.scenarios.grid import FORMATS, Variant  # noqa: E402

OUT = ROOT / "analysis" / "data" / "calibration.toml"
PROBES = ROOT / "tests" / ".probe-cache"
RESERVED = 1          # the probe shift the rules are tuned on: never a calibration shift
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


def sight(rules: Path, run: Path, expected: str) -> tuple[float, bool]:
    """The top cause's confidence from the rules at `rules`, and whether it is right as bench/accuracy.py
    counts it: the expected code on top, and for a healthy run nothing critical or high."""
    out = subprocess.run([sys.executable, "-c", RUN, str(rules), "diagnose", str(run), "--format", "json"],
                         capture_output=True, text=True, cwd=rules)
    if out.returncode != 0:
        raise SystemExit(f"diagnose {run} exited {out.returncode}: {out.stderr[-400:]}")
    causes = json.loads(out.stdout)["root_causes"]
    got = causes[0]["code"] if causes else "(none)"
    alarm = expected == "healthy" and (got != "healthy" or any(c["severity"] in ALARM for c in causes))
    return (causes[0]["confidence"] if causes else 0.0), got == expected and not alarm


def first_sight(rules: Path, name: str) -> tuple[float, bool]:
    return sight(rules, cached(name), ALL[name][1])


@dataclass(frozen=True)
class Probe:
    """A tuning family's variant written again under a probe shift: a run of a kind the suite covers
    that no rule was tuned on (shift 1 excepted)."""
    family: str
    module: str          # the family's generator module: families added together, held out together
    code: str
    shift: int
    variant: Variant

    @property
    def folder(self) -> Path:
        """Keyed by the variant and the scenario code; the run's own folder is named like a writer's,
        saying nothing of the family or the code."""
        v = self.variant
        key = hashlib.sha256(f"{self.family}:{v!r}".encode()).hexdigest()[:10]
        return PROBES / _version() / key / f"{v.arch}_{v.opt}_{v.sched}_{v.fmt}_{v.seed}"


def probes(shifts: list[int]) -> list[Probe]:
    """Each tuning family's first two variants under each shift: another seed, another format (a
    variant in a format of its own, outside grid.FORMATS, such as per-rank logs, keeps it)."""
    out = []
    for fam in FAMILIES:
        if fam.split != "tuning":
            continue
        for shift in shifts:
            for j, v in enumerate(fam.variants[:2]):
                fmt = FORMATS[(FORMATS.index(v.fmt) + 3 * shift + j) % len(FORMATS)] if v.fmt in FORMATS else v.fmt
                out.append(Probe(fam.name, fam.fn.__module__.rpartition(".")[2], fam.code, shift,
                                 v.with_(seed=v.seed + 100 * shift + j, fmt=fmt)))
    return out


def _write_probe(family: str, variant: Variant, dest: Path) -> None:
    """Runs in a child interpreter (the writers set global torch flags and start processes): writes
    the run, or why its generation failed (a check the variant did not pass), beside it."""
    import torch

    torch.set_num_threads(1)       # the jobs run side by side: one core each
    fam = next(f for f in FAMILIES if f.name == family)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        fam.fn(tmp, variant)
    except Exception as exc:       # noqa: BLE001 - a variant that cannot be written is counted, not fatal
        shutil.rmtree(tmp)
        (dest.parent / "skipped").write_text(f"{type(exc).__name__}: {exc}"[:400])
        return
    tmp.rename(dest)
    (dest.parent / "complete").write_text("ok")


def written(probe: Probe) -> str | None:
    """None for a run written, else why it was skipped."""
    marks = probe.folder.parent
    return None if (marks / "complete").exists() else (marks / "skipped").read_text()


def write_probes(todo: list[Probe], jobs: int) -> None:
    missing = [p for p in todo if not any((p.folder.parent / m).exists() for m in ("complete", "skipped"))]
    if not missing:
        return
    print(f"writing {len(missing)} probe runs", file=sys.stderr)
    with ProcessPoolExecutor(max(1, min(jobs, len(missing))), mp_context=get_context("spawn")) as pool:
        list(pool.map(_write_probe, [p.family for p in missing], [p.variant for p in missing],
                      [p.folder for p in missing]))


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


def from_groups(args: argparse.Namespace) -> tuple[list[list[tuple[float, bool]]], list[str], list[str]]:
    """The first-sight pairs, one group per ref; what the header says of them, and the groups' table."""
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
    n = sum(map(len, by_group))
    header = ["# The top cause's confidence, mapped to how often a cause given it was right on runs of shapes the",
              "# rules had never been fitted to (analysis/calibration.py interpolates between the knots).",
              "# Written by:",
              "#   python bench/calibrate.py " + " ".join(f"--group {g}" for g in args.group)
              + (f" --prior {args.prior:g}" if args.prior != 4.0 else ""),
              f"# {n} first-sight runs, one group per ref."]
    table = ["# the rules each group of first-sight families was diagnosed with; its runs and how many were right",
             *[line for (ref, names), k, got in zip(groups, sighted, by_group)
               for line in ("[[groups]]", f'rules = "{ref}"', f"families = {json.dumps(names)}",
                            f"runs = {k}", f"right = {sum(r for _, r in got)}", "")]]
    return by_group, header, table


def from_probes(args: argparse.Namespace) -> tuple[list[list[tuple[float, bool]]], list[str], list[str]]:
    """The probe pairs, one group per generator module (families added together); what the header
    says of them, and the probes' table."""
    shifts = [int(s) for s in args.probes.split(",")]
    if RESERVED in shifts or any(s < 1 for s in shifts):
        raise SystemExit(f"probe shift {RESERVED} is the one the rules are tuned on, and shifts start at 1: "
                         "calibrate on others")
    todo = probes(shifts)
    write_probes(todo, args.jobs)
    skipped = {p: why for p in todo if (why := written(p)) is not None}
    runs = [p for p in todo if p not in skipped]
    sha = subprocess.run(["git", "rev-parse", "--short", args.rules], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        export_rules(args.rules, Path(tmp))
        with ThreadPoolExecutor(args.jobs) as pool:
            got = list(pool.map(lambda p: sight(Path(tmp), p.folder, p.code), runs))
    report(runs, got, skipped)
    checks = sum(why.startswith("RuntimeError: scenario check failed") for why in skipped.values())
    modules = sorted({p.module for p in runs})
    by_group = [[g for p, g in zip(runs, got) if p.module == m and g[0] > 0] for m in modules]
    right = sum(r for _, r in got)
    header = ["# The top cause's confidence, mapped to how often the current rules' top cause was right on",
              "# out-of-suite probes: runs of the kinds the suite covers, never seen by the rules",
              "# (analysis/calibration.py interpolates between the knots). Written by:",
              f"#   python bench/calibrate.py --probes {args.probes} --rules {args.rules}"
              + (f" --prior {args.prior:g}" if args.prior != 4.0 else ""),
              f"# Probe shifts {', '.join(map(str, shifts))} of every tuning family's first two variants j (seed + "
              "100*shift + j, the format",
              f"# moved 3*shift + j along grid.FORMATS), diagnosed by the rules at {sha} with the map removed.",
              f"# Shifts {', '.join(map(str, shifts))} must NEVER be tuned on (shift {RESERVED} is the tuning one): "
              "a map fitted on runs the",
              "# rules were tuned to measures a fit, not how often a confidence is right.",
              f"# {len(todo)} probes: {checks} skipped for a generation check the variant failed, "
              f"{len(skipped) - checks} that the writer",
              f"# could not write at all (a seed or format it has no setting for); {len(runs)} diagnosed, {right} "
              "right at top-1.",
              "# Held out: one generator module (families added together) at a time."]
    table = ["# the probes: rules, shifts, families (all tuning), runs diagnosed and right",
             "[probes]", f'rules = "{sha}"', f"shifts = {json.dumps(shifts)}",
             f"families = {json.dumps(sorted({p.family for p in todo}))}",
             f"skipped = {len(skipped)}", f"runs = {len(runs)}", f"right = {right}", ""]
    return by_group, header, table


def report(runs: list[Probe], got: list[tuple[float, bool]], skipped: dict[Probe, str]) -> None:
    """Counts per code, top-1 by raw-confidence bin, and the families the rules miss (stderr)."""
    def say(line: str) -> None:
        print(line, file=sys.stderr)

    say(f"probes: {len(runs) + len(skipped)}, skipped {len(skipped)}, diagnosed {len(runs)}")
    for p, why in skipped.items():
        say(f"  skipped {p.family} shift {p.shift} ({p.variant.fmt}, seed {p.variant.seed}): {why[:160]}")
    total, hits = Counter(p.code for p in runs), Counter(p.code for p, (_, r) in zip(runs, got) if r)
    gone = Counter(p.code for p in skipped)
    for code in sorted(total | gone):
        say(f"  {code:24s} {hits[code]}/{total[code]} right, {gone[code]} skipped")
    bins: dict[float, list[bool]] = {}
    for raw, r in got:
        bins.setdefault(min(int(raw * 10), 9) / 10, []).append(r)
    for lo in sorted(bins):
        hit, n = sum(bins[lo]), len(bins[lo])
        say(f"  raw [{lo:.1f}, {lo + 0.1:.1f}): {hit}/{n} right ({hit / n:.3f})")
    for p, (raw, r) in zip(runs, got):
        if not r:
            say(f"  wrong: {p.family} shift {p.shift} (expected {p.code}, raw top confidence {raw:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--group", action="append", metavar="REF:FAMILIES",
                     help="a git ref of the rules before the families existed, and those tuning families "
                          "(comma-separated); repeat for families added at different times")
    src.add_argument("--probes", metavar="SHIFTS", help="probe shifts to fit on (comma-separated; never 1)")
    ap.add_argument("--rules", default="HEAD", help="with --probes: the git ref of the rules that diagnose them")
    ap.add_argument("--prior", type=float, default=4.0, help="pseudo-runs pulling a block toward its raw confidence")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    by_group, header, table = from_probes(args) if args.probes else from_groups(args)
    pairs = [p for g in by_group for p in g]
    held_out = ", ".join(f"{p:g}: {b}" for p, b in held_out_scores(by_group).items())
    knots = fit(pairs, args.prior)
    right = sum(r for _, r in pairs)
    lines = [
        *header,
        f"# {len(pairs)} runs with a cause named, {right} right at top-1 ({right / len(pairs):.3f}); mean raw "
        f"confidence {sum(c for c, _ in pairs) / len(pairs):.3f}.",
        "",
        f"# Each group predicted by the map fitted on the others, mean Brier score by prior: {held_out}.",
        f"prior = {args.prior:g}",
        "# [raw confidence (block mean), calibrated, runs in the block]",
        "knots = [",
        *[f"    [{raw}, {cal}, {n}]," for raw, cal, n in knots],
        "]",
        "",
        *paste_section(),
        *table,
    ]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


def paste_section() -> list[str]:
    """The thin pastes' own knots (analysis/calibration.thin_paste), carried over unchanged: a fit on
    run folders says nothing of a few pasted lines."""
    doc = tomllib.loads(OUT.read_text()) if OUT.exists() else {}
    paste = doc.get("paste", {})
    if not paste.get("knots"):
        return []
    return ["# A thin paste (no config, no checkpoint, no curve of 12 points) keeps its own knots, carried over",
            f"# by each refit on run folders: {paste.get('source', 'see this file history')}.",
            "[paste]", f"source = {json.dumps(paste.get('source', ''))}",
            "knots = [", *[f"    {k}," for k in paste["knots"]], "]", ""]


if __name__ == "__main__":
    main()
