"""Unpacking zips from untrusted places (GitHub Actions artifacts and logs, forks included),
member by member, never `extractall`: no `..`, no absolute paths, no symlinks, no NUL bytes, and
caps on the member count, each member's size, the total and the compression ratio, checked while
the bytes are written, not only from the headers."""
from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

MAX_MEMBERS = 5000
MAX_MEMBER_BYTES = 2 << 30
MAX_TOTAL_BYTES = 8 << 30
MAX_RATIO = 200


class UnsafeArchive(Exception):
    """Why an archive was refused, worded for a reply."""


def safe_extract(archive: Path, dest: Path, *, max_members: int = MAX_MEMBERS, max_member_bytes: int = MAX_MEMBER_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES, max_ratio: float = MAX_RATIO) -> list[Path]:
    dest = dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile:
        raise UnsafeArchive(f"{archive.name} is not a valid zip archive") from None
    with zf:
        members = zf.infolist()
        if len(members) > max_members:
            raise UnsafeArchive(f"{archive.name} holds {len(members):,} members (the cap is {max_members:,})")
        for m in members:
            name = m.filename
            if "\x00" in name:
                raise UnsafeArchive(f"{archive.name}: a member name contains a NUL byte")
            path = PurePosixPath(name.replace("\\", "/"))
            if path.is_absolute() or ".." in path.parts or (path.parts and path.parts[0].endswith(":")):
                raise UnsafeArchive(f"{archive.name}: member {name!r} would escape the folder")
            if stat.S_ISLNK(m.external_attr >> 16):
                raise UnsafeArchive(f"{archive.name}: member {name!r} is a symlink")
        written: list[Path] = []
        total = 0
        for m in members:
            if m.is_dir():
                continue
            target = dest.joinpath(*PurePosixPath(m.filename.replace("\\", "/")).parts)
            if not target.resolve().is_relative_to(dest):
                raise UnsafeArchive(f"{archive.name}: member {m.filename!r} would escape the folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            size = 0
            with zf.open(m) as src, open(target, "wb") as out:
                while chunk := src.read(1 << 20):
                    size += len(chunk)
                    total += len(chunk)
                    if size > max_member_bytes or total > max_total_bytes:
                        raise UnsafeArchive(f"{archive.name}: {m.filename} unpacks past the size cap")
                    if size > (1 << 20) and size > max_ratio * max(m.compress_size, 1):
                        raise UnsafeArchive(f"{archive.name}: {m.filename} expands more than {max_ratio:.0f}:1 "
                                            "(a zip bomb?)")
                    out.write(chunk)
            written.append(target)
    return written
