"""The Hugging Face and Lightning callbacks on real tiny CPU trainings (skipped where the framework
is not installed: it is not part of the core install; `pip install transformers` or `lightning`)."""
from __future__ import annotations

import math

import pytest
import torch
from safetensors.torch import load_file

from analysis.live_warning import LiveWarning

BAD_FROM = 31            # forward passes from this one on see non-finite inputs


class Collect:
    def __init__(self) -> None:
        self.docs: list[dict] = []

    def post(self, warning: LiveWarning) -> None:
        self.docs.append(warning.to_dict())          # the JSON document, as a file or the service gets it


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class Net(torch.nn.Module):
    """A small classifier whose inputs turn non-finite from forward pass `bad_from` on (None: never);
    it keeps its weights as they were just before that pass."""

    def __init__(self, bad_from: int | None = None) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
        self.bad_from, self.calls, self.before = bad_from, 0, None

    def forward(self, x, labels=None):
        self.calls += 1
        if self.training and self.bad_from is not None and self.calls >= self.bad_from:
            if self.calls == self.bad_from:
                self.before = {k: v.detach().clone() for k, v in self.state_dict().items()}
            x = x * math.inf
        logits = self.body(x)
        loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return {"loss": loss, "logits": logits}


def _data(n: int = 640):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 8, generator=g)
    return x, (x[:, :2].sum(1) > 0).long()


def _assert_saved_before(path, net: Net, prefix: str = "") -> None:
    """The guard's file holds the weights `net` had before its first bad pass (the whole module's
    state: under `prefix` where `net` sits inside a LightningModule)."""
    saved = {k.removeprefix(prefix): v for k, v in load_file(path).items()}
    assert net.before is not None and set(saved) == set(net.before)
    for name, t in saved.items():
        assert torch.isfinite(t).all() and torch.equal(t, net.before[name]), name


# ---- Hugging Face ----

def _hf_train(tmp_path, net: Net, callback, steps: int):
    transformers = pytest.importorskip("transformers")
    x, y = _data()
    rows = [{"x": x[i], "labels": y[i]} for i in range(len(x))]
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), max_steps=steps, logging_steps=1,
                                          per_device_train_batch_size=16, learning_rate=5e-3, report_to=[],
                                          save_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
                                          dataloader_num_workers=0)
    trainer = transformers.Trainer(model=net, args=args, train_dataset=rows, callbacks=[callback])
    trainer.train()
    return trainer


def test_hf_a_healthy_training_posts_nothing(tmp_path):
    from_hf = pytest.importorskip("handlers.watch.hf")
    sink = Collect()
    cb = from_hf.MltdCallback(notifier=sink, budget=None)
    _hf_train(tmp_path, Net(), cb, 120)
    assert cb.watcher.live.points >= 120 and "train_loss" in cb.watcher.live.metrics
    assert sink.docs == []


def test_hf_the_guard_keeps_the_nan_out_and_saves_the_last_good_weights(tmp_path):
    from_hf = pytest.importorskip("handlers.watch.hf")
    sink, net = Collect(), Net(bad_from=BAD_FROM)
    cb = from_hf.MltdCallback(guard=True, notifier=sink, budget=None, save_to=tmp_path / "good.safetensors")
    trainer = _hf_train(tmp_path, net, cb, 120)
    assert trainer.state.global_step == BAD_FROM + 2          # stopped after 3 bad steps in a row
    _assert_saved_before(tmp_path / "good.safetensors", net)
    for name, t in net.state_dict().items():
        assert torch.equal(t, net.before[name]), name
    actions = [d["watch"]["action"] for d in sink.docs if d["watch"]["action"]]
    assert actions[0].startswith(f"skipped the optimizer step at step {BAD_FROM}")
    assert any(a.startswith("stopped after 3 non-finite steps") for a in actions)


# ---- Lightning ----

def _lightning_train(tmp_path, net: Net, callback, steps: int):
    pl = pytest.importorskip("lightning.pytorch")

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = net

        def training_step(self, batch, batch_idx):
            x, y = batch
            return self.net(x, y)["loss"]

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=5e-3)

    x, y = _data()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16, shuffle=False)
    trainer = pl.Trainer(max_steps=steps, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False, default_root_dir=str(tmp_path),
                         callbacks=[callback])
    trainer.fit(Module(), loader)
    return trainer


def test_lightning_a_healthy_training_posts_nothing(tmp_path):
    from_pl = pytest.importorskip("handlers.watch.lightning")
    sink = Collect()
    cb = from_pl.MltdCallback(notifier=sink, budget=None)
    _lightning_train(tmp_path, Net(), cb, 150)
    assert cb.watcher.live.points == 150 and cb.watcher.checks >= 25
    assert sink.docs == []


def test_lightning_the_guard_keeps_the_nan_out_and_saves_the_last_good_weights(tmp_path):
    from_pl = pytest.importorskip("handlers.watch.lightning")
    sink, net = Collect(), Net(bad_from=BAD_FROM)
    cb = from_pl.MltdCallback(guard=True, notifier=sink, budget=None, save_to=tmp_path / "good.safetensors")
    trainer = _lightning_train(tmp_path, net, cb, 150)
    assert trainer.global_step == BAD_FROM + 2
    _assert_saved_before(tmp_path / "good.safetensors", net, prefix="net.")
    for name, t in net.state_dict().items():
        assert torch.equal(t, net.before[name]), name
    assert sink.docs[0]["watch"]["step"] == BAD_FROM and "numerical_instability" in sink.docs[0]["watch"]["alarms"]
    assert sink.docs[-1]["watch"]["action"].startswith("stopped after 3 non-finite steps")


# ---- each framework with the core install only: the service SDKs absent (and lightning, for the HF
# callback; not the reverse: torchmetrics decides from the installed packages' metadata that
# transformers is there, so hiding its modules alone breaks Lightning's import, not ours) ----

ONLY = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *{tests!r}]))
"""
SERVICE = ["fastapi", "uvicorn", "slack_sdk", "slack_bolt", "github", "boto3", "botocore", "anthropic", "huey", "redis",
           "sqlalchemy", "psycopg", "pydantic_settings", "prometheus_client", "requests", "httpx"]


@pytest.mark.parametrize("framework, other, prefix", [("transformers", ["lightning", "pytorch_lightning"], "test_hf_"),
                                                      ("lightning", [], "test_lightning_")])
def test_each_callback_runs_with_only_the_core_and_its_framework(framework, other, prefix):
    import subprocess
    import sys
    from pathlib import Path
    pytest.importorskip(framework)
    here = Path(__file__)
    tests = [f"{here}::{name}" for name in globals() if name.startswith(prefix)]
    p = subprocess.run([sys.executable, "-c", ONLY.format(blocked=SERVICE + other, tests=tests)],
                       capture_output=True, text=True, cwd=here.parents[1])
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert len(tests) == 2 and "2 passed" in p.stdout, p.stdout[-500:]
