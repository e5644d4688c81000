"""Paths taken from an artifact (a shard index's `weight_map`, the MLflow file-store layout) stay
inside the run folder: resolved by name alone, then checked component by component so that no
symlink is followed. Every reader that opens a file an artifact names goes through here.

A refusal names the artifact and why, never the path it asked for or what lies there.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path


class OutsideRun(ValueError):
    """A path an artifact names is outside the run folder, or reached through a symlink."""


def inside_run(root: Path, base: Path, name: str) -> Path:
    """`name` (as written in an artifact under `base`) as a path inside `root`, else OutsideRun.
    The file need not exist; if it does, no component from `root` down to it is a symlink."""
    if not isinstance(name, str) or not name or "\x00" in name or os.path.isabs(name):
        raise OutsideRun("names a path outside the run folder")
    root_abs = os.path.abspath(root)
    target = os.path.normpath(os.path.join(os.path.abspath(base), name))
    if os.path.commonpath([root_abs, target]) != root_abs:
        raise OutsideRun("names a path outside the run folder")
    check_no_links(root, Path(target))
    return Path(target)


def check_no_links(root: Path, path: Path) -> None:
    """OutsideRun if `path` or any folder between `root` and it is a symlink."""
    root_abs = Path(os.path.abspath(root))
    here = root_abs
    for part in Path(os.path.abspath(path)).relative_to(root_abs).parts:
        here = here / part
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                raise OutsideRun("reaches outside the run folder through a symlink")
        except FileNotFoundError:
            return


def walk(folder: Path, max_depth: int = 32, *, skip=None, links: list[Path] | None = None,
         too_deep: list[Path] | None = None) -> Iterator[tuple[Path, bool]]:
    """(path, is_dir) of everything under `folder`, without recursion (a run may nest its folders
    thousands deep) and without following a symlink: a link is skipped (and listed in `links`),
    a name `skip` accepts is passed over, and a folder `max_depth` levels down is yielded but not
    entered (and listed in `too_deep`)."""
    stack = [(Path(folder), 0)]
    while stack:
        here, depth = stack.pop()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        subdirs = []
        for e in entries:
            if skip is not None and skip(e.name):
                continue
            if e.is_symlink():
                if links is not None:
                    links.append(Path(e.path))
                continue
            if e.is_dir(follow_symlinks=False):
                subdirs.append(Path(e.path))
            elif e.is_file(follow_symlinks=False):
                yield Path(e.path), False
        for d in subdirs:
            yield d, True
            if depth + 1 >= max_depth:
                if too_deep is not None:
                    too_deep.append(d)
            else:
                stack.append((d, depth + 1))


def regular_files(root: Path, folder: Path, max_depth: int = 32, links: list[Path] | None = None) -> Iterator[Path]:
    """The regular files under `folder` (inside `root`), walked without following symlinks.
    OutsideRun when `folder` itself is reached through a symlink; symlinks inside are skipped (and
    listed in `links`); folders past `max_depth` levels are not entered."""
    check_no_links(root, folder)
    return (path for path, is_dir in walk(folder, max_depth, links=links) if not is_dir)
