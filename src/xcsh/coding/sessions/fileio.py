"""Low-level session file I/O: whole writes, atomic replacement, parsing with torn-tail repair."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import msgspec

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
        self.spans: list[tuple[int, int]] = []
        """Each object's line: (offset, length with its newline; a newline the repair adds counts)."""
        self.float_risk: list[bool] = []
        """Whether the object holds a float msgspec writes unlike ``repr`` (or was read the slow way)."""
        self.good_end = 0
        self.needs_newline = False
        marker = BLOB_PREFIX.encode("ascii")
        risky = False

        def read_float(text: str) -> float:
            # msgspec writes a float unlike repr only below 1e-4 or from 1e16 (exponent forms)
            nonlocal risky
            value = float(text)
            if value and not 1e-4 <= abs(value) < 1e16:
                risky = True
            return value

        decode = msgspec.json.Decoder(float_hook=read_float).decode
        pos = 0
        while pos < self.size:
            newline = data.find(b"\n", pos)
            end = self.size if newline == -1 else newline
            line = data[pos:end]
            risky = False
            try:
                value = decode(line)  # what parse_line gives, with the floats looked at
            except (msgspec.DecodeError, RecursionError, ValueError):
                value, risky = parse_line(line), True  # blank, not JSON, or what only json.loads reads
            obj = value if isinstance(value, dict) else None
            if obj is not None:
                self.objects.append(obj)
                self.has_blob_ref.append(marker in line)
                self.spans.append((pos, end + 1 - pos))
                self.float_risk.append(risky)
                self.good_end = end if newline == -1 else end + 1
                self.needs_newline = newline == -1
            elif newline != -1:
                # a complete line no parser reads (garbage, nesting deeper than they follow) is
                # skipped like any unparseable line, never cut: only an unterminated tail is torn
                self.good_end = end + 1
                self.needs_newline = False
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
