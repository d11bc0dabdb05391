"""JSON-lines framing for the RPC wire: LF-only splitting and compact output.

Never ``str.splitlines()``: U+2028/U+2029 and other Unicode separators are legal
inside JSON strings. A trailing ``\\r`` is tolerated on input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_LINE_BYTES = 128 * 1024 * 1024


def encode_frame(obj: Any) -> bytes:
    """One frame: compact JSON (as JavaScript's JSON.stringify writes it) plus ``\\n``."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # lone surrogates cannot be UTF-8; escape them as JSON.stringify does
        return (json.dumps(obj, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


@dataclass(slots=True, frozen=True)
class OversizedLine:
    """Marker for an input line that exceeded the size limit and was discarded."""

    size: int


class LineSplitter:
    """Incremental LF splitter over raw bytes, with a per-line size limit."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_line_bytes
        self._discarding = 0

    def feed(self, data: bytes) -> Iterator[bytes | OversizedLine]:
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                rest = data[start:]
                if self._discarding:
                    self._discarding += len(rest)
                else:
                    self._buffer += rest
                    if len(self._buffer) > self._max:
                        self._discarding = len(self._buffer)
                        self._buffer.clear()
                return
            piece = data[start:newline]
            start = newline + 1
            if self._discarding:
                size = self._discarding + len(piece)
                self._discarding = 0
                yield OversizedLine(size)
                continue
            if self._buffer:
                self._buffer += piece
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                line = bytes(piece)
            if len(line) > self._max:
                yield OversizedLine(len(line))
            else:
                yield line

    def finish(self) -> Iterator[bytes | OversizedLine]:
        """The last line when input ended without a newline."""
        if self._discarding:
            size, self._discarding = self._discarding, 0
            yield OversizedLine(size)
        elif self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            yield line


def decode_line(line: bytes) -> str | None:
    """Bytes of one line → text, or None for a blank line. Raises ``UnicodeDecodeError``."""
    if line.endswith(b"\r"):
        line = line[:-1]
    text = line.decode("utf-8")
    return text if text.strip() else None
