"""A reinforcement-learning run's loss is a value and policy loss: it grows with the returns it predicts, so a
policy that learns makes it rise (an SB3 PPO run committed to a public repository read "diverged, LR too high",
critical). Real tiny CPU runs of a policy-gradient learner whose reward grows as it learns, written as
Stable-Baselines3's progress.csv writes them."""
import numpy as np
import pytest
import torch

from analysis import diagnose
from analysis.signals import relative_change

_HEAD = "rollout/ep_rew_mean,time/total_timesteps,train/loss,train/value_loss,train/policy_gradient_loss\n"


def _learn(seed: int, steps: int = 40) -> list[tuple[float, int, float, float, float]]:
    """REINFORCE with a learned baseline on 16 episodes of 20 presses per update; a press pays the length of the
    run of presses so far, so the returns, and the value loss with them, grow as the policy learns to press."""
    g = torch.Generator().manual_seed(seed)
    logit, value = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam([logit, value], lr=0.05)
    rows = []
    for it in range(steps):
        p = torch.sigmoid(logit)
        presses = (torch.rand(16, 20, generator=g) < p.detach()).float()
        run, reward = torch.zeros(16), torch.zeros(16, 20)
        for t in range(20):
            run = (run + 1) * presses[:, t]
            reward[:, t] = run
        ret = reward.flip(1).cumsum(1).flip(1)
        logp = presses * torch.log(p) + (1 - presses) * torch.log(1 - p)
        pg = -(logp * (ret - value.detach())).mean()
        vl = ((ret - value) ** 2).mean()
        opt.zero_grad()
        (pg + 0.5 * vl).backward()
        opt.step()
        losses = (float(t.detach()) for t in (pg + 0.5 * vl, vl, pg))
        rows.append((float(reward.sum(1).mean()), (it + 1) * 320, *losses))
    return rows


@pytest.mark.parametrize("seed", [0, 1])
def test_a_policy_that_learns_is_healthy_though_its_loss_rises(tmp_path, seed):
    rows = _learn(seed)
    loss = np.array([r[2] for r in rows])
    assert rows[-1][0] > 2 * rows[0][0] and relative_change(loss) < -1      # the reward and the loss both grew
    (tmp_path / "progress.csv").write_text(_HEAD + "".join(",".join(map(str, r)) + "\n" for r in rows))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code == "healthy" and "reward rose" in d.root_causes[0].issue
    assert not [c for c in d.root_causes if c.severity in ("critical", "high")]


def test_the_same_loss_without_its_reward_is_still_read_as_a_loss(tmp_path):
    """The guard is the reward: the same loss column alone gets the supervised reading it got before."""
    rows = _learn(0)
    (tmp_path / "progress.csv").write_text("time/total_timesteps,train/loss\n" + "".join(
        f"{r[1]},{r[2]}\n" for r in rows))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code != "healthy"


def test_a_reward_that_never_rose_leaves_the_loss_read(tmp_path):
    """The same run with its reward held at its first value (MountainCar's -200 at every report, a review built
    it): a reward that did not rise says nothing for the loss, so the loss is read as one."""
    rows = _learn(0)
    (tmp_path / "progress.csv").write_text(_HEAD + "".join(
        ",".join(map(str, (rows[0][0], *r[1:]))) + "\n" for r in rows))
    d, _ = diagnose(tmp_path)
    assert d.root_causes[0].code != "healthy"
