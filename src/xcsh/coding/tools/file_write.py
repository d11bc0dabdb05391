"""Writing the files a tool names (``write``, ``edit``, ``notebook``, ``ast_edit``) without ever
destroying one.

Contract:

- Text from the model is checked before any file is touched: a lone UTF-16 surrogate (a
  ``"\\ud83d"`` escape in the tool call's JSON) cannot be written as UTF-8, so
  :func:`check_model_text` raises a :class:`ToolError` naming where it is, and the file stays.
- :class:`FileBatch` holds every file one call writes, creates or deletes. Adding a file
  *stages* it: its bytes go to a new temporary file next to the target, get the target's mode
  and owner before the first byte, and are synced. Only :meth:`FileBatch.commit` renames the
  temporary files over their targets (``os.replace``: a crash leaves the old file or the new
  one, never a cut one). Leaving the ``with`` block without committing (a later file failing,
  disk full, a permission refused) removes every temporary file and un-stages the deletions,
  so every file of the call is as it was.
- A file that replacing would change in more than its content is written *in place* instead:
  one whose owner or group this process cannot give a new file (another user's file in a shared
  group folder), one with several hard links (every name sees the new content), one with an
  access control list. Its bytes stay in memory until :meth:`FileBatch.commit`, which first
  opens every such file and reserves the room its new content needs (a full disk or the file
  size limit is met before any file is changed; without fallocate, a free-space check), then
  overwrites it from the start, cuts it to
  the new length and syncs it. A crash while it is written can leave it cut; that is the price
  of keeping its owner, group, inode and ACL (what editors do when they cannot keep them either).
  A file that cannot be renamed over at commit because it is a mount point (``EBUSY``: a single
  file bind-mounted into a container) or shown from another file system (``EXDEV``) is written in
  place the same way from its staged copy, which is then removed.
- A target that is a symbolic link is written through: the file it leads to is replaced next to
  itself and the link stays (as ``private_fs.replace_private_file`` does for private files).
- A call abandoned after an abort (``xcsh.agent.commit_gate``) never changes a file: its thread
  may still be staging when the host is told the call was aborted, so :meth:`FileBatch.commit`
  claims the call's commit gate first and, refused, discards everything staged and raises
  :class:`ToolAbortedError`; staging itself stops early once the gate is closed.
- Every ``OSError`` becomes a :class:`ToolError` whose text names the file and the cause
  (``Permission denied: a.txt``, ``Cannot write a.txt: no space left on the device``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from xcsh.agent.commit_gate import current_commit_gate
from xcsh.agent.types import AgentToolResult
from xcsh.coding.private_fs import write_fully
from xcsh.coding.tools.errors import ToolAbortedError, ToolError

_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_ABANDONED = "Aborted: the call was abandoned after the abort. No file was changed."
_ACL = "system.posix_acl_access"  # the extended attribute holding a file's access control list


def check_model_text(text: str, where: str) -> None:
    """Raise :class:`ToolError` when ``text`` (from the model) holds an unpaired surrogate.

    ``where`` names the argument (``content``, ``edits[2].content``); the message gives the
    line and column and says nothing was written.
    """
    found = _SURROGATE_RE.search(text)
    if found is None:
        return
    start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    raise ToolError(
        f"{where} contains an unpaired surrogate (U+{ord(found.group()):04X}) at line {line}, "
        f"column {column}: it is not valid Unicode and cannot be written as UTF-8. Nothing was "
        "written; send the text with that character removed or written out in full."
    )


def decode_file_text(raw: bytes) -> str:
    """File bytes as text; bytes that are not UTF-8 become lone surrogates (``surrogateescape``),
    so :func:`encode_file_text` gives them back unchanged."""
    return raw.decode("utf-8", errors="surrogateescape")


def encode_file_text(text: str) -> bytes:
    """The inverse of :func:`decode_file_text` (model text must have passed :func:`check_model_text`)."""
    return text.encode("utf-8", errors="surrogateescape")


def is_utf8(text: str) -> bool:
    """Whether ``text`` (from :func:`decode_file_text`) came from valid UTF-8."""
    return _SURROGATE_RE.search(text) is None


def display_text(text: str) -> str:
    """``text`` for showing (tool results, diffs): each byte that was not UTF-8 as U+FFFD."""
    return _SURROGATE_RE.sub("\ufffd", text) if _SURROGATE_RE.search(text) else text


def shown_result(result: AgentToolResult) -> AgentToolResult:
    """``result`` with its text blocks passed through :func:`display_text` (the text of a file
    read with :func:`decode_file_text` may hold lone surrogates; the model must not see them)."""
    for block in result["content"]:
        if block["type"] == "text":
            block["text"] = display_text(block["text"])
    return result


def shown_errors(run: Callable[[], AgentToolResult]) -> AgentToolResult:
    """``run()`` with its result and any ToolError's text shown by :func:`display_text`."""
    try:
        return shown_result(run())
    except ToolAbortedError:
        raise
    except ToolError as exc:
        text = str(exc)
        if _SURROGATE_RE.search(text) is None:
            raise
        raise ToolError(display_text(text)) from exc


def file_identity(path: Path) -> Hashable:
    """What makes two spellings of a path one file: device and inode when it exists, else the
    path with its symbolic links resolved."""
    try:
        info = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return (info.st_dev, info.st_ino)


def os_error_text(exc: OSError, shown: str) -> str:
    """A model-readable sentence for ``exc`` raised while writing ``shown``."""
    code = exc.errno
    if code in (errno.EACCES, errno.EPERM):
        return f"Permission denied: {shown}"
    reasons = {
        errno.EISDIR: "it is a directory",
        errno.ENOTDIR: "a parent path is not a directory",
        errno.EEXIST: "a parent path is not a directory",
        errno.ENOSPC: "no space left on the device",
        errno.EDQUOT: "the disk quota is exceeded",
        errno.EFBIG: "the file would exceed the size limit for files",
        errno.EROFS: "the file system is read-only",
        errno.ENAMETOOLONG: "the name is too long",
        errno.ELOOP: "too many levels of symbolic links",
    }
    reason = reasons.get(code or 0) or (exc.strerror or str(exc)).lower()
    return f"Cannot write {shown}: {reason}"


def write_target(path: Path) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or where its symbolic link leads."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@dataclass(slots=True)
class _Staged:
    shown: str
    target: Path  # the file replaced (write) or removed (delete)
    temp: Path | None  # the staged bytes (write) or the file moved aside (delete); None: in place
    delete: bool
    data: bytes = b""  # the new content of a file written in place


@dataclass(slots=True)
class _Opened:
    """A file written in place, opened by :meth:`FileBatch.commit`: its length before, whether it
    was made longer to reserve room, whether writing it began."""

    fd: int
    size: int
    reserved: bool = False
    begun: bool = False


class FileBatch:
    """The files one tool call writes, staged as they are added and replaced together by :meth:`commit`."""

    def __init__(self) -> None:
        self._staged: list[_Staged] = []
        self._done = False

    def __enter__(self) -> FileBatch:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._done:
            self.discard()

    def write(self, path: Path, data: bytes, shown: str, *, mode_from: Path | None = None) -> None:
        """Stage ``data`` as the new content of ``path`` (created with its parents when missing).

        The new file gets the mode and owner of the file it replaces, else of ``mode_from`` (a
        moved file's source), else the default for new files (``0666`` less the umask).
        """
        _refuse_if_abandoned()
        target = write_target(path)
        temp = target.with_name(_side_name(target.name, "xcsh-tmp"))
        in_place = _Staged(shown, target, None, delete=False, data=data)
        try:
            try:
                info: os.stat_result | None = os.stat(target)
            except FileNotFoundError:
                info = None
            if info is not None and stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(target))
            if info is not None and not stat.S_ISREG(info.st_mode):
                raise ToolError(f"Cannot write {shown}: it is not a regular file")
            if info is not None and not os.access(target, os.W_OK):
                # renaming over it needs only the directory's permission: keep a read-only file's promise
                raise PermissionError(errno.EACCES, "read-only file", str(target))
            replaced = info
            if replaced is not None and not _replacing_keeps(target, replaced):
                self._staged.append(in_place)
                return
            if info is None and mode_from is not None:
                info = os.stat(mode_from)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                # a file that is replaced gets its mode before any byte is written (0600 until then):
                # a private file's new content is never readable by others, not even for a moment
                private = 0o600 if info is not None else 0o666
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, private)
            except PermissionError as exc:
                if info is not None and os.access(target, os.W_OK):
                    raise ToolError(
                        self._failed(
                            f"Cannot write {shown}: its directory is not writable, and a file like this "
                            "is replaced whole (a new file next to it, renamed over it), not rewritten in "
                            "place. Use bash to change it in place"
                        )
                    ) from exc
                raise
            self._staged.append(_Staged(shown, target, temp, delete=False))
            try:
                kept = True
                if info is not None:  # a moved file's source: its owner where this process may set it
                    kept = _copy_owner_and_mode(fd, info) or replaced is None
                if kept:
                    write_fully(fd, data)
                    os.fsync(fd)
            finally:
                os.close(fd)
            if not kept:  # the owner or group was refused after all (root on NFS, say): in place
                os.unlink(temp)
                self._staged[-1] = in_place
        except OSError as exc:
            raise ToolError(self._failed(os_error_text(exc, shown))) from exc

    def delete(self, path: Path, shown: str) -> None:
        """Stage the removal of ``path`` (a link itself, not its target): it is moved aside now,
        removed by :meth:`commit`, put back by :meth:`discard`."""
        _refuse_if_abandoned()
        aside = path.with_name(_side_name(path.name, "xcsh-del"))
        try:
            os.rename(path, aside)
        except OSError as exc:
            text = os_error_text(exc, shown).replace("Cannot write", "Cannot delete", 1)
            raise ToolError(self._failed(text)) from exc
        self._staged.append(_Staged(shown, path, aside, delete=True))

    def _failed(self, text: str) -> str:
        return text + ". No file was changed."

    def commit(self) -> None:
        """Replace every staged file; a failure here (rare: the bytes are already on disk, the
        room for the files written in place reserved) names the files already changed and puts
        the rest back. A call abandoned after an abort commits nothing: everything staged is
        discarded and :class:`ToolAbortedError` raised."""
        gate = current_commit_gate()
        if self._staged and gate is not None and not gate.claim():
            self.discard()
            raise ToolAbortedError(_ABANDONED)
        opened = self._open_in_place()  # after the claim: an abandoned call touches no file
        done: list[str] = []
        try:
            for index, item in enumerate(self._staged):
                try:
                    if item.temp is None:
                        opened[index].begun = True
                        _overwrite(opened[index].fd, item.data)
                    elif item.delete:
                        os.unlink(item.temp)
                    else:
                        _replace(item.temp, item.target, opened, index)
                except OSError as exc:
                    if index in opened and opened[index].begun:
                        done.append(f"{item.shown} (partly: it was being rewritten in place)")
                    self._staged = self._staged[index:]
                    self.discard()
                    written = f" Already changed: {', '.join(done)}." if done else " No file was changed."
                    raise ToolError(os_error_text(exc, item.shown) + "." + written) from exc
                done.append(item.shown)
        finally:
            _close(opened.values())
        self._staged = []
        self._done = True

    def _open_in_place(self) -> dict[int, _Opened]:
        """Open every file written in place and make it long enough for its new content, before
        any file of the call is changed; on failure every file is as it was."""
        opened: dict[int, _Opened] = {}
        for index, item in enumerate(self._staged):
            if item.temp is not None:
                continue
            try:
                opened[index] = _open_for_overwrite(item.target)
                opened[index].reserved = _reserve(opened[index], len(item.data))
            except OSError as exc:
                _close(opened.values())
                self.discard()
                raise ToolError(self._failed(os_error_text(exc, item.shown))) from exc
        return opened

    def discard(self) -> None:
        """Remove the temporary files and put moved-aside files back; every target is as it was."""
        for item in reversed(self._staged):
            if item.temp is None:
                continue
            with contextlib.suppress(OSError):
                if item.delete:
                    os.rename(item.temp, item.target)
                else:
                    os.unlink(item.temp)
        self._staged = []
        self._done = True


def _refuse_if_abandoned() -> None:
    gate = current_commit_gate()
    if gate is not None and gate.closed:
        raise ToolAbortedError(_ABANDONED)


def _side_name(name: str, suffix: str) -> str:
    """A hidden, unique name next to ``name`` that fits a file system's 255-byte limit (the name is
    cut by its encoded bytes, not its characters)."""
    stem = os.fsdecode(os.fsencode(name)[:80])
    return f".{stem}.{os.urandom(5).hex()}.{suffix}"


def _replacing_keeps(target: Path, info: os.stat_result) -> bool:
    """Whether a new file renamed over ``target`` can be what it was but for its content: this
    process may give a new file its owner and group (root may; anyone else only their own files,
    with their own groups), it has one name, and no access control list."""
    if os.geteuid() != 0 and (
        info.st_uid != os.geteuid() or (info.st_gid != os.getegid() and info.st_gid not in os.getgroups())
    ):
        return False
    if info.st_nlink > 1:
        return False
    try:
        return _ACL not in os.listxattr(target)
    except (OSError, AttributeError):  # no extended attributes here, or no os.listxattr (macOS)
        return True


def _copy_owner_and_mode(fd: int, info: os.stat_result) -> bool:
    """Give the staged copy ``info``'s mode, and its owner and group: False when they could not
    be given (a file system that refuses, like NFS for root)."""
    owner = (info.st_uid, info.st_gid)
    now = os.fstat(fd)
    kept = True
    if (now.st_uid, now.st_gid) != owner:
        try:
            os.fchown(fd, *owner)
        except OSError:
            kept = False
    os.fchmod(fd, stat.S_IMODE(info.st_mode))
    return kept


def _replace(temp: Path, target: Path, opened: dict[int, _Opened], index: int) -> None:
    """Rename the staged copy over ``target``; where that is refused because ``target`` is a
    mount point (EBUSY: a file bind-mounted into a container) or on another file system (EXDEV),
    write it in place from the staged copy, which is then removed."""
    try:
        os.replace(temp, target)
    except OSError as exc:
        if exc.errno not in (errno.EBUSY, errno.EXDEV):
            raise
        data = temp.read_bytes()
        opened[index] = _open_for_overwrite(target)  # closed with the others by commit
        opened[index].reserved = _reserve(opened[index], len(data))
        opened[index].begun = True
        _overwrite(opened[index].fd, data)
        with contextlib.suppress(OSError):
            os.unlink(temp)


def _open_for_overwrite(target: Path) -> _Opened:
    # read as well as write where allowed: where the file system has no fallocate, glibc's
    # posix_fallocate reads a byte of every block it reserves (EBADF on a write-only file)
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(target, os.O_RDWR | flags)
    except PermissionError:
        fd = os.open(target, os.O_WRONLY | flags)  # a file this process may write but not read
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file")
    except OSError:
        os.close(fd)
        raise
    return _Opened(fd, info.st_size)


def _reserve(file: _Opened, length: int) -> bool:
    """Make a file written in place ``length`` bytes long (when it is shorter) before its content
    changes, so a full disk or the size limit fails while it is whole. False when no room was
    needed or the file system cannot reserve it; the free space is then compared with what the
    file grows by, and a file system that has too little fails the same way."""
    if length <= file.size:
        return False
    if hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(file.fd, 0, length)
            return True
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(file.fd, file.size)
            # EBADF: glibc's emulation could not read a file opened write-only
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENODEV, errno.ESPIPE, errno.EBADF):
                raise
    _check_free_space(file.fd, length - file.size)
    return False


def _check_free_space(fd: int, needed: int) -> None:
    """Raise ENOSPC when the file system of ``fd`` reports less free room than ``needed`` bytes
    (root may use the blocks kept for it); nothing when it reports no sizes at all."""
    try:
        info = os.fstatvfs(fd)
    except (OSError, AttributeError):
        return
    if info.f_blocks == 0:  # a file system that reports no sizes (some FUSE ones)
        return
    free = info.f_bfree if os.geteuid() == 0 else info.f_bavail
    if free * info.f_frsize < needed:
        raise OSError(errno.ENOSPC, "no space left on the device")


def _overwrite(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    write_fully(fd, data)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _close(opened: Iterable[_Opened]) -> None:
    """Close the files opened for writing in place; one made longer but never written gets its
    length back."""
    for item in opened:
        with contextlib.suppress(OSError):
            if item.reserved and not item.begun:
                os.ftruncate(item.fd, item.size)
        os.close(item.fd)


def write_file(path: Path, data: bytes, shown: str) -> None:
    """Replace (or create) one file with ``data`` atomically; raises :class:`ToolError`."""
    with FileBatch() as batch:
        batch.write(path, data, shown)
        batch.commit()
