"""mltd in a training process: watch a live run, warn early, and (opt-in) guard the weights.

    import mltd
    with mltd.watch(model, optimizer, guard=True) as w:
        for batch in data:
            loss = ...; loss.backward()
            w.log(loss=loss)
            optimizer.step(); optimizer.zero_grad()

Hugging Face: `Trainer(..., callbacks=[mltd.hf.MltdCallback()])`; Lightning:
`Trainer(callbacks=[mltd.lightning.MltdCallback()])`. Without torch, `mltd.Watcher` takes points
from anything (`mltd watch PATH` tails a log with it). Warnings go to `MLTD_WATCH_WEBHOOK`, else
`MLTD_WATCH_FILE`, else stdout.
"""
from mltd.watcher import Watcher


def watch(model, optimizer, **options):
    """The plain-PyTorch watch (imports torch on first use)."""
    from mltd.torch_watch import watch as _watch
    return _watch(model, optimizer, **options)


def __getattr__(name: str):
    if name == "StopTraining":
        from mltd.guard import StopTraining
        return StopTraining
    raise AttributeError(name)


__all__ = ["StopTraining", "Watcher", "watch"]
