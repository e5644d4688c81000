"""`mltd doctor`: the environment and every configured connection, each checked for real, with
the fix for what fails. Unconfigured optional services are listed as off, not as failures."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.metrics import clip
from bot.settings import Settings


@dataclass
class Check:
    name: str
    ok: bool | None          # None: not configured (optional)
    detail: str
    fix: str = ""
    required: bool = False


def _try(name, fn, fix, required=False) -> Check:
    try:
        return Check(name, True, fn(), required=required)
    except Exception as exc:                    # every failure becomes a row, never a traceback
        # the first line, whole words, without SQLAlchemy's "(Background on this error at: …)"
        msg = str(exc).split("(Background on this error")[0].strip().splitlines()
        return Check(name, False, f"{type(exc).__name__}: {clip(msg[0] if msg else '', 200)}", fix, required)


def _absent_sqlite(name: str, url: str) -> Check | None:
    """A SQLite file that does not exist yet is reported, not created: the doctor writes nothing."""
    if not url.startswith("sqlite:///"):
        return None
    path = Path(url[len("sqlite:///"):])
    if path.exists():
        return None
    return Check(name, None, f"{path} does not exist yet (the first `mltd serve` or `mltd worker` creates it)")


def run_checks(settings: Settings) -> list[Check]:
    from analysis.device import inventory, torch_summary

    out = []
    t = torch_summary()
    cuda = f"available ({t['cuda']})" if t["cuda_available"] else "not available"
    out.append(Check("torch", True, f"{t['torch']}, CUDA {cuda}"))
    inv = inventory()
    gpus = ", ".join(f"{g['name']} ({g['free_bytes'] / 2**30:.0f}/{g['total_bytes'] / 2**30:.0f} GiB free)"
                     for g in inv["gpus"])
    out.append(Check("GPU", True if inv["gpus"] else None,
                     f"driver {inv['driver']}: {gpus}" if inv["gpus"] else inv["note"],
                     "tensor statistics run on the CPU"))

    def database():
        from bot.store import Store
        Store(settings.database_url).counts()
        return settings.database_url.split("@")[-1].split("?")[0]
    out.append(_absent_sqlite("database", settings.database_url)
               or _try("database", database, "check MLTD_DATABASE_URL (and that PostgreSQL is up)", required=True))

    def queue():
        from bot.queue import make_huey
        h = make_huey(settings.queue_url, settings.queue_name)
        return f"{settings.queue_url.split('@')[-1]}: {h.pending_count()} pending"
    out.append(_absent_sqlite("queue", settings.queue_url)
               or _try("queue", queue, "check MLTD_QUEUE_URL (and that Redis is up)", required=True))

    if settings.slack_bot_token:
        def slack():
            from bot.slack_port import client as slack_client
            r = slack_client(settings).auth_test()
            return f"team {r.get('team')}, bot {r.get('user')}"
        out.append(_try("Slack", slack, "check SLACK_BOT_TOKEN and MLTD_SLACK_API_URL; reinstall the app"))
        if not settings.slack_signing_secret:
            out.append(Check("Slack events", False, "SLACK_SIGNING_SECRET is not set",
                             "set it from the app's Basic Information"))
    else:
        out.append(Check("Slack", None, "off (no SLACK_BOT_TOKEN)"))

    if settings.github_token or settings.github_app_id:
        def github():
            from bot import github_port
            if settings.github_token:
                return "token for " + github_port.client(settings).get_user().login
            from github import Auth, GithubIntegration
            key = settings.github_key()
            app = GithubIntegration(auth=Auth.AppAuth(int(settings.github_app_id), key),
                                    base_url=settings.github_api_url.rstrip("/"))
            return f"App {settings.github_app_id}: {app.get_installations().totalCount} installation(s)"
        out.append(_try("GitHub", github,
                        "check MLTD_GITHUB_TOKEN or MLTD_GITHUB_APP_ID/PRIVATE_KEY and MLTD_GITHUB_API_URL"))
    else:
        out.append(Check("GitHub", None, "off (no MLTD_GITHUB_TOKEN or MLTD_GITHUB_APP_ID)"))

    if settings.buckets:
        def s3():
            import boto3
            from botocore.config import Config
            c = boto3.client("s3", endpoint_url=settings.aws_endpoint_url or None,
                             config=Config(retries={"max_attempts": 2}, connect_timeout=3, read_timeout=5))
            for b in sorted(settings.buckets):
                c.head_bucket(Bucket=b)
            return "readable: " + ", ".join(sorted(settings.buckets))
        out.append(_try("S3", s3, "check the AWS credentials, AWS_ENDPOINT_URL and MLTD_ALLOWED_BUCKETS"))
    else:
        out.append(Check("S3", None, "off (no MLTD_ALLOWED_BUCKETS)"))

    if settings.anthropic_api_key or settings.agent_provider == "bedrock":
        def anthropic_api():
            from bot.agent import make_client
            c = make_client(settings)
            r = c.messages.create(model=settings.agent_model, max_tokens=1,
                                  messages=[{"role": "user", "content": "ping"}])
            return f"{settings.agent_model} answered ({r.usage.input_tokens} tokens)"
        out.append(_try("agent", anthropic_api,
                        "check ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL or the Bedrock model access"))
    else:
        out.append(Check("agent", None, "off (no ANTHROPIC_API_KEY): analyzers only"))
    return out
