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
  encoding it again (:mod:`xcsh.coding.sessions.lines`): the same bytes, a fraction of the CPU;
* a rewrite of the existing file in place (:meth:`SessionFileWriter.request_rewrite`: pruning,
  a new title) runs on a background thread, so no caller waits for it; see that method for how
  appends made meanwhile stay in the file, in order, exactly once.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from xcsh.coding.private_fs import (
    fsync_dir,
    make_private_dirs,
    open_private,
    replace_private_file,
    temp_path_for,
    write_fully,
)
from xcsh.coding.sessions.blobs import BlobStore
from xcsh.coding.sessions.entries import SessionEntry, SessionError, serialize_entry
from xcsh.coding.sessions.lines import LineSpan, LineTable, copy_range, write_lines
from xcsh.coding.sessions.lock import SessionFileLock

if TYPE_CHECKING:
    from xcsh.coding.sessions.entry_types import SessionHeader

logger = logging.getLogger(__name__)

# How long the fsync thread waits, once woken by an append, before it fsyncs (entries written
# meanwhile share that fsync; each wake-up of the thread takes the interpreter lock from the
# event loop a few times, and each fsync costs kernel time, docs/performance.md).
SYNC_GATHER_S = 0.02


class SessionWriteError(SessionError):
    """Writing the session file failed; raised again by every later write of the store."""


class _Rewrite:
    """A requested rewrite: the header and entries to write, the file's size when it was asked
    for (what was appended since is copied after them) and the generation it applies to; once
    started, the line table of the file it copies from (taken with that file's descriptor)."""

    __slots__ = ("entries", "generation", "header", "lines", "since")

    def __init__(
        self, header: SessionHeader, entries: list[SessionEntry], since: int, generation: int
    ) -> None:
        self.header = header
        self.entries = entries
        self.since = since
        self.generation = generation
        self.lines = LineTable()


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
        sync_gather_s: float = SYNC_GATHER_S,
    ) -> None:
        """``lines`` and ``size``: where the entries of the existing file at ``path`` are, and its size;
        ``sync_gather_s``: how long the fsync thread gathers appends before it fsyncs."""
        self._path = path
        self._sync_gather_s = sync_gather_s
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
        # background rewrites (guarded by _write_lock; _idle is notified when one ends)
        self._idle = threading.Condition(self._write_lock)
        self._job: _Rewrite | None = None  # requested, not yet started
        self._rewriter: threading.Thread | None = None
        self._running = False
        self._tail: list[LineSpan] = []  # lines appended since a rewrite was requested
        self._generation = 0  # counts whole writes: a rewrite asked for before one is dropped

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
        the whole file is. A file that vanished since, or was replaced by another file (a new
        inode at the path), is written whole again from memory, which is authoritative.
        Raises :class:`SessionWriteError`.
        """
        with self._write_lock:
            self.raise_latched()
            if not self._flushed:
                if create:
                    self.write_all(header, entries)
                return
            try:
                if not self._still_ours():
                    # appends through the descriptor would go to a file no name leads to any more
                    self._close_fd()
                    what = "was replaced by another file" if self._path.exists() else "vanished"
                    logger.warning("session file %s %s; writing it again", self._path, what)
                    if self._lock is not None and not self._lock.is_current():
                        # its lock file went too (the folder was removed): take the lock again, so
                        # no other process opens the file written now (or latch SessionLockedError)
                        self._lock.forget()
                        self._lock = None
                    self.write_all(header, entries)
                    return
                if self._fd is None:
                    self._open_for_appends()
                    assert self._fd is not None
                data = (serialize_entry(entry, self._blobs) + "\n").encode("utf-8")
                write_fully(self._fd, data)
                span = LineSpan(entry, self._size, len(data), True)
                self._lines.add(span)
                if self._job is not None or self._running:
                    self._tail.append(span)
                self._size += len(data)
            except OSError as exc:
                raise self._latch(exc) from exc
            self._sync_soon()

    def _still_ours(self) -> bool:
        """Whether the file at the path is the one this writer last wrote or read (its inode):
        not removed, and not renamed over (an export, an editor's save, a sync tool)."""
        try:
            at_path = os.stat(self._path)
        except FileNotFoundError:
            return False
        ident = self._lines.ident  # the descriptor's file while it is open
        return ident is None or (at_path.st_dev, at_path.st_ino) == ident

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
            self._closing.wait(self._sync_gather_s)  # later appends find _dirty set and do not wake us
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
            self._job, self._tail = None, []  # this write is newer than any requested rewrite
            self._generation += 1  # and one running now is dropped when it ends
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

    # ---- rewrites in the background -----------------------------------------------------
    def request_rewrite(self, header: SessionHeader, entries: Sequence[SessionEntry]) -> None:
        """Rewrite the existing file with ``header`` and ``entries`` on a background thread.

        Returns at once (nothing happens before the file exists); the store's memory is already
        what the file will hold. The rewrite writes header and entries to a temp file (copying
        unchanged lines) and fsyncs it without the lock, so appends go on meanwhile — each one
        still written to the current file before it returns. Then, holding the lock, it copies
        the lines appended since the request (the file's bytes past its size at the request:
        exactly those entries, in order) to the temp file, fdatasyncs it again when it copied
        any, renames it over the file and fsyncs the directory. So every line fsynced before the
        rename is fsynced in whichever file the name points to: a crash or power loss at any
        point leaves the old file or the new one, each complete apart from lines not yet fsynced
        (as for any append; the group commit syncs them in the new file). A later request
        replaces one not yet started (it holds everything); :meth:`write_all` drops both.
        A failure is latched: the next write raises it. :meth:`wait` waits for the rewrite.
        """
        with self._write_lock:
            if not self._flushed:
                return
            self.raise_latched()
            if self._job is None and not self._running:
                self._tail = []
            self._job = _Rewrite(
                cast("SessionHeader", dict(header)), list(entries), self._size, self._generation
            )
            if self._rewriter is None:
                self._rewriter = threading.Thread(
                    target=self._rewrite_while_asked, name="session-rewrite", daemon=True
                )
                self._rewriter.start()

    @property
    def is_rewriting(self) -> bool:
        """True while a rewrite is requested or running (a snapshot: it may end at any time)."""
        return self._job is not None or self._running

    def wait(self) -> None:
        """Return once no rewrite is requested or running."""
        with self._write_lock:
            while self._job is not None or self._running:
                self._idle.wait()

    def _rewrite_while_asked(self) -> None:
        while True:
            with self._write_lock:
                job, self._job = self._job, None
                if job is None or self._error is not None:
                    self._rewriter = None
                    self._idle.notify_all()
                    return
                self._running = True
                # the table and the descriptor of the same file, taken together: a whole write
                # after the lock is released replaces self._lines (not this table, to which
                # appends only add while the rewrite reads it)
                job.lines = self._lines
                job.lines.materialize()
                source = self._open_source(self._blobs)
            try:
                self._rewrite(job, source)
            except Exception as exc:  # latched (the next write raises it), unless stale
                with self._write_lock:
                    if job.generation == self._generation:
                        self._latch(exc)
                    else:  # a whole write since holds everything: this rewrite was to be dropped
                        logger.info("stale rewrite of session file %s dropped: %s", self._path, exc)
            finally:
                if source is not None:
                    os.close(source)
                with self._write_lock:
                    self._running = False
                    self._idle.notify_all()

    def _rewrite(self, job: _Rewrite, source: int | None) -> None:
        tmp = temp_path_for(self._path)
        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            header_line = (serialize_entry(job.header, self._blobs) + "\n").encode("utf-8")
            spans, end = write_lines(
                fd, header_line, job.entries, job.lines, source, self._blobs, source_size=job.since
            )
            os.fsync(fd)  # the bulk, while appends go on
            with self._write_lock:
                if job.generation != self._generation or self._error is not None:
                    return  # a whole write since, or a failure: this rewrite is stale
                self._commit(job, fd, tmp, spans, end, source)
        finally:
            os.close(fd)
            tmp.unlink(missing_ok=True)
        fsync_dir(self._path.parent)
        self._sync_soon()  # the lines copied last: with the group commit

    def _commit(
        self, job: _Rewrite, fd: int, tmp: Path, spans: list[LineSpan], end: int, source: int | None
    ) -> None:
        """Under the lock: the lines appended since the request, then the rename."""
        shift = end - job.since
        tail = [
            LineSpan(s.entry, s.offset + shift, s.length, True) for s in self._tail if s.offset >= job.since
        ]
        if source is not None:
            copy_range(source, fd, job.since, self._size - job.since)
        else:  # no readable source: the few lines appended meanwhile are encoded again
            for span in tail:
                write_fully(fd, (serialize_entry(span.entry, self._blobs) + "\n").encode("utf-8"))
        if self._size > job.since:
            # some of those lines may already be fsynced in the old file (reported durable): they
            # must be on disk in the new one before its name replaces the old file's
            os.fdatasync(fd)
        os.replace(tmp, self._path)
        stat = os.fstat(fd)
        old, self._fd = self._fd, os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        if old is not None:
            os.close(old)  # the replaced file: nothing of it needs syncing any more
        self._lines = LineTable((stat.st_dev, stat.st_ino), [*spans, *tail])
        self._size = stat.st_size
        self._generation += 1
        if self._job is not None:  # asked for during this one: its offsets move with the tail
            self._job.since += shift
            self._job.generation = self._generation
            self._tail = tail
        else:
            self._tail = []

    def close(self) -> None:
        """Wait for a rewrite in progress, close the descriptor and release the file lock (idempotent)."""
        with self._write_lock:
            self.wait()
            self._close_fd()
            with self._unsynced:  # the background thread ends (close_fd has synced)
                self._syncer, self._dirty = None, False
                self._closing.set()
                self._unsynced.notify()
            if self._lock is not None:
                self._lock.release()
                self._lock = None
