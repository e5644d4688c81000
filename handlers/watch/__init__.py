"""mltd in a training process: watch a live run, warn early, and (opt-in) guard the weights.
The callbacks are an edge of mltd, so they live here, in the core install (no service SDK):

    from handlers.watch import watch
    with watch(model, optimizer, guard=True) as w:
        for batch in data:
            loss = ...; loss.backward()
            w.log(loss=loss)
            optimizer.step(); optimizer.zero_grad()

Hugging Face: `Trainer(..., callbacks=[handlers.watch.hf.MltdCallback()])`; Lightning:
`Trainer(callbacks=[handlers.watch.lightning.MltdCallback()])`. Without torch, `Watcher` takes points
from anything (`mltd watch PATH` tails a log with it). Warnings go to `MLTD_WATCH_WEBHOOK`, else
`MLTD_WATCH_FILE`, else stdout.
"""
from handlers.watch.watcher import Watcher


def watch(model, optimizer, **options):
    """The plain-PyTorch watch (imports torch on first use)."""
    from handlers.watch.torch_watch import watch as _watch
    return _watch(model, optimizer, **options)


def __getattr__(name: str):
    if name == "StopTraining":
        from handlers.watch.guard import StopTraining
        return StopTraining
    raise AttributeError(name)


__all__ = ["StopTraining", "Watcher", "watch"]
