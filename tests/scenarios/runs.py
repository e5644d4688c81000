"""The scenario writers: each trains for real (training.py) and writes the files the real tools
write. Formats vary on purpose: plain-text logs, HF trainer_state.json and its stdout lines,
Lightning CSVLogger folders and .ckpt files, TensorBoard event files, safetensors."""
from __future__ import annotations

import inspect
import textwrap
import json
import logging
import traceback
import warnings
from datetime import datetime, timedelta
from pathlib import Path

import torch
import yaml
from safetensors.torch import save_file

from tests.scenarios import training

T0 = datetime(2026, 3, 1, 9, 0, 0)


def _stamp(step: int, per_step: float = 0.35) -> str:
    t = T0 + timedelta(seconds=step * per_step)
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


class _FixedClock(logging.Formatter):
    """Timestamps from a fixed start, one tick per record, so the files are reproducible."""

    ticks = 0

    def formatTime(self, record, datefmt=None):
        _FixedClock.ticks += 1
        return _stamp(_FixedClock.ticks)


def _save_code(dest: Path, *objs) -> None:
    src = "import math\n\nimport torch\nfrom torch import nn\n\n\n" + "\n\n".join(textwrap.dedent(inspect.getsource(o)) for o in objs)
    (dest / "train.py").write_text(src)


def _weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}


def mlp_curriculum(dest: Path) -> None:
    """Trains well for 7 epochs; the curriculum's second stage raises the LR 40x."""
    cfg = {"seed": 3, "samples": 960, "dim": 16, "classes": 4, "hidden": 64, "batch_size": 32, "epochs": 10,
           "schedule": [[0, 0.02], [7, 0.8]]}
    (dest / "config.yaml").write_text(yaml.safe_dump({
        "model": {"hidden": cfg["hidden"], "num_classes": cfg["classes"]},
        "data": {"samples": cfg["samples"], "dim": cfg["dim"], "batch_size": cfg["batch_size"]},
        "optimizer": {"name": "sgd", "momentum": 0.9},
        "curriculum": {"stages": [{"start_epoch": 0, "lr": 0.02}, {"start_epoch": 7, "lr": 0.8}]},
        "epochs": cfg["epochs"], "seed": cfg["seed"]}, sort_keys=False))
    lines = [f"{_stamp(0)} INFO train.py: starting run, 10 epochs, 30 steps/epoch",
             f"{_stamp(0)} INFO data.py: loaded 960 samples (16 features, 4 classes)"]

    def on_step(step, epoch, loss, lr, grad_norm):
        if step % 30 == 1:
            lines.append(f"{_stamp(step)} INFO train.py: curriculum stage {1 if epoch < 7 else 2}, epoch {epoch}")
        lines.append(f"{_stamp(step)} INFO train.py: epoch={epoch} step={step} loss={loss:.4f} lr={lr:.4g} grad_norm={grad_norm:.3f}")

    model = training.train_mlp(cfg, on_step)
    lines.append(f"{_stamp(301)} INFO train.py: saved checkpoint to model.safetensors")
    (dest / "train.log").write_text("\n".join(lines) + "\n")
    save_file(_weights(model), dest / "model.safetensors")
    _save_code(dest, training.grad_norm, training.train_mlp)


def sensor_mlp(dest: Path) -> None:
    """fp16 hidden activations overflow once raw sensor readings reach the model; HF Trainer files."""
    cfg = {"seed": 5, "samples": 1280, "dim": 12, "classes": 3, "hidden": 32, "batch_size": 32, "epochs": 3,
           "lr": 2e-3, "units_from": 70, "units": 40.0}
    (dest / "config.json").write_text(json.dumps({
        "learning_rate": cfg["lr"], "per_device_train_batch_size": cfg["batch_size"], "num_train_epochs": cfg["epochs"],
        "fp16": True, "max_grad_norm": 1.0, "logging_steps": 5, "seed": cfg["seed"],
        "feature_scaling": {"standardize": True, "stats_path": "stats/features.json"}}, indent=2))
    history, stdout = [], ["***** Running training *****", "  Num examples = 1280", "  Num Epochs = 3"]

    def on_step(step, epoch, loss, lr, grad_norm):
        if step % 5:
            return
        entry = {"epoch": round(epoch, 4), "grad_norm": grad_norm, "learning_rate": lr, "loss": round(loss, 4), "step": step}
        history.append(entry)
        shown = {k: (float("nan") if v != v else v) for k, v in entry.items() if k != "step"}
        stdout.append(repr({"loss": shown["loss"], "grad_norm": shown["grad_norm"], "learning_rate": lr, "epoch": shown["epoch"]}))

    model = training.train_half(cfg, on_step)
    state = {"best_metric": None, "best_model_checkpoint": None, "epoch": float(cfg["epochs"]),
             "eval_steps": 500, "global_step": history[-1]["step"], "is_hyper_param_search": False,
             "is_local_process_zero": True, "is_world_process_zero": True, "log_history": history,
             "logging_steps": 5, "max_steps": history[-1]["step"], "num_train_epochs": cfg["epochs"],
             "save_steps": 500, "total_flos": 0.0, "train_batch_size": cfg["batch_size"], "trial_name": None,
             "trial_params": None}
    # transformers writes it this way: json.dumps(asdict(state), indent=2, sort_keys=True) + "\n"
    text = json.dumps(state, indent=2, sort_keys=True).replace("NaN", "NaN") + "\n"
    ck = dest / f"checkpoint-{history[-1]['step']}"
    ck.mkdir()
    (ck / "trainer_state.json").write_text(text)
    save_file(_weights(model), ck / "model.safetensors")
    (dest / "trainer_stdout.log").write_text("\n".join(stdout) + "\n")
    _save_code(dest, training.HalfHidden, training.train_half)


def cnn_tensorboard(dest: Path) -> None:
    """A CNN that trains normally, logged to TensorBoard with noisy minibatch losses."""
    from torch.utils.tensorboard import SummaryWriter

    cfg = {"seed": 11, "samples": 1200, "classes": 5, "batch_size": 24, "epochs": 6, "lr": 3e-3, "max_grad_norm": 5.0}
    (dest / "hparams.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    tb = dest / "tb"
    writer = SummaryWriter(log_dir=str(tb))

    def on_step(step, epoch, loss, lr, grad_norm):
        writer.add_scalar("train/loss", loss, step)
        writer.add_scalar("train/lr", lr, step)
        writer.add_scalar("train/grad_norm", grad_norm, step)

    def on_eval(step, epoch, val_loss):
        writer.add_scalar("val/loss", val_loss, step)

    model = training.train_cnn(cfg, on_step, on_eval)
    writer.close()
    save_file(_weights(model), dest / "model.safetensors")
    _save_code(dest, training.SmallCNN, training.train_cnn)


def mlp_with_eval(dest: Path) -> None:
    """Trains, then the evaluation's logits buffer cannot be allocated."""
    cfg = {"seed": 7, "samples": 640, "dim": 16, "classes": 4, "hidden": 32, "batch_size": 32, "epochs": 2,
           "schedule": [[0, 0.05]]}
    eval_cfg = {"eval_batch_size": 4096, "eval_seq_len": 8192, "vocab_size": 50257}
    (dest / "config.yaml").write_text(yaml.safe_dump({"train": {"batch_size": 32, "lr": 0.05, "epochs": 2},
                                                      "eval": eval_cfg}, sort_keys=False))
    lines = []

    def on_step(step, epoch, loss, lr, grad_norm):
        lines.append(f"[{_stamp(step)}] step {step} | loss {loss:.4f} | lr {lr:.2e} | grad_norm {grad_norm:.3f}")

    training.train_mlp(cfg, on_step)
    lines.append(f"[{_stamp(41)}] running evaluation")
    try:
        training.eval_logits_buffer(eval_cfg)
    except RuntimeError:
        lines += traceback.format_exc().rstrip("\n").split("\n")
    (dest / "stdout.txt").write_text("\n".join(lines) + "\n")
    _save_code(dest, training.eval_logits_buffer)


LM_CFG = {"seed": 2, "vocab": 384, "d_model": 48, "ffn": 48, "tokens": 24000, "sep_share": 0.3, "sep_id": 26,
          "seq": 32, "batch_size": 16, "epochs": 3, "lr": 3e-3}
CHARS = " etaoinshrdlcumwfgypbvkjxqz:" + "".join(chr(c) for c in range(0x100, 0x100 + 400))


def _decode(ids) -> str:
    return "".join(CHARS[i] if i < len(CHARS) else "?" for i in ids)


def tiny_lm_lightning(dest: Path) -> None:
    """A tiny LM whose parameters sit mostly in its embeddings; Lightning CSVLogger layout."""
    cfg = LM_CFG
    version = dest / "lightning_logs" / "version_0"
    version.mkdir(parents=True)
    (version / "hparams.yaml").write_text(yaml.safe_dump({"vocab_size": cfg["vocab"], "d_model": cfg["d_model"],
                                                           "ffn_dim": cfg["ffn"], "lr": cfg["lr"],
                                                           "batch_size": cfg["batch_size"], "seq_len": cfg["seq"]}))
    rows = []

    def on_step(step, epoch, loss):
        if step % 5 == 0:
            rows.append({"epoch": epoch, "step": step - 1, "train_loss_step": loss})

    def on_eval(step, epoch, val_loss):
        rows.append({"epoch": epoch, "step": step - 1, "val_loss": val_loss})

    model = training.train_lm(cfg, on_step, on_eval)
    cols = ["epoch", "step", "train_loss_step", "val_loss"]
    text = ",".join(cols) + "\n" + "".join(",".join("" if r.get(c) is None else str(r[c]) for c in cols) + "\n" for r in rows)
    (version / "metrics.csv").write_text(text)
    ckpt_dir = version / "checkpoints"
    ckpt_dir.mkdir()
    torch.save({"epoch": cfg["epochs"] - 1, "global_step": rows[-1]["step"] + 1, "pytorch-lightning_version": "2.4.0",
                "state_dict": {f"model.{k}": v for k, v in _weights(model).items()}, "loops": {},
                "callbacks": {}, "optimizer_states": [], "lr_schedulers": []},
               ckpt_dir / f"epoch={cfg['epochs'] - 1}-step={rows[-1]['step'] + 1}.ckpt")
    prompts = [[1, 2, 3], [5, 8, 13], [2, 4, 6, 8], [7], [11, 3], [4, 4, 4], [9, 1], [6, 2, 7]]
    samples = [_decode(p) + " => " + _decode(training.generate(model, p, 24)) for p in prompts]
    (dest / "samples.txt").write_text("\n".join(s.split(" => ")[1] for s in samples) + "\n")
    _save_code(dest, training.TinyLM, training.train_lm, training.generate)


def ponder_head(dest: Path) -> None:
    """An adaptive-computation head whose halting step is one value per token."""
    cfg = {"seed": 13, "samples": 512, "dim": 16, "classes": 4, "batch_size": 32, "epochs": 2, "lr": 1e-3,
           "max_ponder": 4, "ponder_weight": 0.01}
    (dest / "config.toml").write_text("\n".join(f"{k} = {v!r}" for k, v in cfg.items()) + "\n")
    log_path = dest / "train.log"
    handler = logging.FileHandler(log_path, mode="w")
    handler.setFormatter(_FixedClock("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("act-train")
    wlog = logging.getLogger("py.warnings")
    for lg in (logger, wlog):
        lg.handlers[:] = [handler]
        lg.setLevel(logging.INFO)
        lg.propagate = False
    logging.captureWarnings(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")

            def on_step(step, epoch, loss, lr, grad_norm):
                logger.info("step %d epoch %d loss %.4f lr %.1e grad_norm %.4f", step, epoch, loss, lr, grad_norm)

            training.train_act(cfg, on_step)
    finally:
        logging.captureWarnings(False)
        handler.close()
        for lg in (logger, wlog):
            lg.handlers[:] = []
    _save_code(dest, training.PonderHead, training.train_act)
