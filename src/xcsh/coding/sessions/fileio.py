"""Low-level session file I/O: whole writes, atomic replacement, parsing with torn-tail repair."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from xcsh.coding.private_fs import write_private_file
from xcsh.coding.sessions.blobs import BLOB_PREFIX
from xcsh.coding.sessions.entries import parse_line

logger = logging.getLogger(__name__)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (mode ``0600``) via a synced temp file and a rename, then sync the directory."""
    write_private_file(path, data, sync_dir=True)


class ParsedFile:
    """The parsed objects of a session file and where its last complete object ends."""

    def __init__(self, data: bytes) -> None:
        self.size = len(data)
        self.objects: list[dict[str, Any]] = []
        self.has_blob_ref: list[bool] = []
        self.good_end = 0
        self.needs_newline = False
        marker = BLOB_PREFIX.encode("ascii")
        pos = 0
        while pos < self.size:
            newline = data.find(b"\n", pos)
            end = self.size if newline == -1 else newline
            line = data[pos:end]
            obj = parse_line(line)
            if obj is not None:
                self.objects.append(obj)
                self.has_blob_ref.append(marker in line)
                self.good_end = end if newline == -1 else end + 1
                self.needs_newline = newline == -1
            pos = end + 1
        self.torn_bytes = data[self.good_end :]


def repair_tail(path: Path, parsed: ParsedFile) -> None:
    """Cut a torn last line (and add a missing final newline), keeping every complete entry."""
    if parsed.torn_bytes.strip():
        logger.warning(
            "session file %s ends with %d bytes of an incomplete entry (interrupted write); truncating them",
            path,
            len(parsed.torn_bytes),
        )
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        os.ftruncate(fd, parsed.good_end)
        if parsed.needs_newline:
            os.pwrite(fd, b"\n", parsed.good_end)
        os.fsync(fd)
    finally:
        os.close(fd)
