"""The framing of a TFRecord file (TensorBoard's event files), walked without decoding: each
record is a little-endian uint64 length, a 4-byte CRC of it, the data and a 4-byte CRC of that.
TensorBoard's loader stops quietly at a truncated or corrupt record; comparing what it read with
the frames here tells that the file was damaged, and where."""
from __future__ import annotations

import os
import struct
from pathlib import Path


def count_frames(path: Path) -> tuple[int, bool]:
    """(complete records, whether the framing ends exactly at the end of the file)."""
    size = os.path.getsize(path)
    n = pos = 0
    with open(path, "rb") as f:
        while pos < size:
            head = f.read(12)
            if len(head) < 12:
                return n, False
            (length,) = struct.unpack("<Q", head[:8])
            end = pos + 12 + length + 4
            if end > size:
                return n, False
            f.seek(end)
            pos = end
            n += 1
    return n, True
