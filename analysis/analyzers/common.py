"""Small helpers the analyzers share."""
from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from analysis.metrics import Series, fmt, fmt_step
from analysis.model import Artifact, Event, Evidence
from analysis.run import ConfigHit, Run
from analysis.signals import swings

LOSS_NAMES = ("train_loss", "train_loss_epoch", "val_loss")
# Below this many points a curve is an excerpt: the trend rules (divergence, plateau) need more, and
# a NaN in it has no history that would tell an overflow from an LR too high.
SHORT_CURVE = 12
# What tells bad data from the other readings of a NaN loss (the excerpt and crashes analyzers list it)
NAN_DATA_SETTLE = ("run one pass over the data asserting torch.isfinite on every batch's inputs and targets "
                   "(and non-empty boxes, labels in range): a batch that fails makes this data_pipeline_bug")


RESTART_NEAR = 0.25     # a new run's first loss is within this share of where the first run began
# a run's first losses printed again, value for value, this many in a row (GPU kernels drift from the
# third on) and each with at least `FINE` significant digits (a coarse print repeats by chance): a rerun
REPLAYED, FINE = 2, 4
RESTARTS_MAX = 3        # an epoch counter that falls back more often is an inner counter (PPO epochs, stages)


def last_attempt(run: Run, s: Series) -> Series:
    """The loss of the last run in a log that several runs wrote one after another (a logging file
    handler appends by default; a killed run restarted by hand; k-fold folds), so that a new run's
    first losses are no divergence of the run before it. A run starts where the epoch counter falls
    back to where it began (at most `RESTARTS_MAX` times), or where the run's first `REPLAYED` losses
    come again exactly (a rerun with the same seed, whatever its counters say); and only where it is
    a jump (`_new_run`). `s` itself where no run restarted."""
    v = s.values
    if len(v) < 2 * SHORT_CURVE or not (np.isfinite(v[0]) and v[0] > 0):
        return s
    starts = []
    ep = run.metrics.get("epoch")
    if ep is not None and len(ep) >= 3 and np.isfinite(ep.values).all():
        e = ep.values
        falls = np.flatnonzero((e[1:] < e[:-1]) & (e[1:] <= e[0])) + 1       # a fall back to the first epoch
        if len(falls) <= RESTARTS_MAX:
            starts += [int(np.searchsorted(s.steps, ep.steps[i])) for i in falls]
    first = v[:REPLAYED].tolist()
    if len(set(first)) > 1 and all(_fine(x) for x in first):
        same = (np.lib.stride_tricks.sliding_window_view(v, REPLAYED) == v[:REPLAYED]).all(axis=1)
        starts += np.flatnonzero(same)[1:].tolist()
    k = max((k for k in starts if _new_run(v, k)), default=0)
    return s if not k else replace(s, steps=s.steps[k:], values=v[k:],
                                   lines=None if s.lines is None else s.lines[k:])


def _new_run(v: np.ndarray, k: int) -> bool:
    """A fresh run from `k`: the losses just before it were down by over `RESTART_NEAR` from the first
    (the run before had learned), the loss at `k` is back within it of the first (a model from
    scratch), and over `SHORT_CURVE` points after it the loss falls by as much again (it learns anew:
    a collapse back to the starting loss stays there)."""
    if not SHORT_CURVE <= k <= len(v) - SHORT_CURVE:
        return False
    low = (1 - RESTART_NEAR) * v[0]
    return bool(np.nanmedian(v[k - 5:k]) < low and abs(v[k] - v[0]) <= RESTART_NEAR * v[0]
                and np.nanmin(v[k:]) < (1 - RESTART_NEAR) * v[k])


def _fine(x: float) -> bool:
    """Printed with at least `FINE` significant digits."""
    return math.isfinite(x) and x != 0 and float(f"{x:.{FINE - 1}g}") != x


# A loss logged from the run's start: its first step at most START_STEPS, or START_SHARE of its last. A late
# window of a long run (iterations 5786-5800): its first step past LATE_SHARE of its last.
START_STEPS, START_SHARE, LATE_SHARE = 10, 0.05, 0.5


def from_start(s: Series) -> bool:
    """Whether the series shows the run from its start (a series without steps: as far as one can tell); a first
    report one logging interval in is the start's (mmcv's `Epoch [1][50/500]`, then `[1][100/500]`)."""
    if s.step_kind != "step":
        return True
    interval = float(s.steps[1] - s.steps[0]) if len(s.steps) >= 2 else 0.0
    return s.steps[0] <= max(START_STEPS, START_SHARE * s.steps[-1], interval)


def late_window(s: Series) -> bool:
    """Whether the series is a late window of a long run, not a run logged sparsely from its start."""
    return s.step_kind == "step" and s.steps[0] > max(START_STEPS, LATE_SHARE * s.steps[-1])


def rewarded(run: Run) -> Series | None:
    """A reinforcement-learning run's reward (SB3's `rollout/ep_rew_mean`, RLlib's `episode_reward_mean`), where it
    is logged with REWARD_POINTS finite values or more: there the loss is a value or policy loss, whose level
    grows with the returns it predicts, so it says nothing of learning the way a supervised loss does."""
    r = run.metrics.get("reward")
    return r if r is not None and int(np.isfinite(r.values).sum()) >= REWARD_POINTS else None


REWARD_POINTS = 3


def reward_rose(run: Run) -> Series | None:
    """An RL run's reward (`rewarded`) where it rose: the median of its last third above its first third's by
    REWARD_ROSE of its range. Its loss's rise is then the returns' growth, not a divergence; a reward that held
    flat (MountainCar at -200 throughout) or came back down says nothing for the loss."""
    reward = rewarded(run)
    if reward is None:
        return None
    v = reward.values[np.isfinite(reward.values)]
    first, last = thirds(v)
    return reward if last - first > REWARD_ROSE * float(v.max() - v.min()) else None


def thirds(v: np.ndarray) -> tuple[float, float]:
    """The medians of the first and the last third of `v`: where a noisy curve started and ended."""
    third = max(1, len(v) // 3)
    return float(np.median(v[:third])), float(np.median(v[-third:]))


REWARD_ROSE = 0.1


def train_loss(run: Run) -> Series | None:
    for name in LOSS_NAMES[:2]:
        s = run.metrics.get(name)
        if s is not None and len(s) >= 2:
            return s
    return None


def off_harmless_lines(run: Run, s: Series, also: tuple[str, ...] = ()) -> bool:
    """Whether every non-finite value of `s` was read off a line that is a harmless message (benign.toml):
    tensorboardX's `Warning: NaN or Inf found in input tensor.`, LightGBM's `best gain: -inf`, darknet's
    `Region 23 Avg IOU: nan, Class: nan, ... count: 0`. Those are the message's words, no state of the model; a
    finite value of the same name on another line (the next region's `Class: 0.51 ... count: 58`) does not make
    them less so. `also`: other event signatures whose lines count the same (an exception line's
    `column 'age' has invalid values: [nan, ...]`)."""
    if s.lines is None:
        return False
    harmless = [np.asarray(e.fields.get("lines", [e.line]), dtype=np.int64) for e in run.events
                if (e.signature == "benign" or e.signature in also) and e.artifact == s.artifact]
    bad = ~np.isfinite(s.values)
    return bool(harmless) and bool(bad.any()) and bool(np.isin(s.lines[bad], np.concatenate(harmless)).all())


def point(s: Series, i: int, label: str | None = None) -> Evidence:
    """Evidence for one value of a series: `loss 2.31 at step 400`."""
    return Evidence(f"{label or s.name} {fmt(float(s.values[i]))} at {s.step_kind} {fmt_step(s.steps[i])}",
                    s.artifact, s.locator(i))


def index_at_or_after(s: Series, step: float) -> int | None:
    i = int(np.searchsorted(s.steps, step, side="left"))
    return i if i < len(s) else None


def index_at_or_before(s: Series, step: float) -> int | None:
    i = int(np.searchsorted(s.steps, step, side="right")) - 1
    return i if i >= 0 else None


# Learning-rate ranges by optimizer family: below `low` a run barely moves; above `high` it
# usually needs a warm-up and still risks diverging. Adaptive optimizers normalise the update,
# so their useful range sits orders of magnitude below plain SGD's.
LR_KEYS = ("lr", "learning_rate", "base_lr", "max_lr", "peak_lr", "lr_max")
LR_RANGE = {"sgd": (1e-3, 0.1), "adam": (1e-6, 1e-2), "lion": (1e-7, 1e-3), "muon": (1e-4, 0.1),
            "adafactor": (1e-6, 1e-2), "rmsprop": (1e-6, 1e-2)}
_FAMILY = (("adamw", "adam"), ("adam", "adam"), ("lion", "lion"), ("muon", "muon"),
           ("adafactor", "adafactor"), ("rmsprop", "rmsprop"), ("sgd", "sgd"), ("momentum", "sgd"))
_OPTIMIZER_KEY = re.compile(r"(^|[._])(optim|optimizer)(_name|_type|\.name|\.type)?$")


def optimizer_family(run: Run) -> tuple[str, Evidence] | None:
    """The optimizer family from the config (`optimizer: sgd`) or the code (`torch.optim.SGD(...)`)."""
    for cfg in run.configs:
        for key, value in cfg.values.items():
            if isinstance(value, str) and _OPTIMIZER_KEY.search(key):
                fam = _family(value)
                if fam:
                    return fam, ConfigHit(cfg, key, value).evidence()
    for code in run.code:
        for var, (callee, line) in code.built.items():
            fam = _family(callee.rsplit(".", 1)[-1])
            if fam and "optim" in callee:
                return fam, Evidence(code.line(line), code.artifact, f"line {line}")
    return None


def _family(name: str) -> str | None:
    low = name.lower()
    return next((fam for key, fam in _FAMILY if key in low), None)


# A dynamic loss scaler (fp16 mixed precision) skips each step whose gradients overflow and halves its
# scale: at first, from a high initial scale, by design. A streak of this many skips is a 1024x fall.
SCALER_HALVINGS = 10
_SCALER_KEYS = ("fp16", "use_fp16", "amp_fp16", "init_scale", "initial_scale_power")
_OFF = (False, 0, None, "false", "False", "auto", "no", "0", "")
# a rise that took back this share of the progress made is a climb, not noise at a low level
GIVEN_BACK = 0.25


def _on(cfg, key: str) -> bool:
    """Whether `key` is set and its section (`fp16.enabled`, DeepSpeed's style) is not switched off."""
    section = key.rsplit(".", 1)[0] if "." in key else ""
    return cfg.values[key] not in _OFF and cfg.values.get(f"{section}.enabled", True) not in _OFF


def loss_scaler(run: Run) -> bool:
    """Whether the run trains under a dynamic loss scaler: its config turns fp16 on (`fp16: true`,
    `fp16.enabled`) or sets an initial scale in a section not switched off, and not bf16; its code
    makes a GradScaler not built with a computed `enabled=` (nanoGPT's is off under bf16); or it
    logs a loss scale above 1 (at 1, as bf16 runs log it, there is nothing left to halve)."""
    fp16 = False
    for cfg in run.configs:
        for key in cfg.values:
            name = key.lower()
            if not _on(cfg, key):
                continue
            if name.rsplit(".", 1)[-1] == "bf16" or name.endswith("bf16.enabled"):
                return False
            fp16 = fp16 or name.rsplit(".", 1)[-1] in _SCALER_KEYS or name.endswith("fp16.enabled")
    if fp16:
        return True
    for code in run.code:
        line = code.first_line("GradScaler")
        if line and ("enabled=" not in (text := code.line(line)) or "enabled=True" in text):
            return True
    scale = run.metrics.get("loss_scale")
    return scale is not None and bool(np.nanmax(scale.values, initial=0.0) > 1)


# An LR at or under this, at its peak, cannot be what drove the weights to overflow: 100x under the
# lowest top of any family's range (Lion's 1e-3). A NaN under it is the arithmetic's or the data's.
SMALL_LR = 1e-5


# a language model's uniform guess: ln of a common tokenizer's vocabulary (BERT, LLaMA 2/T5, GPT-2 and nanoGPT's padded
# 50304, Llama 3, Qwen 2), within 0.3% (they lie 0.4% apart or more)
VOCABS = (30522, 32000, 50257, 50304, 128256, 151936)
VOCAB_REL = 0.003

# Of the lines of a collective's failure (signature nccl_timeout), those where it waited (a watchdog's timeout, a
# communicator aborted after one), not NCCL's own errors (`ncclInternalError`, `unhandled system error`), which name a
# cause of their own
COLLECTIVE_WAITED = re.compile(r"(?i)timed? ?out|watchdog")


def steady_swing(run: Run, s: Series) -> tuple[float, float] | None:
    """signals.swings of `s` where the LR does not move (or is not logged): under a schedule that restarts or
    cycles, the loss swings with it."""
    lr = run.metrics.get("lr")
    if lr is not None and len(lr) >= 2 and np.isfinite(lr.values).any():
        lo, hi = float(np.nanmin(lr.values)), float(np.nanmax(lr.values))
        if hi > 1.5 * lo:
            return None
    return swings(s.values)


def small_lr(run: Run) -> Evidence | None:
    """The run's peak LR where it is at most SMALL_LR, as evidence against an LR too high."""
    peak = peak_lr(run)
    if peak is None or not 0 < peak[0] <= SMALL_LR:
        return None
    return Evidence(f"{peak[1].text}: at most {fmt(SMALL_LR)}, far too small to drive the weights to overflow",
                    peak[1].artifact, peak[1].locator)


def peak_lr(run: Run) -> tuple[float, Evidence] | None:
    """The run's peak LR: from the logged series, else from the config."""
    lr = run.metrics.get("lr")
    if lr is not None and len(lr) and np.isfinite(lr.values).any():
        i = int(np.nanargmax(lr.values))
        peak = float(lr.values[i])
        return peak, Evidence(f"peak lr {fmt(peak)}", lr.artifact, lr.locator(i))
    hit = run.config_value(*LR_KEYS)
    if hit and hit.number is not None:
        return hit.number, hit.evidence()
    return None


def losses(run: Run) -> list[Series]:
    """Every series the run logged under a name holding `loss` (a GAN's players, a detector's parts), with values."""
    return [s for name in run.metrics.names() if "loss" in name and (s := run.metrics.get(name)) is not None
            and len(s)]


def metrics_read(run: Run) -> bool:
    """Whether any step or metric was read from the run's files."""
    return any(len(s) for name in run.metrics.names() if (s := run.metrics.get(name)) is not None)


def paste_kinds(run: Run) -> tuple[str, ...]:
    """The artifact kinds the line-by-line readings of a paste go through: a file of model outputs only where it is
    the paste itself (a one-line paste may be taken for one)."""
    return ("log", "traceback", "samples") if len(run.usable()) == 1 else ("log", "traceback")


def pasted_texts(run: Run, kinds: tuple[str, ...], most_bytes: int,
                 only: str | None = None) -> Iterator[tuple[Artifact, str]]:
    """The usable artifacts of `kinds` up to `most_bytes` (the one at path `only`, where given), each with its
    text (undecodable bytes replaced): the short pastes the line-by-line readings go through. One that cannot be
    read is passed over. Line ends are kept as written, so that `text.split("\n")` numbers lines as the readers
    and events do (a progress bar's `\r` is no line); `splitlines()` gives the same lines as a text read with
    newlines translated."""
    base = run.root if run.root.is_dir() else run.root.parent
    for a in run.usable():
        if a.kind not in kinds or a.size > most_bytes or only is not None and a.path != only:
            continue
        try:
            with open(base / a.path, newline="", errors="replace") as f:
                yield a, f.read()
        except OSError:
            continue


def reported_after(loss: Series | None, e: Event) -> np.ndarray:
    """The values of `loss` logged after event `e`'s last line in the same file (none where either has no lines):
    a run that went on past the message (every time it was printed)."""
    return reported_after_line(loss, e.artifact, e.fields.get("last_line", e.line))


def reported_after_line(loss: Series | None, artifact: str, line: int) -> np.ndarray:
    """The values of `loss` logged after `line` of `artifact` (none where it has no lines or is another file's)."""
    if loss is None or loss.lines is None or loss.artifact != artifact:
        return np.zeros(0)
    return loss.values[loss.lines > line]
