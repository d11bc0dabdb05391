"""How discovery looks at folder entries: one entry at a time (:func:`kind_of`), so one that
cannot be examined is skipped on its own, and the bounded recursive walk of a discovery folder
(xcsh's ``prompts/``, whose sub-folders group templates): a link loop or a huge tree in a
repository cannot hang start-up; and where the walk up from cwd stops (the repository root:
:func:`find_repo_root`, :func:`ancestors`)."""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

logger = logging.getLogger(__name__)

_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
"""Errors that mean "nothing there" (a missing file, a dangling or looping link), as pathlib's
``is_file`` treats them: no warning."""


def kind_of(path: Path) -> Literal["file", "dir"] | None:
    """Whether ``path`` (links followed) is a regular file, a folder, or neither.

    An entry whose ``stat`` fails for another reason (a link target name too long, EACCES
    through a link into a folder the user cannot search) is neither, with a warning naming it:
    it must not take its folder, or its whole source, out of discovery (pathlib's ``is_file``
    raises there)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno not in _ABSENT:
            logger.warning("skipped %s: %s", path, exc.strerror or exc)
        return None
    except ValueError:  # an embedded NUL byte
        return None
    if stat.S_ISREG(mode):
        return "file"
    return "dir" if stat.S_ISDIR(mode) else None


WALK_MAX_DEPTH = 8
"""How many folder levels below its root a recursive discovery walk descends (``prompts/``)."""
WALK_MAX_DIRS = 1000
"""How many folders one recursive discovery walk visits at most."""


def files_below(directory: Path, suffix: str) -> list[tuple[Path, str]]:
    """Visible files ending in ``suffix`` below ``directory``, shallow ones first, with their
    sub-directory as a ``a:b`` group name ("" at the top).

    Symlinked folders are followed, but each folder (by device and inode) is visited once, at
    most :data:`WALK_MAX_DEPTH` levels deep and :data:`WALK_MAX_DIRS` folders in all, so a link
    loop or a huge tree in a repository cannot hang start-up."""
    found: list[tuple[Path, str]] = []
    seen: set[tuple[int, int]] = set()
    visited = 0
    level: list[tuple[Path, tuple[str, ...]]] = [(directory, ())]
    while level and visited < WALK_MAX_DIRS:
        next_level: list[tuple[Path, tuple[str, ...]]] = []
        for folder, parts in level:
            try:
                info = folder.stat()
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen or visited >= WALK_MAX_DIRS:
                continue
            seen.add((info.st_dev, info.st_ino))
            visited += 1
            names: list[str] = []
            subdirs: list[str] = []
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.name.startswith("."):
                            continue
                        try:
                            is_dir = entry.is_dir()
                        except OSError as exc:
                            logger.warning("skipped %s: %s", entry.path, exc.strerror or exc)
                            continue
                        if is_dir:
                            subdirs.append(entry.name)
                        elif entry.name.endswith(suffix):
                            names.append(entry.name)
            except OSError:
                continue
            group = ":".join(parts)
            found += [(folder / n, group) for n in sorted(names)]
            if len(parts) < WALK_MAX_DEPTH:
                next_level += [(folder / d, (*parts, d)) for d in sorted(subdirs)]
        level = next_level
    return found


def find_repo_root(cwd: Path) -> Path | None:
    """The nearest ancestor of ``cwd`` (itself included) holding ``.git``, or None."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return None


def is_repository(root: Path) -> bool:
    """Whether ``root/.git`` is a repository as git sees one: a folder with ``HEAD``, ``objects``
    and ``refs``, or a file pointing to one (``gitdir: …``, a worktree or submodule)."""
    dot = root / ".git"
    try:
        if dot.is_dir():
            return (dot / "HEAD").is_file() and (dot / "objects").is_dir() and (dot / "refs").is_dir()
        if dot.is_file():
            with dot.open("rb") as handle:
                return handle.read(8) == b"gitdir: "
    except OSError:
        pass
    return False


def ancestors(start: Path, stop: Path | None) -> Iterator[tuple[Path, int]]:
    """``(directory, depth)`` from ``start`` (depth 0) upwards, ending at ``stop`` or the root."""
    current = start
    depth = 0
    while True:
        yield current, depth
        if stop is not None and current == stop:
            return
        if current.parent == current:
            return
        current = current.parent
        depth += 1
