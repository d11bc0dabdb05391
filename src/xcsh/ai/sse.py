"""Server-sent events: a streamed HTTP body's bytes → ``(event name, data)`` per event.

The providers' streams (:mod:`xcsh.ai.transport`) are decoded here: lines end in CR, LF or
CRLF (also split across chunks), and events are dispatched by the WHATWG rules the vendor
SDKs follow (``data`` lines joined by newlines, comments and unknown fields ignored, ``id``
kept across events, a blank line dispatches).
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator

_LINE_END = re.compile(rb"\r\n|\r|\n")


class LineSplitter:
    """Bytes → lines ending in CR, LF or CRLF (a CRLF split across chunks is one line end)."""

    __slots__ = ("_pending", "_skip_lf")

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._skip_lf = False

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        has_cr = b"\r" in chunk
        if not has_cr and b"\n" not in chunk:
            if chunk:
                self._pending.append(chunk)
            return []
        if self._pending:
            self._pending.append(chunk)
            chunk = b"".join(self._pending)
            self._pending = []
        if has_cr:
            lines = _LINE_END.split(chunk)
            self._skip_lf = chunk.endswith(b"\r")
        else:
            lines = chunk.split(b"\n")
        tail = lines.pop()
        if tail:
            self._pending.append(tail)
        return lines

    def finish(self) -> list[bytes]:
        """The last line, if the body did not end with a line end."""
        rest = b"".join(self._pending)
        self._pending = []
        return [rest] if rest else []


class SseParser:
    """Lines → ``(event name or None, data)`` per dispatched event (the WHATWG rules the SDKs use)."""

    __slots__ = ("_data", "_event", "_last_id", "_retry")

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []
        self._last_id: str | None = None  # never reset between events, as the spec says
        self._retry: int | None = None

    def line(self, raw: bytes) -> tuple[str | None, str] | None:
        """Feed one line (without its line end); the event it completes, if any."""
        text = raw.decode("utf-8")
        if not text:
            if not self._event and not self._data and not self._last_id and self._retry is None:
                return None
            event = (self._event or None, "\n".join(self._data))
            self._event = None
            self._data = []
            self._retry = None
            return event
        if text[0] == ":":
            return None
        name, _, value = text.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            try:
                self._retry = int(value)
            except ValueError:
                pass
        return None


async def sse_events(chunks: AsyncIterator[bytes]) -> AsyncGenerator[tuple[str | None, str], None]:
    """``(event name or None, data)`` of each event in a streamed body (close it with ``aclosing``)."""
    splitter = LineSplitter()
    parser = SseParser()
    async for chunk in chunks:
        for line in splitter.feed(chunk):
            event = parser.line(line)
            if event is not None:
                yield event
    for line in splitter.finish():
        event = parser.line(line)
        if event is not None:
            yield event
