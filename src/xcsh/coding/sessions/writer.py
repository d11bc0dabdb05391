"""Durable writes of one session file (session-format §4, plus crash safety beyond the reference).

* lazy creation: nothing touches the disk until the store asks for the file to be
  created (its first message of any role); then header and entries are written
  atomically (temp file, fsync, rename, directory fsync), mode ``0600`` in
  directories created ``0700``;
* afterwards every entry is one ``os.write`` of a whole line on an ``O_APPEND``
  descriptor before :meth:`SessionFileWriter.append` returns — from then on it survives a
  crash or kill of this process (it is in the kernel's page cache) — and fsynced by a
  background thread within :data:`SYNC_GATHER_S` (group commit: the first entry written
  since the last fsync wakes the thread, which waits that long so the entries that follow
  share one fsync), so an fsync is never on the path of an answer and a busy session costs
  one fsync per gathering period instead of one per entry; only a power loss or kernel crash
  in those milliseconds could lose the newest entries (docs/security.md). :meth:`close` and
  :meth:`sync` fsync at once; an fsync error is latched like a write error;
* one writer per file, enforced by :mod:`xcsh.coding.sessions.lock`;
* the first write error is latched and raised again by every later write;
* a whole rewrite copies each unchanged entry's line from the current file instead of
  encoding it again (:mod:`xcsh.coding.sessions.lines`): the same bytes, a fraction of the CPU.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from xcsh.coding.private_fs import make_private_dirs, replace_private_file, write_fully
from xcsh.coding.sessions.blobs import BlobStore
from xcsh.coding.sessions.entries import SessionEntry, SessionError, SessionHeader, serialize_entry
from xcsh.coding.sessions.lines import LineSpan, LineTable, write_lines
from xcsh.coding.sessions.lock import SessionFileLock

logger = logging.getLogger(__name__)

# How long the fsync thread waits, once woken by an append, before it fsyncs (entries written
# meanwhile share that fsync; each wake-up of the thread takes the interpreter lock from the
# event loop a few times, and each fsync costs kernel time, docs/performance.md).
SYNC_GATHER_S = 0.02


class SessionWriteError(SessionError):
    """Writing the session file failed; raised again by every later write of the store."""


class SessionFileWriter:
    """Writes one session file; its own writes are serialised, so several threads may call it.

    The caller owns the header and entries and passes them in whenever the whole
    file may have to be (re)written. ``close()`` closes the descriptor and releases
    the file lock.
    """

    def __init__(
        self,
        path: Path,
        *,
        blobs: BlobStore | None,
        flushed: bool,
        lock: SessionFileLock | None = None,
        lines: LineTable | None = None,
        size: int = 0,
    ) -> None:
        """``lines`` and ``size``: where the entries of the existing file at ``path`` are, and its size."""
        self._path = path
        self._lines = lines if lines is not None else LineTable()
        self._size = size  # of the file self._lines describes, as far as this writer wrote or read it
        self._blobs = blobs
        self._flushed = flushed
        self._lock = lock
        self._fd: int | None = None
        self._error: BaseException | None = None
        self._write_lock = threading.RLock()
        self._unsynced = threading.Condition(threading.Lock())  # guards _dirty / _syncer
        self._dirty = False
        self._syncer: threading.Thread | None = None
        self._closing = threading.Event()  # ends the fsync thread's gathering wait at close

    @property
    def path(self) -> Path:
        return self._path

    @property
    def is_flushed(self) -> bool:
        """True once the file exists on disk with every entry."""
        return self._flushed

    def raise_latched(self) -> None:
        """Raise :class:`SessionWriteError` if an earlier write failed."""
        if self._error is not None:
            raise SessionWriteError(
                f"Session file {self._path} is not writable: {self._error}"
            ) from self._error

    def _latch(self, error: BaseException) -> SessionWriteError:
        if self._error is None:
            self._error = error
            logger.error("writing session file %s failed: %s", self._path, error)
        return SessionWriteError(f"Session file {self._path} is not writable: {self._error}")

    def append(
        self,
        entry: SessionEntry,
        header: SessionHeader,
        entries: Sequence[SessionEntry],
        *,
        create: bool,
    ) -> None:
        """Make ``entry``, the newest of ``entries``, durable.

        Before the file exists nothing is written unless ``create`` is true, and then
        the whole file is. A file that vanished since is written whole again.
        Raises :class:`SessionWriteError`.
        """
        with self._write_lock:
            self.raise_latched()
            if not self._flushed:
                if create:
                    self.write_all(header, entries)
                return
            try:
                if self._fd is None:
                    if not self._path.exists():
                        logger.warning("session file %s vanished; writing it again", self._path)
                        self.write_all(header, entries)
                        return
                    self._open_for_appends()
                    assert self._fd is not None
                data = (serialize_entry(entry, self._blobs) + "\n").encode("utf-8")
                write_fully(self._fd, data)
                self._lines.add(LineSpan(entry, self._size, len(data), True))
                self._size += len(data)
            except OSError as exc:
                raise self._latch(exc) from exc
            self._sync_soon()

    def _open_for_appends(self) -> None:
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        stat = os.fstat(fd)
        if (stat.st_dev, stat.st_ino) != self._lines.ident or stat.st_size != self._size:
            self._lines = LineTable((stat.st_dev, stat.st_ino))  # not the file the table knows
        self._size = stat.st_size
        self._fd = fd

    # ---- group commit ------------------------------------------------------------------
    def _sync_soon(self) -> None:
        """Have the background thread fsync what was written (started at the first append)."""
        with self._unsynced:
            if self._dirty:
                return  # the thread is already gathering: this entry joins its next fsync
            self._dirty = True
            if self._syncer is None:
                self._closing.clear()
                self._syncer = threading.Thread(target=self._sync_forever, name="session-fsync", daemon=True)
                self._syncer.start()
            self._unsynced.notify()

    def _sync_forever(self) -> None:
        while True:
            with self._unsynced:
                while not self._dirty:
                    if self._syncer is None:  # closed
                        return
                    self._unsynced.wait()
            self._closing.wait(SYNC_GATHER_S)  # later appends find _dirty set and do not wake us
            with self._unsynced:
                self._dirty = False
            self.sync()

    def sync(self) -> None:
        """fsync what has been appended so far (a failure is latched, raised by the next write)."""
        with self._write_lock:  # only to copy the descriptor: the fsync runs without the lock
            if self._fd is None or self._error is not None:
                return
            try:
                fd = os.dup(self._fd)
            except OSError as exc:
                self._latch(exc)
                return
        try:
            os.fsync(fd)
        except OSError as exc:
            with self._write_lock:
                self._latch(exc)
        finally:
            os.close(fd)

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if self._error is None:
                os.fsync(fd)  # what the background thread may not have synced yet
        except OSError as exc:
            self._latch(exc)
        finally:
            os.close(fd)

    def write_all(
        self,
        header: SessionHeader,
        entries: Sequence[SessionEntry],
        *,
        lines_from: SessionFileWriter | None = None,
    ) -> None:
        """Write header and every entry atomically (taking the file lock first if needed).

        Unchanged entries' lines are copied from this writer's file (or from ``lines_from``'s,
        a writer of another file holding the same entry objects: a branch), not re-encoded;
        the bytes are ``serialize_entry``'s either way. Raises :class:`SessionWriteError`.
        """
        with self._write_lock:
            self.raise_latched()
            try:
                if self._lock is None:
                    make_private_dirs(self._path.parent)
                    self._lock = SessionFileLock.acquire(self._path)
                header_line = (serialize_entry(header, self._blobs) + "\n").encode("utf-8")
                self._close_fd()
                source = lines_from if lines_from is not None else self
                with source._write_lock:
                    source_fd = source._open_source(self._blobs)
                    try:
                        table = replace_private_file(
                            self._path,
                            lambda fd: self._fill(fd, header_line, entries, source, source_fd),
                            sync_dir=True,
                        )
                    finally:
                        if source_fd is not None:
                            os.close(source_fd)
            except (OSError, SessionError) as exc:
                raise self._latch(exc) from exc
            self._lines, self._size = table
            self._flushed = True

    def _open_source(self, blobs: BlobStore | None) -> int | None:
        """A read descriptor of the file ``self._lines`` describes, or None when there is none
        (or its lines were written for another blob store, so they may differ)."""
        if self._lines.ident is None or not self._lines or blobs is not self._blobs:
            return None
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None  # vanished or unreadable: every line is encoded again
        stat = os.fstat(fd)
        if (stat.st_dev, stat.st_ino) != self._lines.ident or stat.st_size != self._size:
            os.close(fd)  # replaced or changed behind our back: its offsets cannot be trusted
            return None
        return fd

    def _fill(
        self,
        fd: int,
        header_line: bytes,
        entries: Sequence[SessionEntry],
        source: SessionFileWriter,
        source_fd: int | None,
    ) -> tuple[LineTable, int]:
        spans, size = write_lines(
            fd, header_line, entries, source._lines, source_fd, self._blobs, source_size=source._size
        )
        stat = os.fstat(fd)
        return LineTable((stat.st_dev, stat.st_ino), spans), size

    def close(self) -> None:
        """Close the descriptor and release the file lock (idempotent)."""
        with self._write_lock:
            self._close_fd()
            with self._unsynced:  # the background thread ends (close_fd has synced)
                self._syncer, self._dirty = None, False
                self._closing.set()
                self._unsynced.notify()
            if self._lock is not None:
                self._lock.release()
                self._lock = None
