"""Zips from untrusted places: refused with a clear reason, nothing written outside the folder."""
import stat
import zipfile

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
    path = archive(tmp_path, lambda z: (z.writestr("logs/train.log", "step=1 loss=2\n"), z.writestr("cfg.yaml", "lr: 1\n")))
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
