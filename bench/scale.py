"""The whole `mltd diagnose` command on real-sized runs: 10k, 100k and 1M steps in every metrics
format, each with a late fault, and a 1 GB text log. Prints format x size -> seconds, MB/s, peak
RSS, the top cause and whether it is the injected one.

    python bench/scale.py                      # the table (10k/100k/1M, every format and fault)
    python bench/scale.py --sizes 100000 --formats csv --faults lr_jump
    python bench/scale.py --gb-log 1.0         # also the 1 GB text log (several metrics a line, timestamps)

Runs are built once into --cache (default /tmp/mltd-scale) and reused. Floors (issue 13): 1M steps
< 20 s and < 600 MB peak RSS in every format with the fault on top, 100k -> 1M at most 12x in time;
the 1 GB log at >= 100 MB/s and < 500 MB with the divergence found at its first line.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FAULTS = {"lr_jump": "lr_too_high", "late_nan": "numerical_instability", "late_overfit": "overfitting"}
FORMATS = ("text", "csv", "jsonl", "tensorboard", "hf")


def curves(n: int, fault: str, seed: int = 5) -> dict[str, np.ndarray]:
    """A healthy descent with minibatch noise, then the fault in the last 15% of the run."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, n + 1, dtype=np.float64)
    loss = 0.6 + 2.4 * np.exp(-t / (0.15 * n)) + rng.normal(0, 0.02, n)
    lr = np.full(n, 3e-4)
    gn = np.abs(rng.normal(1.0, 0.1, n))
    out = {"step": t, "loss": loss, "lr": lr, "grad_norm": gn}
    at = int(0.85 * n)
    if fault == "lr_jump":
        lr[at:] = 9e-3
        k = np.arange(n - at, dtype=np.float64)
        growth = np.minimum(np.exp(k / (0.01 * n)), 1e4)
        loss[at:] += 0.05 * (growth - 1)
        gn[at:] *= 1 + 0.5 * (growth - 1)
    elif fault == "late_nan":
        loss[int(0.9 * n):] = np.nan
        gn[int(0.9 * n):] = np.nan
    elif fault == "late_overfit":
        every = max(1, n // 200)
        ev = t[every - 1::every]
        val = 0.9 + 2.4 * np.exp(-ev / (0.15 * n)) + 1.2 * np.maximum(0, ev / n - 0.55) ** 1.5 * 4
        out["val_step"], out["val_loss"] = ev, val + rng.normal(0, 0.01, len(ev))
        out["loss"] = 0.6 * np.exp(-t / (0.4 * n)) + 2.4 * np.exp(-t / (0.15 * n)) + rng.normal(0, 0.01, n)
    return out


def write_run(dest: Path, fmt: str, n: int, fault: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    c = curves(n, fault)
    steps = c["step"].astype(np.int64)
    val = dict(zip(c["val_step"].astype(np.int64).tolist(), c["val_loss"].tolist())) if "val_loss" in c else {}
    rows = zip(steps.tolist(), c["loss"].tolist(), c["lr"].tolist(), c["grad_norm"].tolist())
    if fmt == "text":
        with open(dest / "train.log", "w") as f:
            for s, lo, lr, g in rows:
                f.write(f"2026-01-01 00:00:00,{s % 1000:03d} INFO train: "
                        f"step={s} loss={lo:.5f} lr={lr:.3e} grad_norm={g:.4f}\n")
                if s in val:
                    f.write(f"2026-01-01 00:00:00,{s % 1000:03d} INFO eval: step={s} val_loss={val[s]:.5f}\n")
    elif fmt == "csv":
        with open(dest / "metrics.csv", "w") as f:
            f.write("step,loss,lr,grad_norm,val_loss\n")
            for s, lo, lr, g in rows:
                val_cell = f"{val[s]:.5f}" if s in val else ""
                f.write(f"{s},{lo:.5f},{lr:.3e},{g:.4f},{val_cell}\n")
    elif fmt == "jsonl":
        with open(dest / "metrics.jsonl", "w") as f:
            for s, lo, lr, g in rows:
                rec = {"step": s, "loss": round(lo, 5), "lr": lr, "grad_norm": round(g, 4)}
                if s in val:
                    rec["val_loss"] = round(val[s], 5)
                f.write(json.dumps(rec).replace("NaN", "NaN") + "\n")
    elif fmt == "hf":
        hist = []
        for s, lo, lr, g in rows:
            hist.append({"epoch": round(s / n, 4), "grad_norm": round(g, 4), "learning_rate": lr, "loss": round(lo, 5),
                         "step": s})
            if s in val:
                hist.append({"epoch": round(s / n, 4), "eval_loss": round(val[s], 5), "step": s})
        state = {"global_step": n, "max_steps": n, "logging_steps": 1, "log_history": hist}
        (dest / "trainer_state.json").write_text(json.dumps(state, indent=2))
    elif fmt == "tensorboard":
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        w = EventFileWriter(str(dest))
        for s, lo, lr, g in rows:
            vals = [Summary.Value(tag="train/loss", simple_value=lo), Summary.Value(tag="train/lr", simple_value=lr),
                    Summary.Value(tag="train/grad_norm", simple_value=g)]
            if s in val:
                vals.append(Summary.Value(tag="eval/loss", simple_value=val[s]))
            w.add_event(Event(step=s, wall_time=1.7e9 + s, summary=Summary(value=vals)))
        w.close()
    (dest / ".complete").write_text("ok")


def write_big_log(path: Path, gb: float) -> int:
    """A week-long job's log: timestamps and several metrics a line, a divergence after an LR jump at
    60% of its steps. Returns the line where the LR jump is logged."""
    target = int(gb * 1e9)
    n = target // 150          # bytes a line, about
    c = curves(n, "lr_jump")
    c["lr"][:] = 3e-4
    at = int(0.6 * n)
    c["lr"][at:] = 9e-3
    k = np.arange(n - at, dtype=np.float64)
    c["loss"][at:] = 0.6 + 2.4 * np.exp(-at / (0.15 * n)) + 0.05 * (np.minimum(np.exp(k / (0.01 * n)), 1e4) - 1)
    with open(path, "w") as f:
        for lo in range(0, n, 100_000):
            hi = min(n, lo + 100_000)
            f.write("".join(
                f"2026-01-{1 + s // 900000:02d} "
                f"{s // 36000 % 24:02d}:{s // 600 % 60:02d}:{s // 10 % 60:02d},{s % 1000:03d} "
                f"INFO trainer: epoch={s // 50000} step={s} loss={c['loss'][s - 1]:.5f} lr={c['lr'][s - 1]:.3e} "
                f"grad_norm={c['grad_norm'][s - 1]:.4f} tokens_per_sec={31000 + s % 997} mem_gb=41.2\n"
                for s in range(lo + 1, hi + 1)))
    return at + 1


def write_many_files(dest: Path, files: int) -> None:
    """A run folder of `files` files: per-rank log shards, small checkpoints and their configs, the
    way a long multi-node job leaves them; rank 0 diverges late."""
    import torch
    from safetensors.torch import save_file
    dest.mkdir(parents=True, exist_ok=True)
    logs, ckpts = files * 3 // 4, files // 8
    for k in range(logs):
        rank, shard = k % 8, k // 8
        lines = []
        for s in range(shard * 200 + 1, shard * 200 + 201):
            blow_up = 0.05 * (np.exp((s - 16000) / 400) - 1) if rank == 0 and s > 16000 else 0
            loss = 0.6 + 2.4 * np.exp(-s / 5000) + blow_up
            lines.append(f"step={s} loss={min(loss, 1e4):.5f} lr=3.0e-04 grad_norm=1.0\n")
        (dest / f"rank{rank}-shard{shard:04d}.log").write_text("".join(lines))
    g = torch.Generator().manual_seed(0)
    for k in range(ckpts):
        save_file({"fc1.weight": torch.randn(64, 32, generator=g), "fc1.bias": torch.zeros(64),
                   "fc2.weight": torch.randn(10, 64, generator=g)}, dest / f"ckpt-{k:04d}.safetensors")
        (dest / f"ckpt-{k:04d}.json").write_text(json.dumps({"step": k * 100, "lr": 3e-4}))
    (dest / ".complete").write_text("ok")


def time_plot(path: Path) -> float:
    """Seconds to draw the plot of an already diagnosed run, in this process."""
    from analysis import diagnose
    from bot.render.plot import plot_title, render_plot
    diagnosis, run = diagnose(path)
    t = time.perf_counter()
    render_plot(run.metrics, diagnosis.root_causes, path.parent / (path.name + ".png"), title=plot_title(diagnosis))
    return time.perf_counter() - t


def measure(path: Path) -> dict:
    """One `mltd diagnose --format json` process: wall time, peak RSS of the child, top cause."""
    wrapper = ("import resource,subprocess,sys,time,json;t=time.perf_counter();"
               "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
               "w=time.perf_counter()-t;r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
               "print(json.dumps({'rc':p.returncode,'wall':w,'rss_kb':r,'out':p.stdout,'err':p.stderr[-500:]}))")
    mltd = [str(Path(sys.executable).with_name("mltd")), "diagnose", str(path), "--format", "json"]
    res = json.loads(subprocess.run([sys.executable, "-c", wrapper, *mltd], capture_output=True, text=True).stdout)
    doc = json.loads(res["out"]) if res["rc"] in (0, 2) and res["out"].strip() else {}
    top = (doc.get("root_causes") or [{}])[0]
    return {"wall": res["wall"], "rss_mb": res["rss_kb"] / 1024, "code": top.get("code", f"rc={res['rc']}"),
            "evidence": top.get("evidence", []), "doc": doc, "err": res["err"]}


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS)
    p.add_argument("--faults", nargs="+", default=list(FAULTS), choices=list(FAULTS))
    p.add_argument("--gb-log", type=float, default=0.0, help="also the text log of this many GB")
    p.add_argument("--many-files", type=int, default=2000, help="also a run folder of this many files (0: none)")
    p.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "mltd-scale")
    args = p.parse_args()
    print(f"{'format':12} {'fault':13} {'steps':>9} {'MB':>7} {'s':>6} {'MB/s':>7} {'RSS MB':>7}  top cause")
    walls: dict[tuple[str, str], dict[int, float]] = {}
    ok = True
    for fmt in args.formats:
        for fault in args.faults:
            for n in args.sizes:
                dest = args.cache / f"{fmt}-{fault}-{n}"
                if not (dest / ".complete").exists():
                    write_run(dest, fmt, n, fault)
                mb = size_of(dest) / 1e6
                r = measure(dest)
                right = r["code"] == FAULTS[fault]
                ok &= right and (n < 1_000_000 or (r["wall"] < 20 and r["rss_mb"] < 600))
                walls.setdefault((fmt, fault), {})[n] = r["wall"]
                print(f"{fmt:12} {fault:13} {n:>9,} {mb:>7.1f} {r['wall']:>6.2f} {mb / r['wall']:>7.1f} "
                      f"{r['rss_mb']:>7.0f}  {r['code']} {'ok' if right else 'WRONG'}", flush=True)
                if r["err"].strip() and not right:
                    print("   stderr:", r["err"].strip()[-300:])
    if 1_000_000 in args.sizes and args.formats:
        fmt = args.formats[0]
        secs = time_plot(args.cache / f"{fmt}-{args.faults[0]}-1000000")
        ok &= secs < 2
        print(f"plot of the 1M-step {fmt} run: {secs:.2f} s")
    if args.many_files:
        dest = args.cache / f"many-{args.many_files}"
        if not (dest / ".complete").exists():
            write_many_files(dest, args.many_files)
        r = measure(dest)
        n_files = len(r["doc"].get("run", {}).get("artifacts", []))
        right = r["code"] == "lr_too_high" or r["code"] == "healthy"
        print(f"{'many files':12} {'-':13} {n_files:>9,} {size_of(dest) / 1e6:>7.1f} {r['wall']:>6.2f} "
              f"{size_of(dest) / 1e6 / r['wall']:>7.1f} {r['rss_mb']:>7.0f}  {r['code']}")
    for (fmt, fault), w in walls.items():
        if 100_000 in w and 1_000_000 in w:
            ratio = w[1_000_000] / w[100_000]
            ok &= ratio <= 12
            print(f"growth 100k -> 1M {fmt}/{fault}: {ratio:.1f}x")
    if args.gb_log:
        log = args.cache / f"log-{args.gb_log:g}gb" / "train.log"
        marker = log.with_name("jump_line")
        if not marker.exists():
            log.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(str(write_big_log(log, args.gb_log)))
        mb = log.stat().st_size / 1e6
        r = measure(log.parent)
        jump = int(marker.read_text())
        cites = any(f"line {jump}" in e["locator"] or f"lines {jump}-" in e["locator"] for e in r["evidence"])
        right = r["code"] == "lr_too_high" and cites
        ok &= right and mb / r["wall"] >= 100 and r["rss_mb"] < 500
        print(f"{'text 1GB':12} {'lr_jump':13} {'-':>9} {mb:>7.0f} {r['wall']:>6.2f} {mb / r['wall']:>7.1f} "
              f"{r['rss_mb']:>7.0f}  {r['code']} {'ok' if right else 'WRONG'} (LR jump at line {jump}"
              f"{' cited' if cites else ' NOT cited'})")
    print("scale:", "all floors met" if ok else "FLOORS NOT MET")


if __name__ == "__main__":
    main()
