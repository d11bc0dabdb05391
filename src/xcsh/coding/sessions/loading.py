"""Reading a session file: parse its lines, check the header, migrate, resolve blobs.

Pure reading: the caller decides what to write back (a migrated file is rewritten,
a torn tail is cut with :func:`~xcsh.coding.sessions.fileio.repair_tail`).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import cast

import msgspec

from xcsh.coding.private_fs import require_regular_or_missing
from xcsh.coding.sessions.blobs import BlobStore, resolve_entry_blobs
from xcsh.coding.sessions.entries import NotASessionError as NotASessionError  # its old home
from xcsh.coding.sessions.entries import SessionEntry, is_valid_header, parse_line
from xcsh.coding.sessions.entry_types import SessionHeader
from xcsh.coding.sessions.fileio import ParsedFile
from xcsh.coding.sessions.lenient import usable_entry
from xcsh.coding.sessions.migrate import migrate_to_current, strip_responses_replay_metadata

logger = logging.getLogger(__name__)

_SNIFF_BYTES = 1 << 20


def check_openable(path: Path) -> None:
    """Raise :class:`NotASessionError` when ``path`` exists, has content and is not a session.

    Missing and empty (or whitespace-only) files are openable: they become new sessions.
    Like the reader, blank and unparseable lines are skipped and the first JSON object
    decides; the file is streamed, so refusing a large non-session file stays cheap.
    Raises ``OSError`` when the file exists but cannot be read, or is not a regular file.
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        require_regular_or_missing(path)  # a device, FIFO or socket is never opened (a FIFO blocks)
    try:
        handle = path.open("rb")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return
    content = False
    with handle:
        for line in iter(lambda: handle.readline(_SNIFF_BYTES), b""):
            obj = parse_line(line)
            if obj is not None:
                if is_valid_header(obj):
                    return
                raise NotASessionError(path)
            content = content or bool(line.strip())
    if content:
        raise NotASessionError(path)


def _has_header(parsed: ParsedFile) -> bool:
    return bool(parsed.objects) and is_valid_header(parsed.objects[0])


class LoadedSession(msgspec.Struct, kw_only=True):
    """A session file's header and entries, in the current version."""

    header: SessionHeader
    entries: list[SessionEntry]
    migrated: bool
    """True when the file was in an older version and should be rewritten."""
    parsed: ParsedFile
    spans: list[tuple[int, int]]
    """Where each entry's line is in the file: (offset, length with its newline); offset -1 for
    a line whose floats msgspec writes unlike the standard library (or a migrated file's)."""
    ident: tuple[int, int]
    """(st_dev, st_ino) of the file read."""

    @property
    def needs_repair(self) -> bool:
        """True when the file ends in a torn line or lacks its final newline."""
        return self.parsed.good_end != self.parsed.size or self.parsed.needs_newline


def read_session_file(path: Path, blobs: BlobStore | None) -> LoadedSession | None:
    """Read ``path``; None when it is missing or empty.

    Raises :class:`NotASessionError` when it has content but no valid header.

    Unparseable lines, stray headers, lines without a string ``type`` or ``id`` and messages the agent cannot use
    (:func:`~xcsh.coding.sessions.lenient.usable_entry`) are skipped; blob references
    are resolved when ``blobs`` is given. Raises ``OSError`` when the file cannot be read.
    """
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            data = handle.read()
    except FileNotFoundError:
        return None
    parsed = ParsedFile(data)
    if not _has_header(parsed):
        if data.strip():
            raise NotASessionError(path)
        return None

    objects, migrated = migrate_to_current(parsed.objects)
    header = cast(SessionHeader, objects[0])
    for name in ("title", "titleSource", "parentSession"):
        if name in header and not isinstance(header.get(name), str):
            del header[name]  # type: ignore[misc]  # hand-edited: as if never set (frames carry strings)
    entries: list[SessionEntry] = []
    spans: list[tuple[int, int]] = []  # a migrated file is written whole again: no line is reused
    unknown = (-1, 0)  # a line that is re-encoded when the file is rewritten
    lines = parsed.spans[1:] if not migrated else [unknown] * (len(objects) - 1)
    skipped = 0
    for obj, has_ref, span, risky in zip(
        objects[1:], parsed.has_blob_ref[1:], lines, parsed.float_risk[1:], strict=True
    ):
        kind = obj.get("type")
        if kind == "session" or not isinstance(kind, str) or not isinstance(obj.get("id"), str):
            continue  # a stray header, or a line without a type or an id, cannot take part in the tree
        parent = obj.get("parentId")
        if parent is not None and not isinstance(parent, str):
            obj["parentId"] = None  # a parent that names no entry (a hand-edited 7): a root, as a lost parent
        if not usable_entry(obj):
            skipped += 1  # what the agent cannot use as a message is skipped like an unparseable line
            continue
        if has_ref and blobs is not None:
            resolve_entry_blobs(obj, blobs)
        entries.append(strip_responses_replay_metadata(obj))
        spans.append(unknown if risky else span)
    if skipped:
        logger.warning("session file %s: %d message entries without a usable message skipped", path, skipped)
    return LoadedSession(
        header=header,
        entries=entries,
        migrated=migrated,
        parsed=parsed,
        spans=spans,
        ident=(stat.st_dev, stat.st_ino),
    )
