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
