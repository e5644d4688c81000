"""Settings from the environment. The names are fixed (README, configuration reference)."""
from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _env(*names: str):
    return Field(validation_alias=AliasChoices(*names))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=None, extra="ignore", populate_by_name=True)

    slack_bot_token: str = Field("", validation_alias="SLACK_BOT_TOKEN")
    slack_signing_secret: str = Field("", validation_alias="SLACK_SIGNING_SECRET")
    slack_app_token: str = Field("", validation_alias="SLACK_APP_TOKEN")
    slack_api_url: str = Field("https://slack.com/api/", validation_alias="MLTD_SLACK_API_URL")
    slack_teams: str = Field("", validation_alias="MLTD_SLACK_TEAMS")          # comma-separated; empty = all
    slack_channels: str = Field("", validation_alias="MLTD_SLACK_CHANNELS")

    slack_alert_channel: str = Field("", validation_alias="MLTD_SLACK_ALERT_CHANNEL")

    # live runs' warnings through the service (bot/watch_threads.py): who may open a run, where its
    # thread goes, and how much one run may post
    ingest_admin_token: str = Field("", validation_alias="MLTD_INGEST_TOKEN")     # empty: the endpoint is off
    watch_channel: str = Field("", validation_alias="MLTD_WATCH_CHANNEL")
    ingest_rate_per_min: float = Field(6.0, validation_alias="MLTD_INGEST_RATE_PER_MIN")
    ingest_burst: float = Field(5.0, validation_alias="MLTD_INGEST_BURST")
    ingest_max_bytes: int = Field(256 << 10, validation_alias="MLTD_INGEST_MAX_BYTES")

    github_app_id: str = Field("", validation_alias="MLTD_GITHUB_APP_ID")
    github_private_key: str = Field("", validation_alias="MLTD_GITHUB_PRIVATE_KEY")       # PEM text or a path
    # a mounted secret file; wins over MLTD_GITHUB_PRIVATE_KEY
    github_private_key_file: str = Field("", validation_alias="MLTD_GITHUB_PRIVATE_KEY_FILE")
    github_app_slug: str = Field("mltd", validation_alias="MLTD_GITHUB_APP_SLUG")  # the App's bot login is SLUG[bot]
    github_token: str = Field("", validation_alias="MLTD_GITHUB_TOKEN")
    github_webhook_secret: str = Field("", validation_alias="MLTD_GITHUB_WEBHOOK_SECRET")
    github_api_url: str = Field("https://api.github.com", validation_alias="MLTD_GITHUB_API_URL")
    github_workflows: str = Field("", validation_alias="MLTD_GITHUB_WORKFLOWS")     # globs; empty = every workflow
    github_allowed_users: str = Field("", validation_alias="MLTD_GITHUB_ALLOWED_USERS")
    github_refusal: str = Field("reply", validation_alias="MLTD_GITHUB_REFUSAL")          # reply | silent
    github_write_interval_s: float = Field(1.0, validation_alias="MLTD_GITHUB_WRITE_INTERVAL_S")

    anthropic_api_key: str = Field("", validation_alias="ANTHROPIC_API_KEY")
    agent_provider: str = Field("anthropic", validation_alias="MLTD_AGENT_PROVIDER")    # anthropic | bedrock
    agent_model: str = Field("claude-sonnet-4-5", validation_alias="MLTD_AGENT_MODEL")
    agent_max_turns: int = Field(8, validation_alias="MLTD_AGENT_MAX_TURNS")
    agent_max_tokens: int = Field(200_000, validation_alias="MLTD_AGENT_MAX_TOKENS")     # input + output, per job
    agent_time_limit_s: float = Field(120.0, validation_alias="MLTD_AGENT_TIME_LIMIT_S")
    agent_retries: int = Field(3, validation_alias="MLTD_AGENT_RETRIES")                 # 429/529, with backoff

    run_uri: str = Field("", validation_alias="MLTD_RUN_URI")                   # e.g. s3://ml-runs/{run}/
    queue_url: str = Field("sqlite:///mltd-queue.db", validation_alias="MLTD_QUEUE_URL")
    queue_name: str = Field("mltd", validation_alias="MLTD_QUEUE_NAME")
    database_url: str = Field("sqlite:///mltd.db", validation_alias="MLTD_DATABASE_URL")
    allowed_buckets: str = Field("", validation_alias="MLTD_ALLOWED_BUCKETS")   # comma-separated; empty = none
    aws_endpoint_url: str = Field("", validation_alias="AWS_ENDPOINT_URL")

    job_timeout_s: int = Field(300, validation_alias="MLTD_JOB_TIMEOUT_S")
    job_retries: int = Field(2, validation_alias="MLTD_JOB_RETRIES")
    lease_s: int = Field(330, validation_alias="MLTD_LEASE_S")      # a job's lease; the reaper re-queues after it
    reap_every_s: int = Field(15, validation_alias="MLTD_REAP_EVERY_S")
    workers: int = Field(2, validation_alias="MLTD_WORKERS")
    max_file_bytes: int = Field(2 << 30, validation_alias="MLTD_MAX_FILE_BYTES")
    max_run_bytes: int = Field(8 << 30, validation_alias="MLTD_MAX_RUN_BYTES")
    work_dir: str = Field("", validation_alias="MLTD_WORK_DIR")                 # where fetched runs go; empty = temp
    # fetched runs kept for follow-ups in their thread (bot/run_cache.py); empty dir = temp, 0 s = no cache
    run_cache_dir: str = Field("", validation_alias="MLTD_RUN_CACHE_DIR")
    run_cache_ttl_s: float = Field(3600.0, validation_alias="MLTD_RUN_CACHE_TTL_S")
    # What reading one artifact, and one run, may cost (analysis/budget.py); max_run_bytes above
    # is the run's disk cap (fetched and unpacked bytes).
    artifact_time_s: float = Field(10.0, validation_alias="MLTD_ARTIFACT_TIME_S")
    artifact_memory_bytes: int = Field(512 << 20, validation_alias="MLTD_ARTIFACT_MEMORY_BYTES")
    run_memory_bytes: int = Field(1 << 30, validation_alias="MLTD_RUN_MEMORY_BYTES")

    def budget(self):
        from analysis.budget import Budget

        return Budget.of(self.artifact_time_s, self.artifact_memory_bytes, self.run_memory_bytes)

    def github_key(self) -> str:
        """The App's PEM: from MLTD_GITHUB_PRIVATE_KEY_FILE, else MLTD_GITHUB_PRIVATE_KEY as PEM text
        (`\\n` escapes allowed, for one-line env files) or as a path."""
        key = self.github_private_key_file or self.github_private_key
        if key and not key.lstrip().startswith("-----BEGIN"):
            return Path(key).read_text()
        return key.replace("\\n", "\n")

    @staticmethod
    def _list(value: str) -> set[str]:
        return {v.strip() for v in value.split(",") if v.strip()}

    @property
    def buckets(self) -> set[str]:
        return self._list(self.allowed_buckets)

    @property
    def teams(self) -> set[str]:
        return self._list(self.slack_teams)

    @property
    def channels(self) -> set[str]:
        return self._list(self.slack_channels)
