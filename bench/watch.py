"""The live watch on the scenario suite (tests/scenarios): lead time of the early warning, false
warnings on healthy runs, the callback's overhead, and the guard.

    python bench/watch.py [--jobs 2]

Lead: each faulty run (divergence, exploding gradients, NaN) and each healthy run is replayed point
by point through `Watcher` at its default cadence (the overhead budget off: a replay has no
training time to budget against), with the run's config and code as context, and none of its log
events, checkpoints, samples or trainer state (written as the run goes, they would tell the future).
The step where the post-mortem becomes certain is the first prefix of the run's metrics at which
`diagnose_run` names the expected cause at confidence >= 0.8 (among its root causes: a run may show
two at once), found by bisection. Lead, in steps, =
certain - warned, and in percent, = (certain - warned) / (certain - first logged step): the share of
the steps the post-mortem needed that the warning came before it; the warning counted is the first
that names that cause, early (a precursor rule, analysis/precursors.py) or not. The table says
whether that warning's evidence came from the live metrics or from the config/code alone (a
pre-flight finding), and gives a second lead, "live-only", of the same watch replayed without the
run's files (config, code, checkpoints): what the metrics alone tell. A fault that is sudden in the
metrics (an LR switched at step N, a NaN from one batch) shows nothing there before it happens.

Overhead: a small CNN (LeNet-sized, batch 32) trained on the CPU with `handlers.watch.watch` at default
settings; the time spent inside the watch (its optimizer hook, `log` and the checks, timed around
each call) per step, as a share of the step time of the same training without it (the least
disturbed of alternating rounds). The plain A/B difference of step times is printed beside it: on
a shared machine its noise is larger than the overhead. Memory: points a metric keeps after
200,000 appended steps.

Guard: a real tiny training whose inputs turn non-finite at one step, guarded; the saved weights
must be finite and equal to the weights before that step.
"""
from __future__ import annotations

import math
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.diagnose import CONFIDENT, diagnose_run  # noqa: E402
from analysis.ingest import load_run  # noqa: E402
from analysis.live import CAPACITY, LiveRun  # noqa: E402
from analysis.metrics import MetricTable, Series, fmt_step  # noqa: E402
from analysis.run import Run  # noqa: E402
from tests.scenarios import ALL, SLOW, SPLIT, cached  # noqa: E402
from tests.watching import Collect, replay  # noqa: E402

LEAD_CODES = ("lr_too_high", "exploding_gradients", "numerical_instability")
LEAD_FLOOR_PCT = 20
OVERHEAD_STEPS, OVERHEAD_ROUNDS = 1000, 4


def prefix(run: Run, last: float) -> Run:
    table = MetricTable()
    for s in run.metrics.series.values():
        m = s.steps <= last
        table.add(Series(s.name, s.artifact, s.steps[m], s.values[m], None if s.lines is None else s.lines[m],
                         s.step_kind, s.stride))
    return replace(run, metrics=table, events=[])


def certain_at(run: Run, steps: np.ndarray, code: str) -> float | None:
    """The first step at which the post-mortem names `code` at CONFIDENT or more (bisection)."""
    def certain(i: int) -> bool:
        causes = diagnose_run(prefix(run, steps[i])).root_causes
        return any(c.code == code and c.confidence >= CONFIDENT for c in causes)
    if not certain(len(steps) - 1):
        return None
    lo, hi = 0, len(steps) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if certain(mid) else (mid + 1, hi)
    return float(steps[lo])


def _first(docs: list[dict], code: str) -> dict | None:
    """The first warning naming `code`."""
    return next((d for d in docs if code in d["watch"]["alarms"]), None)


def _lead(sure: float | None, doc: dict | None, first: float) -> tuple[float | None, float | None]:
    """(lead in steps, lead in % of the steps from the first logged step to the certain one)."""
    if sure is None or doc is None:
        return None, None
    steps = sure - doc["watch"]["step"]
    return steps, 100.0 * steps / max(sure - first, 1.0)


def _cell(steps: float | None, pct: float | None) -> str:
    return "-" if steps is None else f"{fmt_step(steps)} ({pct:.0f}%)"


@dataclass
class Lead:
    name: str
    code: str
    row: str                    # the table's row
    pct: float | None = None    # with the run's files
    steps: float | None = None
    live_pct: float | None = None   # from the live metrics alone
    certain: bool = False       # the post-mortem became certain of the expected cause
    warnings: int = 0           # posted on a healthy run


def lead_of(name: str) -> Lead:
    """One scenario replayed: its lead (faulty) or its warnings (healthy), and its table row."""
    code = ALL[name][1]
    run = load_run(cached(name))
    steps = np.unique(np.concatenate([s.steps for s in run.metrics.series.values()]))
    first = float(steps[0])
    docs = replay(run)
    if code == "healthy":
        w = docs[0]["watch"] if docs else None
        return Lead(name, code, f"{name:24} {code:21} {fmt_step(first):>5} {fmt_step(w['step']) if w else '-':>6} "
                    f"{'-':>7} {'-':>10}  {'-':>9} {'-':>10}  {','.join(w['alarms']) if w else 'none'}",
                    warnings=len(docs))
    sure = certain_at(run, steps, code)
    hit, live = _first(docs, code), _first(replay(run, with_files=False), code)
    n, pct = _lead(sure, hit, first)
    live_n, live_pct = _lead(sure, live, first)
    basis = ""
    if hit is not None:
        cause = next(c for c in hit["root_causes"] if c["code"] == code)
        src = "live metrics" if any(e["artifact"] == "live metrics" for e in cause["evidence"]) else "config/code only"
        basis = f"{code} ({src}{', early' if cause.get('early') else ''})"
    row = (f"{name:24} {code:21} {fmt_step(first):>5} {fmt_step(hit['watch']['step']) if hit else 'never':>6} "
           f"{fmt_step(sure) if sure is not None else 'never':>7} {_cell(n, pct):>10}  "
           f"{fmt_step(live['watch']['step']) if live else 'never':>9} {_cell(live_n, live_pct):>10}  {basis}")
    return Lead(name, code, row, pct, n, live_pct, sure is not None)


def lead_table(jobs: int = 2) -> list[Lead]:
    """Every faulty (LEAD_CODES) and healthy scenario replayed, `jobs` at a time; the rows of the
    tuning set printed (a measuring run is never shown one by one: it counts in the figures only)."""
    names = [name for name, (_, code) in ALL.items() if code in LEAD_CODES or code == "healthy"]
    print(f"{'scenario':24} {'expected':21} {'first':>5} {'warned':>6} {'certain':>7} {'lead':>10}  "
          f"{'live-only':>9} {'lead':>10}  first warning")
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        leads = list(pool.map(lead_of, names))
    for lead in leads:
        if SPLIT[lead.name] == "tuning":
            print(lead.row)
    print(f"({sum(SPLIT[x.name] == 'measuring' for x in leads)} runs of the measuring set replayed, not shown)")
    return leads


def _live_lead(x: Lead) -> float:
    """The live-only lead that counts for a run the post-mortem is certain of: a warning that came
    after it, or never, is no lead (0)."""
    return max(0.0, x.live_pct) if x.live_pct is not None else 0.0


def _median(xs: list[float]) -> str:
    return f"{statistics.median(xs):.0f}% over {len(xs)} runs" if xs else "no runs"


def _small_cnn() -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """A LeNet-sized CNN on 28x28 inputs, batch 32: a small model a CPU trains in a few ms a step."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Flatten(), torch.nn.Linear(32 * 7 * 7, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 10))
    return model, torch.randn(32, 1, 28, 28), torch.randint(0, 10, (32,))


def _train(steps: int, watched: bool) -> tuple[float, float]:
    """(mean seconds per step, mean seconds per step spent in mltd's code) for a small MLP on the CPU."""
    model, x, y = _small_cnn()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    w, inside = None, [0.0]
    if watched:
        from handlers.watch import watch
        w = watch(model, opt, notifier=Collect())
        hook = w._before_step

        def timed_hook(*args):
            t = time.perf_counter()
            hook(*args)
            inside[0] += time.perf_counter() - t
        w.close()
        opt.register_step_pre_hook(timed_hook)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        if w is not None:
            t_log = time.perf_counter()
            w.log(loss=loss)
            inside[0] += time.perf_counter() - t_log
        opt.step()
        times.append(time.perf_counter() - t)
    return statistics.mean(times), inside[0] / steps


def overhead_pct() -> tuple[float, float, float]:
    """(time inside the watch per step as % of a plain step, the same from the A/B step times, plain step s)."""
    torch.set_num_threads(1)
    _train(50, False), _train(50, True)      # warm up both paths
    plain, watched, inside = [], [], []
    for _ in range(OVERHEAD_ROUNDS):
        plain.append(_train(OVERHEAD_STEPS, False)[0])
        step, own = _train(OVERHEAD_STEPS, True)
        watched.append(step)
        inside.append(own)
    p = min(plain)                          # the least disturbed round: the machine is shared
    return 100.0 * statistics.median(inside) / p, 100.0 * (min(watched) - p) / p, p


def bounded_points() -> int:
    live = LiveRun()
    for i in range(200_000):
        live.append(i, {"loss": 1.0 / (i + 1), "grad_norm": 1.0})
    return max(s.n for s in live.metrics.values())


def guard_ok() -> bool:
    from safetensors.torch import load_file

    from handlers.watch import watch
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(64, 8), torch.randn(64, 1)
    before = None
    with tempfile.TemporaryDirectory() as tmp:
        with watch(model, opt, guard=True, save_to=Path(tmp) / "last-good.safetensors", notifier=Collect()) as w:
            for step in range(1, 61):
                xb = x * math.inf if step >= 40 else x          # the data turns non-finite from step 40 on
                loss = torch.nn.functional.mse_loss(model(xb), y)
                opt.zero_grad()
                loss.backward()
                if step == 40:
                    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
                w.log(loss=loss)
                opt.step()
        saved = load_file(w.guard.saved) if w.guard.saved else {}
    if not saved or before is None or set(saved) != set(before):
        return False
    return all(bool(torch.isfinite(t).all()) and torch.equal(t, before[k]) for k, t in saved.items())


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--jobs", type=int, default=2, help="scenarios replayed side by side (default 2)")
    all_leads = lead_table(p.parse_args().jobs)
    faulty = [x for x in all_leads if x.code != "healthy"]
    healthy_warnings = sum(x.warnings for x in all_leads if x.code == "healthy")
    leads = [x.pct for x in faulty if x.pct is not None]
    lead_steps = [x.steps for x in faulty if x.steps is not None]
    live_leads = [x.live_pct for x in faulty if x.live_pct is not None]
    median = statistics.median(leads) if leads else 0.0
    print(f"\nlead over {len(leads)} faulty runs: median {median:.0f}% (floor {LEAD_FLOOR_PCT}%), median "
          f"{statistics.median(lead_steps) if lead_steps else 0:g} steps")
    print(f"live-only (the watch given the metrics, not the run's files), over the runs it warned on: median "
          f"{statistics.median(live_leads) if live_leads else 0:.0f}% over {len(live_leads)} runs")
    certain = [x for x in faulty if x.certain]
    slow = [x for x in certain if x.name in SLOW]
    print("live-only lead, a late or missing warning counting 0: "
          f"slow faults (tests/scenarios/grid_slow.py) {_median([_live_lead(x) for x in slow])} "
          f"(tuning {_median([_live_lead(x) for x in slow if SPLIT[x.name] == 'tuning'])}, "
          f"measuring {_median([_live_lead(x) for x in slow if SPLIT[x.name] == 'measuring'])}); "
          f"all faulty runs {_median([_live_lead(x) for x in certain])}")
    over, ab, step_s = overhead_pct()
    print(f"overhead: {over:.2f}% of a {step_s * 1e3:.2f} ms step spent inside the watch (its hook, log and checks, "
          f"timed); A/B step times say {ab:+.1f}% (noisy on a shared machine); small CNN, CPU, 1 thread, defaults")
    print(f"memory: {bounded_points()} points per metric after 200000 steps (capacity {CAPACITY})")
    ok = guard_ok()
    print(f"watch: lead_median_pct={median:.0f} healthy_warnings={healthy_warnings} overhead_pct={max(over, 0):.1f} "
          f"guard_ok={'yes' if ok else 'no'}")


if __name__ == "__main__":
    main()
