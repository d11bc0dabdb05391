"""Instruction files in sub-directories of cwd, listed (not read) in the system prompt.

The model is told that these directories have their own instructions and reads the file
before changing anything there. Directories 1 to 4 levels below cwd are searched, skipping
hidden ones, ``node_modules`` and ``.git``; the search stops at :data:`LIMIT` files or after
:data:`MAX_DIRS` directories, so a huge tree cannot slow start-up down.
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_NAMES = ("XCSH.md", "AGENTS.md")
MIN_DEPTH = 1
MAX_DEPTH = 4
LIMIT = 200
MAX_DIRS = 5000
SKIPPED = frozenset({"node_modules", ".git"})


def _is_file(entry: os.DirEntry[str]) -> bool:
    """Whether the entry is a file; one whose ``stat`` fails (a link into a folder the user
    cannot search) is not, and its folder's other entries are still looked at."""
    try:
        return entry.is_file()
    except OSError:
        return False


def nested_instruction_files(cwd: Path, *, limit: int = LIMIT, max_dirs: int = MAX_DIRS) -> list[str]:
    """Paths (relative to ``cwd``, ``/``-separated, sorted) of instruction files below it.

    Breadth first, a whole level at a time, until a level ends with ``max_dirs`` directories
    visited or ``limit`` files found (so the order within a level does not change the result).
    Only the entries named like an instruction file are checked for being files and nothing is
    sorted but the result: the walk runs before the first answer, and a large tree has tens of
    thousands of entries within four levels.
    """
    found: list[str] = []
    visited = 0
    level: list[tuple[str, str, int]] = [(os.fspath(cwd), "", 0)]  # (path, relative path, depth)
    while level and len(found) < limit and visited < max_dirs:
        next_level: list[tuple[str, str, int]] = []
        for directory, relative, depth in level:
            visited += 1
            files: set[str] = set()
            subdirs: list[str] = []
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        name = entry.name
                        if name in FILE_NAMES and _is_file(entry):
                            files.add(name)
                        elif (
                            depth < MAX_DEPTH
                            and not name.startswith(".")
                            and name not in SKIPPED
                            and entry.is_dir(follow_symlinks=False)
                        ):
                            subdirs.append(name)
            except OSError:
                continue
            if depth >= MIN_DEPTH:
                chosen = next((n for n in FILE_NAMES if n in files), None)
                if chosen is not None:
                    found.append(f"{relative}/{chosen}")
            for sub in subdirs:
                next_level.append(
                    (os.path.join(directory, sub), f"{relative}/{sub}" if relative else sub, depth + 1)
                )
        level = next_level
    return sorted(found)[:limit]
