"""The live watch's precursor rules (analysis/precursors.py) on real tiny CPU trainings: each warns
early, marked early, at a confidence below the post-mortem's, before the post-mortem is certain;
none fires on healthy trainings with schedules and noisy losses; the guard never acts on one."""
from __future__ import annotations

import math

import pytest
import torch

from analysis.diagnose import CONFIDENT, diagnose_run
from analysis.live import LiveRun
from analysis.precursors import EARLY_CONFIDENCE, TREND_BLOCK, TREND_LEVEL, TREND_SCATTER
from handlers.watch import Watcher, watch
from tests.watching import Collect, one_thread  # noqa: F401 (one_thread: an autouse fixture)

LATE = 10 ** 9      # a check cadence that never comes: only the precursors (and a first NaN) post


def _data(seed: int = 0, noise: float = 0.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(512, 8, generator=g)
    y = (x[:, :2].sum(1) > 0).long()
    flip = torch.rand(512, generator=g) < noise
    return x, torch.where(flip, 1 - y, y)


def _mlp(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))


def _early(doc: dict) -> dict:
    cause = doc["root_causes"][0]
    assert cause["early"] and cause["confidence"] < CONFIDENT
    assert cause["code"] in doc["watch"]["early"]
    return cause


def _not_yet_certain(doc: dict) -> None:
    """At the step of the warning, the post-mortem's own analyzers are not yet certain of anything."""
    assert all(c["confidence"] < CONFIDENT for c in doc["root_causes"] if not c.get("early")), doc["root_causes"]


def _creeping_lr_run(sink) -> tuple[list[float], list[float], Watcher]:
    """SGD whose LR creeps up 1.2% a step: the loss falls, bottoms out, then climbs for a hundred
    steps before it blows up. Returns (losses, lrs, the watcher)."""
    model, (x, y) = _mlp(), _data()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    losses, lrs = [], []
    with watch(model, opt, notifier=sink, every=LATE, budget=None) as w:
        for step in range(1, 521):
            for group in opt.param_groups:
                group["lr"] = 0.01 * 1.012 ** step
            i = (step * 32) % 512
            loss = torch.nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
            opt.zero_grad()
            loss.backward()
            w.log(loss=loss)
            opt.step()
            losses.append(loss.item())
            lrs.append(opt.param_groups[0]["lr"])
    return losses, lrs, w.watcher


def test_an_lr_that_keeps_rising_after_the_loss_stopped_improving_warns_before_the_post_mortem_is_certain():
    """The LR has doubled since the loss was last at its best, and grows faster and faster: flagged
    while the loss is still small."""
    sink = Collect()
    losses, _, watcher = _creeping_lr_run(sink)
    first = sink.docs[0]
    assert _early(first)["code"] == "lr_too_high"
    _not_yet_certain(first)
    warned = int(first["watch"]["step"])
    creep = watcher.live.precursors.fired["lr_too_high"]      # the check that posted was the precursor's
    assert creep.onset_step == warned and creep.confidence == EARLY_CONFIDENCE
    text = creep.evidence[0].text
    assert "when the loss was last at its best" in text and "still rising faster" in text
    assert losses[warned - 1] < 10 and max(losses) > 1e3      # warned while small; it did blow up later
    # the post-mortem of the whole run is certain of it; of the run up to the warning, it was not
    full = diagnose_run(watcher.live.snapshot()).root_causes
    assert any(c.confidence >= CONFIDENT for c in full)


def test_a_loss_climbing_warns_from_the_loss_alone_later_than_the_lr_rule():
    """The same run with only its loss logged: the climb itself is flagged, while the loss is still
    small, and after the LR rule (which sees the cause, not its effect)."""
    losses, lrs, with_lr = _creeping_lr_run(Collect())
    sink = Collect()
    w = Watcher("loss-only", notifier=sink, every=LATE, budget=None)
    for step, loss in enumerate(losses, start=1):
        w.log(step, loss=loss)
    climb = w.live.precursors.fired["lr_too_high"]
    assert "above its best" in climb.evidence[0].text
    warned = int(sink.docs[0]["watch"]["step"])
    assert climb.onset_step == warned and losses[warned - 1] < 10
    assert with_lr.live.precursors.fired["lr_too_high"].onset_step < warned


def test_geometric_gradient_growth_warns_before_the_loss_overflows():
    """Full-batch gradient descent on a least-squares fit, with the step just past the stability
    limit of the steepest direction: the gradient norm grows ~10% a step until it overflows."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(256, 6, generator=g) * torch.tensor([3.0, 1, 1, 1, 1, 1])
    y = x @ torch.randn(6, 1, generator=g)
    model = torch.nn.Linear(6, 1)
    top = float(torch.linalg.eigvalsh(2 * x.T @ x / len(x)).max())
    opt = torch.optim.SGD(model.parameters(), lr=2.2 / top)
    sink, first_bad = Collect(), None
    with watch(model, opt, notifier=sink, every=LATE, budget=None) as w:
        for step in range(1, 400):
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            w.log(loss=loss, grad_norm=torch.nn.utils.clip_grad_norm_(model.parameters(), math.inf))
            if not math.isfinite(loss.item()):
                first_bad = step
                break
            opt.step()
    first = sink.docs[0]
    cause = _early(first)
    assert cause["code"] == "exploding_gradients" and "in a row" in cause["evidence"][0]["text"]
    _not_yet_certain(first)
    assert first_bad is not None and first["watch"]["step"] < first_bad - 50


@pytest.mark.parametrize("logged", ["grad_norm", "loss_scale"])
def test_a_half_precision_overflow_warns_before_the_loss_goes_non_finite(logged):
    """A loss that overflows whatever the scale (x 1e38 before a real GradScaler scales it): the
    scaler skips every step and halves its scale; the logged loss stays finite meanwhile. With the
    gradient norm logged, three NaN norms in a row warn; with only the scale, its fall to 1/1024 of
    its peak. Once the scale is small enough, a step goes through and the loss turns NaN."""
    model, (x, y), sink = _mlp(), _data(), Collect()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu")
    w = Watcher("amp", notifier=sink, every=LATE, budget=None)
    first_nan = None
    for step in range(1, 25):
        loss = torch.nn.functional.cross_entropy(model(x[:32]), y[:32])
        opt.zero_grad()
        scaler.scale(loss * 1e38).backward()
        scaler.unscale_(opt)
        norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        w.log(step, loss=loss, **({"grad_norm": norm} if logged == "grad_norm" else {"loss_scale": scaler.get_scale()}))
        scaler.step(opt)
        scaler.update()
        first_nan = first_nan or (step if not math.isfinite(loss.item()) else None)
    first = sink.docs[0]
    cause = _early(first)
    assert cause["code"] == "numerical_instability"
    if logged == "grad_norm":      # the post-mortem's own reading of a NaN grad norm may speak first, unsure
        streak = w.live.precursors.fired["numerical_instability"]
        assert first["watch"]["step"] <= 3 and streak.onset_step == 3
        assert "in a row while the loss is finite" in streak.issue
    else:
        assert first["watch"]["step"] == 11 and "loss scale fell to 64 from 65536" in cause["issue"]
    assert first["watch"]["step"] < first_nan


def test_a_config_lr_far_above_the_optimizer_range_warns_at_the_first_step_and_the_guard_lets_it_run(tmp_path):
    (tmp_path / "config.yaml").write_text("optimizer:\n  name: adamw\n  lr: 0.05\nbatch_size: 32\n")
    model, (x, y), sink = _mlp(), _data(), Collect()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with watch(model, opt, guard=True, save_to=tmp_path / "last-good.safetensors", notifier=sink,
               context=tmp_path, budget=None) as w:
        for step in range(1, 121):
            i = (step * 32) % 512
            loss = torch.nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
            opt.zero_grad()
            loss.backward()
            w.log(loss=loss)
            opt.step()
    assert w.step == 120 and not (tmp_path / "last-good.safetensors").exists()     # an early warning stops nothing
    assert len(sink.docs) == 1 and sink.docs[0]["watch"]["step"] == 1
    cause = _early(sink.docs[0])
    assert cause["code"] == "lr_too_high"
    assert cause["evidence"][0] == {"text": "optimizer.lr = 0.05 is 5x the top of adam's usual range (~0.01)",
                                    "artifact": "config.yaml", "locator": "line 3"}


@pytest.mark.parametrize("schedule", ["warmup_cosine", "step_decay", "noisy_small_batches"])
def test_healthy_trainings_with_schedules_and_noise_raise_no_precursor(schedule):
    x, y = _data(1, noise=0.1 if schedule == "noisy_small_batches" else 0.0)
    model = _mlp(1)
    batch, steps = (4, 800) if schedule == "noisy_small_batches" else (32, 600)
    if schedule == "step_decay":
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=200, gamma=0.1)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min(1.0, (s + 1) / 60) * 0.5 * (1 + math.cos(math.pi * s / steps)))
    live = LiveRun()
    for step in range(1, steps + 1):
        i = (step * batch) % 512
        loss = torch.nn.functional.cross_entropy(model(x[i:i + batch]), y[i:i + batch])
        opt.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), math.inf)
        assert live.append(step, {"loss": loss.item(), "grad_norm": float(norm), "lr": sched.get_last_lr()[0]}) == []
        opt.step()
        sched.step()


def test_the_precursors_keep_constant_state():
    live = LiveRun()
    for i in range(50_000):
        live.append(i, {"loss": 1.0 / (1 + i) + (i % 7) * 1e-3, "grad_norm": 1.0 + (i % 3)})
    p = live.precursors
    t = p._trend
    assert len(t.medians) <= TREND_LEVEL and len(t.jumps) <= TREND_SCATTER and len(t.block) == TREND_BLOCK
    assert p.fired == {}


def test_a_gradient_norm_rising_from_zero_is_no_runaway():
    """A frozen start (no gradient flowing: a norm of exactly 0) then a rise has no growth factor;
    the rule must neither divide by the zero nor call it geometric growth."""
    live = LiveRun()
    for i, g in enumerate([0.0, 0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08]):
        live.append(i, {"loss": 1.0, "grad_norm": g})
    assert "exploding_gradients" not in live.precursors.fired
