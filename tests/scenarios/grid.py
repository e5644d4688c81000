"""A configurable tiny trainer for the wider suite: one architecture (MLP, CNN, LSTM, small
transformer LM, regression MLP), one optimizer (SGD, momentum, Adam, AdamW, RMSprop), one LR
schedule (constant, step, cosine, warm-up), one output format, one size and one seed per variant.

The families (grid_optim, grid_data, grid_system, grid_healthy, long_runs) change one thing in it
and check at generation time that the change shows; `Knobs` is that one thing, named neutrally
because its source is saved beside the run as the training code."""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import torch
import yaml
from safetensors.torch import save_file
from torch import nn

from tests.scenarios import training
from tests.scenarios.runs import _save_code, _weights
from tests.scenarios.sinks import Csv, Jsonl, LightningCsv, TensorBoard, TextLog, TrainerState

BASE_LR = {"sgd": 0.05, "momentum": 0.02, "adam": 2e-3, "adamw": 2e-3, "rmsprop": 1e-3}
TEXT_STYLES = ("kv", "pipe", "nanogpt", "colon")
FORMATS = TEXT_STYLES + ("jsonl", "csv", "tb", "hf", "lightning", "mlflow")


@dataclass(frozen=True)
class Variant:
    arch: str = "mlp"          # mlp, cnn, lstm, rnn, lm, regression
    opt: str = "adam"          # sgd, momentum, adam, adamw, rmsprop
    sched: str = "constant"    # constant, step, cosine, warmup
    fmt: str = "kv"            # one of FORMATS
    seed: int = 0
    width: int = 32
    steps: int = 240
    batch: int = 32
    depth: int = 1

    def with_(self, **kw) -> "Variant":
        return replace(self, **kw)


@dataclass
class Knobs:
    """What a family changes in the loop."""
    lr: float | None = None                       # None: the optimizer's usual rate
    lr_factor: Callable[[int], float] | None = None   # multiplies the schedule at a step
    rows: Callable[[int, torch.Tensor, torch.Tensor], tuple] | None = None   # rewrites a batch
    val_rows: Callable[[int, torch.Tensor, torch.Tensor], tuple] | None = None   # picks the evaluation rows
    prepare: Callable[[nn.Module], None] | None = None    # runs once on the fresh model
    clear_grads: bool = True
    apply_step: bool = True
    trainable: Callable[[nn.Module], list] | None = None  # what the optimizer is given
    clip: float | None = None
    loss: Callable | None = None                  # replaces the task's loss
    label_noise: float = 0.0                      # share of random labels (noise std for regression)
    samples: int = 1024
    val_every: int = 0
    per_layer: bool = False
    checkpoints: tuple[int, ...] = ()
    act: type = nn.ReLU
    init_std: float | None = None
    extra_config: dict = field(default_factory=dict)


# --- data and models -------------------------------------------------------------------------------

class SmallConv(nn.Module):
    def __init__(self, width: int, classes: int, act=nn.ReLU, depth: int = 1) -> None:
        super().__init__()
        layers, ch = [], 1
        for _ in range(depth):
            layers += [nn.Conv2d(ch, width // 2, 3, padding=1), act()]
            ch = width // 2
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.head = nn.Linear(ch * 4, classes)

    def forward(self, x):
        return self.head(self.features(x))


class TinyTransformer(nn.Module):
    def __init__(self, vocab: int, width: int, seq: int, depth: int = 1) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.randn(seq, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, 2, width * 2, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(width, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq))

    def forward(self, ids):
        h = self.embed(ids) + self.pos[: ids.shape[1]]
        return self.head(self.blocks(h, mask=self.mask[: ids.shape[1], : ids.shape[1]], is_causal=True))


class Recurrent(nn.Module):
    """An Elman RNN written out (one Linear for the input, one for the state, per layer), stacked
    `depth` deep, classifying a token sequence from its last state: per-layer gradient norms show
    each layer's weights by name, nearest the input first."""

    def __init__(self, vocab: int, width: int, classes: int, depth: int = 1, act=nn.Tanh) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.cells = nn.ModuleList(nn.ModuleDict({"inp": nn.Linear(width, width), "rec": nn.Linear(width, width)})
                                   for _ in range(depth))
        self.act = act()
        self.head = nn.Linear(width, classes)

    def forward(self, ids):
        seq = self.embed(ids)
        for cell in self.cells:
            h = torch.zeros(ids.shape[0], seq.shape[-1])
            states = []
            for t in range(seq.shape[1]):
                h = self.act(cell["inp"](seq[:, t]) + cell["rec"](h))
                states.append(h)
            seq = torch.stack(states, 1)
        return self.head(seq[:, -1])


LM_VOCAB, LM_SEQ = 24, 16
RNN_SEQ = 20


def lm_text(n: int, seed: int) -> torch.Tensor:
    """Token windows from a corpus of repeated short motifs, so the next token is mostly predictable."""
    g = torch.Generator().manual_seed(seed)
    motifs = [torch.randint(1, LM_VOCAB, (int(k),), generator=g) for k in torch.randint(3, 7, (8,), generator=g)]
    stream = torch.cat([motifs[int(i)] for i in torch.randint(0, 8, (n * 3,), generator=g)])
    starts = torch.randint(0, len(stream) - LM_SEQ - 1, (n,), generator=g)
    return torch.stack([stream[s: s + LM_SEQ + 1] for s in starts.tolist()])


def dataset(v: Variant, n: int):
    """(inputs, targets, loss function, number of classes or 0 for regression)."""
    if v.arch == "cnn":
        x, y = training.blobs(n, 64, 4, v.seed)
        return x.view(-1, 1, 8, 8), y, nn.functional.cross_entropy, 4
    if v.arch == "lstm":
        x, y = training.sequences(n, 10, 24, 3, v.seed)
        return x, y, nn.functional.cross_entropy, 3
    if v.arch == "rnn":
        x, y = training.sequences(n, RNN_SEQ, 24, 3, v.seed)
        return x, y, nn.functional.cross_entropy, 3
    if v.arch == "lm":
        w = lm_text(n, v.seed)
        return w[:, :-1], w[:, 1:], lm_loss, LM_VOCAB
    if v.arch == "regression":
        g = torch.Generator().manual_seed(v.seed)
        x = torch.randn(n, 12, generator=g)
        y = (x @ torch.randn(12, 1, generator=g)).tanh() + 0.1 * torch.randn(n, 1, generator=g)
        return x, y, nn.functional.mse_loss, 0
    x, y = training.blobs(n, 16, 4, v.seed)
    return x, y, nn.functional.cross_entropy, 4


def noisy(y: torch.Tensor, classes: int, share: float, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if not classes:
        return y + share * torch.randn(y.shape, generator=g)
    flip = torch.rand(y.shape, generator=g) < share
    return torch.where(flip, torch.randint(0, classes, y.shape, generator=g), y)


def lm_loss(logits, targets):
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def build_model(v: Variant, classes: int, act=nn.ReLU) -> nn.Module:
    if v.arch == "cnn":
        return SmallConv(v.width, classes, act, v.depth)
    if v.arch == "lstm":
        return training.SeqClassifier(24, v.width, classes)
    if v.arch == "rnn":
        return Recurrent(24, v.width, classes, v.depth, act)
    if v.arch == "lm":
        return TinyTransformer(LM_VOCAB, v.width, LM_SEQ, v.depth)
    if v.arch == "regression":
        return training.mlp(12, v.width, 1, v.depth, act)
    return training.mlp(16, v.width, classes, v.depth, act)


def optimizer(name: str, params, lr: float):
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if name == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr)
    return torch.optim.Adam(params, lr=lr)


def schedule(name: str, step: int, total: int) -> float:
    """The schedule's factor on the base LR at `step` (1-based)."""
    if name == "step":
        return 0.1 if step > total * 0.6 else 1.0
    if name == "cosine":
        return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * step / total))
    if name == "warmup":
        return min(1.0, step / max(1, total // 10))
    return 1.0


# --- the loop ----------------------------------------------------------------------------------------

def train(v: Variant, k: Knobs, dest: Path | None = None):
    """Trains `v` changed by `k`; returns (model, history rows, validation set)."""
    training.seed_all(v.seed)
    n_val = max(256, k.samples // 5)
    x, y, loss_fn, classes = dataset(v, k.samples + n_val)
    x, y, xv, yv = x[:k.samples], y[:k.samples], x[k.samples:], y[k.samples:]     # one distribution, held-out rows
    if k.label_noise:
        y, yv = noisy(y, classes, k.label_noise, v.seed), noisy(yv, classes, k.label_noise, v.seed + 1)
    loss_fn = k.loss or loss_fn
    model = build_model(v, classes, k.act)
    if k.init_std is not None:
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith("weight") and p.dim() > 1:
                    p.normal_(0.0, k.init_std)
    if k.prepare:
        k.prepare(model)
    base = k.lr if k.lr is not None else BASE_LR[v.opt]
    params = k.trainable(model) if k.trainable else model.parameters()
    opt = optimizer(v.opt, params, base)
    g = torch.Generator().manual_seed(v.seed + 7)
    rows = []
    for step in range(1, v.steps + 1):
        lr = base * schedule(v.sched, step, v.steps) * (k.lr_factor(step) if k.lr_factor else 1.0)
        for group in opt.param_groups:
            group["lr"] = lr
        idx = torch.randint(0, len(x), (v.batch,), generator=g)
        xb, yb = x[idx], y[idx]
        if k.rows:
            xb, yb = k.rows(step, xb, yb)
        model.train()
        loss = loss_fn(model(xb), yb)
        if k.clear_grads:
            opt.zero_grad()
        loss.backward()
        gn = float(nn.utils.clip_grad_norm_(model.parameters(), k.clip if k.clip else float("inf")))
        row = {"step": step, "loss": loss.item(), "lr": lr, "grad_norm": gn}
        if k.per_layer:
            row.update({f"grad_norm/{n}": v_ for n, v_ in training.layer_grad_norms(model).items()})
        if k.apply_step:
            opt.step()
        if k.val_every and step % k.val_every == 0:
            model.eval()
            xe, ye = k.val_rows(step, xv, yv) if k.val_rows else (xv, yv)
            with torch.no_grad():
                row["val_loss"] = float(loss_fn(model(xe), ye))
        if dest is not None and step in k.checkpoints:
            (dest / "checkpoints").mkdir(exist_ok=True)
            save_file(_weights(model), dest / "checkpoints" / f"step_{step}.safetensors")
        rows.append(row)
    return model, rows, (xv, yv)


# --- what the run leaves behind ----------------------------------------------------------------------

def config(v: Variant, k: Knobs) -> dict:
    lr = k.lr if k.lr is not None else BASE_LR[v.opt]
    opt = {"sgd": "sgd", "momentum": "sgd", "adam": "adam", "adamw": "adamw", "rmsprop": "rmsprop"}[v.opt]
    cfg = {"model": {"arch": v.arch, "hidden": v.width, "layers": v.depth},
           "optimizer": {"name": opt, "lr": lr, **({"momentum": 0.9} if v.opt == "momentum" else {}),
                         **({"weight_decay": 0.01} if v.opt == "adamw" else {})},
           "scheduler": {"name": v.sched, **({"warmup_steps": v.steps // 10} if v.sched == "warmup" else {})},
           "batch_size": v.batch, "max_steps": v.steps, "seed": v.seed,
           **({"max_grad_norm": k.clip} if k.clip else {})}
    for key, val in k.extra_config.items():
        cfg[key] = val
    return cfg


def _mlflow(dest: Path, rows: list[dict], cfg: dict) -> None:
    # the same run id on every build (hash() of a str changes with PYTHONHASHSEED)
    run = dest / "mlruns" / "0" / hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:8]
    (run / "metrics").mkdir(parents=True)
    (run / "params").mkdir()
    (run / "meta.yaml").write_text(f"run_id: {run.name}\nexperiment_id: '0'\nstatus: 3\n")
    (dest / "mlruns" / "0" / "meta.yaml").write_text("experiment_id: '0'\nname: Default\n")
    flat = {"lr": cfg["optimizer"]["lr"], "optimizer": cfg["optimizer"]["name"], "batch_size": cfg["batch_size"],
            "scheduler": cfg["scheduler"]["name"], "hidden": cfg["model"]["hidden"]}
    for key, val in flat.items():
        (run / "params" / key).write_text(str(val))
    series: dict[str, list[str]] = {}
    for r in rows:
        for key, val in r.items():
            if key != "step":
                series.setdefault(key.replace("/", "_") if key.startswith("grad_norm/") else key, []).append(
                    f"{1772355600000 + r['step'] * 350} {val} {r['step']}")
    for key, lines in series.items():
        path = run / "metrics" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")


def write(dest: Path, v: Variant, k: Knobs, rows: list[dict], model: nn.Module | None, log_every: int = 1,
          tail: str = "", code: tuple = ()) -> None:
    """Config, metrics in the variant's format, final weights, training code; `tail` (a traceback, a
    warning) goes to the text log, or to stderr.log beside a structured format."""
    cfg = config(v, k)
    shown = [r for r in rows if r["step"] % log_every == 0 or "val_loss" in r or r is rows[-1]]
    fmt = v.fmt
    if fmt in TEXT_STYLES:
        (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        log = TextLog(dest / "train.log", style=fmt)
        log.line(f"starting: {v.arch}, {cfg['optimizer']['name']}, {v.steps} steps")
        for r in shown:
            log.log(**{key: (round(val, 6) if isinstance(val, float) else val) for key, val in r.items()})
        if tail:
            log.raw(tail)
        log.close()
    else:
        if tail:
            (dest / "stderr.log").write_text(tail.rstrip("\n") + "\n")
        if fmt == "jsonl":
            (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
            out = Jsonl(dest / "metrics.jsonl")
            for r in shown:
                out.log(**r)
            out.close()
        elif fmt == "csv":
            (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
            out = Csv(dest / "metrics.csv")
            for r in shown:
                out.log(**r)
            out.close()
        elif fmt == "tb":
            (dest / "hparams.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
            tb = TensorBoard(dest / "runs")
            for r in shown:
                tb.log(r["step"], **{("val/loss" if key == "val_loss" else key): val for key, val in r.items()
                                     if key != "step"})
            tb.close()
        elif fmt == "hf":
            (dest / "config.json").write_text(json.dumps({
                "learning_rate": cfg["optimizer"]["lr"], "optim": cfg["optimizer"]["name"],
                "lr_scheduler_type": {"constant": "constant", "step": "constant", "cosine": "cosine",
                                      "warmup": "constant_with_warmup"}[v.sched],
                "warmup_steps": cfg["scheduler"].get("warmup_steps", 0), "max_steps": v.steps,
                "per_device_train_batch_size": v.batch, "seed": v.seed,
                **({"max_grad_norm": k.clip} if k.clip else {}), **k.extra_config}, indent=2))
            state = TrainerState(dest, v.batch, logging_steps=log_every)
            for r in shown:
                entry = {"step": r["step"], "epoch": round(r["step"] * v.batch / k.samples, 4)}
                if r["step"] % log_every == 0 or r is rows[-1]:
                    entry.update({name: r[key] for key, name in (("loss", "loss"), ("lr", "learning_rate"),
                                                                  ("grad_norm", "grad_norm")) if key in r})
                    state.log(**entry)
                if "val_loss" in r:
                    state.log(step=r["step"], epoch=entry["epoch"], eval_loss=r["val_loss"])
            ck = state.close(v.steps * v.batch / k.samples)
            if model is not None:
                save_file(_weights(model), ck / "model.safetensors")
                model = None
        elif fmt == "lightning":
            out = LightningCsv(dest)
            (out.version / "hparams.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
            for r in shown:
                if r["step"] % log_every == 0 or r is rows[-1]:
                    out.log(step=r["step"] - 1, train_loss_step=r["loss"],
                            **{"lr-" + cfg["optimizer"]["name"]: r["lr"]},
                            **({"grad_norm": r["grad_norm"]} if "grad_norm" in r else {}))
                if "val_loss" in r:
                    out.log(step=r["step"] - 1, val_loss=r["val_loss"])
            out.close()
        elif fmt == "mlflow":
            _mlflow(dest, shown, cfg)
        else:
            raise ValueError(f"unknown format {fmt!r}")
    if model is not None:
        save_file(_weights(model), dest / "model.safetensors")
    _save_code(dest, *(code or (Knobs, train)))


# --- generation-time checks --------------------------------------------------------------------------

def losses(rows: list[dict]) -> list[float]:
    return [r["loss"] for r in rows]


def mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs)


def nonfinite_at(rows) -> int | None:
    """The first row whose loss or gradient norm is NaN/Inf, else None."""
    return next((i for i, r in enumerate(rows) if not (math.isfinite(r["loss"]) and math.isfinite(r["grad_norm"]))),
                None)


class CheckFailed(RuntimeError):
    """A variant whose injected change did not show."""


def require(ok: bool, what: str) -> None:
    """A variant whose change does not show is a broken scenario, whatever the seed: fail the build."""
    if not ok:
        raise CheckFailed(f"scenario check failed: {what}")


def first_that_shows(strengths, attempt):
    """`attempt(strength)` at the first strength on the ladder whose fault shows (its checks pass).

    A fault that rides on chaotic float dynamics (an initialisation just wide enough to blow up late)
    sits on an edge that moves with the CPU's kernels: a strength that blows up at step 120 on one
    machine stays finite, or blows up at step 45, on another. The ladder starts at the strength the
    family was written with, so a machine where it shows writes the same run, and steps outward."""
    why = []
    for strength in strengths:
        try:
            return attempt(strength)
        except CheckFailed as exc:
            why.append(f"{strength}: {exc}")
    raise CheckFailed("no strength on the ladder showed the fault: " + "; ".join(why))


@dataclass(frozen=True)
class Family:
    """One generator: a writer `fn(dest, variant)`, the code its runs must be diagnosed with, and the
    split every one of its variants belongs to (`tuning` or `measuring`, fixed once)."""
    name: str
    fn: Callable
    code: str
    split: str
    variants: tuple[Variant, ...]

    def writers(self) -> dict[str, Callable]:
        """scenario name -> writer; the writer's name (the run's folder) says nothing of the code."""
        out = {}
        for i, v in enumerate(self.variants):
            def writer(dest: Path, v=v) -> None:
                self.fn(Path(dest), v)
            writer.__name__ = f"{v.arch}_{v.opt}_{v.sched}_{v.fmt}_{v.seed}"
            out[f"{self.name}_{i}"] = writer
        return out
