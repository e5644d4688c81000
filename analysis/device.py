"""What accelerators this machine has, read through NVML (nvidia-ml-py); a machine without a
driver answers "no GPU" with the reason, never an exception."""
from __future__ import annotations


def inventory() -> dict:
    try:
        import pynvml
    except ImportError:
        return {"gpus": [], "driver": None, "note": "nvidia-ml-py is not installed"}
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return {"gpus": [], "driver": None, "note": f"no GPU: {exc}"}
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            name = pynvml.nvmlDeviceGetName(h)
            gpus.append({"index": i, "name": name.decode() if isinstance(name, bytes) else name,
                         "total_bytes": int(mem.total), "free_bytes": int(mem.free), "used_bytes": int(mem.used)})
        return {"gpus": gpus, "driver": driver.decode() if isinstance(driver, bytes) else driver, "note": ""}
    finally:
        pynvml.nvmlShutdown()


def torch_summary() -> dict:
    import torch

    cuda = torch.cuda.is_available()
    return {"torch": torch.__version__, "cuda_available": cuda, "cuda": torch.version.cuda,
            "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if cuda else []}
