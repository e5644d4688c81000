"""Zips from untrusted places: refused with a clear reason, nothing written outside the folder."""
import stat
import zipfile
from pathlib import Path

import pytest

from bot.render.github import neutralise
from bot.unzip import UnsafeArchive, safe_extract


def archive(tmp_path, build, name="a.zip"):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        build(z)
    return path


def symlink(z):
    info = zipfile.ZipInfo("link")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    z.writestr(info, "/etc/passwd")


@pytest.mark.parametrize("build, reason", [
    (lambda z: z.writestr("../escape.txt", "x"), "would escape"),
    (lambda z: z.writestr("/abs/escape.txt", "x"), "would escape"),
    (symlink, "is a symlink"),
    (lambda z: [z.writestr(f"f{i}", "") for i in range(10_000)], "10,000 members"),
    (lambda z: z.writestr("bomb.bin", b"\0" * (8 << 20)), "expands more than"),
])
def test_hostile_archives_are_refused(tmp_path, build, reason):
    out = tmp_path / "out"
    with pytest.raises(UnsafeArchive, match=reason):
        safe_extract(archive(tmp_path, build), out)
    assert not (tmp_path / "escape.txt").exists()


def test_a_normal_archive_unpacks(tmp_path):
    def write(z) -> None:
        z.writestr("logs/train.log", "step=1 loss=2\n")
        z.writestr("cfg.yaml", "lr: 1\n")

    path = archive(tmp_path, write)
    written = safe_extract(path, tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == ["cfg.yaml", "logs/train.log"]


def test_not_a_zip(tmp_path):
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    with pytest.raises(UnsafeArchive, match="not a valid zip"):
        safe_extract(tmp_path / "x.zip", tmp_path / "out")


def test_quoted_text_cannot_mention_or_embed():
    out = neutralise("ping @alice and @acme/ml-team ![x](http://evil/img.png) email a@b.com ghp_" + "a" * 36)
    assert "@alice" not in out and "@acme/ml-team" not in out and "![" not in out
    assert "a@b.com" in out and "ghp_" not in out


def many_small_members(z):
    """Members of 1 MB each: every one under the per-member ratio check's 1 MB floor."""
    for i in range(40):
        z.writestr(f"m{i}.bin", b"\0" * (1 << 20))


def test_small_members_cannot_add_up_to_a_bomb(tmp_path):
    with pytest.raises(UnsafeArchive, match="together expand more than"):
        safe_extract(archive(tmp_path, many_small_members), tmp_path / "out")
    assert sum(p.stat().st_size for p in (tmp_path / "out").rglob("*") if p.is_file()) < 4 << 20


def test_the_total_cap_is_checked_before_writing(tmp_path):
    path = archive(tmp_path, lambda z: [z.writestr(f"m{i}.txt", bytes(range(256)) * 4096) for i in range(4)])
    with pytest.raises(UnsafeArchive, match="declares 4 MB unpacked"):
        safe_extract(path, tmp_path / "out", max_total_bytes=2 << 20)
    assert not list((tmp_path / "out").iterdir())


def _stored(tmp_path, data=b"step=1 loss=2.0\n" * 64) -> tuple[Path, bytes]:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("train.log", data)
    return path, path.read_bytes()


def bad_crc_zip(tmp_path) -> Path:
    path, raw = _stored(tmp_path)
    i = raw.index(b"step=1")
    path.write_bytes(raw[:i] + b"X" + raw[i + 1:])
    return path


def encrypted_zip(tmp_path) -> Path:
    """The encryption flag set in both headers (the data itself is not what zipfile checks first)."""
    path, raw = _stored(tmp_path)
    raw = bytearray(raw)
    raw[6] |= 1                                   # local header: general purpose flags
    c = raw.index(b"PK\x01\x02")
    raw[c + 8] |= 1                               # central directory: the same flags
    path.write_bytes(bytes(raw))
    return path


def unknown_method_zip(tmp_path) -> Path:
    path, raw = _stored(tmp_path)
    raw = bytearray(raw)
    raw[8] = 99                                   # local header: compression method
    raw[raw.index(b"PK\x01\x02") + 10] = 99       # central directory: compression method
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("build, reason", [
    (bad_crc_zip, "damaged"), (encrypted_zip, "encrypted"), (unknown_method_zip, "compression method"),
])
def test_an_archive_zipfile_cannot_read_is_refused_with_its_reason(tmp_path, build, reason):
    with pytest.raises(UnsafeArchive, match=reason):
        safe_extract(build(tmp_path), tmp_path / "out")
