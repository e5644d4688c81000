"""Tiny CPU training loops. Each scenario runs one of these for real and writes what the real tools
write; the source of the loop that ran is saved beside the run as its training code."""
from __future__ import annotations

import math

import torch
from torch import nn


def seed_all(seed: int) -> None:
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


def blobs(n: int, dim: int, classes: int, seed: int, scale: float = 1.0):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, dim, generator=g) * 2.0
    y = torch.randint(0, classes, (n,), generator=g)
    x = (centers[y] + torch.randn(n, dim, generator=g)) * scale
    return x, y


def grad_norm(model: nn.Module) -> float:
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += float(p.grad.detach().pow(2).sum())
    return math.sqrt(total)


def train_mlp(cfg: dict, on_step) -> nn.Module:
    """SGD on an MLP; the learning rate follows cfg["schedule"]: [[first_epoch, lr], ...]."""
    seed_all(cfg["seed"])
    x, y = blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = nn.Sequential(nn.Linear(cfg["dim"], cfg["hidden"]), nn.ReLU(), nn.Linear(cfg["hidden"], cfg["classes"]))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["schedule"][0][1], momentum=0.9)
    bs = cfg["batch_size"]
    step = 0
    for epoch in range(cfg["epochs"]):
        for first_epoch, lr in cfg["schedule"]:
            if epoch >= first_epoch:
                for group in opt.param_groups:
                    group["lr"] = lr
        perm = torch.randperm(len(x))
        for i in range(0, len(x) - bs + 1, bs):
            idx = perm[i:i + bs]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            gn = grad_norm(model)
            opt.step()
            step += 1
            on_step(step=step, epoch=epoch, loss=loss.item(), lr=opt.param_groups[0]["lr"], grad_norm=gn)
    return model


class HalfHidden(nn.Module):
    """Gated MLP; the gate runs in half precision."""

    def __init__(self, dim: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.inp = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):
        a = self.inp(x).half()
        w = a.exp()
        w = w / w.sum(-1, keepdim=True)
        return self.out((w * a).float())


def train_half(cfg: dict, on_step) -> nn.Module:
    """AdamW on HalfHidden over sensor features."""
    seed_all(cfg["seed"])
    x, y = blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    model = HalfHidden(cfg["dim"], cfg["hidden"], cfg["classes"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    bs = cfg["batch_size"]
    step = 0
    for epoch in range(cfg["epochs"]):
        for i in range(0, len(x) - bs + 1, bs):
            step += 1
            xb = x[i:i + bs] * (cfg["units"] if step >= cfg["units_from"] else 1.0)
            loss = nn.functional.cross_entropy(model(xb), y[i:i + bs])
            opt.zero_grad()
            loss.backward()
            gn = grad_norm(model)
            opt.step()
            on_step(step=step, epoch=epoch + i / len(x), loss=loss.item(), lr=cfg["lr"], grad_norm=gn)
    return model


class SmallCNN(nn.Module):
    def __init__(self, classes: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.head = nn.Linear(16 * 2 * 2, classes)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


def train_cnn(cfg: dict, on_step, on_eval) -> nn.Module:
    seed_all(cfg["seed"])
    x, y = blobs(cfg["samples"], 64, cfg["classes"], cfg["seed"])
    x = x.view(-1, 1, 8, 8)
    n_val = len(x) // 5
    xv, yv, x, y = x[:n_val], y[:n_val], x[n_val:], y[n_val:]
    model = SmallCNN(cfg["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    total = cfg["epochs"] * (len(x) // cfg["batch_size"])
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg["lr"], total_steps=total)
    step = 0
    for epoch in range(cfg["epochs"]):
        perm = torch.randperm(len(x))
        for i in range(0, len(x) - cfg["batch_size"] + 1, cfg["batch_size"]):
            idx = perm[i:i + cfg["batch_size"]]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            gn = float(nn.utils.clip_grad_norm_(model.parameters(), cfg["max_grad_norm"]))
            opt.step()
            sched.step()
            step += 1
            on_step(step=step, epoch=epoch, loss=loss.item(), lr=sched.get_last_lr()[0], grad_norm=gn)
        with torch.no_grad():
            on_eval(step=step, epoch=epoch, val_loss=nn.functional.cross_entropy(model(xv), yv).item())
    return model


def eval_logits_buffer(cfg: dict) -> torch.Tensor:
    """Preallocates the logits of one evaluation batch: batch x sequence x vocabulary."""
    return torch.empty(cfg["eval_batch_size"], cfg["eval_seq_len"], cfg["vocab_size"])


class TinyLM(nn.Module):
    def __init__(self, vocab: int, d: int, ffn: int) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, d)
        self.attn = nn.MultiheadAttention(d, 2, batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, ffn), nn.GELU(), nn.Linear(ffn, d))
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, ids):
        h = self.tok_embeddings(ids)
        t = ids.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        h = self.norm(h + a)
        return self.lm_head(h + self.ffn(h))


def corpus(cfg: dict) -> torch.Tensor:
    """Token stream where the separator token is the most frequent one."""
    g = torch.Generator().manual_seed(cfg["seed"])
    ids = torch.randint(0, cfg.get("used_vocab", cfg["vocab"]), (cfg["tokens"],), generator=g)
    sep = torch.rand(cfg["tokens"], generator=g) < cfg["sep_share"]
    return torch.where(sep, torch.full_like(ids, cfg["sep_id"]), ids)


def train_lm(cfg: dict, on_step, on_eval, snapshots: dict | None = None) -> TinyLM:
    """`snapshots`: {step: None}, filled with a copy of the weights at each of those steps."""
    seed_all(cfg["seed"])
    data = corpus(cfg)
    model = TinyLM(cfg["vocab"], cfg["d_model"], cfg["ffn"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    step = 0
    for epoch in range(cfg["epochs"]):
        for i in range(0, len(data) - cfg["seq"] * cfg["batch_size"] - 1, cfg["seq"] * cfg["batch_size"]):
            chunk = data[i:i + cfg["seq"] * cfg["batch_size"] + 1]
            xb = chunk[:-1].view(cfg["batch_size"], cfg["seq"])
            yb = chunk[1:].view(cfg["batch_size"], cfg["seq"])
            loss = nn.functional.cross_entropy(model(xb).reshape(-1, cfg["vocab"]), yb.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            on_step(step=step, epoch=epoch, loss=loss.item())
            if snapshots is not None and step in snapshots:
                snapshots[step] = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
        on_eval(step=step, epoch=epoch, val_loss=loss.item())
    return model


def generate(model: TinyLM, prompt: list[int], n: int) -> list[int]:
    ids = torch.tensor([prompt])
    with torch.no_grad():
        for _ in range(n):
            nxt = model(ids)[0, -1].argmax()
            ids = torch.cat([ids, nxt.view(1, 1)], dim=1)
    return ids[0, len(prompt):].tolist()


class PonderHead(nn.Module):
    """Adaptive computation: per token, a halting probability decides how many steps it ponders."""

    def __init__(self, d: int, max_steps: int) -> None:
        super().__init__()
        self.cell = nn.Linear(d, d)
        self.halt = nn.Linear(d, 1)
        self.max_steps = max_steps

    def forward(self, h):
        steps = []
        for _ in range(self.max_steps):
            h = torch.tanh(self.cell(h))
            steps.append(torch.sigmoid(self.halt(h)))
        p = torch.cat(steps, dim=-1)
        halting_step = (p.cumsum(-1) < 0.99).sum(-1, keepdim=True).float()
        return h, halting_step


def train_act(cfg: dict, on_step) -> nn.Module:
    seed_all(cfg["seed"])
    x, y = blobs(cfg["samples"], cfg["dim"], cfg["classes"], cfg["seed"])
    head = PonderHead(cfg["dim"], cfg["max_ponder"])
    out = nn.Linear(cfg["dim"], cfg["classes"])
    params = list(head.parameters()) + list(out.parameters())
    opt = torch.optim.Adam(params, lr=cfg["lr"])
    step = 0
    for epoch in range(cfg["epochs"]):
        for i in range(0, len(x) - cfg["batch_size"] + 1, cfg["batch_size"]):
            h, halting = head(x[i:i + cfg["batch_size"]])
            task = nn.functional.cross_entropy(out(h), y[i:i + cfg["batch_size"]])
            spread = halting.var(dim=-1).mean()
            loss = task - cfg["ponder_weight"] * spread
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            on_step(step=step, epoch=epoch, loss=loss.item(), lr=cfg["lr"], grad_norm=grad_norm(out))
    return head


# --- shared pieces for the wider suite -----------------------------------------------------------

def batches(x, y, batch_size: int, epochs: int, seed: int, drop_last: bool = True):
    """(epoch, inputs, targets) over shuffled minibatches."""
    g = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        perm = torch.randperm(len(x), generator=g)
        stop = len(x) - batch_size + 1 if drop_last else len(x)
        for i in range(0, stop, batch_size):
            idx = perm[i:i + batch_size]
            yield epoch, x[idx], y[idx]


def layer_grad_norms(model: nn.Module) -> dict[str, float]:
    return {name: float(p.grad.norm()) for name, p in model.named_parameters()
            if p.grad is not None and name.endswith("weight")}


def fit(model: nn.Module, opt, data, on_step, *, loss_fn=nn.functional.cross_entropy, clip: float | None = None,
        sched=None, per_layer: bool = False, zero_grad: bool = True, apply_updates: bool = True) -> nn.Module:
    step = 0
    for epoch, xb, yb in data:
        loss = loss_fn(model(xb), yb)
        if zero_grad:
            opt.zero_grad()
        loss.backward()
        if clip is not None:
            gn = float(nn.utils.clip_grad_norm_(model.parameters(), clip))
        else:
            gn = grad_norm(model)
        layers = layer_grad_norms(model) if per_layer else {}
        if apply_updates:
            opt.step()
        if sched is not None:
            sched.step()
        step += 1
        on_step(step=step, epoch=epoch, loss=loss.item(), lr=opt.param_groups[0]["lr"], grad_norm=gn, layers=layers)
    return model


def mlp(dim: int, hidden: int, classes: int, depth: int = 1, act=nn.ReLU) -> nn.Sequential:
    layers, width = [], dim
    for _ in range(depth):
        layers += [nn.Linear(width, hidden), act()]
        width = hidden
    return nn.Sequential(*layers, nn.Linear(width, classes))


class SeqClassifier(nn.Module):
    """Embedding, recurrent layer, linear head over the last state."""

    def __init__(self, vocab: int, d: int, classes: int, cell: str = "lstm") -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = (nn.LSTM if cell == "lstm" else nn.RNN)(d, d, batch_first=True)
        self.head = nn.Linear(d, classes)

    def forward(self, ids):
        out, _ = self.rnn(self.embed(ids))
        return self.head(out[:, -1])


def sequences(n: int, length: int, vocab: int, classes: int, seed: int):
    """Token sequences whose class is decided by the tokens they hold."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, vocab, (n, length), generator=g)
    y = (x[:, : length // 2] % classes).sum(1) % classes
    return x, y


class Generator(nn.Module):
    def __init__(self, z: int, hidden: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def ring(n: int, modes: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    k = torch.randint(0, modes, (n,), generator=g).float()
    angle = 2 * math.pi * k / modes
    return torch.stack([angle.cos(), angle.sin()], 1) * 2 + 0.05 * torch.randn(n, 2, generator=g)


def train_gan(cfg: dict, on_step):
    """A GAN on `ring`; cfg["r1"] > 0 adds the R1 gradient penalty on real samples (Mescheder et al. 2018)."""
    seed_all(cfg["seed"])
    real = ring(cfg["samples"], cfg["modes"], cfg["seed"])
    gen, critic = Generator(cfg["z"], cfg["hidden"]), Critic(cfg["hidden"])
    opt_g = torch.optim.Adam(gen.parameters(), lr=cfg["lr_g"], betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(critic.parameters(), lr=cfg["lr_d"], betas=(0.5, 0.999))
    bce = nn.functional.binary_cross_entropy_with_logits
    r1 = cfg.get("r1", 0.0)
    g = torch.Generator().manual_seed(cfg["seed"] + 1)
    for step in range(1, cfg["steps"] + 1):
        xb = real[torch.randint(0, len(real), (cfg["batch_size"],), generator=g)].requires_grad_(r1 > 0)
        fake = gen(torch.randn(cfg["batch_size"], cfg["z"], generator=g))
        on_real = critic(xb)
        d_loss = bce(on_real, torch.ones(len(xb), 1)) + bce(critic(fake.detach()), torch.zeros(len(xb), 1))
        if r1 > 0:
            (grad,) = torch.autograd.grad(on_real.sum(), xb, create_graph=True)
            d_loss = d_loss + r1 / 2 * grad.pow(2).sum(1).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        for _ in range(cfg["g_steps"]):
            fake = gen(torch.randn(cfg["batch_size"], cfg["z"], generator=g))
            g_loss = bce(critic(fake), torch.ones(len(fake), 1))
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        on_step(step=step, d_loss=d_loss.item(), g_loss=g_loss.item(), grad_norm=grad_norm(gen))
    with torch.no_grad():
        return gen, gen(torch.randn(cfg["n_samples"], cfg["z"], generator=g)), real


def ring_modes_hit(samples: torch.Tensor, modes: int, radius: float = 2.0, min_count: int = 2) -> int:
    """How many of the ring's modes at least `min_count` samples land on (within 0.5 of the mode):
    the generation-time check of a GAN scenario, independent of the analyzer under test."""
    angle = torch.atan2(samples[:, 1], samples[:, 0])
    k = torch.round(angle / (2 * math.pi / modes)).long() % modes
    centres = torch.stack([torch.cos(k * 2 * math.pi / modes), torch.sin(k * 2 * math.pi / modes)], 1) * radius
    near = (samples - centres).norm(dim=1) < 0.5
    return int((torch.bincount(k[near], minlength=modes) >= min_count).sum())
