"""PyTorch's word-language-model example trains at lr=20 with gradients clipped to 0.25: a rate above every
optimizer's usual range that this run takes (an LSTM's committed log, loss 7.49 -> 4.51, read "learning rate too
high", high, before). A real tiny CPU run of that loop, printed as the example prints; a rate held where the loss
falls under it is a low note under the healthy verdict, and the same fall under a rate that was annealed part way
leaves the rate the suspect it was."""
import math

import pytest
import torch

from analysis import diagnose
from analysis.signals import relative_change

VOCAB, BPTT, BATCHES = 16, 12, 40


def _corpus(g: torch.Generator) -> torch.Tensor:
    """A repeating phrase with one word in eight replaced at random: learnable, not trivially."""
    base = torch.arange(VOCAB).repeat(200)
    noise = torch.rand(len(base), generator=g) < 0.125
    return torch.where(noise, torch.randint(0, VOCAB, (len(base),), generator=g), base)


def _train(lr_at) -> str:
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    data, val = _corpus(g).view(8, -1), _corpus(g).view(8, -1)
    emb, rnn, out = torch.nn.Embedding(VOCAB, 16), torch.nn.LSTM(16, 32, batch_first=True), torch.nn.Linear(32, VOCAB)
    params = [*emb.parameters(), *rnn.parameters(), *out.parameters()]

    def loss_of(x, y):
        return torch.nn.functional.cross_entropy(out(rnn(emb(x))[0]).reshape(-1, VOCAB), y.reshape(-1))

    lines = ["Namespace(batch_size=8, bptt=12, clip=0.25, data='./data/synthetic', dropout=0.0, emsize=16, epochs=4, "
             "log_interval=4, lr=20, model='LSTM', nhid=32, nlayers=1, seed=0)"]
    for epoch in range(1, 5):
        lr, total = lr_at(epoch), 0.0
        for b in range(BATCHES):
            i = b * BPTT % (data.size(1) - BPTT - 1)
            loss = loss_of(data[:, i:i + BPTT], data[:, i + 1:i + 1 + BPTT])
            for p in params:
                p.grad = None
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 0.25)
            with torch.no_grad():
                for p in params:
                    p.add_(p.grad, alpha=-lr)
            total += float(loss.detach())
            if (b + 1) % 4 == 0:
                cur = total / 4
                lines.append(f"| epoch {epoch:3d} | {b + 1:5d}/{BATCHES:5d} batches | lr {lr:02.4f} | ms/batch 11.40 | "
                             f"loss {cur:5.2f} | ppl {math.exp(cur):8.2f}")
                total = 0.0
        with torch.no_grad():
            v = float(loss_of(val[:, :-1], val[:, 1:]))
        end = f"| end of epoch {epoch:3d} | time: 1.00s | valid loss {v:5.2f} | valid ppl {math.exp(v):8.2f}"
        lines += ["-" * 89, end, "-" * 89]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("annealed", [False, True])
def test_a_rate_of_twenty_that_the_loss_falls_under(tmp_path, annealed):
    text = _train((lambda e: 20.0 if e < 3 else 5.0) if annealed else (lambda e: 20.0))
    losses = [float(line.split("| loss ")[1].split()[0]) for line in text.splitlines() if "| loss " in line]
    assert relative_change(torch.tensor(losses).numpy()) >= 0.2      # the run learns under the rate
    (tmp_path / "train.log").write_text(text)
    d, _ = diagnose(tmp_path)
    lr = next(c for c in d.root_causes if c.code == "lr_too_high")
    if annealed:
        assert lr.severity == "high" and d.root_causes[0] is lr
    else:
        assert d.root_causes[0].code == "healthy" and lr.severity == "low" and "falls under it" in lr.issue


def _adam_at(lr: float) -> list[tuple[int, float, float, float]]:
    """An MLP on 10 classes under Adam at a constant absurd rate: per 20 steps, the mean loss, the held-out loss and
    accuracy (the rate throws the loss to thousands in its first steps; it then sits at ln(10))."""
    torch.manual_seed(0)
    w = torch.randn(32, 10)

    def data(n):
        x = torch.randn(n, 32)
        return x, (x @ w + 0.5 * torch.randn(n, 10)).argmax(1)

    (xt, yt), (xv, yv) = data(4000), data(1000)
    m = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128), torch.nn.ReLU(),
                            torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(m.parameters(), lr=lr)
    rows, acc = [], []
    for step in range(1, 801):
        b = torch.randint(0, 4000, (128,))
        loss = torch.nn.functional.cross_entropy(m(xt[b]), yt[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc.append(float(loss.detach()))
        if step % 20 == 0:
            with torch.no_grad():
                o = m(xv)
            rows.append((step, sum(acc) / len(acc), float(torch.nn.functional.cross_entropy(o, yv)),
                         float((o.argmax(1) == yv).float().mean())))
            acc = []
    return rows


def test_a_rate_that_threw_the_loss_up_before_it_sat_down_is_no_rate_the_run_copes_with(tmp_path):
    """Adam at lr=1: the mean loss of the first 20 steps is in the thousands, then it sits near ln(10); from its
    first report to its last it "fell" 99%, which is the blow-up coming back, not learning (a review built it)."""
    rows = _adam_at(1.0)
    assert rows[0][1] > 10 * sorted(r[1] for r in rows)[len(rows) // 2]          # the rate threw it up first
    (tmp_path / "metrics.csv").write_text("step,lr,loss,val_loss,val_acc\n" + "".join(
        f"{s},1.0,{a:.4f},{b:.4f},{c:.4f}\n" for s, a, b, c in rows))
    d, _ = diagnose(tmp_path)
    lr = next(c for c in d.root_causes if c.code == "lr_too_high")
    assert lr.severity == "high" and "copes" not in lr.issue
