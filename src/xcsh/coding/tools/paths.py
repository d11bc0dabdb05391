"""Resolve model-supplied paths against the session working directory.

Contract: ``~`` and ``~/…`` expand to the home directory; relative paths are taken
relative to the session cwd; a leading ``@`` (models copy it from file mentions)
is dropped. Paths are made absolute but symlinks are not resolved, so what the
model sees stays close to what it wrote.
"""

from __future__ import annotations

import os
import stat
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


def refuse_special_file(path: Path, shown: str) -> None:
    """Raise :class:`ToolError` when ``path`` (followed through links) is a FIFO, a device or a
    socket: opening one blocks until another process writes (a FIFO), or reads without end (a
    device), and would wedge the tool. A missing path, a regular file or a directory passes
    (callers answer those themselves)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    from xcsh.coding.tools.errors import ToolError

    raise ToolError(f"Cannot open {shown}: it is {kind}, not a regular file; tools never open one.")
