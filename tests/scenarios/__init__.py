"""Real tiny CPU training runs, each with one fault (or none), written as real tools write them.

`build(name, dest)` runs scenario `name` and writes its artifacts into `dest`; `cached(name)`
returns a folder built once per source version (tests/.scenario-cache, keyed by a hash of this
package, built in parallel), so the suite stays fast. Expected codes live here, never in the artifacts.

The suite is split once, by generator, into a tuning set and a measuring set (`SPLIT`): the
hand-written scenarios below (`SCENARIOS`, asserted one by one by the end-to-end tests) and the
`tuning` families of the grid modules are what the analyzers may be tuned on; the `measuring`
families (the `measuring_*.py` modules, kept apart from the tuning families so that no one reads
them while tuning) are never looked at one by one, only measured (bench/accuracy.py), so that no
variant of a measuring run is tuned on.
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from tests.scenarios import (data_runs, grid_data, grid_differential, grid_explode, grid_explode2, grid_explode3,
                             grid_explode4, grid_explode5, grid_explode6, grid_healthy, grid_healthy2, grid_optim, grid_slow, grid_stall, grid_system,
                             healthy_runs, long_runs, measuring_data, measuring_healthy, measuring_long, measuring_optim, measuring_slow,
                             measuring_system, optim_runs, runs, system_runs)

SCENARIOS = {
    # name: (writer, expected top code). Writer names stay neutral: they name the run's folder.
    "lr_jump_mlp": (runs.mlp_curriculum, "lr_too_high"),
    "sgd_no_warmup_cnn": (optim_runs.cnn_plain_sgd, "lr_too_high"),
    "adamw_lr_tiny_mlp": (optim_runs.adamw_probe, "lr_too_low"),
    "sgd_lr_tiny_lstm": (optim_runs.lstm_sgd, "lr_too_low"),
    "unscaled_targets_rnn": (optim_runs.elman_rnn, "exploding_gradients"),
    "no_zero_grad_mlp": (optim_runs.mlp_sgd_loop, "exploding_gradients"),
    "deep_sigmoid_mlp": (optim_runs.deep_sigmoid_mlp, "vanishing_gradients"),
    "deep_tanh_cnn": (optim_runs.deep_tanh_cnn, "vanishing_gradients"),
    "deep_sigmoid_adam_state": (optim_runs.deep_sigmoid_adam, "vanishing_gradients"),
    "half_overflow": (runs.sensor_mlp, "numerical_instability"),
    "zero_std_cnn": (system_runs.cnn_blank_frames, "numerical_instability"),
    "negative_bias_mlp": (optim_runs.biased_relu_mlp, "dead_relu"),
    "outlier_batch_relu": (optim_runs.relu_mlp_raw_rows, "dead_relu"),
    **{f"gan_collapse_{seed}" if seed != 46 else "gan_collapse": (data_runs.gan_ring(seed), "mode_collapse")
       for seed in data_runs.GAN_COLLAPSE_SEEDS},
    "one_class_classifier": (data_runs.skewed_classifier, "mode_collapse"),
    "embedding_lm": (runs.tiny_lm_lightning, "architecture_imbalance"),
    "wide_vocab_lm": (data_runs.hf_wide_vocab_lm, "architecture_imbalance"),
    "overfit_mlp": (data_runs.mlp_small_train_set, "overfitting"),
    "overfit_cnn": (data_runs.cnn_few_images, "overfitting"),
    "missing_step_mlp": (optim_runs.mlp_probe_loop, "no_parameter_updates"),
    "lr_zero_lstm": (optim_runs.lstm_ratio_schedule, "no_parameter_updates"),
    "shuffled_labels_mlp": (data_runs.mlp_permuted_pairs, "data_pipeline_bug"),
    "random_targets_lstm": (data_runs.lstm_batch_targets, "data_pipeline_bug"),
    "act_variance": (runs.ponder_head, "zero_variance"),
    "batchnorm_batch_of_one": (system_runs.tabular_batchnorm, "zero_variance"),
    "host_oom": (runs.mlp_with_eval, "out_of_memory"),
    "leak_then_oom_lstm": (system_runs.lstm_keep_outputs, "out_of_memory"),
    "corrupt_batches_mlp": (data_runs.mlp_mixed_sources, "loss_spikes"),
    "rare_batches_lm": (data_runs.lm_rare_batches, "loss_spikes"),
    "rank_exit_gloo": (system_runs.ddp_rank_exits, "distributed_failure"),
    "rank_timeout_gloo": (system_runs.ddp_rank_stalls, "distributed_failure"),
    "worker_killed": (system_runs.loader_worker_signal, "dataloader_failure"),
    "worker_exception": (system_runs.loader_worker_raises, "dataloader_failure"),
    "healthy_cnn": (runs.cnn_tensorboard, "healthy"),
    "healthy_noisy_mlp": (healthy_runs.mlp_small_batches, "healthy"),
    "healthy_lstm_warnings": (healthy_runs.lstm_with_warnings, "healthy"),
    "healthy_lm_warmup": (healthy_runs.hf_lm_with_warmup, "healthy"),
    "healthy_gan": (healthy_runs.gan_ring_balanced(63), "healthy"),
    "healthy_gan_44": (healthy_runs.gan_ring_balanced(44), "healthy"),
    "healthy_but_starved": (healthy_runs.mlp_decoded_rows, "healthy"),
}

# The generated families: each one generator, all its variants in one split (grid.Family.split).
FAMILIES = [*long_runs.FAMILIES, *grid_system.FAMILIES, *grid_optim.FAMILIES, *grid_data.FAMILIES,
            *grid_healthy.FAMILIES, *grid_healthy2.FAMILIES, *grid_slow.FAMILIES, *grid_differential.FAMILIES,
            *grid_explode.FAMILIES, *grid_explode2.FAMILIES, *grid_explode3.FAMILIES,
            *grid_explode4.FAMILIES, *grid_explode5.FAMILIES, *grid_explode6.FAMILIES, *grid_stall.FAMILIES,
            # the measuring families live apart, so that no one reads them while tuning the others
            *measuring_long.FAMILIES, *measuring_system.FAMILIES, *measuring_optim.FAMILIES, *measuring_data.FAMILIES,
            *measuring_healthy.FAMILIES, *measuring_slow.FAMILIES]
SLOW = {name for fam in [*grid_slow.FAMILIES, *measuring_slow.FAMILIES] for name in fam.writers()}     # faults that build over hundreds of steps
GENERATED = {name: (writer, fam.code) for fam in FAMILIES for name, writer in fam.writers().items()}
GENERATOR = {**{name: writer.__name__ for name, (writer, _) in SCENARIOS.items()},
             **{name: fam.name for fam in FAMILIES for name in fam.writers()}}
SPLIT = {**{name: "tuning" for name in SCENARIOS},
         **{name: fam.split for fam in FAMILIES for name in fam.writers()}}
ALL = {**SCENARIOS, **GENERATED}
TUNING = {name: s for name, s in ALL.items() if SPLIT[name] == "tuning"}
MEASURING = {name: s for name, s in ALL.items() if SPLIT[name] == "measuring"}

_HERE = Path(__file__).resolve().parent
CACHE = _HERE.parent / ".scenario-cache"


def _version() -> str:
    h = hashlib.sha256()
    for f in sorted(_HERE.glob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def cache_all() -> dict[str, Path]:
    """Every scenario's folder (both sets), building the missing ones."""
    return {name: cached(name) for name in ALL}


def build(name: str, dest: Path) -> Path:
    writer, _ = ALL[name]
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    writer(dest)
    return dest


def _prune() -> None:
    """Drop the folders built by other versions of the scenario code."""
    if CACHE.is_dir():
        for old in CACHE.iterdir():
            if old.is_dir() and old.name != _version():
                shutil.rmtree(old, ignore_errors=True)


def _folder(name: str) -> Path:
    return CACHE / _version() / ALL[name][0].__name__    # no label in the run's own path


def _same_folder() -> list[str]:
    """Writers sharing a name would share a cache folder, and one run would silently replace another."""
    seen: dict[str, str] = {}
    return [f"{name} and {seen[w]}" for name, (writer, _) in ALL.items()
            if (w := writer.__name__) in seen or seen.setdefault(w, name) != name]


def cached(name: str) -> Path:
    dest = _folder(name)
    if not (dest / ".complete").exists():
        # in a child interpreter: the runs start processes, threads and sockets of their own and set
        # global torch flags, none of which belongs in the caller (a test session, the bench)
        subprocess.run([sys.executable, "-m", "tests.scenarios", "--cache"], cwd=_HERE.parents[1], check=True)
    return dest


def _build_one(name: str) -> None:
    import torch

    torch.set_num_threads(1)       # the jobs run side by side: one core each
    dest = _folder(name)
    tmp = dest.with_name(dest.name + ".tmp")
    build(name, tmp)
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    (dest / ".complete").write_text("ok")


def _build_missing(jobs: int) -> None:
    clash = _same_folder()
    if clash:
        raise SystemExit(f"scenarios share a cache folder (a writer name): {', '.join(clash)}")
    if not (CACHE / _version()).is_dir():
        _prune()
    # FAMILIES lists the longest runs (100k steps, several ranks) first: started first, they pack best
    missing = [name for name in [*GENERATED, *SCENARIOS] if not (_folder(name) / ".complete").exists()]
    if not missing:
        return
    # jobs in interpreters of their own (spawn), apart from the caller: the runs set global torch
    # flags, logging and warning filters, and start processes and threads
    with ProcessPoolExecutor(max(1, min(jobs, len(missing))), mp_context=get_context("spawn")) as pool:
        list(pool.map(_build_one, missing))


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description="write a scenario's run folder, or fill the cache")
    p.add_argument("name", nargs="?", choices=sorted(ALL))
    p.add_argument("dest", nargs="?")
    p.add_argument("--cache", action="store_true", help="build every scenario missing from the cache")
    p.add_argument("--jobs", type=int, default=int(os.environ.get("MLTD_SCENARIO_JOBS", os.cpu_count() or 1)),
                   help="runs built side by side (default: one per core, or $MLTD_SCENARIO_JOBS)")
    args = p.parse_args()
    if args.cache:
        _build_missing(args.jobs)
        return
    if not (args.name and args.dest):
        p.error("NAME and DEST, or --cache")
    build(args.name, Path(args.dest))
    print(f"wrote {args.dest}")


if __name__ == "__main__":
    main()
