"""Do short pasted excerpts generalise? Perturb the tune half's faulty logs the way people paste
them and check the diagnosis holds (issue 14: "No short excerpt with a NaN, an OOM, a distributed
error or a rising loss gets 'no cause'").

    python bench/excerpts.py                      # tune-half wild cases, both parts of the seeds
    python bench/excerpts.py --scenarios          # + the tuning scenarios' text logs (cached runs)
    python bench/excerpts.py --show fix --kind synonyms   # the failing excerpts of the fix part

Sources: every faulty case of `tests/wild/` with `split: "tune"` (never the measuring half), and
with `--scenarios` the text logs of the scenarios in `tests.scenarios.TUNING` already in the cache.
Each source's first file is cut and dressed: a window of 3, 10 or 30 lines around its first
decisive line (the top cause's evidence line) with that line at a seeded place in it, a window at a
seeded offset, the head or the tail only, leading whitespace, `> ` quote markers, timestamps, ANSI
colours, a `[rank0]:` prefix, tabs for spaces, numbers reprinted (1e-3 / 0.001, more or fewer
digits), key names swapped for synonyms, a traceback cut to its last line. Each excerpt goes through
`analysis.diagnose.diagnose` (the library call `mltd diagnose` makes) in this process.

Printed per perturbation kind and per code: how often the original's top cause stays top-1 and
top-3 (`top-1`, `top-3`; `dec.1` over the excerpts that still hold the decisive line, and how many;
`undr.`: a dressed excerpt's top cause is that of the same lines undressed),
how often the label is top-1 (`label`), and how often an excerpt that still shows a NaN, an OOM, a
distributed error or a rising loss (read by this probe's own patterns, not the engine's: `must`)
gets no cause other than `healthy` (`none`). Seeds split the set: even seeds are the part one may
fix on, odd seeds the part only reported; an excerpt that is the same text as one of the fix part
is not counted again in the report part.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.diagnose import diagnose  # noqa: E402

WILD = ROOT / "tests" / "wild"
ALARM = ("critical", "high")
SEEDS = 10                    # per kind and source; even seeds: the fix part, odd: the report part
MAX_LINES = 200_000           # a scenario log longer than this is read only to here
CUTS = ("window3", "window10", "window30", "offset", "head", "tail", "last_line")
KINDS = ("window3", "window10", "window30", "offset", "head", "tail", "indent", "quote", "timestamp", "ansi",
         "rank", "tabs", "numbers", "synonyms", "last_line")

# What this probe counts as "must answer", by its own patterns (case-insensitive)
NAN = re.compile(r"(?<![A-Za-z])[-+]?(?:nan|inf|infinity)(?![A-Za-z])", re.I)
# a count of NaN steps that is 0 (Megatron's `number of nan iterations:   0`) shows no NaN
ZERO_COUNT = re.compile(r"(?<![A-Za-z_])(?:nan|inf)[ _](?:iterations?|iters?|steps?|batches|count)"
                         r"[ \t]*[:=][ \t]*0(?![\d.])", re.I)
OOM = re.compile(r"out of memory|CUBLAS_STATUS_ALLOC_FAILED|DefaultCPUAllocator|OOM|ResourceExhausted|"
                 r"exit(?:code| code|ed with code)[:= ]*(?:137|-9)|signal 9|SIGKILL|\bKilled\b", re.I)
# an error message, not a frame that passes through torch.distributed (a stack without its error line
# says where the program was, not what went wrong)
DIST = re.compile(r"NCCL (?:error|WARN|timeout)|nccl\w*Error|ChildFailedError|Address already in use|EADDRINUSE|"
                  r"store.based barrier|Timed out initializing process group|Socket ?Timeout|Watchdog caught|"
                  r"find_unused_parameters|reduction in the prior iteration|Rendezvous\w*Error|"
                  r"ProcessExitedException|exitcode\s*:\s*-?\d", re.I)
# a step in brackets after the name (`train_batch_loss[ 6510 ]:  1.57`) is taken whole, never read as the value
# (`loss: [0.523]` still is)
LOSS_NUM = re.compile(r"loss(?:\[\s*\d+\s*\]|(?!\[\s*\d+\s*\]))[^0-9a-z\-+.]{0,6}([-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?)",
                      re.I)

SYNONYMS = {      # key -> names people print for it (the list and their kin)
    "loss": ["Training Loss", "train loss", "total_loss", "loss_cls", "Loss", "train_loss"],
    "train_loss": ["Training Loss", "train loss", "loss", "total_loss"],
    "val_loss": ["validation loss", "Val Loss", "eval_loss", "valid_loss"],
    "acc": ["Accuracy score", "acc.", "accuracy", "Accuracy"],
    "accuracy": ["Accuracy score", "acc.", "acc"],
    "val_acc": ["val_accuracy", "Validation Accuracy", "eval_accuracy"],
    "val_accuracy": ["val_acc", "Validation Accuracy"],
    "grad_norm": ["gnorm", "grad norm", "total_norm"],
    "gnorm": ["grad_norm", "grad norm"],
    "lr": ["learning_rate", "LR", "learning rate"],
    "learning_rate": ["lr", "LR"],
}
# a key only where a value follows it (`loss: 2.3`, `loss=nan`, `loss 2.3`), never a word of prose
# (`setting loss scale to`)
SYN_RE = re.compile(r"(?<![\w./])(" + "|".join(sorted(map(re.escape, SYNONYMS), key=len, reverse=True))
                    + r")(?=[ \t]{0,3}[:=]?[ \t]{0,3}[-+]?(?:\d|\.\d|nan|inf))", re.I)
NUMBER = re.compile(r"(?<![\w.])([-+]?\d+\.\d+(?:[eE][-+]?\d+)?|[-+]?\d+(?:\.\d+)?[eE][-+]?\d+)(?![\w.])")
ANSI = ["\x1b[32m", "\x1b[1;31m", "\x1b[36m", "\x1b[0;33m"]
STAMPS = ["2024-03-01 10:22:{s:02d},{ms:03d} - INFO - ", "[2024-03-01 10:22:{s:02d}] ", "10:22:{s:02d} ",
          "I0301 10:22:{s:02d}.{ms:03d} 1234 train.py:88] ", "2024-03-01T10:22:{s:02d}.{ms:03d}Z "]


@dataclass
class Source:
    name: str          # wild case id or scenario name
    code: str          # the label (wild) or the scenario's injected fault
    alt: set[str]
    file: str          # the file name the excerpt keeps
    lines: list[str]
    top: str | None = None                        # the unperturbed source's top cause
    decisive: int = 0                             # 0-based index of its first decisive line


@dataclass
class Result:
    source: str
    code: str
    kind: str
    seed: int
    text: str
    must: list[str]
    top: str | None
    codes: list[str] = field(default_factory=list)
    decisive: bool = True      # the source's decisive line is in the excerpt (a cut may leave it out)
    plain: list[str] | None = None   # a dressed excerpt: the codes of the same lines undressed
    alarm: bool = False        # a cause other than healthy at critical or high severity


def _diagnose_text(name: str, text: str, memo: dict) -> tuple[list[str], bool]:
    """The codes, ranked, and whether any is an alarm (not healthy, critical or high)."""
    key = (name, text)
    if key not in memo:
        with tempfile.TemporaryDirectory(prefix="mltd-excerpt-") as tmp:
            (Path(tmp) / name).write_text(text)
            d, _ = diagnose(tmp)
        memo[key] = ([c.code for c in d.root_causes],
                     any(c.code != "healthy" and c.severity in ALARM for c in d.root_causes))
    return memo[key]


def _located_line(locator: str) -> int | None:
    m = re.match(r"lines? (\d+)", locator)
    return int(m.group(1)) - 1 if m else None


def _decisive(lines: list[str], evidence_lines: list[int]) -> int:
    """The first decisive line: the top cause's first located line, else the first line a NaN, an
    OOM or a distributed error shows in, else the first loss line, else the last line."""
    if evidence_lines:
        return min(max(0, i) for i in evidence_lines if i < len(lines)) if any(
            i < len(lines) for i in evidence_lines) else len(lines) - 1
    for i, ln in enumerate(lines):
        if NAN.search(ln) or OOM.search(ln) or DIST.search(ln) or "Error" in ln:
            return i
    return next((i for i, ln in enumerate(lines) if LOSS_NUM.search(ln)), len(lines) - 1)


def _ready(src: Source, memo: dict) -> Source:
    with tempfile.TemporaryDirectory(prefix="mltd-excerpt-") as tmp:
        (Path(tmp) / src.file).write_text("".join(src.lines))
        d, _ = diagnose(tmp)
    causes = d.root_causes
    src.top = causes[0].code if causes else None
    memo[(src.file, "".join(src.lines))] = ([c.code for c in causes],
                                            any(c.code != "healthy" and c.severity in ALARM for c in causes))
    found = [j for e in (causes[0].evidence if causes else []) if e.artifact == src.file
             and (j := _located_line(e.locator)) is not None]
    src.decisive = _decisive(src.lines, found)
    return src


def wild_sources(healthy: bool = False) -> list[Source]:
    """The tune half's faulty cases (its healthy ones when `healthy`)."""
    out = []
    for lab in json.loads((WILD / "labels.json").read_text()):
        if lab["split"] != "tune" or (lab["code"] == "healthy") != healthy:
            continue                 # the measuring half is never read
        folder = WILD / "cases" / lab["id"]
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix != ".py")
        if not files:
            continue
        lines = files[0].read_text(errors="replace").splitlines(keepends=True)
        out.append(Source(lab["id"], lab["code"], set(lab.get("alt_codes", [])), files[0].name, lines))
    return out


def scenario_sources(healthy: bool = False) -> list[Source]:
    from tests.scenarios import TUNING, _folder
    out = []
    for name, (_, code) in TUNING.items():
        folder = _folder(name)
        if (code == "healthy") != healthy or not (folder / ".complete").exists():
            continue
        for p in sorted(folder.rglob("*")):       # each text log of the run is a source of its own
            if p.is_file() and p.suffix in (".log", ".txt", ".out") and p.stat().st_size < 64 << 20:
                with p.open(errors="replace") as f:
                    lines = [ln for _, ln in zip(range(MAX_LINES), f)]
                if lines:
                    out.append(Source(f"scenario:{name}/{p.relative_to(folder)}", code, set(), p.name, lines))
    return out


# --- the perturbations: each a pure function of (lines, decisive index, rng) -> text or None ------

def _window(lines: list[str], at: int, size: int, rng: random.Random) -> str:
    start = max(0, min(len(lines) - size, at - rng.randrange(size)))
    return "".join(lines[start:start + size])


def _excerpt(lines: list[str], at: int, rng: random.Random) -> list[str]:
    """The lines dressed-up kinds start from: a 10-line window around the decisive line."""
    start = max(0, min(len(lines) - 10, at - rng.randrange(10)))
    return lines[start:start + 10]


def _each_line(lines: list[str], f) -> str:
    return "".join(f(ln.rstrip("\n")) + "\n" for ln in lines)


def _numbers(m: re.Match, rng: random.Random) -> str:
    x = float(m.group(1))
    style = rng.randrange(4)
    if style == 0:
        return f"{x:.{rng.randrange(1, 4)}e}"
    if style == 1:
        return f"{x:.{rng.randrange(5, 8)}f}"
    if style == 2:
        return f"{x:.{rng.randrange(2, 5)}g}"
    return repr(x)


def _synonym(m: re.Match, chosen: dict[str, str]) -> str:
    return chosen[m.group(1).lower()]


def perturb(kind: str, src: Source, rng: random.Random) -> str | None:
    lines, at = src.lines, src.decisive
    if kind.startswith("window"):
        return _window(lines, at, int(kind[6:]), rng)
    if kind == "offset":
        size = rng.choice((3, 10, 30))
        start = rng.randrange(max(1, len(lines) - size + 1))
        return "".join(lines[start:start + size])
    if kind == "head":
        return "".join(lines[: rng.randint(2, 20)])
    if kind == "tail":
        return "".join(lines[-rng.randint(2, 20):])
    if kind == "last_line":
        tb = [i for i, ln in enumerate(lines) if "Traceback (most recent call last)" in ln]
        if not tb:
            return None
        rest = [ln for ln in lines[tb[0]:] if ln.strip()]
        last = next((ln for ln in rest[1:] if not ln.startswith((" ", "\t", "Traceback"))), rest[-1])
        return last if last.endswith("\n") else last + "\n"
    ex = _excerpt(lines, at, rng)
    if kind == "indent":
        pad = rng.choice(("  ", "    ", "\t", "        "))
        return _each_line(ex, lambda s: pad + s)
    if kind == "quote":
        return _each_line(ex, lambda s: "> " + s)
    if kind == "timestamp":
        fmt, t0 = rng.choice(STAMPS), rng.randrange(50)
        return "".join(fmt.format(s=(t0 + i) % 60, ms=rng.randrange(1000)) + ln for i, ln in enumerate(ex))
    if kind == "ansi":
        col = rng.choice(ANSI)
        if rng.random() < 0.5:
            return _each_line(ex, lambda s: f"{col}{s}\x1b[0m")
        return _each_line(ex, lambda s: NUMBER.sub(lambda m: f"{col}{m.group(1)}\x1b[0m", s))
    if kind == "rank":
        r = rng.randrange(4)
        pre = rng.choice((f"[rank{r}]: ", f"[rank{r}]:", f"{r}: ", f"[default{r}]:"))
        return _each_line(ex, lambda s: pre + s)
    if kind == "tabs":
        if any("\t" in ln for ln in ex):
            return _each_line(ex, lambda s: s.replace("\t", " " * rng.choice((1, 2, 4, 8))))
        return _each_line(ex, lambda s: re.sub(r"(?<=\S)  +|(?<=[,:=]) ", "\t", s))
    if kind == "numbers":
        text = _each_line(ex, lambda s: NUMBER.sub(lambda m: _numbers(m, rng), s))
        return text if text != "".join(ex) else None
    if kind == "synonyms":
        chosen = {key: rng.choice(names) for key, names in SYNONYMS.items()}   # one trainer, one name per key
        text = _each_line(ex, lambda s: SYN_RE.sub(lambda m: _synonym(m, chosen), s))
        return text if text != "".join(ex) else None
    raise ValueError(kind)


def _rising(text: str) -> bool:
    """A loss read by this probe's own pattern that grows: 3+ values, up at 3 in 4, 20% above the start."""
    v = []
    for ln in text.splitlines():
        if "train_runtime" in ln:
            continue        # a Trainer's end-of-training summary: its train_loss is the run's mean, no report
        m = LOSS_NUM.search(ln)
        if m:
            try:
                v.append(float(m.group(1)))
            except ValueError:
                pass
    if len(v) < 3 or v[0] <= 0:
        return False
    ups = sum(b > a for a, b in zip(v, v[1:]))
    return ups >= 0.75 * (len(v) - 1) and v[-1] >= 1.2 * v[0]


def must_answer(text: str) -> list[str]:
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    out = []
    if NAN.search(ZERO_COUNT.sub("", plain)):
        out.append("nan")
    if OOM.search(plain):
        out.append("oom")
    if DIST.search(plain):
        out.append("distributed")
    if _rising(plain):
        out.append("rising")
    return out


def run(sources: list[Source], kinds: tuple[str, ...], seeds: int) -> list[Result]:
    memo: dict = {}
    results = []
    for src in sources:
        _ready(src, memo)
        for kind in kinds:
            seen = set()
            for seed in range(seeds):
                key = f"{src.name}/{kind}/{seed}"
                text = perturb(kind, src, random.Random(key))
                if not text or not text.strip() or text in seen:
                    continue
                seen.add(text)
                codes, alarm = _diagnose_text(src.file, text, memo)
                kept = src.lines[src.decisive].strip()
                plain = None
                if kind not in CUTS:     # the same window undressed (its first draw is the window's)
                    plain = _diagnose_text(src.file, "".join(_excerpt(src.lines, src.decisive,
                                                                      random.Random(key))), memo)[0]
                results.append(Result(src.name, src.code, kind, seed, text, must_answer(text), src.top,
                                      codes, kind not in CUTS or kept in text, plain, alarm))
    return results


def _row(label: str, rs: list[Result], alts: dict[str, set[str]]) -> str:
    n = len(rs)
    if not n:
        return f"  {label:22} {0:5}"
    kept = [r for r in rs if r.top is not None]
    top1 = sum(r.codes[:1] == [r.top] for r in kept)
    top3 = sum(r.top in r.codes[:3] for r in kept)
    shown = [r for r in kept if r.decisive]
    top1_shown = sum(r.codes[:1] == [r.top] for r in shown) / max(len(shown), 1)
    dressed = [r for r in rs if r.plain is not None]
    same = f"{sum(r.codes[:1] == r.plain[:1] for r in dressed if r.plain is not None) / len(dressed):5.2f}" \
        if dressed else "    -"
    right = sum(bool(r.codes) and r.codes[0] in ({r.code} | alts[r.source]) for r in rs)
    must = [r for r in rs if r.must]
    silent = sum(not [c for c in r.codes if c != "healthy"] for r in must)
    k = max(len(kept), 1)
    return (f"  {label:22} {n:5}  {top1 / k:5.2f} {top3 / k:5.2f} {top1_shown:5.2f} ({len(shown):4})  {same}  "
            f"{right / n:5.2f}  {len(must):5} {silent:4}")


def report(results: list[Result], sources: list[Source], part: str) -> None:
    alts = {s.name: s.alt for s in sources}
    print(f"\n== {part} part ({len(results)} excerpts) ==")
    print(f"  {'':22} {'n':>5}  {'top-1':>5} {'top-3':>5} {'dec.1':>5} {'(n)':>6}  {'undr.':>5}  {'label':>5}  "
          f"{'must':>5} {'none':>4}")
    print(_row("all", results, alts))
    print(" by kind")
    for kind in KINDS:
        print(_row(kind, [r for r in results if r.kind == kind], alts))
    print(" by code")
    for code in sorted({r.code for r in results}):
        print(_row(code, [r for r in results if r.code == code], alts))
    print(" must-answer excerpts with no cause, by what they show")
    for what in ("nan", "oom", "distributed", "rising"):
        rs = [r for r in results if what in r.must]
        print(f"  {what:12} {len(rs):5}  no cause {sum(not [c for c in r.codes if c != 'healthy'] for r in rs)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scenarios", action="store_true", help="add the tuning scenarios' text logs (cached ones)")
    p.add_argument("--seeds", type=int, default=SEEDS)
    p.add_argument("--kind", action="append", choices=KINDS, help="only these kinds (repeatable)")
    p.add_argument("--show", choices=("fix",), help="print the fix part's failing excerpts (never the report part's)")
    p.add_argument("--json", type=Path, help="write every result here")
    args = p.parse_args()
    sources = wild_sources() + (scenario_sources() if args.scenarios else [])
    kinds = tuple(args.kind or KINDS)
    results = run(sources, kinds, args.seeds)
    fix = [r for r in results if r.seed % 2 == 0]
    rep = [r for r in results if r.seed % 2 == 1]
    print(f"sources: {len(sources)} ({sum(s.name.startswith('scenario:') for s in sources)} scenario logs); "
          f"originals with no cause: {sum(s.top is None for s in sources)}")
    report(fix, sources, "fix (even seeds)")
    report(rep, sources, "report (odd seeds)")
    if args.show:
        for r in fix:
            silent = r.must and not [c for c in r.codes if c != "healthy"]
            if silent or (r.top is not None and r.codes[:1] != [r.top]):
                print(f"\n--- {r.source} [{r.kind} seed {r.seed}] want {r.code} orig {r.top} got {r.codes[:3]} "
                      f"must {r.must}\n{r.text[:1500]}")
    calm = wild_sources(healthy=True) + (scenario_sources(healthy=True) if args.scenarios else [])
    quiet = run(calm, kinds, args.seeds)
    print(f"\n== healthy sources ({len(calm)}): excerpts with a critical or high cause (false alarms) ==")
    for part, rs in (("fix", [r for r in quiet if r.seed % 2 == 0]), ("report", [r for r in quiet if r.seed % 2])):
        by_kind = {k: sum(r.alarm for r in rs if r.kind == k) for k in kinds}
        print(f"  {part:7} {sum(r.alarm for r in rs)}/{len(rs)}  by kind: "
              + ", ".join(f"{k} {n}" for k, n in by_kind.items() if n))
    if args.show:
        for r in quiet:
            if r.alarm and r.seed % 2 == 0:
                print(f"\n--- healthy {r.source} [{r.kind} seed {r.seed}] got {r.codes[:3]}\n{r.text[:1500]}")
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results + quiet], indent=1))


if __name__ == "__main__":
    main()
