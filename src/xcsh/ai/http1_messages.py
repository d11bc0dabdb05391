"""The messages and errors of :mod:`xcsh.ai.http1`: header fields, requests, content codings, and
the exception hierarchy of ``httpx2`` under the same names (:mod:`xcsh.ai.errors` classifies
failures by class name, so a plain-http failure reads as an ``httpx2`` one did)."""

from __future__ import annotations


# ---- errors (httpx2's names and hierarchy: xcsh.ai.errors classifies by class name) ------
class HTTPError(Exception):
    """Base of every error of this client."""

    def __init__(self, message: str = "", *, request: Request | None = None) -> None:
        super().__init__(message)
        self.request = request


class RequestError(HTTPError):
    pass


class TransportError(RequestError):
    pass


class TimeoutException(TransportError):
    pass


class ConnectTimeout(TimeoutException):
    pass


class ReadTimeout(TimeoutException):
    pass


class WriteTimeout(TimeoutException):
    pass


class NetworkError(TransportError):
    pass


class ConnectError(NetworkError):
    pass


class ReadError(NetworkError):
    pass


class WriteError(NetworkError):
    pass


class ProtocolError(TransportError):
    pass


class RemoteProtocolError(ProtocolError):
    pass


class DecodingError(RequestError):
    pass


class TooManyRedirects(RequestError):
    pass


class ResponseNotRead(RuntimeError):
    def __init__(self) -> None:
        super().__init__("Attempted to access streaming response content, without having called `read()`.")


# ---- messages ---------------------------------------------------------------------------
class Headers:
    """Header fields in order; ``get`` is case-insensitive and joins repeated fields with ``, ``."""

    __slots__ = ("_fields",)

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields

    def get(self, name: str, default: str | None = None) -> str | None:
        wanted = name.lower()
        values = [value for key, value in self._fields if key.lower() == wanted]
        return ", ".join(values) if values else default

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def __repr__(self) -> str:
        return f"Headers({self._fields!r})"


class Request:
    """One request: method, absolute URL, header fields (without ``Host``/``Content-Length``), body."""

    __slots__ = ("content", "headers", "method", "url")

    def __init__(self, method: str, url: str, headers: list[tuple[str, str]], content: bytes) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.content = content

    def __repr__(self) -> str:
        return f"<Request({self.method!r}, {self.url!r})>"


class Decoder:
    """One content coding (``gzip`` or ``deflate``), fed chunk by chunk."""

    def __init__(self, kind: str) -> None:
        import zlib

        self._zlib = zlib
        self._kind = kind
        self._first = True
        self._object = zlib.decompressobj(zlib.MAX_WBITS | 16 if kind == "gzip" else zlib.MAX_WBITS)

    def feed(self, data: bytes, request: Request) -> bytes:
        if not data:
            return b""
        try:
            if self._kind == "deflate" and self._first:
                self._first = False
                try:
                    return bytes(self._object.decompress(data))
                except self._zlib.error:  # raw deflate, without the zlib wrapper
                    self._object = self._zlib.decompressobj(-self._zlib.MAX_WBITS)
            return bytes(self._object.decompress(data))
        except self._zlib.error as exc:
            raise DecodingError(str(exc), request=request) from exc

    def flush(self, request: Request) -> bytes:
        try:
            return bytes(self._object.flush())
        except self._zlib.error as exc:
            raise DecodingError(str(exc), request=request) from exc


def decoders_for(encoding: str | None) -> list[Decoder]:
    """Decoders for a ``Content-Encoding`` value, in decoding order (unknown codings pass through)."""
    if not encoding:
        return []
    names = [part.strip().lower() for part in encoding.split(",")]
    return [Decoder(name) for name in reversed(names) if name in ("gzip", "deflate")]
