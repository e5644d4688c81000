"""Does batch noise read as a fault? Short windows of a converged run's per-batch loss, pasted alone.

    python bench/noise_windows.py               # 50 seeds x windows of 12, 16, 20 and 30 reports

A real tiny CPU run per seed (tests/scenarios/minibatch_noise.py: a linear regression trained by minibatch SGD,
the per-batch loss printed as `loss: X`); from its converged second half, windows at random places go through
`analysis.diagnose.diagnose`. Nothing in them is a fault, so every critical or high cause is a false alarm;
printed per window size and per reading (code, analyzer), with the share of windows the healthy verdict says
"falls steadily" of.
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
from tests.scenarios.minibatch_noise import STEPS, regression_losses  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--per-size", type=int, default=2, help="windows per seed and size")
    args = p.parse_args()
    rng = random.Random(7)
    sizes = (12, 16, 20, 30)
    alarms: Counter = Counter()
    falls: Counter = Counter()
    n: Counter = Counter()
    for seed in range(args.seeds):
        run = regression_losses(seed)
        for size in sizes:
            for _ in range(args.per_size):
                start = rng.randrange(STEPS // 2, STEPS - size)
                with tempfile.TemporaryDirectory() as tmp:
                    (Path(tmp) / "train.log").write_text("".join(f"loss: {v:.4f}\n" for v in run[start:start + size]))
                    d, _ = diagnose(tmp)
                n[size] += 1
                top = d.root_causes[0] if d.root_causes else None
                falls[size] += bool(top and top.code == "healthy" and "falls steadily" in top.issue)
                alarm = next((c for c in d.root_causes if c.code != "healthy" and c.severity in ("critical", "high")),
                             None)
                if alarm is not None:
                    alarms[(size, alarm.code, alarm.analyzer)] += 1
    print(f"{'reports':>7} {'windows':>7} {'alarms':>6} {'falls steadily':>14}")
    for size in sizes:
        print(f"{size:7} {n[size]:7} {sum(v for k, v in alarms.items() if k[0] == size):6} {falls[size]:14}")
    print("alarms by reading: " + (", ".join(f"{k[0]} reports {k[1]} ({k[2]}) {v}" for k, v in sorted(alarms.items()))
                                   or "none"))


if __name__ == "__main__":
    main()
