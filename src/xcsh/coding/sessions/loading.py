"""Reading a session file: parse its lines, check the header, migrate, resolve blobs.

Pure reading: the caller decides what to write back (a migrated file is rewritten,
a torn tail is cut with :func:`~xcsh.coding.sessions.fileio.repair_tail`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from xcsh.coding.sessions.blobs import BlobStore, resolve_entry_blobs
from xcsh.coding.sessions.entries import SessionEntry, SessionHeader, is_valid_header
from xcsh.coding.sessions.fileio import ParsedFile
from xcsh.coding.sessions.migrate import migrate_to_current, strip_responses_replay_metadata

logger = logging.getLogger(__name__)


@dataclass(slots=True, kw_only=True)
class LoadedSession:
    """A session file's header and entries, in the current version."""

    header: SessionHeader
    entries: list[SessionEntry]
    migrated: bool
    """True when the file was in an older version and should be rewritten."""
    parsed: ParsedFile

    @property
    def needs_repair(self) -> bool:
        """True when the file ends in a torn line or lacks its final newline."""
        return self.parsed.good_end != self.parsed.size or self.parsed.needs_newline


def read_session_file(path: Path, blobs: BlobStore | None) -> LoadedSession | None:
    """Read ``path``; None when it is missing, empty or has no valid header (warns if it had content).

    Unparseable lines, stray headers and id-less lines are skipped; blob references
    are resolved when ``blobs`` is given. Raises ``OSError`` when the file cannot be read.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    parsed = ParsedFile(data)
    if not parsed.objects or not is_valid_header(parsed.objects[0]):
        if data.strip():
            logger.warning("%s is not a session file; starting a new session at that path", path)
        return None

    objects, migrated = migrate_to_current(parsed.objects)
    header = cast(SessionHeader, objects[0])
    entries: list[SessionEntry] = []
    for obj, has_ref in zip(objects[1:], parsed.has_blob_ref[1:], strict=True):
        if obj.get("type") == "session" or not isinstance(obj.get("id"), str):
            continue  # a stray header or an id-less line cannot take part in the tree
        if has_ref and blobs is not None:
            resolve_entry_blobs(obj, blobs)
        entries.append(strip_responses_replay_metadata(obj))
    return LoadedSession(header=header, entries=entries, migrated=migrated, parsed=parsed)
