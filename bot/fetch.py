"""Bringing a run's artifacts into a local folder: S3 (any S3-compatible store), a local folder an
operator's `MLTD_RUN_URI` points at, or a traceback pasted into a message (attachments come through
the platform's port: `bot.slack_port`).

Everything here is untrusted: object keys cannot escape the destination, sizes are capped per
file and per run, only allowed buckets are read. A problem the user can act on raises
`FetchError` with the message to show them.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from analysis.errors import MltdError
from bot.mentions import RUN_NAME
from bot.settings import Settings


class FetchError(MltdError):
    """A reason the run could not be fetched, worded for the person who asked."""


@dataclass
class Fetched:
    path: Path
    source: str
    notes: list[str] = field(default_factory=list)     # files skipped, caps hit
    fingerprint: str = ""                              # names the content (S3: keys, sizes, ETags)


def resolve(run: str, kind: str | None, settings: Settings) -> str:
    """The URI of a run: an s3:// URI as given, or a run name through MLTD_RUN_URI."""
    if kind == "s3":
        return run
    if kind == "github":
        raise FetchError("That is a GitHub Actions run: ask `/diagnose` on its pull request, or give me the S3 "
                         "location of its artifacts.")
    if not RUN_NAME.match(run) or ".." in run:
        raise FetchError(f"`{run}` is not a run name I can look up (letters, digits, `.`, `_` and `-` only).")
    if not settings.run_uri:
        raise FetchError(f"I don't know where run {run} lives: no MLTD_RUN_URI is configured. Mention me with its "
                         "s3:// location instead.")
    return settings.run_uri.format(run=run)


def fetch(uri: str, dest: Path, settings: Settings,
          cached: Callable[[str], Fetched | None] | None = None) -> Fetched:
    """The run at `uri` in `dest`; with `cached`, an S3 run whose listing has a fingerprint the
    cache holds is not downloaded again (one LIST instead of every GET)."""
    dest.mkdir(parents=True, exist_ok=True)
    if uri.startswith("s3://"):
        return _s3(uri, dest, settings, cached)
    local = Path(uri[len("file://"):] if uri.startswith("file://") else uri)
    if not local.exists():
        raise FetchError(f"No run at {uri}.")
    return Fetched(local, uri)


def _safe_relative(key: str, prefix: str) -> PurePosixPath | None:
    rel = PurePosixPath(key[len(prefix):].lstrip("/"))
    if not rel.parts or rel.is_absolute() or ".." in rel.parts or "\x00" in key:
        return None
    return rel


def _s3(uri: str, dest: Path, settings: Settings, cached: Callable[[str], Fetched | None] | None = None) -> Fetched:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    m = re.match(r"s3://([^/]+)/?(.*)$", uri)
    if not m:
        raise FetchError(f"`{uri}` is not an S3 location (s3://bucket/prefix/).")
    bucket, prefix = m.group(1), m.group(2)
    if bucket not in settings.buckets:
        raise FetchError(f"I'm not allowed to read bucket `{bucket}`. An admin can add it to MLTD_ALLOWED_BUCKETS.")
    s3 = boto3.client("s3", endpoint_url=settings.aws_endpoint_url or None,
                      config=Config(retries={"mode": "standard", "max_attempts": 5},
                                    connect_timeout=5, read_timeout=30))
    out = Fetched(dest, uri)
    wanted: list[tuple[str, PurePosixPath, int]] = []
    listed = hashlib.sha256(uri.encode())
    total = 0
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                key, size = obj["Key"], int(obj["Size"])
                listed.update(f"\0{key}\0{size}\0{obj.get('ETag', '')}".encode())
                rel = _safe_relative(key, prefix)
                if rel is None or key.endswith("/"):
                    continue
                if size > settings.max_file_bytes:
                    out.notes.append(f"skipped {rel} ({size / 2**20:,.0f} MB, over the per-file cap)")
                    continue
                if total + size > settings.max_run_bytes:
                    cap_gb = settings.max_run_bytes / 2**30
                    out.notes.append(f"skipped {rel} and later files: the run is over the {cap_gb:,.0f} GB cap")
                    break
                total += size
                wanted.append((key, rel, size))
        if not wanted:
            raise FetchError(f"There are no files under {uri}." + (" " + "; ".join(out.notes) if out.notes else ""))
        out.fingerprint = listed.hexdigest()[:32]
        hit = cached(out.fingerprint) if cached is not None else None
        if hit is not None:
            return Fetched(hit.path, hit.source, hit.notes, out.fingerprint)

        def get(item):
            key, rel, _ = item
            target = dest.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            s3.download_file(bucket, key, str(target))

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(get, wanted))
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code in ("NoSuchBucket", "404"):
            raise FetchError(f"Bucket `{bucket}` does not exist.") from None
        if code in ("AccessDenied", "403"):
            raise FetchError(f"S3 refused access to {uri} (AccessDenied): check the worker's IAM role.") from None
        raise FetchError(f"S3 answered {code or 'an error'} for {uri} after retries; "
                         "try again in a few minutes.") from None
    except BotoCoreError as exc:
        raise FetchError(f"I could not reach S3 for {uri} ({type(exc).__name__}) after retries; try again in a "
                         "few minutes.") from None
    return out


def brings_a_log(text: str) -> bool:
    """The message carries a log of its own: a traceback, a code block, or several lines of numbers
    (a question that names the loss at a step does not)."""
    numbered = [line for line in (text or "").splitlines() if re.search(r"\d", line)]
    return "Traceback (most recent call last)" in text or "```" in text or len(numbered) >= 3


def save_pasted(text: str, dest: Path) -> Path | None:
    """A traceback or log pasted into the message becomes a file of the run."""
    body = re.sub(r"```", "\n", text or "")
    if "Traceback (most recent call last)" not in body and not re.search(r"\b(loss|Error)\b.*\d", body):
        return None
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "pasted.log"
    path.write_text(body.strip() + "\n")
    return path
