"""A wide MLP memorising 256 noisy samples: the validation loss climbs from its first epoch while the training loss
falls to ~0, with one short bump on the way down. The bump beside the climbing validation loss is no divergence
(the training loss came all the way back down): overfitting leads (a review of session 42's divergence-with-
validation rule built this; the rule had put a critical lr_too_high first)."""
import pytest
import torch

from analysis import diagnose


def _memorise(seed: int, lr: float = 2e-2, epochs: int = 120) -> list[tuple[int, float, float, float]]:
    torch.manual_seed(seed)

    def data(n):
        x = torch.randn(n, 20)
        return x, ((x[:, :3].sum(1) + 0.8 * torch.randn(n)) > 0).long()

    (xt, yt), (xv, yv) = data(256), data(1000)
    m = torch.nn.Sequential(torch.nn.Linear(20, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 2))
    opt = torch.optim.Adam(m.parameters(), lr=lr)
    rows = []
    for epoch in range(epochs):
        perm, total = torch.randperm(256), 0.0
        for i in range(0, 256, 32):
            b = perm[i:i + 32]
            loss = torch.nn.functional.cross_entropy(m(xt[b]), yt[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(b)
        with torch.no_grad():
            o = m(xv)
        rows.append((epoch, total / 256, float((o.argmax(1) == yv).float().mean()),
                     float(torch.nn.functional.cross_entropy(o, yv))))
    return rows


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_memorising_with_a_bump_is_overfitting(tmp_path, seed):
    rows = _memorise(seed)
    train, val = [r[1] for r in rows], [r[3] for r in rows]
    assert train[-1] < 0.01 * min(train[:10]) and val[-1] > 1.5 * min(val)     # memorised; held-out loss climbed
    (tmp_path / "training_log.csv").write_text("epoch,loss,val_accuracy,val_loss\n" + "".join(
        f"{e},{a:.6f},{c:.4f},{b:.6f}\n" for e, a, c, b in rows))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "overfitting"
    assert not [c for c in d.root_causes if c.code == "lr_too_high" and c.severity in ("critical", "high")]
