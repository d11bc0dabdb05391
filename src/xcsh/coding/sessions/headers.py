"""Finding a session file's header without reading the file: lookups, listings, export guards.

As the reader does (session-format §2), blank and unparseable lines are skipped and the first
JSON object decides, and the header line is read whole however long (a long title), within
:data:`HEADER_SCAN_BYTES`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO, Any

from xcsh.coding.sessions.entries import is_valid_header, parse_line

HEADER_SCAN_BYTES = 16 << 20
"""How far a lookup reads for a header: a large file that is not a session costs little."""


def header_from(handle: IO[bytes], limit: int = HEADER_SCAN_BYTES) -> tuple[dict[str, Any], bytes] | None:
    """The header read from ``handle`` (at its start) and the bytes up to and including its
    line, or None when the first JSON object within ``limit`` bytes is no header (or there is none).
    The handle is left after the header line."""
    head: list[bytes] = []
    consumed = 0
    while consumed < limit:
        line = handle.readline(limit - consumed)
        if not line:
            return None
        head.append(line)
        consumed += len(line)
        obj = parse_line(line)
        if obj is not None:
            return (obj, b"".join(head)) if is_valid_header(obj) else None
    return None


def read_header(path: Path) -> dict[str, Any] | None:
    """The header of the session file at ``path``, or None when it is no readable session file
    (anything but a regular file is none: a FIFO would block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with path.open("rb") as handle:
            found = header_from(handle)
    except OSError:
        return None
    return found[0] if found is not None else None
