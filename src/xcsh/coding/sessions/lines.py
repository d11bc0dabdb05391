"""Whole rewrites of a session file that copy each unchanged entry's line instead of re-encoding it.

A rewrite (pruning, a new title, a branch's new file, a migrated file) must write, for every
entry, exactly the line :func:`~xcsh.coding.sessions.entries.serialize_entry` gives for it. Most
entries have not changed since their line was written, and re-encoding them all was most of a
rewrite's CPU (0.24 s for 20,000 entries, docs/performance.md). So the writer keeps a
:class:`LineTable`: for each entry object, where its line is in the current file — the byte
offset and length (newline included), and whether the line is known to be that entry's
``serialize_entry`` line:

* *trusted*: the writer wrote the line itself from this very entry object (an append or an
  earlier rewrite), so the bytes are ``serialize_entry``'s. Entries are never changed in place
  once stored (the store's contract: a change is a replacement entry, :meth:`SessionStore.
  rewrite_entries`), so the line stays right for as long as the entry object is the one stored;
* *loaded*: read from the file when it was opened. Such a line is used only once it is checked
  (:meth:`LoadedLines.serializes`): msgspec re-encodes the entry in memory (5× faster than the
  standard-library encoder ``serialize_entry`` uses) and the two must be byte-identical with no
  mark of a write transform; a line holding a float the two encoders write differently is never
  loaded as a span (the reader saw its floats); any doubt re-encodes the entry.

Entries are matched by identity (the table holds a reference to each entry, so an ``id`` is
never reused while it is in the table): a replaced entry is a new object and is re-encoded.
Lines are copied with ``copy_file_range`` where the kernel offers it, else read and written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

import msgspec

from xcsh.coding.private_fs import write_fully
from xcsh.coding.sessions.blobs import BlobStore
from xcsh.coding.sessions.entries import (
    MAX_PERSIST_CHARS,
    TRANSIENT_KEYS,
    SessionEntry,
    serialize_entry,
)

_TRANSIENT_MARKS = [re.escape(f'"{key}":'.encode()) for key in sorted(TRANSIENT_KEYS)]
_TRANSIENT_KEY = re.compile(b"|".join(_TRANSIENT_MARKS))
_TRANSIENT_KEY_OR_IMAGE = re.compile(
    b"|".join([*_TRANSIENT_MARKS, re.escape(b'"type":"image"'), re.escape(b'"image_url":')])
)
_encode = msgspec.json.Encoder().encode
_COPY_CHUNK = 1 << 24  # bytes per copy_file_range / read


class LineSpan:
    """Where ``entry``'s line (newline included) is in the file: ``length`` bytes at ``offset``;
    ``trusted`` when this process wrote it from that very entry (else it is checked before use)."""

    __slots__ = ("entry", "length", "offset", "trusted")

    def __init__(self, entry: SessionEntry, offset: int, length: int, trusted: bool) -> None:
        self.entry = entry
        self.offset = offset
        self.length = length
        self.trusted = trusted


class LoadedLines:
    """The source file read whole, against which loaded lines are checked before they are copied.

    The file is searched once for the marks of a write transform (a dropped key ``"partialJson":``
    or ``"jsonlEvents":``, and with a blob store an image block ``"type":"image"`` or a data URL's
    ``"image_url":``), so a line needs only its encoding compared; NaN and Infinity need no
    look: msgspec writes them ``null``, which is what the transform makes of them, and as text
    inside a string they change nothing. A mark cannot span two lines (it holds no newline).
    """

    __slots__ = ("_marks", "data")

    def __init__(self, data: bytes, blobs: BlobStore | None) -> None:
        self.data = data
        marks = _TRANSIENT_KEY if blobs is None else _TRANSIENT_KEY_OR_IMAGE
        self._marks = [found.start() for found in marks.finditer(data)]

    def serializes(self, entry: SessionEntry, offset: int, length: int) -> bool:
        """True only when the line at ``offset`` (``length`` bytes, no newline) is exactly
        ``serialize_entry(entry, blobs)`` in UTF-8, given that it holds no float msgspec writes
        unlike ``repr`` (below 1e-4 or from 1e16; :class:`~xcsh.coding.sessions.fileio.ParsedFile`
        tells which lines do).

        False means "not known": the caller re-encodes. For every other value read from JSON,
        msgspec's encoding equals the standard library's compact, non-ASCII-escaping one (what it
        cannot encode, lone surrogates or nesting past its limit, raises here), so equality with
        the line and no mark of a write transform prove it.
        """
        try:
            encoded = _encode(entry)
        except (TypeError, ValueError, RecursionError, OverflowError):  # UnicodeEncodeError is a ValueError
            return False
        if len(encoded) != length or not self.data.startswith(encoded, offset):
            return False
        if length > MAX_PERSIST_CHARS and len(encoded.decode("utf-8")) > MAX_PERSIST_CHARS:
            return False  # a string over the limit would be cut
        marks = self._marks
        if marks:
            from bisect import bisect_left  # only for a file with marks

            first = bisect_left(marks, offset)
            if first < len(marks) and marks[first] < offset + length:
                return False
        return True


def copy_range(source: int, target: int, offset: int, length: int) -> None:
    """Append ``length`` bytes of ``source`` from ``offset`` to ``target`` (at its file position)."""
    end = offset + length
    while offset < end:
        try:
            copied = os.copy_file_range(source, target, min(end - offset, _COPY_CHUNK), offset)
        except OSError:  # not offered here (another filesystem, an old kernel): read and write
            copied = 0
        if copied == 0:
            data = os.pread(source, min(end - offset, _COPY_CHUNK), offset)
            if not data:
                raise OSError(f"session file shorter than expected ({offset} < {end})")
            write_fully(target, data)
            copied = len(data)
        offset += copied


class LineTable:
    """Where each stored entry's line is in one file (see the module's docstring)."""

    __slots__ = ("_loaded", "_spans", "ident")

    def __init__(
        self,
        ident: tuple[int, int] | None = None,
        spans: Iterable[LineSpan] = (),
        *,
        loaded: tuple[Sequence[SessionEntry], Sequence[tuple[int, int]]] | None = None,
    ) -> None:
        """``loaded``: entries read from the file and their lines (offset -1: none), looked up
        only when a rewrite first needs them (opening a session pays nothing for the table)."""
        self.ident = ident
        """(st_dev, st_ino) of the file the offsets refer to; None: no file, nothing to copy."""
        self._spans: dict[int, LineSpan] = {id(span.entry): span for span in spans}
        self._loaded = loaded

    def __bool__(self) -> bool:
        return bool(self._spans) or bool(self._loaded and self._loaded[0])

    def add(self, span: LineSpan) -> None:
        self._spans[id(span.entry)] = span

    def materialize(self) -> None:
        """Index the loaded lines now (a rewrite does it before it reads the table)."""
        if self._loaded is not None:
            entries, spans = self._loaded
            self._loaded = None
            for loaded, (offset, length) in zip(entries, spans, strict=True):
                if offset >= 0:
                    self._spans.setdefault(id(loaded), LineSpan(loaded, offset, length, False))

    def spans_by_id(self) -> dict[int, LineSpan]:
        """Every span by ``id()`` of its entry (check ``span.entry is entry``); read-only for the caller."""
        self.materialize()
        return self._spans


def write_lines(
    target: int,
    header_line: bytes,
    entries: Sequence[SessionEntry],
    table: LineTable,
    source: int | None,
    blobs: BlobStore | None,
    *,
    source_size: int | None = None,
) -> tuple[list[LineSpan], int]:
    """Write the header line and every entry's line to ``target``; the new spans and the size.

    An entry whose line ``table`` knows is copied from ``source`` (an open descriptor of the
    file ``table`` describes, None when there is none), neighbouring lines in one copy; a
    loaded line only after :meth:`LoadedLines.serializes` accepted it; every other entry is
    encoded with ``serialize_entry``. Every span returned is trusted. Raises ``OSError``.
    """
    write_fully(target, header_line)
    position = len(header_line)
    spans: list[LineSpan] = []
    known = table.spans_by_id() if source is not None else {}
    loaded: LoadedLines | None = None  # the source read whole, only when a loaded line must be checked
    run_start = run_end = -1  # the source range waiting to be copied

    def flush_run() -> None:
        nonlocal run_start, run_end
        if run_end > run_start:
            if loaded is not None and run_end <= len(loaded.data):
                write_fully(target, memoryview(loaded.data)[run_start:run_end])
            else:
                assert source is not None
                copy_range(source, target, run_start, run_end - run_start)
        run_start = run_end = -1

    for entry in entries:
        span = known.get(id(entry))
        if span is not None and span.entry is not entry:
            span = None
        if span is not None and not span.trusted:
            if loaded is None:
                assert source is not None
                loaded = LoadedLines(_read_all(source, source_size), blobs)
            end = span.offset + span.length
            data = loaded.data
            if (
                end > len(data)
                or data[end - 1 : end] != b"\n"
                or not loaded.serializes(entry, span.offset, span.length - 1)
            ):
                span = None
        if span is not None:
            if span.offset != run_end:
                flush_run()
                run_start = span.offset
            run_end = span.offset + span.length
            spans.append(LineSpan(entry, position, span.length, True))
            position += span.length
            continue
        flush_run()
        encoded = (serialize_entry(entry, blobs) + "\n").encode("utf-8")
        write_fully(target, encoded)
        spans.append(LineSpan(entry, position, len(encoded), True))
        position += len(encoded)
    flush_run()
    return spans, position


def _read_all(fd: int, size: int | None) -> bytes:
    """The file behind ``fd`` from its start, up to ``size`` bytes (all of it when None)."""
    if size is None:
        size = os.fstat(fd).st_size
    data = os.pread(fd, size, 0)  # one read for a regular file; the loop only if it came short
    while len(data) < size:
        chunk = os.pread(fd, size - len(data), len(data))
        if not chunk:
            break
        data += chunk
    return data
