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


def nested_instruction_files(cwd: Path) -> list[str]:
    """Paths (relative to ``cwd``, ``/``-separated, sorted) of instruction files below it."""
    found: list[str] = []
    visited = 0
    level: list[tuple[Path, int]] = [(cwd, 0)]
    while level and len(found) < LIMIT and visited < MAX_DIRS:
        next_level: list[tuple[Path, int]] = []
        for directory, depth in level:
            visited += 1
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:
                continue
            names = {e.name for e in entries if e.is_file()}
            if depth >= MIN_DEPTH:
                name = next((n for n in FILE_NAMES if n in names), None)
                if name is not None:
                    found.append((directory / name).relative_to(cwd).as_posix())
            if depth < MAX_DEPTH:
                next_level += [
                    (Path(e.path), depth + 1)
                    for e in entries
                    if e.is_dir(follow_symlinks=False)
                    and not e.name.startswith(".")
                    and e.name not in SKIPPED
                ]
        level = next_level
    return sorted(found)[:LIMIT]
