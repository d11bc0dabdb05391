"""SessionStore: one session as an append-only JSONL tree of entries.

The store keeps the entries in memory (:class:`~xcsh.coding.sessions.entry_index.EntryIndex`:
by id, the labels, the leaf) and hands every new entry to a :class:`~xcsh.coding.sessions.writer.SessionFileWriter`,
so the persistence rules are the writer's (session-format §4 plus crash safety):
nothing touches the disk until the first message (any role; session-format §4's
project decision), every ``append_*`` call
returns only after its line is written to the file (fsynced by the writer's group commit
within milliseconds), rewrites are atomic, one writer per file,
and the first write error is latched and raised again by every later write.
Opening a file whose tail was torn by a crash truncates only the torn bytes.
Branching and forking live in :mod:`xcsh.coding.sessions.branching`.

The in-memory entries are authoritative while the process runs. The store is
synchronous and not thread-safe beyond serialising its own writes.

A stored entry is never changed in place (by the store or its callers): a change is a
replacement entry (:meth:`SessionStore.rewrite_entries`). Whole rewrites rely on it: they
copy each unchanged entry's line from the file instead of encoding it again
(:mod:`xcsh.coding.sessions.lines`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, cast

from xcsh.ai.patterns import LazyPattern
from xcsh.coding.private_fs import make_private_dirs, remove_stale_temps
from xcsh.coding.sessions.appends import EntryAppends
from xcsh.coding.sessions.blobs import BlobStore
from xcsh.coding.sessions.context import SessionContext, context_of_branch
from xcsh.coding.sessions.entries import NotASessionError as NotASessionError
from xcsh.coding.sessions.entries import (
    SessionEntry,
    SessionError,
    iso_now,
    new_header,
    session_file_name,
)
from xcsh.coding.sessions.entry_index import EntryIndex
from xcsh.coding.sessions.fileio import repair_tail
from xcsh.coding.sessions.lines import LineTable
from xcsh.coding.sessions.lock import SessionFileLock
from xcsh.coding.sessions.writer import SYNC_GATHER_S, SessionFileWriter
from xcsh.coding.sessions.writer import SessionWriteError as SessionWriteError

if TYPE_CHECKING:
    from xcsh.agent.types import AgentMessage
    from xcsh.coding.sessions.entry_types import CustomMessageEntry, MessageEntry, SessionHeader

logger = logging.getLogger(__name__)

_SUMMARY_ROLES = frozenset({"compactionSummary", "branchSummary"})
_CONTROL_CHARS = LazyPattern("[\u0000-\u001f\u007f-\u009f]")


def sanitize_title(title: str) -> str:
    """Control characters become spaces, runs of spaces collapse, ends are trimmed."""
    return re.sub(" +", " ", _CONTROL_CHARS.sub(" ", title)).strip()


# --------------------------------------------------------------------------- the store


class SessionStore(EntryAppends):
    """One session: header, entries in file order, and the leaf new entries attach to.

    Build with :meth:`create`, :meth:`open` or :meth:`in_memory`; call :meth:`close`
    when done (it releases the file lock). Every ``append_*`` returns the new entry,
    whose ``parentId`` is the previous leaf, and makes it the leaf.
    """

    def __init__(
        self,
        *,
        header: SessionHeader,
        entries: list[SessionEntry],
        path: Path | None,
        session_dir: Path | None,
        blobs: BlobStore | None,
        flushed: bool,
        lock: SessionFileLock | None = None,
        lines: LineTable | None = None,
        size: int = 0,
        sync_gather_s: float = SYNC_GATHER_S,
    ) -> None:
        self._header = header
        self._index = EntryIndex(entries)
        self._session_dir = session_dir
        self._blobs = blobs
        self._file = (
            SessionFileWriter(
                path,
                blobs=blobs,
                flushed=flushed,
                lock=lock,
                lines=lines,
                size=size,
                sync_gather_s=sync_gather_s,
            )
            if path is not None
            else None
        )
        self._closed = False

    # ------------------------------------------------------------------ construction

    @classmethod
    def create(
        cls,
        session_dir: Path,
        cwd: Path,
        *,
        parent_session: str | None = None,
        blob_dir: Path | None = None,
        sync_gather_s: float = SYNC_GATHER_S,
    ) -> SessionStore:
        """A new session whose file ``<session_dir>/<timestamp>_<id>.jsonl`` is written lazily
        (``sync_gather_s``: how long its fsync thread gathers appends, see the writer)."""
        header = new_header(str(cwd), parent_session=parent_session)
        return cls(
            header=header,
            entries=[],
            path=Path(session_dir) / session_file_name(header),
            session_dir=Path(session_dir),
            blobs=BlobStore(blob_dir) if blob_dir is not None else None,
            flushed=False,
            sync_gather_s=sync_gather_s,
        )

    @classmethod
    def in_memory(cls, cwd: Path, *, parent_session: str | None = None) -> SessionStore:
        """A session that is never written (``--no-session``)."""
        header = new_header(str(cwd), parent_session=parent_session)
        return cls(header=header, entries=[], path=None, session_dir=None, blobs=None, flushed=False)

    @classmethod
    def from_entries(
        cls,
        header: SessionHeader,
        entries: list[SessionEntry],
        *,
        session_dir: Path | None,
        blobs: BlobStore | None,
        lines_from: SessionStore | None = None,
    ) -> SessionStore:
        """A new session holding ``header`` and ``entries`` (taken as they are, not copied).

        With a ``session_dir`` its file ``<session_dir>/<timestamp>_<id>.jsonl`` is written
        at once (the store is closed again if that fails, raising
        :class:`SessionWriteError`); without one the session stays in memory. Entries that
        are ``lines_from``'s own (the same objects) have their lines copied from its file.
        """
        path = session_dir / session_file_name(header) if session_dir is not None else None
        store = cls(
            header=header, entries=entries, path=path, session_dir=session_dir, blobs=blobs, flushed=False
        )
        if path is not None:
            try:
                assert store._file is not None
                source = lines_from._file if lines_from is not None else None
                store._file.write_all(store._header, store._index.entries, lines_from=source)
            except SessionError:
                store.close()
                raise
        return store

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        cwd_for_new: Path,
        blob_dir: Path | None = None,
        session_dir: Path | None = None,
    ) -> SessionStore:
        """Open (and lock) the session file at ``path`` (a symlink's target: :attr:`path` is then
        the target's).

        A missing or empty file becomes a new session written at that exact path at
        once; a file with content that is not a session raises
        :class:`NotASessionError` before anything is created or locked, and is never
        written. Older versions are migrated and rewritten atomically; a
        torn last line is truncated; unparseable lines elsewhere are skipped. Raises
        :class:`~xcsh.coding.sessions.lock.SessionLockedError` when another store holds
        the file, ``OSError`` when it cannot be read or written.
        """
        from xcsh.coding.sessions.loading import check_openable  # opening a file only: not a new session

        path = Path(os.path.abspath(os.path.expanduser(path)))
        if os.path.islink(path):
            # a symlink to a session file is that file: its lock (``<file>.lock`` beside it) and
            # its rewrites (renamed over it, not over the link) are the real file's
            path = Path(os.path.realpath(path))
        check_openable(path)
        make_private_dirs(path.parent)
        lock = SessionFileLock.acquire(path)
        try:
            # rewrites of a killed holder left their temp files; holding the lock, none is alive
            if removed := remove_stale_temps(path):
                logger.info("removed %d temp file(s) a killed writer left beside %s", removed, path)
            store = cls._load(path, lock, cwd_for_new, blob_dir, session_dir or path.parent)
        except BaseException:
            lock.release()
            raise
        return store

    @classmethod
    def _load(
        cls, path: Path, lock: SessionFileLock, cwd_for_new: Path, blob_dir: Path | None, session_dir: Path
    ) -> SessionStore:
        from xcsh.coding.sessions.loading import read_session_file

        blobs = BlobStore(blob_dir) if blob_dir is not None else None
        loaded = read_session_file(path, blobs)
        lines: LineTable | None = None
        if loaded is not None:
            lines = LineTable(loaded.ident, loaded=(list(loaded.entries), loaded.spans))
        store = cls(
            header=loaded.header if loaded is not None else new_header(str(cwd_for_new)),
            entries=loaded.entries if loaded is not None else [],
            path=path,
            session_dir=session_dir,
            blobs=blobs,
            flushed=loaded is not None,
            lock=lock,
            lines=lines,
            size=loaded.parsed.good_end + loaded.parsed.needs_newline if loaded is not None else 0,
        )
        if loaded is None:
            store._write_all()  # missing or empty: a new session at that exact path, written at once
        elif loaded.migrated:
            logger.info("migrating session file %s to version %d", path, loaded.header.get("version"))
            store._write_all()
        elif loaded.needs_repair:
            repair_tail(path, loaded.parsed)
        return store

    # ------------------------------------------------------------------ properties

    @property
    def session_id(self) -> str:
        return self._header["id"]

    @property
    def path(self) -> Path | None:
        """The session file (None for an in-memory session); it may not exist yet."""
        return self._file.path if self._file is not None else None

    @property
    def session_dir(self) -> Path | None:
        return self._session_dir

    @property
    def blobs(self) -> BlobStore | None:
        """Where large payloads are externalised to (None: kept inline)."""
        return self._blobs

    @property
    def cwd(self) -> str:
        return self._header["cwd"]

    @property
    def header(self) -> SessionHeader:
        """A copy of the header."""
        return cast("SessionHeader", dict(self._header))

    @property
    def entries(self) -> list[SessionEntry]:
        """All entries in file order (a new list; the entries themselves are shared)."""
        return list(self._index.entries)

    @property
    def leaf_id(self) -> str | None:
        return self._index.leaf_id

    @property
    def title(self) -> str | None:
        return self._header.get("title")

    @property
    def title_source(self) -> str | None:
        return self._header.get("titleSource")

    @property
    def is_flushed(self) -> bool:
        """True once the file exists on disk with every entry."""
        return self._file is not None and self._file.is_flushed

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        return self._index.get(entry_id)

    def entry_of_message(self, message: object) -> SessionEntry | None:
        """The ``message`` entry holding this very message object (the live context shares its
        message dicts with the entries), or None."""
        return self._index.entry_of_message(message)

    def get_label(self, entry_id: str) -> str | None:
        return self._index.label(entry_id)

    def branch_path(self, leaf_id: str | None) -> list[SessionEntry]:
        """Entries from the root to ``leaf_id`` (empty for None or an unknown id); a new list."""
        return list(self._index.branch_to(leaf_id))

    def build_context(self) -> SessionContext:
        """The live context of the current branch (:func:`build_session_context` of the entries)."""
        leaf_id = self._index.leaf_id
        return context_of_branch(self._index.branch_to(leaf_id)) if leaf_id is not None else SessionContext()

    def user_message_entries(self) -> list[SessionEntry]:
        """Every ``message`` entry with a user message, whole file, file order."""
        return [
            e
            for e in self._index.entries
            if e.get("type") == "message"
            and isinstance(e.get("message"), dict)
            and e["message"].get("role") == "user"
        ]

    # ------------------------------------------------------------------ appends

    def _base(self, kind: str) -> dict[str, Any]:
        return {
            "type": kind,
            "id": self._index.new_id(),
            "parentId": self._index.leaf_id,
            "timestamp": iso_now(),
        }

    def append_message(self, message: AgentMessage) -> MessageEntry | CustomMessageEntry:
        """Append a message; ``custom`` (and legacy ``hookMessage``) ones become ``custom_message`` entries.

        The message dict is stored as is (not copied). Summary messages are rebuilt
        from their own entries and are refused here with ``ValueError``.
        """
        role = message["role"]
        if role in _SUMMARY_ROLES:
            raise ValueError(f"{role} messages are not stored as messages; append a compaction entry instead")
        if message["role"] == "custom" or message["role"] == "hookMessage":
            return self.append_custom_message(
                str(message.get("customType", "")),
                message.get("content", ""),
                bool(message.get("display", True)),
                message.get("details"),
                attribution=message.get("attribution", "agent"),
            )
        entry = self._base("message")
        entry["message"] = message
        return cast("MessageEntry", self._append(entry))

    def set_leaf(self, entry_id: str | None) -> None:
        """Move the leaf (tree navigation); later appends start a new branch there."""
        self._index.set_leaf(entry_id)

    def _append(self, entry: SessionEntry) -> SessionEntry:
        if self._closed:
            raise SessionError("The session store is closed")
        self._index.add(entry)
        self._persist(entry)
        return entry

    # ------------------------------------------------------------------ writing

    def _persist(self, entry: SessionEntry) -> None:
        if self._file is not None:
            self._file.append(entry, self._header, self._index.entries, create=self._index.has_message)

    def _write_all(self) -> None:
        """Write header and every entry atomically (taking the file lock first if needed)."""
        assert self._file is not None
        self._file.write_all(self._header, self._index.entries)

    def flush(self) -> None:
        """Wait for a rewrite in progress, then raise the latched write error, if any (appends
        are already durable)."""
        if self._file is not None:
            self._file.wait()
            self._file.raise_latched()

    @property
    def is_rewriting(self) -> bool:
        """True while a rewrite of the file is requested or running."""
        return self._file is not None and self._file.is_rewriting

    def wait_for_rewrite(self) -> None:
        """Return once no rewrite of the file is requested or running (callable from any
        thread; raises nothing — :meth:`flush` raises a latched error)."""
        if self._file is not None:
            self._file.wait()

    def set_title(self, title: str, source: Literal["auto", "user"] = "user") -> bool:
        """Set the session name (sanitised); if the file exists, its header is rewritten in the
        background (:meth:`SessionFileWriter.request_rewrite`; :meth:`flush` waits for it).

        Returns False, changing nothing, when the sanitised title is empty or an
        ``auto`` title would replace a ``user`` one. Raises :class:`SessionWriteError` when
        an earlier write failed.
        """
        if source == "auto" and self._header.get("titleSource") == "user":
            return False
        clean = sanitize_title(title)
        if not clean:
            return False
        self._header["title"] = clean
        self._header["titleSource"] = source
        if self._file is not None and not self._closed:
            self._file.request_rewrite(self._header, self._index.entries)
        return True

    def rewrite_entries(self, replacements: Mapping[str, SessionEntry] | None = None) -> None:
        """Replace entries by id (same position in the file) and rewrite the file atomically,
        in the background (:meth:`SessionFileWriter.request_rewrite`; :meth:`flush` waits for it).

        Used by pruning and argument rewrites; a session not yet on disk is only
        updated in memory. Raises :class:`SessionWriteError` when an earlier write failed
        (memory is updated either way).
        """
        for entry_id, new_entry in (replacements or {}).items():
            self._index.replace(entry_id, new_entry)
        if self._file is not None and not self._closed:
            self._file.request_rewrite(self._header, self._index.entries)

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the file and release its lock (idempotent); appends fail afterwards."""
        self._closed = True
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
