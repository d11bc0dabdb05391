"""Files and directories only the user can read: ``0600`` files, ``0700`` directories.

Session files, blobs, lock files, exports, the trust store and settings may hold
conversation text, tool output and paths; on a shared machine nobody else should read
them. Directories are made private only when we create them: an existing directory
(``--session-dir /shared/x``, a project directory) keeps the mode its owner chose.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple, TypeVar

T = TypeVar("T")

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and any missing parents, each new one with mode ``0700``.

    Existing directories are left as they are. Raises ``OSError`` like ``mkdir``.
    """
    path = Path(path)
    missing: list[Path] = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR_MODE)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue
        # mkdir's mode is filtered by the umask; a permissive umask must not widen it
        with contextlib.suppress(OSError):
            os.chmod(directory, PRIVATE_DIR_MODE)


def open_private(path: Path, flags: int) -> int:
    """``os.open`` with ``O_CLOEXEC`` that creates the file with mode ``0600``."""
    return os.open(path, flags | os.O_CLOEXEC, PRIVATE_FILE_MODE)


def write_fully(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(directory: Path) -> None:
    """Sync ``directory`` so a rename in it survives a crash; a no-op where that is refused."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the renamed file itself is synced
    finally:
        os.close(fd)


def require_regular_or_missing(path: Path) -> None:
    """Raise ``OSError`` (EINVAL) when ``path`` exists and is not a regular file (or a link to one).

    A path a host names (an export's ``outputPath``, a ``switch_session`` path) may be a device,
    a FIFO or a socket: renaming a file over ``/dev/null`` replaces the device for the whole
    machine, and opening a FIFO to read it blocks until a writer comes.
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise OSError(errno.EINVAL, f"{kind} (a device, pipe or socket is never read or replaced)", str(path))


def write_private_file(path: Path, data: bytes, *, sync_dir: bool = False) -> None:
    """Replace ``path`` with ``data`` atomically (synced temp file + rename), the result mode ``0600``.

    Missing parent directories are created private; with ``sync_dir`` the directory is synced
    after the rename, so the new file survives a crash too. Raises ``OSError``.
    """
    write_private_chunks(path, (data,), sync_dir=sync_dir)


def write_private_chunks(path: Path, chunks: Iterable[bytes], *, sync_dir: bool = False) -> None:
    """:func:`write_private_file` of the concatenated ``chunks``, each written as it comes (a large
    file need not be held in memory whole). An exception from ``chunks`` leaves ``path`` as it was."""

    def fill(fd: int) -> None:
        for data in chunks:
            write_fully(fd, data)

    replace_private_file(path, fill, sync_dir=sync_dir)


_TEMP_SUFFIX = re.compile(r"[0-9a-f]{12}\.tmp")


def temp_path_for(path: Path) -> Path:
    """A new hidden temp file's name beside ``path`` (``.<name>.<12 hex>.tmp``), for a write
    that is renamed over ``path`` when complete."""
    return path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")


def remove_stale_temps(path: Path) -> int:
    """Remove the temp files (:func:`temp_path_for`) a writer of ``path`` killed mid-write left
    beside it; returns how many. Call only while no other process can be writing ``path`` (a
    session's lock held): a live writer's temp file looks the same."""
    prefix = f".{path.name}."
    removed = 0
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if name.startswith(prefix) and _TEMP_SUFFIX.fullmatch(name, len(prefix)):
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                continue
            removed += 1
    return removed


def replace_private_file(path: Path, fill: Callable[[int], T], *, sync_dir: bool = False) -> T:
    """:func:`write_private_file` with the content written by ``fill(fd)``; returns what it returns.

    ``fill`` writes to a new temp file next to ``path``, which is then synced and renamed over
    ``path``: a crash at any point leaves the old file or the new complete one. On any failure
    (``fill`` raising included) the temp file is removed, ``path`` is left as it was and the
    error raised.

    A ``path`` that is a symbolic link (a ``config.yml`` kept in a dotfiles repository) is
    written through: the file it leads to is replaced, next to itself, and the link stays.
    """
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    require_regular_or_missing(path)
    make_private_dirs(path.parent)
    tmp = temp_path_for(path)
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        result = fill(fd)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync_dir:
        fsync_dir(path.parent)
    return result


class Foreign(NamedTuple):
    """Why a directory is someone else's (:func:`foreign_status`)."""

    reason: str
    shared: bool
    """Writable by every user with the sticky bit set: a folder made for every user to drop files
    in (``/tmp``, ``/var/tmp``, ``/dev/shm``). The user's trust of a project never covers it."""


def _own_uids() -> tuple[int, ...]:
    """The owners whose directories count as the user's own: this process's user and root; when
    running as root under ``sudo``, also the user who ran ``sudo`` (``SUDO_UID``, as git does)."""
    euid = os.geteuid()
    if euid != 0:
        return (euid, 0)
    sudo_uid = os.environ.get("SUDO_UID", "")
    return (0, int(sudo_uid)) if sudo_uid.isdigit() else (0,)


def foreign_status(path: Path) -> Foreign | None:
    """Why ``path`` is a directory someone else controls, or None when it is the user's own.

    Foreign: writable by every user (``/tmp``, ``/var/tmp``, sticky bit or not), or owned by
    another user than this process's or root (as git's ``safe.directory`` check; root's own
    directories such as ``/`` or ``/srv`` are not foreign: only root could write there). Running
    as root, another user's folder is foreign too: its owner could steer a root agent through the
    files it plants (docs/security.md); under ``sudo`` the invoking user's (``SUDO_UID``) is not.
    A path that cannot be examined is not called foreign (the caller's read then fails on its own).
    """
    try:
        info = os.stat(path)
    except OSError:
        return None
    if info.st_mode & stat.S_IWOTH:
        shared = bool(info.st_mode & stat.S_ISVTX)
        return Foreign("writable by every user" + (" (a shared folder like /tmp)" if shared else ""), shared)
    if info.st_uid not in _own_uids():
        return Foreign(f"owned by another user (uid {info.st_uid})", False)
    return None


def writers_within(folder: Path, trusted: Path) -> bool:
    """Whether no one beyond ``trusted``'s writers controls ``folder`` (as far as owners and the
    world-writable bit tell, like :func:`foreign_status`): it is the user's own, or owned by the
    same other user as ``trusted``, or writable by every user (sticky bit unset) as ``trusted`` is.

    A trust of ``trusted`` may then cover ``folder`` too (:class:`xcsh.coding.discovery.base.LoadContext`):
    whoever could plant a file there could as well plant it in the trusted folder. A path that
    cannot be examined is not within.
    """
    if foreign_status(folder) is None:
        return True
    try:
        above, below = os.stat(folder), os.stat(trusted)
    except OSError:
        return False
    if below.st_mode & stat.S_IWOTH and not below.st_mode & stat.S_ISVTX:
        return not (above.st_mode & stat.S_IWOTH and above.st_mode & stat.S_ISVTX)
    return not above.st_mode & stat.S_IWOTH and above.st_uid == below.st_uid


def foreign_directory(path: Path) -> str | None:
    """:func:`foreign_status`'s reason, or None when ``path`` is the user's own directory."""
    status = foreign_status(path)
    return status.reason if status is not None else None
