"""Exclusive per-session-file lock (``<session file>.lock`` held with ``flock``).

One writer per session file: a second store opening the same file, in this
process or another, fails fast with :class:`SessionLockedError` instead of
interleaving lines. The kernel drops the lock when the holder dies, so a
crashed process never leaves a session locked.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from xcsh.coding.private_fs import open_private
from xcsh.coding.sessions.entries import SessionError


class SessionLockedError(SessionError):
    """The session file is held open for writing by another store."""

    def __init__(self, session_path: Path, holder_pid: int | None) -> None:
        holder = f"process {holder_pid}" if holder_pid is not None else "another process"
        super().__init__(
            f"Session file {session_path} is already open for writing by {holder} "
            f"(lock file {lock_path_for(session_path)}); close it there or use another session"
        )
        self.session_path = session_path
        self.holder_pid = holder_pid


def lock_path_for(session_path: Path) -> Path:
    return session_path.with_name(session_path.name + ".lock")


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class SessionFileLock:
    """A held lock; :meth:`release` removes the lock file and unlocks."""

    def __init__(self, session_path: Path, lock_path: Path, fd: int) -> None:
        self.session_path = session_path
        self.lock_path = lock_path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, session_path: Path) -> SessionFileLock:
        """Take the lock without waiting; raises :class:`SessionLockedError` when it is held."""
        lock_path = lock_path_for(session_path)
        while True:
            fd = open_private(lock_path, os.O_RDWR | os.O_CREAT)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _read_pid(fd)
                os.close(fd)
                raise SessionLockedError(session_path, pid) from None
            except OSError:
                os.close(fd)
                raise
            # The previous holder may have unlinked the file between our open and flock;
            # a lock on an unlinked inode protects nothing, so start over.
            try:
                same = os.stat(lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
                return cls(session_path, lock_path, fd)
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def is_current(self) -> bool:
        """Whether the lock file at its path is still the one held (not removed, with the
        session's folder say, nor replaced): a lock on a file no name leads to protects nothing."""
        if self._fd is None:
            return False
        try:
            at_path = os.stat(self.lock_path)
        except FileNotFoundError:
            return False
        held = os.fstat(self._fd)
        return (at_path.st_dev, at_path.st_ino) == (held.st_dev, held.st_ino)

    def forget(self) -> None:
        """Let go of a lock that is no longer current, leaving whatever is at its path alone."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def release(self) -> None:
        """Remove the lock file and unlock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            # Unlink while still holding the lock so no waiter can grab a doomed inode unnoticed.
            self.lock_path.unlink(missing_ok=True)
        finally:
            os.close(fd)
