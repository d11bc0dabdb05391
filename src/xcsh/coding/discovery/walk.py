"""The bounded recursive walk of a discovery folder (xcsh's ``prompts/``, whose sub-folders group
templates): a link loop or a huge tree in a repository cannot hang start-up."""

from __future__ import annotations

import os
from pathlib import Path

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
                        except OSError:
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
