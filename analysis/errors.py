"""The errors a user sees, worded for them: what went wrong and what to do. Each edge catches the
base, `MltdError`, in one place and shows its message as it is, never a traceback:

    MltdError
     ├── bot.fetch.FetchError           the run could not be fetched
     ├── bot.github_port.Refused        a request mltd will not serve
     ├── bot.unzip.UnsafeArchive        an archive refused (too big, too many files, paths outside)
     └── handlers.watch_s3.S3LogError   an S3 prefix that cannot be followed

The edges: `handlers/cli.py` `main` (one line on stderr, exit 2), `bot/slack_jobs.py` `process`
(the reply in the thread), `bot/github_jobs.py` `process` (the sticky comment). Anything else
that escapes is a bug, and each edge reports it as an internal error.
"""
from __future__ import annotations


class MltdError(Exception):
    """An error whose message is worded for the person who asked."""
