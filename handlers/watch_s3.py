"""`mltd watch s3://bucket/prefix/`: the newest plain-text log or metrics file (CSV/TSV, JSON Lines)
under the prefix, polled with ranged
GETs of the bytes appended since the last look (boto3, from the `mltd[s3]` extra, imported only
here). The object is chosen once, at the start; an object that shrinks was replaced, and is
followed again from its start."""
from __future__ import annotations

import re

from analysis.errors import MltdError
from handlers.watch.tail import FOLLOWED


class S3LogError(MltdError):
    """The prefix cannot be followed: said in one line, exit 2."""


class S3Log:
    context = None

    def __init__(self, uri: str, client=None) -> None:
        m = re.match(r"s3://([^/]+)/?(.*)$", uri)
        if not m:
            raise S3LogError(f"`{uri}` is not an S3 location (s3://bucket/prefix/)")
        self.bucket, prefix = m.group(1), m.group(2)
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError

        self.s3 = client or boto3.client("s3")
        newest = None
        try:
            for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
                for obj in page.get("Contents", []):
                    if not obj["Key"].lower().endswith(FOLLOWED):
                        continue
                    if newest is None or obj["LastModified"] > newest["LastModified"]:
                        newest = obj
        except (BotoCoreError, ClientError) as exc:
            raise S3LogError(f"S3 could not list {uri}: {exc}") from None
        if newest is None:
            raise S3LogError(f"no training log or metrics file ({', '.join(FOLLOWED)}) under {uri}")
        self.key = newest["Key"]
        self.name = self.key.rsplit("/", 1)[-1]
        self.offset = 0
        self._size = 0

    def read(self, n: int) -> bytes:
        self._size = int(self.s3.head_object(Bucket=self.bucket, Key=self.key)["ContentLength"])
        if self._size <= self.offset:
            return b""
        end = min(self._size, self.offset + n) - 1
        data = self.s3.get_object(Bucket=self.bucket, Key=self.key, Range=f"bytes={self.offset}-{end}")["Body"].read()
        self.offset += len(data)
        return data

    def shrank(self) -> bool:
        if self._size < self.offset:
            self.offset = 0
            return True
        return False
