"""Find a run's artifacts and classify each by name and, where the name says little, by content."""
from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from analysis.ingest.dressing import ANSI, undress
from analysis.ingest.inside import walk

MAX_FILES = 5000
_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", ".ipynb_checkpoints", ".mypy_cache"}
_SAMPLE_NAME = re.compile(r"sample|generation|generated|prediction|completion|outputs?[_.-]", re.I)
_AUX_CKPT = re.compile(r"^(optimizer|scheduler|scaler|rng_state.*|training_args)\.(pt|pth|bin)$")
_CKPT_EXT = {".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle", ".tar"}
_LOG_EXT = {".log", ".txt", ".out", ".err", ".stdout", ".stderr"}
_CONFIG_EXT = {".yaml", ".yml", ".toml", ".json", ".cfg"}


@dataclass
class Found:
    path: Path
    rel: str
    kind: str
    format: str


_ANSI = re.compile(ANSI.pattern.encode())     # the same colour codes, on raw bytes
# a metric word stands apart from letters, not from `_` or digits: `total_loss`, `loss_cls`, `lr0`, a
# coloured `\x1b[31mloss` (the colour code is taken off first)
_LOG_WORDS = re.compile(rb"Traceback|Error|Exception|Warning|NCCL|Killed|"
                        rb"Average Precision +\(AP\) @\[|^[ \t]*Mean AP = |"     # an evaluation's summary
                        rb"^[ \t]*(?:Eval result:[ \t]*)?(?:mean[ _]?iou|miou)\b|"
                        rb"(?<![A-Za-z])(?:loss|epoch|step|iter|lr|acc(?:uracy)?|rmse|m?logloss)(?![A-Za-z])|"
                        rb"(?<![A-Za-z])(?:perplexity|ppl)[ \t]*[:=]?[ \t]*\d|"   # (a generation may say "ppl")
                        rb"\bMinibatch\[\d+-\d+\]|"      # CNTK's `Final Results: Minibatch[1-1]: errs = ...`
                        # a value printed NaN/Inf by name (RLlib's `episode_reward_mean: .nan`): a
                        # model's outputs hold no such line...
                        rb"^[ \t]*[A-Za-z_][\w./]{0,64}[ \t]*[:=][ \t]*[-+]?\.?(?:nan|inf)\b|"
                        # (or two such pairs after a comma, a print loop's: x-vits' `b=3.985, disc=nan, gen=nan,`; one
                        # may be a prediction's `target=nan` or an answer's `limit = inf`)
                        rb",[ \t]*[A-Za-z_][\w./]{0,64}[ \t]*[:=][ \t]*[-+]?\.?(?:nan|inf)\b[ \t]*,"
                        rb"[ \t]*[A-Za-z_][\w./]{0,64}[ \t]*[:=][ \t]*[-+]?\.?(?:nan|inf)\b|"
                        rb"\[[ \t]*nan,?[ \t]+nan\b|"    # ...nor a printed tensor of NaN...
                        # ...nor lines a logger stamped (`2024-03-01 10:22:30,809 - INFO -`, glog's `I0301 10:22:10`)...
                        rb"^[ \t]*\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ |"
                        # ...nor a row of a table of numbers with a NaN among them (YOLO's `nan  0.007422  0  nan`)...
                        rb"^[ \t]*(?:[-+]?[\d.]+(?:e[-+]?\d+)?[ \t]+)*[-+]?(?:nan|inf)"
                        rb"(?:[ \t]+[-+]?(?:[\d.]+(?:e[-+]?\d+)?|nan|inf))+[ \t]*$|"
                        # (or ending one beside a value at 1e10 or more, which no prediction or label holds:
                        # a print loop's `-1.13727e+19 0 nan` (`-11372700000000000000.0 0 nan`) after its run diverged)
                        rb"^(?=[^\n]*(?:\de\+?(?:[1-9]\d|\d{3})|(?<![\d.])\d{11,}\.\d))"
                        rb"[ \t]*(?:[-+]?[\d.]+(?:e[-+]?\d+)?[ \t]+)+"
                        rb"[-+]?(?:nan|inf)[ \t]*$|"
                        # ...nor a number printed alone, then NaN alone on every line to the end of the head
                        # (`print(cost)` in a loop: `0.69314718056`, `nan`, `nan`; a prediction file's NaN has numbers
                        # after it)...
                        rb"^[ \t]*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?[ \t]*\r?\n"
                        rb"(?:[ \t]*[-+]?(?:nan|inf)[ \t]*(?:\r?\n|\Z))+\Z|"
                        # ...nor SentencePiece's unknown piece (U+2047 in UTF-8) twice on a line, a tokenizer
                        # the text outgrew...
                        rb"\xe2\x81\x87[^\n]{0,200}?\xe2\x81\x87|"
                        # ...nor a loss printed alone (`tensor(2.3026, grad_fn=<NllLossBackward0>)`, fastai's
                        # `TensorBase(5.7082e+08)`)
                        rb"^[ \t]*(?:tensor\([-+.\deE]+,.*grad_fn=<|TensorBase\([-+.\deE]+\)[ \t]*$)|"
                        rb"^[ \t]*tensor\([-+]?(?:nan|inf)\b|"      # ...nor one printed NaN (`tensor(nan)`)
                        # ...nor the command that launched a run (`python train.py --lr 1.0`)
                        rb"\b(?:python[\d.]*|torchrun|deepspeed)[ \t][^\n]{0,1000}?[ \t]--[A-Za-z]",
                        re.I | re.M)


# literals a model's outputs may hold without being a console: the unknown piece alone (two on a line are read
# above), LLaMA-Factory's inference-only notice, and words an answer about a crash may use
_NOT_LOG_LITERALS = ("\u2047", "inference only", "Exit Code", "OOM killer", "OOM Killer", "check_nan")


def _reads_like_a_log(path: Path) -> bool:
    """Whether the first 4 KB of a file named like model outputs read like a training console:
    a traceback, a warning, metrics by name, or any literal a failure signature starts from
    (`CUDA out of memory`, `Expected more than 1 value per channel` pasted alone)."""
    from analysis.ingest.events import prefilter_literals

    with open(path, "rb") as f:
        head = f.read(4096)
        if f.read(1):
            head = head[:head.rfind(b"\n") + 1] or head     # whole lines only: a line cut at 4 KB is not its own
        head = _ANSI.sub(b"", head)
    if _LOG_WORDS.search(head):
        return True
    # each line as its trainer printed it: a paste quoted in markdown, or one a launcher prefixed (`[rank0]:`),
    # reads as itself
    bare = "\n".join(undress(line) for line in head.decode("utf-8", "replace").splitlines()).encode()
    return bool(_LOG_WORDS.search(bare)) or any(lit.encode() in head for lit in prefilter_literals()
                                                if lit not in _NOT_LOG_LITERALS)


HEAD_BYTES = 4096


def _sniff(path: Path) -> tuple[str, str]:
    """(kind, format) from the first bytes of a file whose name is not telling."""
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    if head.startswith(b"PK\x03\x04"):
        return "checkpoint", "torch"
    if head[:1] == b"\x80" and len(head) > 1 and head[1] in range(2, 6):
        return "checkpoint", "torch-pickle"
    if len(head) >= 9:
        (n,) = struct.unpack("<Q", head[:8])
        if 2 <= n < (100 << 20) and head[8:9] == b"{":
            return "checkpoint", "safetensors"
    if b"\x00" in head:
        return "unknown", "binary"
    text = head.decode("utf-8", "replace")
    # a few bytes that are not UTF-8 (a stray \xff in a good log, Latin-1 in a path) are text
    # with damage; binary data has them everywhere
    if text.count("\ufffd") > max(8, len(head) // 100):
        return "unknown", "binary"
    stripped = text.lstrip()
    if stripped.startswith("Traceback (most recent call last)"):
        return "traceback", "plain_text"
    if stripped.startswith("Namespace(") and not stripped.partition("\n")[2].strip() and len(head) < HEAD_BYTES:
        return "config", "argparse"       # `print(args)` alone; followed by the training's lines it is a log
    if stripped.startswith("{'"):
        return "log", "plain_text"        # printed Python dicts: HF Trainer's `{'loss': 0.62, ...}`
    if stripped.startswith("{"):
        lines = stripped.splitlines()
        try:
            json.loads(lines[0])
            return "metrics", "jsonl"
        except ValueError:
            pass
        # a JSON document's `{` is followed by a key or its `}`; Lua Torch prints a table of tensors
        # (`{` then `  1 : CudaTensor - size: 64x291`) inside its training console
        after = next((ln.lstrip() for ln in lines[1:] if ln.strip()), "")
        if not after and _JSON_METRIC.search(lines[0]):
            return "metrics", "jsonl"     # one record a trainer logged, cut where the paste ended (DETR's log.txt)
        if not after or after.startswith(('"', "}")):
            return "config", "json"
    if looks_like_csv_metrics(stripped):
        return "metrics", "csv"           # Keras' CSVLogger writes `training.log` as a CSV table
    return "log", "plain_text"


# a logged record's metric key (`"train_loss"`, `"val_acc"`), not a setting's (`"bbox_loss_coef"`, `"loss_scale"`,
# `"gradient_accumulation_steps"`)
_JSON_METRIC = re.compile(r'"(?:[\w./-]{0,40}[_./-])?(?:loss|acc|accuracy)(?:[_./-][\w./-]{0,40})?(?<!coef)(?<!weight)'
                          r'(?<!scale)"[ \t]*:[ \t]*[-+\d.]', re.I)
_CSV_HEADER = {",": re.compile(r"[A-Za-z_][\w./-]*(?:,[A-Za-z_][\w./-]*)+"),
               "\t": re.compile(r"[A-Za-z_][\w./-]*(?:\t+[A-Za-z_][\w./-]*)+")}
_CSV_METRIC = re.compile(r"(?:^|[,\t_/.])(?:loss|acc|accuracy|epoch|step)(?:$|[,\t_/.])", re.I)
_CSV_CELL = re.compile(r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|-?inf|)", re.I)


def looks_like_csv_metrics(text: str) -> bool:
    """Whether the first lines of a file are a CSV table of metrics under a name that does not say
    so: a header of names, one of them a loss, an accuracy, an epoch or a step, then a row of as
    many numbers (empty cells allowed). Keras' CSVLogger writes `training.log` so; a print loop's
    tab-separated table (`train_loss<TAB>train_EPE<TAB>EPE`, then its rows) is read the same way."""
    lines = [ln.strip() for ln in text.splitlines()[:3] if ln.strip()]
    if len(lines) < 2 or not _CSV_METRIC.search(lines[0]):
        return False
    sep = "\t" if "\t" in lines[0] and "," not in lines[0] else ","
    if not _CSV_HEADER[sep].fullmatch(lines[0]):
        return False
    header = [h for h in lines[0].split(sep) if h]

    def is_row(line: str) -> bool:
        row = [c for c in line.split(sep) if c or sep == ","]
        return len(row) == len(header) and all(_CSV_CELL.fullmatch(c.strip()) for c in row) and any(row)

    if sep == ",":
        return is_row(lines[1])
    # a print loop's table may go on into its own prose or a traceback: a table only where the whole head is
    # rows (its last line may be cut), else the log reader reads its lines and whatever follows them
    body = [ln for ln in text.splitlines()[1:-1] if ln.strip()] or lines[1:2]
    return all(is_row(ln.strip()) for ln in body)


def is_sample_file(name: str) -> bool:
    """Whether a file's name says it holds model outputs (`samples.jsonl`, `generations.csv`,
    `predictions.txt`) rather than metrics or a log; the caller decides what that means per format."""
    return bool(_SAMPLE_NAME.search(name.lower()))


def _json_kind(path: Path) -> tuple[str, str]:
    """A `.json` file by its contents: one object a line is a metrics log (detectron2 writes its `metrics.json`
    so; `eval_generations.json` by its name is model outputs, as a `.jsonl` would be), a document with a
    `log_history` is a Hugging Face trainer state under another name (`trainer_state (1).json` from a chat
    upload), anything else a config."""
    with path.open("rb") as f:
        head = f.read(HEAD_BYTES).decode("utf-8", "replace")
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if len(lines) >= 2 and lines[1].lstrip().startswith("{"):
        try:
            if isinstance(json.loads(lines[0]), dict):
                return ("samples", "jsonl") if is_sample_file(path.name) else ("metrics", "jsonl")
        except ValueError:
            pass
    if '"log_history"' in head:
        return "metrics", "hf_trainer_state"
    return "config", "json"


def classify(path: Path, rel: str) -> tuple[str, str]:
    name = path.name
    lower = name.lower()
    suffix = path.suffix.lower()
    if path.stat().st_size == 0:
        return "unknown", "empty"
    if lower == "trainer_state.json":
        return "metrics", "hf_trainer_state"
    if lower.startswith("events.out.tfevents"):
        return "metrics", "tensorboard"
    if lower.endswith(".safetensors.index.json"):
        return "checkpoint", "safetensors-index"
    if suffix == ".safetensors":
        return "checkpoint", "safetensors"
    if _AUX_CKPT.match(name):
        return "checkpoint", "torch-aux"
    if suffix in _CKPT_EXT:
        kind, fmt = _sniff(path)         # a .bin may be anything: trust the bytes, not the name
        if kind == "checkpoint" and fmt != "safetensors":
            return kind, "lightning-ckpt" if suffix == ".ckpt" else fmt
        return kind, fmt
    if suffix == ".py":
        return "code", "python"
    if suffix == ".csv":
        if is_sample_file(name):
            return "samples", "csv"
        return "metrics", "lightning_csv" if "lightning_logs" in rel or lower == "metrics.csv" else "csv"
    if suffix == ".jsonl":
        return ("samples", "jsonl") if is_sample_file(name) else ("metrics", "jsonl")
    if suffix in (".yaml", ".yml"):
        return "config", "lightning_hparams" if lower == "hparams.yaml" else "yaml"
    if suffix == ".toml":
        return "config", "toml"
    if suffix == ".json":
        return _json_kind(path)
    if suffix in _LOG_EXT or suffix == "":
        if is_sample_file(name) and suffix in (".txt", "") and not _reads_like_a_log(path):
            return "samples", "plain_text"       # `output.txt` is as often a run's console output
        return _sniff(path)
    return _sniff(path)


def discover(root: Path, max_depth: int = 32) -> tuple[list[Found], list[Path], int, list[str]]:
    """(artifacts, MLflow run folders, files left out past MAX_FILES, folders too deep to enter)."""
    if root.is_file():
        return [Found(root, root.name, *classify(root, root.name))], [], 0, []
    found: list[Found] = []
    mlflow_runs: list[Path] = []
    left_out = 0
    paths: list[Path] = []
    deep: list[Path] = []
    # a link may point outside the run: `walk` never follows one
    for path, is_dir in walk(root, max_depth, skip=lambda name: name in _SKIP_DIRS or name.startswith("."),
                             too_deep=deep):
        if is_dir:
            if (path / "meta.yaml").is_file() and (path / "metrics").is_dir():
                mlflow_runs.append(path)
            continue
        paths.append(path)
    for path in sorted(paths):
        rel_parts = path.relative_to(root).parts
        if any(path.is_relative_to(r) for r in mlflow_runs):
            continue
        if "mlruns" in rel_parts and path.name == "meta.yaml":
            continue
        if len(found) >= MAX_FILES:
            left_out += 1
            continue
        rel = path.relative_to(root).as_posix()
        found.append(Found(path, rel, *classify(path, rel)))
    return found, mlflow_runs, left_out, [d.relative_to(root).as_posix() for d in deep]
