"""The core install: `pip install mltd` brings the engine and `mltd diagnose`, none of the service's
SDKs, and the CLI diagnoses a run with them (and torch) absent."""
import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVICE_ONLY = ("fastapi", "uvicorn", "slack", "pygithub", "github", "boto3", "anthropic", "huey", "redis",
                "sqlalchemy", "psycopg", "pydantic", "prometheus", "torch", "pandas")

BLOCK = """
import importlib.abc, sys
BLOCKED = {blocked!r}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: not in the core install)")
sys.meta_path.insert(0, Block())
from handlers.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_core_dependencies_hold_no_service_sdk():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in deps]
    assert not [n for n in names if n.startswith(SERVICE_ONLY)], names


def test_diagnose_runs_without_the_service_sdks_or_torch(tmp_path):
    blocked = {"fastapi", "uvicorn", "slack_sdk", "slack_bolt", "github", "boto3", "botocore", "anthropic", "huey",
               "redis", "sqlalchemy", "psycopg", "pydantic_settings", "prometheus_client", "torch", "pandas"}
    run = tmp_path / "run"
    subprocess.run(["cp", "-r", str(ROOT / "examples" / "diverging-run"), str(run)], check=True)
    (run / "extra.pt").write_bytes(b"PK\x03\x04" + b"\x00" * 64)       # a torch file: named, not read
    p = subprocess.run([sys.executable, "-c", BLOCK.format(blocked=blocked), "diagnose", str(run), "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["root_causes"][0]["code"] == "lr_too_high"
    problems = {a["path"]: a.get("problem", "") for a in doc["run"]["artifacts"]}
    assert "mltd[torch]" in problems["extra.pt"]


# absent as an uninstalled package is: `import x` fails and importlib.util.find_spec("x") is None
# (torch probes for optional packages that way)
WATCH = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None
import torch
from handlers.watch import watch
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with watch(model, opt, guard=True, save_to={save!r}) as w:
    for step in range(40):
        loss = ((model(torch.randn(8, 4)) - 1) ** 2).mean() * (float("nan") if step >= 30 else 1.0)
        opt.zero_grad(); loss.backward(); w.log(loss=loss); opt.step()
print("stopped at", w.step)
"""


def test_the_watch_and_its_guard_run_without_the_service_sdks(tmp_path):
    """`from handlers.watch import watch` in a training environment: torch and the core, nothing else."""
    blocked = {"fastapi", "uvicorn", "slack_sdk", "slack_bolt", "github", "boto3", "botocore", "anthropic", "huey",
               "redis", "sqlalchemy", "psycopg", "pydantic_settings", "prometheus_client", "pandas", "requests",
               "httpx"}
    save = tmp_path / "last-good.safetensors"
    p = subprocess.run([sys.executable, "-c", WATCH.format(blocked=blocked, save=str(save))],
                       capture_output=True, text=True, cwd=ROOT, env={"PATH": ""})
    assert p.returncode == 0, p.stderr
    assert "stopped at 33" in p.stdout and "early warning at step 31" in p.stdout
    assert save.exists()


def test_mltd_watch_follows_a_log_without_the_service_sdks_or_torch():
    blocked = {"fastapi", "uvicorn", "slack_sdk", "slack_bolt", "github", "boto3", "botocore", "anthropic", "huey",
               "redis", "sqlalchemy", "psycopg", "pydantic_settings", "prometheus_client", "torch", "pandas"}
    p = subprocess.run([sys.executable, "-c", BLOCK.format(blocked=blocked), "watch",
                        str(ROOT / "examples" / "diverging-run"), "--idle-exit", "0"],
                       capture_output=True, text=True, cwd=ROOT, env={"PATH": ""})
    assert p.returncode == 0, p.stderr
    assert "early warning at step" in p.stdout and "lr_too_high" in p.stdout
