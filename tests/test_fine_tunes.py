"""Fine-tunes of pretrained weights, real tiny CPU runs logged as the Hugging Face Trainer logs them.

A fine-tune moves pretrained weights little by design: 125 steps of a LoRA-sized rate (4.6e-5, decaying) sum to
0.003, under any layer's init scale, which from scratch says the rate is too low to move the network (a Falcon
LoRA fine-tune's trainer_state.json read "LR too low", high). A real tiny CPU run: an MLP trained on one task,
then fine-tuned on a related one at that rate, logged as the Hugging Face Trainer logs it; the same numbers in a
plain metrics file, with nothing saying the weights were pretrained, keep the reading."""
import json

import pytest
import torch

from analysis import diagnose

STEPS, LR = 125, 4.64e-5


def _fine_tune() -> list[dict]:
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    x = torch.randn(512, 16, generator=g)
    w_a, w_b = torch.randn(16, 4, generator=g), torch.randn(16, 4, generator=g)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    pre = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(300):                                       # pretraining on task A
        pre.zero_grad()
        torch.nn.functional.cross_entropy(model(x), (x @ w_a).argmax(1)).backward()
        pre.step()
    y = (x @ (w_a + 0.5 * w_b)).argmax(1)                      # task B, related to A
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 - s / STEPS)
    log = []
    for step in range(1, STEPS + 1):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        rate = sched.get_last_lr()[0]
        opt.step()
        sched.step()
        if step % 10 == 0:
            log.append({"epoch": round(step / STEPS, 2), "learning_rate": rate, "loss": round(float(loss.detach()), 4),
                        "step": step})
    return log


def test_a_fine_tune_whose_loss_falls_in_order_is_not_too_low_a_rate(tmp_path):
    log = _fine_tune()
    losses = [r["loss"] for r in log]
    assert all(b <= a for a, b in zip(losses, losses[1:])) and losses[-1] < losses[0]    # it learns, slowly
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "trainer_state.json").write_text(json.dumps({"global_step": STEPS, "log_history": log, "max_steps": STEPS},
                                                      indent=2, sort_keys=True))
    d, _ = diagnose(hf)
    assert not [c for c in d.root_causes if c.code == "lr_too_low" and c.severity in ("critical", "high")]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "metrics.jsonl").write_text("".join(json.dumps({"step": r["step"], "loss": r["loss"],
                                                             "lr": r["learning_rate"]}) + "\n" for r in log))
    d, _ = diagnose(plain)
    assert (d.root_causes[0].code, d.root_causes[0].severity) == ("lr_too_low", "high")


def _warmed_too_high(seed: int) -> list[dict]:
    """A model trained on task A, fine-tuned on a task close to it in batches of 64, its Adam rate warmed up over
    150 steps to 0.1, far too high for a fine-tune: the losses per 10 steps and the held-out loss per 25."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x, x_val = torch.randn(1024, 16, generator=g), torch.randn(512, 16, generator=g)
    w_a, w_b = torch.randn(16, 4, generator=g), torch.randn(16, 4, generator=g)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    pre = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(100):
        pre.zero_grad()
        torch.nn.functional.cross_entropy(model(x), (x @ w_a).argmax(1)).backward()
        pre.step()
    y, y_val = (x @ (w_a + 0.1 * w_b)).argmax(1), (x_val @ (w_a + 0.1 * w_b)).argmax(1)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / 150))
    log: list[dict] = []
    for step in range(1, 251):
        i = torch.randint(0, 1024, (64,), generator=g)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x[i]), y[i])
        loss.backward()
        rate = sched.get_last_lr()[0]
        opt.step()
        sched.step()
        if step % 10 == 0:
            log.append({"epoch": round(step / 250, 3), "learning_rate": rate, "loss": round(float(loss.detach()), 4),
                        "step": step})
        if step % 25 == 0:
            with torch.no_grad():
                val = torch.nn.functional.cross_entropy(model(x_val), y_val)
            log.append({"epoch": round(step / 250, 3), "eval_loss": round(float(val), 4), "step": step})
    return log


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_fine_tune_that_gets_worse_as_its_warm_up_peaks_diverged(tmp_path, seed):
    """The training loss climbs back part of its way as the rate peaks while the held-out loss rises with it (a
    Whisper fine-tune's trainer_state.json, eval loss 0.22 -> 0.42, WER 17.7 -> 31, read healthy): a divergence,
    not noise, and not overfitting."""
    log = _warmed_too_high(seed)
    train = [r["loss"] for r in log if "loss" in r]
    val = [r["eval_loss"] for r in log if "eval_loss" in r]
    assert val[-1] >= 1.5 * min(val) and sorted(train[-8:])[4] > 1.3 * min(train[:8])    # the fault shows
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 250, "log_history": log}, indent=2))
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "lr_too_high" and top.severity in ("critical", "high")
