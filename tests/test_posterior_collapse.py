"""A VAE whose KL term goes to ~0 beside its reconstruction term has collapsed its posterior to the prior (World
Models' Keras VAE, `vae_kl_loss: 3.8347e-07`, read healthy before). Real tiny CPU VAEs, printed as that Keras fit
prints them: one whose KL is weighted so heavily that the encoder gives up the latent, and its healthy twin at
beta 1 on data a latent explains, whose KL stays well above 0."""
import pytest
import torch
import torch.nn.functional as F

from analysis import diagnose

EPOCHS = 60


def _fit(beta: float, seed: int) -> list[tuple[float, float]]:
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(1024, 2, generator=g)
    x = z @ torch.randn(2, 8, generator=g) + 0.5 * torch.randn(1024, 8, generator=g)   # 2 factors explain x
    x = x / x.std()
    torch.manual_seed(seed)
    enc, dec = torch.nn.Linear(8, 4), torch.nn.Linear(2, 8)
    # plain SGD at lr * beta = 0.2: the KL's pull on the encoder is the same step whatever beta
    opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.2 / beta)
    rows = []
    for _ in range(EPOCHS):
        for i in range(0, 1024, 128):
            mu, logvar = enc(x[i:i + 128]).chunk(2, dim=1)
            sample = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
            recon = F.mse_loss(dec(sample), x[i:i + 128])
            kl = 0.5 * (mu.pow(2) + logvar.exp() - logvar - 1).sum(1).mean()
            opt.zero_grad()
            (recon + beta * kl).backward()
            opt.step()
        rows.append((float(recon.detach()), float(kl.detach())))
    return rows


def _keras_fit(rows: list[tuple[float, float]], beta: float) -> str:
    return "".join(f"Epoch {e + 1}/{EPOCHS}\n8/8 [==============================] - 0s 3ms/step - loss: "
                   f"{r + beta * k:.4f} - vae_r_loss: {r:.4f} - vae_kl_loss: {k:.4e}\n"
                   for e, (r, k) in enumerate(rows))


@pytest.mark.parametrize("seed", [0, 1])
def test_a_kl_term_held_at_zero_beside_the_reconstruction_is_a_collapsed_posterior(tmp_path, seed):
    rows = _fit(beta=200.0, seed=seed)
    assert rows[-1][1] < 1e-4 and rows[-1][0] > 0.1      # the fault shows, whatever the seed
    (tmp_path / "train.log").write_text(_keras_fit(rows, 200.0))
    d, _ = diagnose(tmp_path)
    top = d.root_causes[0]
    assert top.code == "mode_collapse" and top.severity == "medium" and "posterior" in top.issue
    assert "vae_kl" in top.evidence[0].text


@pytest.mark.parametrize("seed", [0, 1])
def test_a_vae_that_uses_its_latent_is_no_collapse(tmp_path, seed):
    rows = _fit(beta=1.0, seed=seed)
    assert rows[-1][1] > 0.01          # the latent is used: KL well above 0
    (tmp_path / "train.log").write_text(_keras_fit(rows, 1.0))
    d, _ = diagnose(tmp_path)
    assert "mode_collapse" not in [c.code for c in d.root_causes]


def test_one_report_of_a_zero_kl_is_read_and_a_kl_with_no_reconstruction_beside_it_is_not(tmp_path):
    # tests/wild-style paste, one line as the World Models thread quoted it
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    (tmp_path / "a" / "train.log").write_text(
        "loss: 0.1416 - vae_r_loss: 0.1416 - vae_kl_loss: 3.8347e-07 - "
        "val_loss: 0.1378 - val_vae_r_loss: 0.1378 - val_vae_kl_loss: 2.3842e-07\n")
    d, _ = diagnose(tmp_path / "a")
    assert d.root_causes[0].code == "mode_collapse"
    # an RL fine-tune's KL to its reference model starts at 0: no reconstruction term, no VAE
    (tmp_path / "b" / "train.log").write_text("".join(
        f"{{'loss': 0.0, 'reward': {0.1 * i:.2f}, 'kl': 0.0, 'epoch': {i / 10:.1f}}}\n" for i in range(5)))
    d, _ = diagnose(tmp_path / "b")
    assert "mode_collapse" not in [c.code for c in d.root_causes]


def test_a_kl_printed_as_zero_under_a_weight_of_zero_is_no_collapse(tmp_path):
    # review of session 43: KL annealing's first epochs print the term as 0 (not computed, or weighted 0)
    rows = _fit(beta=200.0, seed=0)
    (tmp_path / "train.log").write_text("".join(
        f"Epoch {e + 1:3d} | step {500 * (e + 1):6d} | loss {r:.4f} | recon_loss {r:.4f} | kl_loss 0.0000 | "
        "kl_weight 0.000\n" for e, (r, _) in enumerate(rows)))
    d, _ = diagnose(tmp_path)
    assert "mode_collapse" not in [c.code for c in d.root_causes]


def test_a_policys_approximate_kl_beside_a_reward_loss_is_no_vae(tmp_path):
    # review of session 43: PPO's approx_kl is the canonical `kl`, and `loss_r` a reward-prediction loss
    (tmp_path / "train.log").write_text("".join(
        f"iter {10 * i} | policy_loss -0.0123 | value_loss 0.41 | loss_r {0.3 - 0.01 * i:.2f} | "
        f"approx_kl {0.00004 + 1e-6 * i:.6f} | entropy 1.38\n" for i in range(1, 9)))
    d, _ = diagnose(tmp_path)
    assert "mode_collapse" not in [c.code for c in d.root_causes]
