"""Streaming requests to the Anthropic and OpenAI HTTP wires over ``httpx2``, without the vendor SDKs.

The SDKs were used only as a transport, and importing one cost more than the whole agent's
start-up (``anthropic`` ~1.4 s, ``openai`` ~0.4 s of CPU on a small machine) and each built a
typed object per stream event (docs/performance.md, fourth session). This module does what
they did for a streamed POST, with the same observable results:

- URL: the configured ``baseUrl`` (else ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``, else the
  vendor's default) with a trailing slash, then the endpoint path appended (the SDKs' join).
- Headers: ``Accept`` / ``Content-Type: application/json``, a User-Agent naming xcsh, the
  vendor's auth (``Authorization: Bearer`` for OpenAI, ``x-api-key`` plus ``anthropic-version``
  for Anthropic), ``OpenAI-Organization`` / ``OpenAI-Project`` from the environment as the SDK
  read them, then the model's and the call's own headers (which win, case-insensitively).
- Transport: one pooled ``httpx2.AsyncClient`` per event loop, base URL, key, headers and
  timeout; no proxy variables for loopback servers; the process's shared TLS context for
  https only; redirects followed; no retries (the coding layer's policy is the only one).
- Errors, shaped for :mod:`xcsh.ai.errors` exactly as the SDKs shaped them: a non-2xx answer
  is an :class:`APIStatusError` (``status_code``, ``body``, ``response`` with its headers and
  bytes, the vendor's ``message`` form); a failure before the answer an
  :class:`APIConnectionError` / :class:`APITimeoutError` chained to the transport's exception;
  OpenAI's in-stream ``{"error": …}`` an :class:`APIError`; Anthropic's ``event: error`` an
  :class:`APIStatusError` with status 200; a cut or stalled stream raises the transport's
  exception (OpenAI wraps it as the SDK did); bad JSON ``json.JSONDecodeError``; bytes that
  are not UTF-8 ``UnicodeDecodeError`` (decoded per line, so positions match).

Events come out as the decoded JSON of each SSE ``data`` field (msgspec; the standard library
for what msgspec refuses, such as ``NaN``). ``httpx2`` is imported on the first request, so
importing this module stays cheap.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing, suppress
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from xcsh.ai.clients import client_key, close_with_loop, is_loopback_url, merged_headers, shared_ssl_context
from xcsh.ai.options import StreamOptions
from xcsh.ai.sse import sse_events
from xcsh.ai.types import Model
from xcsh.version import __version__

if TYPE_CHECKING:
    import httpx2

Vendor = Literal["anthropic", "openai"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URLS: dict[Vendor, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
}
_BASE_URL_ENV: dict[Vendor, str] = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
_HAND_OVER_TURNS = 8  # loop turns a finished answer's consumer gets before the rest of its body is read


USER_AGENT = f"xcsh/{__version__} (Python {sys.version_info[0]}.{sys.version_info[1]})"


# ---- errors ---------------------------------------------------------------------------
class APIError(Exception):
    """A failure reported by the provider (``message``; ``body`` as the vendor sent it)."""

    def __init__(self, message: str, *, body: object = None, request: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.body = body
        self.request = request


class APIStatusError(APIError):
    """A non-2xx answer (or Anthropic's in-stream ``error`` event, with status 200)."""

    def __init__(self, message: str, *, response: httpx2.Response, body: object) -> None:
        super().__init__(message, body=body, request=response.request)
        self.response = response
        self.status_code = response.status_code


class APIConnectionError(APIError):
    """The request did not get an answer (refused, reset, TLS, DNS …); the cause is chained."""

    def __init__(self, message: str = "Connection error.", *, request: Any = None) -> None:
        super().__init__(message, request=request)


class APITimeoutError(APIConnectionError):
    """The connection or a read timed out."""

    def __init__(self, *, request: Any = None) -> None:
        super().__init__("Request timed out.", request=request)


def _status_error(vendor: Vendor, response: httpx2.Response) -> APIStatusError:
    """The error for a non-2xx ``response`` whose body has been read, as each SDK built it."""
    status = response.status_code
    text = response.text.strip()
    body: object = text
    if vendor == "anthropic":
        try:
            body = json.loads(text)
            message = f"Error code: {status} - {body}"
        except Exception:
            message = text or f"Error code: {status}"
        return APIStatusError(message, response=response, body=body)
    message = f"Error code: {status}"
    try:
        body = json.loads(text)
    except Exception:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        detail = error.get("message") if isinstance(error, dict) else None
        if isinstance(detail, str) and detail:
            message += f" - {detail}"
    data = body.get("error", body) if isinstance(body, dict) else body
    return APIStatusError(message, response=response, body=data)


# ---- clients --------------------------------------------------------------------------
_clients: dict[tuple[Any, ...], Any] = {}
# a context that trusts no certificate: plain-http clients never use TLS, and a redirect to
# https from one fails instead of connecting unverified (the CA bundle is not loaded for them)
_NO_TLS: list[ssl.SSLContext] = []


def base_url(vendor: Vendor, model: Model) -> str:
    """The base URL a request for ``model`` goes to (configured, else the SDK's env variable, else default)."""
    return model.get("baseUrl") or os.environ.get(_BASE_URL_ENV[vendor]) or DEFAULT_BASE_URLS[vendor]


def endpoint_url(base: str, path: str) -> str:
    """``path`` appended to ``base`` (given a trailing slash first), as the SDKs join them."""
    head, sep, query = base.partition("?")
    if not head.endswith("/"):
        head += "/"
    return f"{head}{path.lstrip('/')}{sep}{query}"


def request_headers(vendor: Vendor, model: Model, options: StreamOptions) -> dict[str, str]:
    """Every header of a request: defaults, auth, the vendor's, then the model's and the call's."""
    key = options.api_key or "no-key"
    headers = {"Accept": "application/json", "Content-Type": "application/json", "User-Agent": USER_AGENT}
    if vendor == "anthropic":
        headers["x-api-key"] = key
        headers["anthropic-version"] = ANTHROPIC_VERSION
    else:
        headers["Authorization"] = f"Bearer {key}"
        for name, variable in (
            ("OpenAI-Organization", "OPENAI_ORG_ID"),
            ("OpenAI-Project", "OPENAI_PROJECT_ID"),
        ):
            value = os.environ.get(variable)
            if value:
                headers[name] = value
    lowered = {name.lower(): name for name in headers}
    for name, value in merged_headers(model, options).items():
        existing = lowered.pop(name.lower(), None)
        if existing is not None:
            del headers[existing]
        headers[name] = value
    return headers


class PooledClient:
    """A pooled ``httpx2.AsyncClient`` and the parsed ``httpx2.URL`` of each endpoint it was sent to.

    ``build_request`` parses a URL given as text on every call (~8 µs, two fifths of the
    library's request building); a parsed ``URL`` is taken as it is, with the same merging.
    """

    __slots__ = ("client", "settling", "urls")

    def __init__(self, client: httpx2.AsyncClient) -> None:
        self.client = client
        self.urls: dict[tuple[str, str], httpx2.URL] = {}
        # set while a finished answer's rest is read (EventStream): the next request waits for
        # it, so the connection is back in the pool and reused rather than a second one opened
        self.settling: asyncio.Future[None] | None = None

    def url(self, base: str, path: str) -> httpx2.URL:
        """The parsed URL of ``path`` under ``base`` (see :func:`endpoint_url`)."""
        url = self.urls.get((base, path))
        if url is None:
            import httpx2

            url = self.urls[base, path] = httpx2.URL(endpoint_url(base, path))
        return url


def pooled_client(vendor: Vendor, model: Model, options: StreamOptions) -> PooledClient:
    """The pooled client for this call's loop, base URL, key, headers and timeout (closed
    when that loop shuts down, see :func:`xcsh.ai.clients.close_with_loop`)."""
    key = client_key(vendor, model, options)
    pooled = _clients.get(key)
    if pooled is None:
        pooled = _clients[key] = PooledClient(new_client(vendor, model, options))
        if key[1]:  # made on a running loop (always, from open_stream): closed with that loop
            client = pooled.client

            async def close() -> None:
                _clients.pop(key, None)
                await client.aclose()

            close_with_loop(close)
    return pooled  # type: ignore[no-any-return]  # the cache holds Any


def new_client(vendor: Vendor, model: Model, options: StreamOptions) -> httpx2.AsyncClient:
    """A client for ``model``'s base URL with the call's headers and timeout (not pooled)."""
    import httpx2

    url = base_url(vendor, model)
    # a local server (llama.cpp, Ollama, the embedded model, a test double) must not be
    # reached through HTTP(S)_PROXY settings meant for the internet
    trust_env = not is_loopback_url(url)
    verify: ssl.SSLContext
    if url.lower().startswith("https:"):
        verify = shared_ssl_context(trust_env=trust_env)
    else:
        if not _NO_TLS:
            _NO_TLS.append(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
        verify = _NO_TLS[0]
    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    direct = None
    if not url.lower().startswith("https:"):
        # plain http (local model servers): bytes through asyncio's transports, not anyio's
        # streams (xcsh.ai.netstream); https keeps httpx2's default transport and its TLS
        from xcsh.ai import netstream

        direct = netstream.transport(verify, limits)
    return httpx2.AsyncClient(
        headers=request_headers(vendor, model, options),
        timeout=httpx2.Timeout(options.timeout_s),
        verify=verify,
        trust_env=trust_env,
        follow_redirects=True,
        limits=limits,
        transport=direct,
    )


# ---- requests -------------------------------------------------------------------------
async def open_stream(
    vendor: Vendor, model: Model, options: StreamOptions, path: str, body: bytes
) -> EventStream:
    """POST ``body`` (JSON bytes) to ``path`` and return the answer's event stream.

    Raises :class:`APIStatusError` for a non-2xx answer and :class:`APIConnectionError` /
    :class:`APITimeoutError` when no answer came. Use the result as ``async with``: leaving it
    closes the response (an abort cancels the provider task, which leaves it).
    """
    import httpx2

    pooled = pooled_client(vendor, model, options)
    if pooled.settling is not None:
        await asyncio.wait({pooled.settling})
    client = pooled.client
    request = client.build_request("POST", pooled.url(base_url(vendor, model), path), content=body)
    try:
        response = await client.send(request, stream=True)
    except httpx2.TimeoutException as exc:
        raise APITimeoutError(request=request) from exc
    except Exception as exc:
        raise APIConnectionError(request=request) from exc
    if not response.is_success:
        try:
            await response.aread()
        except httpx2.TimeoutException as exc:
            raise APITimeoutError(request=request) from exc
        except httpx2.HTTPError as exc:
            raise APIConnectionError(request=request) from exc
        finally:
            await response.aclose()
        raise _status_error(vendor, response)
    return EventStream(vendor, response, pooled, drain_s=options.drain_s)


class EventStream:
    """The decoded ``data`` of each server-sent event of one streamed answer, as an async iterator.

    OpenAI wires: ends at ``data: [DONE]`` (marking the answer :meth:`complete`) and raises
    :class:`APIError` for a chunk carrying ``error``. Anthropic: skips ``ping`` and unnamed
    events and raises :class:`APIStatusError` (status 200) for an ``error`` event.

    Leaving ``async with`` normally after the answer is complete reads what is left of the body
    (for at most ``drain_s`` seconds, the call's ``StreamOptions.drain_s``), so the connection is reused: a response closed before its body ends takes its
    connection with it, and the next request would open a new one (for https, with a new TLS
    handshake). A provider that ends its message first sets :attr:`handed_over` (whether its
    consumer has taken every event): that read then waits, a few loop turns at most, until the
    agent has taken the answer (and the host heard of it); the pooled client's next request
    waits for the read (:attr:`PooledClient.settling`).
    """

    def __init__(
        self,
        vendor: Vendor,
        response: httpx2.Response,
        pooled: PooledClient | None = None,
        *,
        drain_s: float = 0.1,
    ) -> None:
        self.vendor = vendor
        self.drain_s = drain_s
        self.response = response
        self._pooled = pooled
        self._chunks: AsyncIterator[bytes] | None = None
        self._events: AsyncGenerator[Any, None] | None = None
        self._complete = False
        self.handed_over: Callable[[], bool] | None = None

    def complete(self) -> None:
        """The answer is over: leaving ``async with`` normally reads the rest of the body first."""
        self._complete = True

    async def _settle(self, chunks: AsyncIterator[bytes]) -> None:
        pooled = self._pooled
        settled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if pooled is not None:
            pooled.settling = settled
        try:
            for _ in range(_HAND_OVER_TURNS):  # whoever waits for the finished answer runs first
                await asyncio.sleep(0)
                if self.handed_over is None or self.handed_over():
                    break
            await _drain(chunks, self.drain_s)
        finally:
            settled.set_result(None)
            if pooled is not None and pooled.settling is settled:
                pooled.settling = None

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # the stream's generators are closed here, at once: one left to the garbage collector is
        # closed by the loop's finaliser hook instead (a thread-safe wake-up and a task per answer)
        try:
            if kind is None and self._complete and self._chunks is not None:
                await self._settle(self._chunks)
            if self._events is not None:
                await self._events.aclose()
            if isinstance(self._chunks, AsyncGenerator):
                with suppress(Exception):  # cleanup of the bytes never replaces the answer's outcome
                    await self._chunks.aclose()
        finally:
            await self.response.aclose()

    def __aiter__(self) -> AsyncIterator[Any]:
        self._events = self._anthropic() if self.vendor == "anthropic" else self._openai()
        return self._events

    async def _openai(self) -> AsyncGenerator[Any, None]:
        import httpx2

        chunks = self._chunks = _body(self.response)
        try:
            async with aclosing(sse_events(chunks)) as events:
                async for name, data in events:
                    del name
                    if data.startswith("[DONE]"):
                        self.complete()
                        return
                    value = decode_json(data)
                    if isinstance(value, dict) and value.get("error"):
                        error = value["error"]
                        message = error.get("message") if isinstance(error, dict) else None
                        if not message or not isinstance(message, str):
                            message = "An error occurred during streaming"
                        raise APIError(message, body=error, request=self.response.request)
                    yield value
        except httpx2.TimeoutException as exc:
            raise APITimeoutError(request=self.response.request) from exc
        except (httpx2.RequestError, ssl.SSLError) as exc:
            raise APIConnectionError(request=self.response.request) from exc

    async def _anthropic(self) -> AsyncGenerator[Any, None]:
        chunks = self._chunks = _body(self.response)
        async with aclosing(sse_events(chunks)) as events:
            async for name, data in events:
                if name is None or name == "ping":
                    continue
                if name == "error":
                    body: object = data
                    try:
                        body = json.loads(data)
                        message = f"{body}"
                    except Exception:
                        message = data or f"Error code: {self.response.status_code}"
                    raise APIStatusError(message, response=self.response, body=body)
                if data:
                    yield decode_json(data)


def _body(response: httpx2.Response) -> AsyncIterator[bytes]:
    """The body's bytes: as they arrived when the server sent them uncompressed (no
    ``Content-Encoding``, the usual case for a stream), else decoded by ``httpx2``.

    ``aiter_bytes`` passes each chunk through an identity decoder and a chunker, one more
    generator step per network read.
    """
    if "content-encoding" in response.headers:
        return response.aiter_bytes()
    return response.aiter_raw()


async def _drain(chunks: AsyncIterator[bytes], within_s: float) -> None:
    import httpx2

    try:
        async with asyncio.timeout(within_s):
            async for _ in chunks:
                pass
    except (TimeoutError, httpx2.HTTPError, ssl.SSLError):
        pass  # cleanup never turns a finished answer into an error


def as_object(value: Any) -> dict[str, Any]:
    """``value`` if it is a decoded JSON object, else an empty one (for reading optional fields)."""
    return value if isinstance(value, dict) else {}


def decode_json(data: str) -> Any:
    """``data`` decoded (msgspec; the standard library for what msgspec refuses, and its error)."""
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        return json.loads(data)
