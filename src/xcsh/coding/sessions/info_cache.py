"""What ``list_sessions`` counts in a session file's body, kept so an unchanged file is not read again.

A listing shows each file's message count, first user message and newest compaction
``shortSummary`` (session-format §8); finding them means parsing every line of the file
(~50 ms for a 35 MB session). :class:`BodyCounts` are those three facts for the body up to
some byte offset; :class:`InfoCache` keeps them per file in one MessagePack file under the
agent directory (``cache/session-info.msgpack``), so a listing reads only what it has not
seen. docs/decisions.md ("A cache of session listings").

Contract:

- *Key:* the file's absolute path, device, inode, size and ``st_mtime_ns`` (of the open
  descriptor, so a file replaced meanwhile is not mixed up with the old one). The header
  (first line) is never cached: it is read on every listing.
- *Unchanged* (same device, inode, size and mtime): the kept counts are used; only bytes
  after the last newline counted (a line being written) are parsed again.
- *Grown* (same device and inode, larger): the kept counts are used when the bytes just
  before the counted offset (up to :data:`CHECK_BYTES` of them) and the first line still
  hash to what they did, and only the appended bytes are parsed; a file rewritten in place
  fails that check (its content moved) and is counted whole. Rewrites by this project
  replace the file (a new inode) and are always counted whole.
- Anything else (shrunk, replaced, changed in the same clock tick at the same size is the
  one case not detected) is counted whole. Counted results equal a whole read's.
- *Many processes:* the cache file is replaced atomically (temporary file + rename); a
  missing, corrupt, truncated or foreign file is an empty cache; failing to write (a
  read-only agent dir) is ignored.
"""

from __future__ import annotations

import contextlib
import os
import zlib
from pathlib import Path
from typing import Any

import msgspec

from xcsh.coding.sessions.context import message_text
from xcsh.coding.sessions.entries import parse_line
from xcsh.coding.yaml_cache import write_atomically

FORMAT = 1
"""Stored in the cache file; a file of another format is ignored."""

CHECK_BYTES = 4096
"""How many bytes before the counted offset must be unchanged for a grown file to be counted
from that offset on."""

MAX_ENTRIES = 5000
"""At most this many files are kept (those of the latest listing first)."""

CACHE_NAME = "session-info.msgpack"


def cache_path_for(agent_dir: Path) -> Path:
    """Where the agent directory keeps the listing counts."""
    return agent_dir / "cache" / CACHE_NAME


class BodyCounts(msgspec.Struct, array_like=True):
    """What a listing needs from a session file's body (the lines after the header)."""

    message_count: int = 0
    first_message: str = ""  # "" until a user message with text is met
    short_summary: str | None = None  # of the last compaction entry that has a string one

    def add_lines(self, data: bytes) -> None:
        """Count the lines of ``data`` (split on ``\\n``; unreadable lines are skipped)."""
        for raw in data.split(b"\n"):
            entry = parse_line(raw)
            if entry is None:
                continue
            kind = entry.get("type")
            if kind == "compaction" and isinstance(entry.get("shortSummary"), str):
                self.short_summary = entry["shortSummary"]
            message = entry.get("message")
            if kind == "message" and isinstance(message, dict):
                self.message_count += 1
                if not self.first_message and message.get("role") == "user":
                    self.first_message = message_text(message)

    def copy(self) -> BodyCounts:
        return BodyCounts(self.message_count, self.first_message, self.short_summary)


class _Kept(msgspec.Struct, array_like=True):
    device: int
    inode: int
    size: int
    mtime_ns: int
    head_crc: int  # of the first line, newline included
    offset: int  # bytes [0, offset) are counted; offset follows a newline (or is the body's start)
    check_crc: int  # of bytes [max(body start, offset - CHECK_BYTES), offset)
    counts: BodyCounts


class _Stored(msgspec.Struct, array_like=True):
    format: int
    files: dict[str, _Kept]


READ_BYTES = 1 << 20
"""A file is counted in reads of this size (a long session is not held in memory whole)."""


def _count_lines(handle: Any, size: int, counts: BodyCounts, read_bytes: int) -> tuple[int, bytes]:
    """Count the complete lines of the next ``size`` bytes of ``handle`` into ``counts``; return
    how many bytes they span and the bytes after the last newline (a line being written)."""
    done = 0
    pending: list[bytes] = []  # bytes read since the last newline
    while size > 0:
        chunk = handle.read(min(read_bytes, size))
        if not chunk:
            break
        size -= len(chunk)
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            pending.append(chunk)
            continue
        block = b"".join([*pending, chunk[:cut]]) if pending else chunk[:cut]
        counts.add_lines(block)
        done += len(block)
        pending = [chunk[cut:]]
    return done, b"".join(pending)


def _crc_of(handle: Any, start: int, end: int) -> int:
    handle.seek(start)
    return zlib.crc32(handle.read(end - start)) if end > start else 0


class InfoCache:
    """Body counts of session files, read from and written back to ``path`` (None: memory only).

    Use :meth:`body_counts` for each file of a listing, then :meth:`flush` once.
    """

    def __init__(self, path: Path | None, *, read_bytes: int = READ_BYTES) -> None:
        self.path = path
        self.read_bytes = read_bytes
        self._files: dict[str, _Kept] | None = None
        self._used: dict[str, _Kept] = {}
        self._changed = False

    def _load(self) -> dict[str, _Kept]:
        if self._files is None:
            self._files = {}
            if self.path is not None:
                try:
                    with open(self.path, "rb") as handle:
                        stored = msgspec.msgpack.decode(handle.read(), type=_Stored)
                    if stored.format == FORMAT:
                        self._files = stored.files
                except (OSError, msgspec.DecodeError, ValueError, TypeError, RecursionError):
                    pass
        return self._files

    def body_counts(self, path: Path, handle: Any, st: os.stat_result, head: bytes) -> BodyCounts:
        """The counts of the body of the open file ``handle`` (``st``: its ``fstat``; ``head``: its
        first line as read, newline included), equal to counting every line after ``head``."""
        key = os.path.abspath(path)
        size = st.st_size
        body_start = len(head)
        kept = self._load().get(key)
        head_crc = zlib.crc32(head)
        start = body_start
        counts = BodyCounts()
        reused = kept is not None and self._usable(kept, handle, st, head_crc, body_start)
        if reused:
            assert kept is not None
            start = kept.offset
            counts = kept.counts.copy()
        handle.seek(start)
        offset, tail = _count_lines(handle, size - start, counts, self.read_bytes)
        offset += start
        if (
            kept is None
            or not reused
            or (offset, size, st.st_mtime_ns) != (kept.offset, kept.size, kept.mtime_ns)
        ):
            check = _crc_of(handle, max(body_start, offset - CHECK_BYTES), offset)
            kept = _Kept(st.st_dev, st.st_ino, size, st.st_mtime_ns, head_crc, offset, check, counts.copy())
            self._changed = True
        self._used[key] = kept
        if tail:
            counts.add_lines(tail)
        return counts

    @staticmethod
    def _usable(kept: _Kept, handle: Any, st: os.stat_result, head_crc: int, body_start: int) -> bool:
        if (kept.device, kept.inode) != (st.st_dev, st.st_ino) or kept.head_crc != head_crc:
            return False
        if kept.offset < body_start or kept.offset > st.st_size:
            return False
        if (kept.size, kept.mtime_ns) == (st.st_size, st.st_mtime_ns):
            return True
        if st.st_size <= kept.size:
            return False
        return _crc_of(handle, max(body_start, kept.offset - CHECK_BYTES), kept.offset) == kept.check_crc

    def flush(self, listed: Path | None = None, *, recursive: bool = False) -> None:
        """Write the kept counts if any changed: the files looked up since this cache was made,
        then earlier ones, at most :data:`MAX_ENTRIES`.

        ``listed``: the folder this listing covered (its sub-folders too with ``recursive``);
        earlier entries of files in it that were not looked up now (deleted, or no longer a
        session) are dropped, so a deleted session's first message does not stay here.
        """
        if self.path is None:
            return
        scope = os.path.join(os.path.abspath(listed), "") if listed is not None else None
        files = dict(self._used)
        for key, kept in (self._files or {}).items():
            if key in files:
                continue
            if (
                scope is not None
                and key.startswith(scope)
                and (recursive or os.path.dirname(key) == scope[:-1])
            ):
                self._changed = True  # gone from the folder listed
                continue
            if len(files) >= MAX_ENTRIES:
                break
            files[key] = kept
        if not self._changed:
            return
        self._changed = False
        with contextlib.suppress(msgspec.EncodeError, ValueError, TypeError, OverflowError):
            write_atomically(self.path, _encode(files))


def _encode(files: dict[str, _Kept]) -> bytes:
    """The stored form of ``files``; an entry that cannot be stored is left out, not the rest."""
    try:
        return msgspec.msgpack.encode(_Stored(FORMAT, files))
    except UnicodeEncodeError:
        # a lone surrogate (in a host's first message, or a folder name that is not UTF-8,
        # kept as surrogate escapes) has no UTF-8 form: that file is counted afresh each time
        return msgspec.msgpack.encode(_Stored(FORMAT, {k: v for k, v in files.items() if _storable(k, v)}))


def _storable(key: str, kept: _Kept) -> bool:
    try:
        msgspec.msgpack.encode((key, kept))
    except UnicodeEncodeError:
        return False
    return True
