"""Reading an HTTP response body against a deadline for the whole download, abortably.

A socket timeout bounds each read, not the download: a server sending one byte every half
second never trips it. So the body is read in pieces, the socket's timeout set before each to
the time left, and an abort shuts the socket down (which wakes a read blocked in another
thread).
"""

from __future__ import annotations

import contextlib
import socket
import time
from typing import TYPE_CHECKING, Any

from xcsh.coding.tools.errors import ToolAbortedError

if TYPE_CHECKING:
    from xcsh.ai.abort import AbortSignal


def _socket_of(response: Any) -> socket.socket | None:
    """The socket under an ``http.client`` response (None when it cannot be found)."""
    sock = getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _shutdown(sock: socket.socket | None) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # wakes a read blocked in another thread


def read_body(response: Any, deadline: float, signal: AbortSignal | None, max_bytes: int) -> bytes:
    """The body, read in pieces against ``deadline`` (a monotonic time); stops once past
    ``max_bytes`` (the caller sees the size) and raises ToolAbortedError when ``signal`` aborts,
    TimeoutError past the deadline."""
    sock = _socket_of(response)
    remove = signal.add_callback(lambda: _shutdown(sock)) if signal is not None else None
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= max_bytes:
            if signal is not None and signal.aborted:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            if sock is not None:
                sock.settimeout(remaining)
            chunk = response.read1(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        if signal is None or not signal.aborted:
            raise
    finally:
        if remove is not None:
            remove()
    if signal is not None and signal.aborted:
        raise ToolAbortedError("Reading the URL was aborted")
    return b"".join(chunks)
