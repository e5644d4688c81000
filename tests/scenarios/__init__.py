"""Real tiny CPU training runs, each with one fault (or none), written as real tools write them.

`build(name, dest)` runs scenario `name` and writes its artifacts into `dest`; `cached(name)`
returns a folder built once per source version (tests/.scenario-cache, keyed by a hash of this
package), so the suite stays fast. Expected codes live here, never in the artifacts.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from tests.scenarios import runs

SCENARIOS = {
    # name: (writer, expected top code)
    "lr_jump_mlp": (runs.mlp_curriculum, "lr_too_high"),
    "half_overflow": (runs.sensor_mlp, "numerical_instability"),
    "healthy_cnn": (runs.cnn_tensorboard, "healthy"),
    "host_oom": (runs.mlp_with_eval, "out_of_memory"),
    "embedding_lm": (runs.tiny_lm_lightning, "architecture_imbalance"),
    "act_variance": (runs.ponder_head, "zero_variance"),
}

_HERE = Path(__file__).resolve().parent
CACHE = _HERE.parent / ".scenario-cache"


def _version() -> str:
    h = hashlib.sha256()
    for f in sorted(_HERE.glob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def build(name: str, dest: Path) -> Path:
    writer, _ = SCENARIOS[name]
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    writer(dest)
    return dest


def cached(name: str) -> Path:
    dest = CACHE / _version() / SCENARIOS[name][0].__name__    # no label in the run's own path
    done = dest / ".complete"
    if not done.exists():
        tmp = dest.with_name(dest.name + ".tmp")
        build(name, tmp)
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
        done.write_text("ok")
    return dest


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description="write a scenario's run folder")
    p.add_argument("name", choices=sorted(SCENARIOS))
    p.add_argument("dest")
    args = p.parse_args()
    build(args.name, Path(args.dest))
    (Path(args.dest) / ".complete").unlink(missing_ok=True)
    print(f"wrote {args.dest}")


if __name__ == "__main__":
    main()
