"""The live watch on real tiny CPU trainings: one warning per fault, none on a healthy run, the
guard keeps the NaN out of the weights, and the summary stays bounded."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from analysis.live import CAPACITY, LiveRun
from handlers.watch import Watcher, watch
from handlers.watch.notify import FileNotifier, StreamNotifier, WebhookNotifier
from tests.fakes.slack_webhook import FakeSlackWebhook
from tests.watching import Collect, one_thread  # noqa: F401 (one_thread: an autouse fixture)


def _data(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(512, 8, generator=g)
    y = (x[:, :2].sum(1) > 0).long()
    return x, y


def _model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))


def _train(w, model, opt, steps: int, *, lr_at: dict | None = None, poison_from: int | None = None, keep=None):
    """A real minibatch training loop, as a user writes it, with the watch's one line."""
    x, y = _data()
    for step in range(1, steps + 1):
        for group in opt.param_groups:
            group["lr"] = (lr_at or {}).get(step, group["lr"])
        i = (step * 32) % 512
        xb = x[i:i + 32]
        if poison_from is not None and step >= poison_from:
            xb = xb * math.inf
        loss = torch.nn.functional.cross_entropy(model(xb), y[i:i + 32])
        opt.zero_grad()
        loss.backward()
        if keep is not None and step == poison_from:
            keep.update({k: v.detach().clone() for k, v in model.state_dict().items()})
        w.log(loss=loss)
        opt.step()


def test_a_healthy_training_posts_nothing():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sink = Collect()
    with watch(model, opt, notifier=sink, budget=None) as w:
        _train(w, model, opt, 400)
    assert w.watcher.checks >= 400 // 5 - 1
    assert sink.docs == []


def test_a_divergence_warns_once_with_the_diagnosis_evidence_and_fix():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sink = Collect()
    with watch(model, opt, notifier=sink, budget=None) as w:
        _train(w, model, opt, 300, lr_at={200: 30.0})
    assert sink.docs, "no warning for a run whose LR was raised 600x"
    first = sink.docs[0]
    assert first["watch"]["update"] == 0 and first["watch"]["step"] >= 200
    codes = [c["code"] for c in first["root_causes"]]
    assert {"lr_too_high", "exploding_gradients", "numerical_instability"} & set(first["watch"]["alarms"]), codes
    cause = first["root_causes"][0]
    assert cause["fix"] and any(e["artifact"] == "live metrics" for e in cause["evidence"])
    # later posts are updates that name a new cause or confirm an early one, never a repeat of the same one
    seen = set()
    for doc in sink.docs:
        new = set(doc["watch"]["alarms"]) - seen
        assert new or doc["watch"]["confirmed"] or doc["watch"]["action"], doc["watch"]
        seen |= set(doc["watch"]["alarms"])


def test_the_guard_saves_the_weights_before_the_first_nan_and_stops(tmp_path):
    model = _model(1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sink, before = Collect(), {}
    save_to = tmp_path / "last-good.safetensors"
    with watch(model, opt, guard=True, save_to=save_to, max_bad_steps=4, notifier=sink) as w:
        _train(w, model, opt, 200, poison_from=120, keep=before)
    assert w.step == 123, "stopped after 4 bad steps in a row"
    saved = load_file(save_to)
    assert set(saved) == set(before)
    for name, tensor in saved.items():
        assert torch.isfinite(tensor).all()
        assert torch.equal(tensor, before[name]), name
    for name, tensor in model.state_dict().items():       # the NaN never reached the weights
        assert torch.equal(tensor, before[name]), name
    actions = [d["watch"]["action"] for d in sink.docs if d["watch"]["action"]]
    assert actions[0].startswith("skipped the optimizer step at step 120") and str(save_to) in actions[0]
    assert actions[-1].startswith("stopped after 4 non-finite steps")
    assert sink.docs[0]["watch"]["checkpoint"] == str(save_to)


def test_without_the_guard_the_nan_reaches_the_weights_and_nothing_is_saved(tmp_path):
    model = _model(1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sink = Collect()
    with watch(model, opt, notifier=sink, save_to=tmp_path / "x.safetensors") as w:
        _train(w, model, opt, 130, poison_from=120)
    assert not all(torch.isfinite(p).all() for p in model.parameters())
    assert not (tmp_path / "x.safetensors").exists()
    assert len(sink.docs) == 1 and sink.docs[0]["watch"]["alarms"] == ["numerical_instability"]
    assert sink.docs[0]["watch"]["step"] == 120


def test_the_summary_is_bounded_and_keeps_spikes_and_the_first_nan():
    live = LiveRun()
    for i in range(100_000):
        value = 1.0 / (1 + i)
        if i == 41_234:
            value = 50.0
        if i == 99_000:
            value = math.nan
        live.append(i, {"loss": value})
    s = live.metrics["train_loss"]
    assert s.n <= CAPACITY
    series = s.series("live")
    assert np.nanmax(series.values) == 50.0 and np.isnan(series.values).any()
    assert (np.diff(series.steps) > 0).all()


def test_warnings_go_to_a_file_and_stdout_redacted(tmp_path):
    secret = "xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx"
    path = tmp_path / "warnings.jsonl"
    out = io.StringIO()
    for notifier in (FileNotifier(path), StreamNotifier(out)):
        w = Watcher(f"run {secret}", notifier=notifier, budget=None)
        for step in range(1, 40):
            w.log(step, loss=1.0 / step)
        w.log(40, loss=float("nan"))
    doc = json.loads(path.read_text().splitlines()[0])
    assert doc["watch"]["alarms"] == ["numerical_instability"] and doc["watch"]["step"] == 40
    assert secret not in path.read_text() and secret not in out.getvalue()
    assert "early warning at step 40" in out.getvalue()


def test_a_webhook_gets_one_slack_message_per_change():
    hook = FakeSlackWebhook()
    try:
        w = Watcher("run-7", notifier=WebhookNotifier(hook.url + "/services/T/B/x"), budget=None)
        for step in range(1, 40):
            w.log(step, loss=1.0 / step)
        for step in range(40, 60):
            w.log(step, loss=float("nan"))
    finally:
        hook.close()
    assert len(hook.bodies) == 1
    body = hook.bodies[0]
    assert "early warning at step 40" in body["text"] and "numerical_instability" in json.dumps(body["blocks"])


def test_an_unreachable_webhook_costs_the_warning_not_the_training(capsys):
    w = Watcher("run-8", notifier=WebhookNotifier("http://127.0.0.1:9/hook"), budget=None)
    w.log(1, loss=1.0)
    w.log(2, loss=float("nan"))
    assert len(w.posts) == 1
    assert "the webhook did not take the warning" in capsys.readouterr().err


def test_a_webhook_must_be_https():
    with pytest.raises(ValueError, match="https"):
        WebhookNotifier("http://example.com/hook")
