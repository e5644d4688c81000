"""Unpacking zips from untrusted places (GitHub Actions artifacts and logs, forks included),
member by member, never `extractall`: no `..`, no absolute paths, no symlinks, no NUL bytes, and
caps on the member count, each member's size, the total and the compression ratio (per member
and over the whole archive, so that thousands of small members cannot add up), checked while the
bytes are written, not only from the headers. Any archive the zip reader cannot read (bad CRC,
encryption, an unknown compression method, truncation) is refused with its reason too."""
from __future__ import annotations

import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from analysis.errors import MltdError

MAX_MEMBERS = 5000
MAX_MEMBER_BYTES = 2 << 30
MAX_TOTAL_BYTES = 8 << 30
MAX_RATIO = 200


class UnsafeArchive(MltdError):
    """Why an archive was refused, worded for a reply."""


# What zipfile raises for an archive it cannot read: a bad CRC or truncation (BadZipFile,
# EOFError, zlib.error), an encrypted member (RuntimeError), an unknown method (NotImplementedError).
_UNREADABLE = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, RuntimeError, NotImplementedError)


def safe_extract(archive: Path, dest: Path, *, max_members: int = MAX_MEMBERS, max_member_bytes: int = MAX_MEMBER_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES, max_ratio: float = MAX_RATIO) -> list[Path]:
    dest = dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        zf = zipfile.ZipFile(archive)
    except _UNREADABLE:
        raise UnsafeArchive(f"{archive.name} is not a valid zip archive") from None
    try:
        with zf:
            return _extract(zf, archive, dest, max_members, max_member_bytes, max_total_bytes, max_ratio)
    except _UNREADABLE as exc:
        raise UnsafeArchive(f"{archive.name} could not be unpacked: {_reason(exc)}") from None


def _reason(exc: Exception) -> str:
    text = str(exc).split("\n")[0][:160]
    if isinstance(exc, NotImplementedError):
        return f"a member uses a compression method mltd cannot read ({text})"
    if isinstance(exc, RuntimeError) and "encrypted" in text:
        return "a member is encrypted"
    return f"the archive is damaged ({text or type(exc).__name__})"


def _extract(zf: zipfile.ZipFile, archive: Path, dest: Path, max_members: int, max_member_bytes: int,
             max_total_bytes: int, max_ratio: float) -> list[Path]:
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
    declared = sum(m.file_size for m in members)
    if declared > max_total_bytes:
        raise UnsafeArchive(f"{archive.name} declares {declared / 2**20:,.0f} MB unpacked, over the "
                            f"{max_total_bytes / 2**20:,.0f} MB cap")
    written: list[Path] = []
    total = packed = 0
    for m in members:
        if m.is_dir():
            continue
        packed += m.compress_size
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
                if total > (1 << 20) and total > max_ratio * max(packed, 1):
                    raise UnsafeArchive(f"{archive.name}: its members together expand more than "
                                        f"{max_ratio:.0f}:1 (a zip bomb?)")
                out.write(chunk)
        written.append(target)
    return written
