"""`mltd doctor` against the real local servers and the stand-ins: what works says ok, what does
not says FAIL with its fix, and the exit code follows."""
import pytest

from handlers.cli import main
from tests.fakes.anthropic_api import KEY, AnthropicStandIn, text
from tests.fakes.github_api import TOKEN, GitHubStandIn
from tests.fakes.service import S3, env
from tests.fakes.slack_api import SlackStandIn


@pytest.fixture
def world(tmp_path, monkeypatch):
    slack, gh, s3, api = SlackStandIn(), GitHubStandIn(), S3(), AnthropicStandIn([[text("pong")]])
    for k, v in env(slack.api_url, s3.url, tmp_path, MLTD_GITHUB_TOKEN=TOKEN, MLTD_GITHUB_API_URL=gh.url,
                    ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=api.url,
                    MLTD_DATABASE_URL="postgresql://postgres@127.0.0.1:5432/test",
                    MLTD_QUEUE_URL="redis://127.0.0.1:6379/0").items():
        monkeypatch.setenv(k, v)
    yield monkeypatch
    for s in (slack, gh, s3, api):
        s.close()


def rows(out: str) -> dict[str, str]:
    return {line.split()[0]: line.split()[1] for line in out.splitlines() if line and not line.startswith(" ")}


def test_everything_configured_works(world, capsys):
    assert main(["doctor"]) == 0
    got = rows(capsys.readouterr().out)
    assert {k: got[k] for k in ("database", "queue", "Slack", "GitHub", "S3", "agent")} == dict.fromkeys(
        ("database", "queue", "Slack", "GitHub", "S3", "agent"), "ok")
    assert got["GPU"] in ("ok", "off")


def test_failures_name_their_fix(world, capsys):
    world.setenv("MLTD_GITHUB_TOKEN", "ghp_wrong")
    world.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert rows(out)["GitHub"] == "FAIL" and rows(out)["S3"] == "FAIL" and rows(out)["Slack"] == "ok"
    assert "fix: check MLTD_GITHUB_TOKEN" in out and "fix: check the AWS credentials" in out
