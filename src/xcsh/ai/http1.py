"""A small HTTP/1.1 client on asyncio streams, for model servers reached over plain ``http``.

Importing ``httpx2`` with ``httpcore2``, ``h11`` and ``anyio`` costs ~55 ms of CPU, more than the
rest of a first prompt; a prompt written right after spawning pays it before its first token
(docs/performance.md, "Fourth session: first prompt"). :mod:`xcsh.ai.transport` uses this client
for plain-``http`` base URLs that no proxy applies to (local servers, test doubles, a LAN box)
and ``httpx2`` for everything else (``https``, proxies). For those requests it behaves as the
``httpx2.AsyncClient`` the transport configures did:

- Request: ``Host``, then ``Accept: */*``, ``Accept-Encoding: gzip, deflate``, ``Connection:
  keep-alive`` and the ``User-Agent``, overridden case-insensitively by the client's and the
  request's headers, then ``Content-Length``.
- Answer: ``1xx`` interim answers skipped; the body framed by ``Transfer-Encoding: chunked``,
  ``Content-Length`` or the connection's end; ``gzip`` / ``deflate`` bodies decoded
  (unknown encodings passed through); ``text`` decoded with the ``charset`` of
  ``Content-Type`` (else UTF-8), undecodable bytes replaced.
- Connections: kept alive and reused (at most 100 idle per client, each for at most 5 s, as
  ``httpx2``'s defaults); one whose body was not read to its end, or that said ``Connection:
  close``, is closed.
- Redirects followed (at most 20; 303, and 301/302 of a POST, become GETs without the body;
  ``Authorization`` is dropped when the origin changes); a redirect to ``https`` fails as a
  connection error (this client speaks no TLS, as the plain-http ``httpx2`` client trusted
  no certificate).
- Timeouts: one value for connecting, writing and each read.
- Errors (defined in :mod:`xcsh.ai.http1_messages`, re-exported here): the ``httpx2``
  exception names and hierarchy (:class:`ConnectError`, :class:`ReadTimeout`,
  :class:`RemoteProtocolError` … under :class:`TransportError`), with the same messages where
  the transport or :mod:`xcsh.ai.errors` read them, chained to the underlying ``OSError`` /
  ``TimeoutError``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from xcsh.ai.http1_messages import (
    ConnectError,
    ConnectTimeout,
    DecodingError,
    Headers,
    HTTPError,
    NetworkError,
    ProtocolError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    Request,
    RequestError,
    ResponseNotRead,
    TimeoutException,
    TooManyRedirects,
    TransportError,
    WriteError,
    WriteTimeout,
    decoders_for,
)

MAX_REDIRECTS = 20
MAX_IDLE = 100  # idle connections kept per client
IDLE_EXPIRY_S = 5.0  # an idle connection older than this is closed, not reused
_HEAD_LIMIT = 1 << 20  # bytes of a response head (status line and headers)
_REDIRECTS = (301, 302, 303, 307, 308)
_DEFAULT_HEADERS = (
    ("Accept", "*/*"),
    ("Accept-Encoding", "gzip, deflate"),
    ("Connection", "keep-alive"),
    ("User-Agent", "xcsh"),
)


class _Connection:
    __slots__ = ("idle_since", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self, now: float) -> bool:
        """Still open, not told to close by the server, and not idle too long."""
        return (
            not self.writer.is_closing()
            and not self.reader.at_eof()
            and now - self.idle_since <= IDLE_EXPIRY_S
        )

    def close(self) -> None:
        self.writer.close()


class Response:
    """A response whose body is read as it arrives (:meth:`aiter_bytes`) or at once (:meth:`aread`)."""

    def __init__(
        self,
        client: Client,
        key: tuple[str, int],
        connection: _Connection,
        request: Request,
        status: int,
        reason: str,
        headers: Headers,
        *,
        keep_alive: bool,
    ) -> None:
        self.request = request
        self.status_code = status
        self.reason_phrase = reason
        self.headers = headers
        self._client = client
        self._key = key
        self._connection: _Connection | None = connection
        self._keep_alive = keep_alive
        self._content: bytes | None = None
        self._consumed = False

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise ResponseNotRead()
        return self._content

    @property
    def text(self) -> str:
        encoding = "utf-8"
        content_type = self.headers.get("content-type") or ""
        for parameter in content_type.split(";")[1:]:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                encoding = value.strip().strip("\"'")
        try:
            return self.content.decode(encoding, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    async def aread(self) -> bytes:
        if self._content is None:
            self._content = b"".join([chunk async for chunk in self.aiter_bytes()])
        return self._content

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, content-decoded."""
        if self._consumed:
            raise RuntimeError("the response body was already read")
        self._consumed = True
        decoders = decoders_for(self.headers.get("content-encoding"))
        async for chunk in self._raw():
            for decoder in decoders:
                chunk = decoder.feed(chunk, self.request)
            if chunk:
                yield chunk
        tail = b""
        for decoder in decoders:
            tail = decoder.feed(tail, self.request) + decoder.flush(self.request)
        if tail:
            yield tail

    async def _raw(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None:
            return
        reader, timeout = connection.reader, self._client.timeout
        finished = False
        try:
            framing = _framing(self.request, self.status_code, self.headers)
            if framing == "chunked":
                while True:
                    line = await _read(reader.readuntil(b"\r\n"), timeout, self.request, "chunked")
                    try:
                        size = int(line.split(b";", 1)[0].strip(), 16)
                    except ValueError:
                        raise RemoteProtocolError("malformed chunk size", request=self.request) from None
                    if size == 0:
                        while (
                            await _read(reader.readuntil(b"\r\n"), timeout, self.request, "chunked")
                        ) != b"\r\n":
                            pass  # trailer fields
                        break
                    data = await _read(reader.readexactly(size + 2), timeout, self.request, "chunked")
                    yield data[:-2]
            elif isinstance(framing, int):
                left = framing
                while left > 0:
                    data = await _read(reader.read(min(left, 1 << 16)), timeout, self.request, "length")
                    if not data:
                        raise RemoteProtocolError(
                            "peer closed connection without sending complete message body: "
                            f"received {framing - left} bytes, expected {framing}",
                            request=self.request,
                        )
                    left -= len(data)
                    yield data
            elif framing == "close":
                self._keep_alive = False
                while data := await _read(reader.read(1 << 16), timeout, self.request, "close"):
                    yield data
            finished = True
        finally:
            self._release(finished)

    def _release(self, finished: bool) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if finished and self._keep_alive:
            self._client._put_back(self._key, connection)
        else:
            connection.close()

    async def aclose(self) -> None:
        """Close the response; a connection whose body was not read to its end is closed too."""
        self._release(False)


def _framing(request: Request, status: int, headers: Headers) -> str | int:
    if request.method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return "none"
    encoding = headers.get("transfer-encoding")
    if encoding and "chunked" in encoding.lower():
        return "chunked"
    length = headers.get("content-length")
    if length is not None:
        try:
            return int(length.split(",")[0].strip())
        except ValueError:
            raise RemoteProtocolError("malformed Content-Length header", request=request) from None
    return "close"


async def _read(step: Any, timeout: float | None, request: Request, framing: str) -> bytes:
    """Await one read, mapping its failures to this client's errors."""
    try:
        async with asyncio.timeout(timeout):
            data: bytes = await step
            return data
    except TimeoutError as exc:
        raise ReadTimeout("", request=request) from exc
    except asyncio.IncompleteReadError as exc:
        what = "incomplete chunked read" if framing == "chunked" else "incomplete read"
        raise RemoteProtocolError(
            f"peer closed connection without sending complete message body: {what}", request=request
        ) from exc
    except asyncio.LimitOverrunError as exc:
        raise RemoteProtocolError("chunk header too long", request=request) from exc
    except OSError as exc:
        raise ReadError(str(exc), request=request) from exc


# ---- the client ------------------------------------------------------------------------
def _target(url: str) -> tuple[str, int, str, str]:
    """(host, port, request target, Host header) of an ``http`` URL."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "http":
        raise ConnectError(f"not a plain-http URL: {parts.scheme or '?'}://")
    host = parts.hostname or ""
    port = parts.port or 80
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    shown = f"[{host}]" if ":" in host else host
    return host, port, target, shown if port == 80 else f"{shown}:{port}"


def supports(url: str) -> bool:
    """True for an ``http`` URL this client can send to (ASCII host, no credentials in the URL)."""
    parts = urlsplit(url)
    host = parts.hostname
    return (
        parts.scheme.lower() == "http"
        and bool(host)
        and host is not None
        and host.isascii()
        and parts.username is None
        and parts.password is None
    )


class Client:
    """Pooled HTTP/1.1 connections with default headers and one timeout (``None``: wait forever)."""

    def __init__(self, *, headers: Mapping[str, str] | None = None, timeout: float | None = None) -> None:
        merged: dict[str, tuple[str, str]] = {name.lower(): (name, value) for name, value in _DEFAULT_HEADERS}
        for name, value in (headers or {}).items():
            merged[name.lower()] = (name, value)
        self.headers = list(merged.values())
        self.timeout = timeout
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    def build_request(
        self, method: str, url: str, *, content: bytes = b"", headers: Mapping[str, str] | None = None
    ) -> Request:
        fields = self.headers
        if headers:
            merged = {name.lower(): (name, value) for name, value in fields}
            for name, value in headers.items():
                merged[name.lower()] = (name, value)
            fields = list(merged.values())
        return Request(method, url, fields, content)

    async def send(self, request: Request, *, stream: bool = True) -> Response:
        """Send ``request`` (following redirects); the body is read later unless ``stream`` is False."""
        for _ in range(MAX_REDIRECTS + 1):
            response = await self._send_one(request)
            location = response.headers.get("location")
            if response.status_code not in _REDIRECTS or location is None:
                if not stream:
                    try:
                        await response.aread()
                    finally:
                        await response.aclose()
                return response
            try:
                await response.aread()
            finally:
                await response.aclose()
            request = _redirected(request, response.status_code, location)
        raise TooManyRedirects("Exceeded maximum allowed redirects.", request=request)

    async def aclose(self) -> None:
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    def _put_back(self, key: tuple[str, int], connection: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) >= MAX_IDLE:
            connection.close()
            return
        connection.idle_since = time.monotonic()
        idle.append(connection)

    def _take(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.usable(now):
                return connection
            connection.close()
        return None

    async def _connect(self, host: str, port: int, request: Request) -> _Connection:
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await asyncio.open_connection(host, port, limit=_HEAD_LIMIT)
        except TimeoutError as exc:
            raise ConnectTimeout("", request=request) from exc
        except OSError as exc:
            raise ConnectError(str(exc), request=request) from exc
        return _Connection(reader, writer)

    async def _send_one(self, request: Request) -> Response:
        host, port, target, host_header = _target(request.url)
        key = (host, port)
        connection = self._take(key) or await self._connect(host, port, request)
        try:
            await self._write(connection, request, target, host_header)
            while True:
                status, reason, fields, keep_alive = await self._read_head(connection, request)
                if not 100 <= status < 200 or status == 101:
                    break
        except BaseException:
            connection.close()
            raise
        return Response(
            self, key, connection, request, status, reason, Headers(fields), keep_alive=keep_alive
        )

    async def _write(self, connection: _Connection, request: Request, target: str, host_header: str) -> None:
        lines = [f"{request.method} {target} HTTP/1.1", f"Host: {host_header}"]
        lines.extend(f"{name}: {value}" for name, value in request.headers)
        if request.content or request.method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(request.content)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            async with asyncio.timeout(self.timeout):
                connection.writer.write(head + request.content if request.content else head)
                await connection.writer.drain()
        except TimeoutError as exc:
            raise WriteTimeout("", request=request) from exc
        except OSError as exc:
            raise WriteError(str(exc), request=request) from exc

    async def _read_head(
        self, connection: _Connection, request: Request
    ) -> tuple[int, str, list[tuple[str, str]], bool]:
        try:
            async with asyncio.timeout(self.timeout):
                raw = await connection.reader.readuntil(b"\r\n\r\n")
        except TimeoutError as exc:
            raise ReadTimeout("", request=request) from exc
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                raise RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request
                ) from exc
            raise RemoteProtocolError(
                "peer closed connection without sending complete response head", request=request
            ) from exc
        except asyncio.LimitOverrunError as exc:
            raise RemoteProtocolError("response head too large", request=request) from exc
        except OSError as exc:
            raise ReadError(str(exc), request=request) from exc
        lines = raw.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or not (len(code) == 3 and code.isdigit()):
            raise RemoteProtocolError(f"illegal status line: {lines[0]!r}", request=request)
        fields = []
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise RemoteProtocolError(f"illegal header line: {line!r}", request=request)
            fields.append((name, value.strip(" \t")))
        connection_header = (Headers(fields).get("connection") or "").lower()
        keep_alive = "close" not in connection_header and (
            version != "HTTP/1.0" or "keep-alive" in connection_header
        )
        return int(code), reason, fields, keep_alive


def _redirected(request: Request, status: int, location: str) -> Request:
    """The request a redirect asks for (the rules of ``httpx2``)."""
    url = urljoin(request.url, location)
    method = request.method
    if (
        (status == 303 and method != "HEAD")
        or (status == 302 and method != "HEAD")
        or (status == 301 and method == "POST")
    ):
        method = "GET"
    fields = request.headers
    old, new = urlsplit(request.url), urlsplit(url)
    if (old.scheme, old.hostname, old.port) != (new.scheme, new.hostname, new.port):
        fields = [(name, value) for name, value in fields if name.lower() != "authorization"]
    content = request.content if method == request.method else b""
    return Request(method, url, fields, content)


__all__ = [
    "Client",
    "ConnectError",
    "ConnectTimeout",
    "DecodingError",
    "HTTPError",
    "Headers",
    "NetworkError",
    "ProtocolError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Request",
    "RequestError",
    "Response",
    "ResponseNotRead",
    "TimeoutException",
    "TooManyRedirects",
    "TransportError",
    "WriteError",
    "WriteTimeout",
    "supports",
]
