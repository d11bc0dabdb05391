"""Resolve model-supplied paths against the session working directory.

Contract: ``~`` and ``~/…`` expand to the home directory; relative paths are taken
relative to the session cwd; a leading ``@`` (models copy it from file mentions)
is dropped. Paths are made absolute but symlinks are not resolved, so what the
model sees stays close to what it wrote.
"""

from __future__ import annotations

import os
from pathlib import Path


def resolve_path(cwd: Path, path: str) -> Path:
    """Return the absolute path that ``path`` names when seen from ``cwd``."""
    text = path.strip()
    if text.startswith("@") and len(text) > 1:
        text = text[1:]
    expanded = Path(os.path.expanduser(text)) if text else Path(".")
    full = expanded if expanded.is_absolute() else Path(cwd) / expanded
    return Path(os.path.normpath(full))


def display_path(cwd: Path, path: Path) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, else absolute (for tool output)."""
    try:
        rel = path.relative_to(Path(os.path.normpath(cwd)))
    except ValueError:
        return str(path)
    text = rel.as_posix()
    return text if text != "." else "."
