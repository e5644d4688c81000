"""Does batch noise read as a fault, and does a real rise through the same noise still read as one? Short windows of
a real tiny CPU run's per-batch loss, pasted alone.

    python bench/noise_windows.py               # 50 seeds x windows of 6 to 30 reports

The run (tests/scenarios/minibatch_noise.py) is a linear regression trained by minibatch SGD, the per-batch loss
printed as `loss: X`, each window through `analysis.diagnose.diagnose`.
- Healthy: windows at random places of the converged second half. Nothing in them is a fault, so every critical or
  high cause is a false alarm; printed per window size and per reading (code, analyzer), with how many windows a
  medium LR reading leads (a wrong answer, if no alarm) and how many the healthy verdict says "falls steadily" of.
- Rising: the same run once converged, its LR raised to 0.6, 0.65 or 0.7 (past what SGD at batch 16 stays stable
  at), the first reports after the raise at a stride of 1, 2, 3 or 5 steps, kept where the rise shows (the last
  third's median 1.5x the first's or more). Printed: how often `lr_too_high` leads, leads at high or critical, is in
  the top three, and how often nothing is named at all.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.diagnose import diagnose  # noqa: E402
from tests.scenarios.minibatch_noise import STEPS, regression_losses, rising_losses, rose  # noqa: E402

SIZES = (6, 8, 10, 12, 16, 20, 30)
RISE_LRS = (0.6, 0.65, 0.7)
GRAVE = ("critical", "high")


def _causes(window: list[float]) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "train.log").write_text("".join(f"loss: {v:.4f}\n" for v in window))
        d, _ = diagnose(tmp)
    return d.root_causes


def healthy(seeds: int, per_size: int, rng: random.Random) -> None:
    alarms: Counter = Counter()
    falls: Counter = Counter()
    medium: Counter = Counter()
    n: Counter = Counter()
    for seed in range(seeds):
        run = regression_losses(seed)
        for size in SIZES:
            for _ in range(per_size):
                start = rng.randrange(STEPS // 2, STEPS - size)
                causes = _causes(run[start:start + size])
                n[size] += 1
                top = causes[0] if causes else None
                falls[size] += bool(top and top.code == "healthy" and "falls steadily" in top.issue)
                medium[size] += bool(top and top.code == "lr_too_high" and top.severity not in GRAVE)
                alarm = next((c for c in causes if c.code != "healthy" and c.severity in GRAVE), None)
                if alarm is not None:
                    alarms[(size, alarm.code, alarm.analyzer)] += 1
    print("healthy windows (a converged run): critical or high causes are false alarms")
    print(f"{'reports':>7} {'windows':>7} {'alarms':>6} {'medium LR leads':>15} {'falls steadily':>14}")
    for size in SIZES:
        print(f"{size:7} {n[size]:7} {sum(v for k, v in alarms.items() if k[0] == size):6} {medium[size]:15} "
              f"{falls[size]:14}")
    print(f"{'all':>7} {sum(n.values()):7} {sum(alarms.values()):6} {sum(medium.values()):15} {sum(falls.values()):14}")
    print("alarms by reading: " + (", ".join(f"{k[0]} reports {k[1]} ({k[2]}) {v}" for k, v in sorted(alarms.items()))
                                   or "none"))


def rising(seeds: int, rng: random.Random) -> None:
    got: Counter = Counter()
    n: Counter = Counter()
    for seed in range(seeds):
        for lr in RISE_LRS:
            run = rising_losses(seed, lr)
            for size in SIZES:
                stride = rng.choice((1, 2, 3, 5))
                window = run[: size * stride: stride]
                if not rose(window):
                    continue
                causes = _causes(window)
                n[size] += 1
                top = causes[0] if causes else None
                got[(size, "leads")] += bool(top and top.code == "lr_too_high")
                got[(size, "grave")] += bool(top and top.code == "lr_too_high" and top.severity in GRAVE)
                got[(size, "top3")] += any(c.code == "lr_too_high" for c in causes[:3])
                got[(size, "none")] += not any(c.code != "healthy" for c in causes)
    print("\nrising windows (the LR raised past stability): lr_too_high is the right answer")
    print(f"{'reports':>7} {'windows':>7} {'leads':>6} {'high+':>6} {'top-3':>6} {'no cause':>8}")
    for size in (*SIZES, None):
        keys = SIZES if size is None else (size,)
        m = sum(n[k] for k in keys)
        row = [sum(got[(k, what)] for k in keys) for what in ("leads", "grave", "top3", "none")]
        print(f"{'all' if size is None else size:>7} {m:7} " + " ".join(f"{x:6}" for x in row[:3]) + f" {row[3]:8}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--per-size", type=int, default=2, help="healthy windows per seed and size")
    p.add_argument("--rise-seeds", type=int, default=30)
    args = p.parse_args()
    healthy(args.seeds, args.per_size, random.Random(7))
    rising(args.rise_seeds, random.Random(7))


if __name__ == "__main__":
    main()
