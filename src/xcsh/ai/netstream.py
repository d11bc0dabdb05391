"""A network backend for ``httpcore2`` over asyncio's own transports (plain-``http`` model servers).

``httpcore2`` does all of HTTP (with ``h11``) and reads and writes bytes through a network
backend, a documented extension point (``AsyncNetworkBackend`` / ``AsyncNetworkStream``). Its
default backend goes through ``anyio``, which on asyncio costs per read and per write: a
``fail_after`` cancel scope, a loop turn (a checkpoint) even when the bytes are already there,
reading resumed and paused around every wait (two ``epoll_ctl`` calls), and sniffio lookups.
This adapter moves bytes between an asyncio ``Protocol`` and ``httpcore2`` and nothing else; a
short streamed request costs ~20 % less CPU through it (docs/decisions.md, docs/performance.md
"Sixth session: per-prompt CPU").

It answers as the default backend did, so every failure reads the same above it:

- ``read`` returns what has arrived (at most ``max_bytes``), ``b""`` at the end of the stream,
  and raises ``ReadTimeout`` when nothing arrives within ``timeout``, ``ReadError`` when the
  connection was lost with an error; ``write`` hands the bytes to the transport and waits, up to
  ``timeout`` (``WriteTimeout``), only while the kernel does not take them; ``WriteError`` once
  the connection is lost. A short write is held until the next write or read, so a request's
  head and body leave together (:class:`AsyncioStream`). The exceptions' texts are the default backend's (empty for timeouts
  and lost connections, ``All connection attempts failed`` for a refused connection).
- The peer's end of stream leaves the connection half-open, as before (a server may answer
  after closing its side). Bytes that arrive while no read waits pause reading until a read
  finds nothing left, so a busy or slow reader leaves the rest in the kernel, as before, and
  gets it in one piece (a long stream is not read one small chunk per loop turn); a read
  returns what is waiting, joined, up to ``max_bytes``.
- ``is_readable`` (the pool's check that an idle connection is still usable) is true when
  bytes or the end are waiting here, or the socket itself is readable.

Used only by clients of plain-``http`` base URLs (:func:`transport`): ``https`` clients keep
``httpx2``'s default transport and its TLS, and requests through a proxy go through the proxy
transports ``httpx2`` mounts for the proxy variables, untouched. ``start_tls`` (a redirect from
a plain-http client to an ``https`` URL) uses asyncio's TLS and fails as a ``ConnectError``
like the default backend: such clients trust no certificate. Were it to succeed, reads keep
their flow control, but asyncio's TLS layer takes a whole write into memory, so a write over
it never raises ``WriteTimeout``.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import httpcore2

if TYPE_CHECKING:
    import httpx2

HOLD_MAX = 16 * 1024  # a write shorter than this waits for the next write or read (see AsyncioStream)
_CONNECT_FAILED = "All connection attempts failed"  # the default backend's text
_HAPPY_EYEBALLS_DELAY = 0.25  # as the default backend (RFC 8305's recommended delay)


class _Protocol(asyncio.Protocol):
    """Collects what arrives for :class:`AsyncioStream` and wakes its one waiting read or write."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.at_eof = False
        self.lost = False
        self.error: BaseException | None = None
        self.reader: asyncio.Future[None] | None = None
        self.writer: asyncio.Future[None] | None = None
        self.write_paused = False
        self.read_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.set_write_buffer_limits(0)  # a write waits until the kernel took it (WriteTimeout)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.reader is not None:
            _wake(self.reader)
        elif not self.read_paused and self.transport is not None:
            # nobody is reading (the consumer is busy): what follows gathers in the kernel and
            # arrives in one piece at the next read, as with the default backend
            self.read_paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        self.at_eof = True
        _wake(self.reader)
        return True  # half-open: the request may still be written

    def connection_lost(self, exc: BaseException | None) -> None:
        self.lost = True
        self.error = exc
        _wake(self.reader)
        _wake(self.writer)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        _wake(self.writer)


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


async def _wait(waiter: asyncio.Future[None], timeout: float | None) -> None:
    """Wait for ``waiter``; ``TimeoutError`` after ``timeout`` seconds (``None``: no limit)."""
    if timeout is None:
        await waiter
        return
    handle = asyncio.get_running_loop().call_later(timeout, _expire, waiter)
    try:
        await waiter
    finally:
        handle.cancel()


class AsyncioStream(httpcore2.AsyncNetworkStream):
    """One connection: an asyncio transport and the :class:`_Protocol` that collects its bytes.

    A write of fewer than :data:`HOLD_MAX` bytes (with what is held before it) is held and sent
    with the next write, or before the next read or TLS handshake: a request's head and its body,
    two writes of ``httpcore2``, leave in one ``send`` (one segment and one wake-up of the server
    instead of two). Nothing waits behind a held write: the caller's next step is always one of
    those, and a closed stream drops it, as the default backend drops unsent bytes at close.
    """

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._held = b""

    def _send_held(self) -> None:
        if self._held:
            held, self._held = self._held, b""
            if not self._protocol.lost:
                self._transport.write(held)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            self._send_held()
        protocol = self._protocol
        if not protocol.chunks and not protocol.at_eof and not protocol.lost:
            if protocol.read_paused:
                protocol.read_paused = False
                self._transport.resume_reading()
            waiter = protocol.reader = asyncio.get_running_loop().create_future()
            try:
                await _wait(waiter, timeout)
            except TimeoutError as exc:
                raise httpcore2.ReadTimeout(exc) from exc
            finally:
                protocol.reader = None
        chunks = protocol.chunks
        if chunks:
            chunk = chunks.popleft()
            if len(chunk) > max_bytes:
                chunks.appendleft(chunk[max_bytes:])
                chunk = chunk[:max_bytes]
            elif chunks and len(chunk) + len(chunks[0]) <= max_bytes:
                # several arrivals waiting: one read of all that fit, as one socket read would give
                parts = [chunk]
                size = len(chunk)
                while chunks and size + len(chunks[0]) <= max_bytes:
                    size += len(chunks[0])
                    parts.append(chunks.popleft())
                chunk = b"".join(parts)
            protocol.buffered -= len(chunk)
            return chunk
        if protocol.error is not None:  # lost with an error (reset …); a clean end reads as b""
            raise httpcore2.ReadError("") from protocol.error
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        protocol = self._protocol
        if protocol.lost:
            self._held = b""
            raise httpcore2.WriteError("") from protocol.error
        if self._held:
            buffer, self._held = self._held + buffer, b""
        if len(buffer) < HOLD_MAX:
            self._held = bytes(buffer)
            return
        self._transport.write(buffer)
        if protocol.write_paused:
            waiter = protocol.writer = asyncio.get_running_loop().create_future()
            try:
                await _wait(waiter, timeout)
            except TimeoutError as exc:
                raise httpcore2.WriteTimeout(exc) from exc
            finally:
                protocol.writer = None
            if protocol.lost and protocol.error is not None:
                raise httpcore2.WriteError("") from protocol.error

    async def aclose(self) -> None:
        self._transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        self._send_held()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError as exc:
            self._transport.abort()
            raise httpcore2.ConnectTimeout(exc) from exc
        except (OSError, ssl.SSLError) as exc:
            self._transport.abort()
            raise httpcore2.ConnectError(exc) from exc
        if transport is None:  # the loop closed meanwhile
            raise httpcore2.ConnectError("connection closed during the TLS handshake")
        # the protocol now hears from the TLS transport (asyncio does not call connection_made
        # again): pausing and resuming must go to it, and its writes wait for the kernel too
        self._protocol.transport = transport
        transport.set_write_buffer_limits(0)
        return AsyncioStream(transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        transport = self._transport
        if info == "is_readable":
            protocol = self._protocol
            return bool(protocol.chunks) or protocol.at_eof or protocol.lost or _socket_readable(transport)
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        return None


def _socket_readable(transport: asyncio.Transport) -> bool:
    """Whether the socket has bytes (or its end) the loop has not collected yet; a closed one is."""
    sock = transport.get_extra_info("socket")
    fd = -1 if sock is None else sock.fileno()
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def _set_options(transport: asyncio.Transport, options: Iterable[Any] | None) -> None:
    """Apply ``socket_options`` to a new connection; one that fails closes the connection."""
    try:
        for option in options or ():
            transport.get_extra_info("socket").setsockopt(*option)
    except BaseException:
        transport.abort()
        raise


class AsyncioBackend(httpcore2.AsyncNetworkBackend):
    """Connections as :class:`AsyncioStream`; connection failures read as the default backend's."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(
                    _Protocol,
                    host,
                    port,
                    local_addr=None if local_address is None else (local_address, 0),
                    happy_eyeballs_delay=_HAPPY_EYEBALLS_DELAY,
                )
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout(exc) from exc
        except socket.gaierror as exc:  # the name did not resolve: its own text, as before
            raise httpcore2.ConnectError(exc) from exc
        except OSError as exc:
            raise httpcore2.ConnectError(_CONNECT_FAILED) from exc
        _set_options(transport, socket_options)
        return AsyncioStream(transport, protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_unix_connection(_Protocol, path)
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout(exc) from exc
        except OSError as exc:
            raise httpcore2.ConnectError(exc) from exc
        _set_options(transport, socket_options)
        return AsyncioStream(transport, protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def transport(verify: ssl.SSLContext, limits: httpx2.Limits) -> httpx2.AsyncHTTPTransport:
    """``httpx2``'s transport for direct connections, its pool reading and writing through
    :class:`AsyncioBackend` (same pool settings as ``AsyncHTTPTransport(verify=, limits=)``).

    ``AsyncHTTPTransport`` takes no network backend, so its pool is replaced by an
    ``httpcore2.AsyncConnectionPool`` built with the same arguments and this backend.
    """
    import httpx2

    result = httpx2.AsyncHTTPTransport(verify=verify, limits=limits)
    result._pool = httpcore2.AsyncConnectionPool(
        ssl_context=verify,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        http1=True,
        http2=False,
        network_backend=AsyncioBackend(),
    )
    return result
