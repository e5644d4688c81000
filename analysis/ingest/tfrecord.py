"""The framing of a TFRecord file (TensorBoard's event files): each record is a little-endian
uint64 length, a 4-byte masked CRC-32C of it, the data and a 4-byte masked CRC-32C of that.
`records` reads them with every checksum checked and says where a damaged file stops being
readable."""
from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

try:
    from analysis.ingest._crc32c import crc32c
except ImportError:          # built without a compiler: TensorBoard's own, pure Python (~1 MB/s)
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import crc32c


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class Damage:
    """Where a file stopped being readable, filled in by `records` (None while it reads clean)."""

    def __init__(self) -> None:
        self.reason: str | None = None


def records(path: Path, damage: Damage) -> Iterator[bytes]:
    """The data of each record, in order, until the end of the file or the first damaged frame (a
    truncated frame or a checksum that does not match), whose reason goes into `damage`."""
    with open(path, "rb") as f:
        while True:
            head = f.read(12)
            if not head:
                return
            if len(head) < 12:
                damage.reason = "truncated"
                return
            (length,) = struct.unpack("<Q", head[:8])
            if _masked(crc32c(head[:8])) != struct.unpack("<I", head[8:])[0]:
                damage.reason = "bad length checksum"
                return
            data = f.read(length)
            tail = f.read(4)
            if len(data) < length or len(tail) < 4:
                damage.reason = "truncated"
                return
            if _masked(crc32c(data)) != struct.unpack("<I", tail)[0]:
                damage.reason = "bad data checksum"
                return
            yield data
