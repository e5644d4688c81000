"""Fetched runs kept on the worker's disk for `MLTD_RUN_CACHE_TTL_S`, so that a follow-up in a
thread reads the run its diagnosis read without fetching it again. A run is cached under a key
that names its content (an S3 prefix with its objects' ETags and sizes, a GitHub run attempt, a
message's attachments), recorded with the thread; an entry is written whole (a temporary folder,
then one rename) and older entries are swept on each write.

The cache is per machine: a follow-up on a worker without the entry fetches the run again.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from bot.fetch import Fetched
from bot.settings import Settings

META = "mltd-cache.json"
RUN = "run"


def key_of(*parts: str) -> str:
    """A cache key from what names the content: readable prefix, hashed rest."""
    head = re.sub(r"[^A-Za-z0-9._-]+", "_", parts[0])[:40]
    return f"{head}-{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:24]}"


class RunCache:
    def __init__(self, settings: Settings) -> None:
        self.root = Path(settings.run_cache_dir or Path(tempfile.gettempdir()) / "mltd-run-cache")
        self.ttl_s = settings.run_cache_ttl_s

    def _entry(self, key: str) -> Path:
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,120}", key):
            raise ValueError(f"bad cache key {key!r}")
        return self.root / key

    def get(self, key: str | None) -> Fetched | None:
        """The cached run, while it is fresh."""
        if not key or self.ttl_s <= 0:
            return None
        entry = self._entry(key)
        try:
            meta = json.loads((entry / META).read_text())
        except (OSError, ValueError):
            return None
        if time.time() - meta["cached"] > self.ttl_s or not (entry / RUN).is_dir():
            return None
        return Fetched(entry / RUN, meta["source"], list(meta.get("notes", [])))

    def put(self, key: str, got: Fetched) -> Fetched:
        """Move (or copy, for a folder mltd does not own) the fetched run into the cache; the cached
        run. A cache that cannot be written leaves the run where it is."""
        if self.ttl_s <= 0:
            return got
        entry = self._entry(key)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._sweep()
            staging = Path(tempfile.mkdtemp(prefix=f".{key[:40]}-", dir=self.root))
            shutil.move(str(got.path), staging / RUN)
            (staging / META).write_text(json.dumps({"cached": time.time(), "source": got.source, "notes": got.notes}))
            if entry.exists():                 # another worker cached the same content meanwhile
                shutil.rmtree(staging, ignore_errors=True)
                return self.get(key) or got
            os.rename(staging, entry)
        except OSError:
            return got if got.path.exists() else self.get(key) or got
        return Fetched(entry / RUN, got.source, got.notes)

    def _sweep(self) -> None:
        now = time.time()
        for entry in self.root.iterdir():
            try:
                if now - entry.stat().st_mtime > max(self.ttl_s, 60) * 2:
                    shutil.rmtree(entry, ignore_errors=True)
            except OSError:
                continue
