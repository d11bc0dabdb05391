"""What every provider's HTTP client shares: the pool key, headers, loopback detection, TLS.

Also the lazily built Google SDK client (the only provider still on its vendor SDK; the
Anthropic and OpenAI wires go through :mod:`xcsh.ai.transport`). Retries are always off:
our retry policy (coding layer) is the only one, so every retry is visible on the protocol.

Clients are pooled per event loop (an HTTP client is bound to the loop that made it) and
closed when that loop shuts down (:func:`close_with_loop`): a process that runs several loops
one after another (a test suite, an embedding host) does not keep each finished loop's
connections open.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import suppress
from typing import Any

from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Model

_cache: dict[tuple[Any, ...], Any] = {}
Closer = Callable[[], Awaitable[object]]
# per running loop: what its shutdown closes, the generator parked until then and its task
_keepers: dict[int, tuple[list[Closer], AsyncGenerator[None, None], asyncio.Task[None]]] = {}


def close_with_loop(close: Closer) -> None:
    """Await ``close()`` on the running loop when that loop shuts down.

    The hook is an async generator parked at its ``yield``: ``loop.shutdown_asyncgens()``
    (called by ``asyncio.run`` and ``asyncio.Runner`` before they close the loop) closes it on
    the loop, which runs the ``close`` callbacks, oldest first; a failing one does not stop
    the rest. A loop closed without that step keeps its clients, as before.
    """
    loop = asyncio.get_running_loop()
    entry = _keepers.get(id(loop))
    if entry is None:
        closers: list[Closer] = []
        keeper = _at_shutdown(id(loop), closers)
        entry = _keepers[id(loop)] = (closers, keeper, loop.create_task(_park(keeper)))
    entry[0].append(close)


async def _park(keeper: AsyncGenerator[None, None]) -> None:
    await anext(keeper)  # runs to the yield: from now on, closing the generator runs its finally


async def _at_shutdown(loop_id: int, closers: list[Closer]) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        entry = _keepers.get(loop_id)
        if entry is not None and entry[0] is closers:
            del _keepers[loop_id]
        for close in closers:
            with suppress(Exception):
                await close()


def merged_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    """The model's configured headers with the call's own on top."""
    return {**model.get("headers", {}), **options.headers}


def client_key(kind: str, model: Model, options: StreamOptions) -> tuple[Any, ...]:
    """What makes a pooled HTTP client reusable for a call: loop, base URL, key, headers, timeout."""
    import asyncio

    try:
        loop_id = id(asyncio.get_running_loop())  # HTTP clients are bound to the loop that made them
    except RuntimeError:
        loop_id = 0
    return (
        kind,
        loop_id,
        model["baseUrl"],
        options.api_key,
        tuple(sorted(merged_headers(model, options).items())),
        options.timeout_s,
    )


def is_loopback_url(url: str) -> bool:
    """True for http(s) URLs on 127.0.0.0/8, ::1 or localhost."""
    import ipaddress
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_ssl_contexts: dict[bool, Any] = {}
_ssl_lock = threading.Lock()


def shared_ssl_context(*, trust_env: bool) -> Any:
    """The process's TLS context (one per ``trust_env``), made by ``httpx2``.

    Each new HTTP client would otherwise build its own, loading the CA bundle again (100 ms
    or more of CPU on a small machine, paid on the first prompt). Contexts are thread-safe
    and meant to be shared between connections.
    """
    with _ssl_lock:
        context = _ssl_contexts.get(trust_env)
        if context is None:
            import httpx2

            context = httpx2.create_ssl_context(trust_env=trust_env)
            _ssl_contexts[trust_env] = context
    return context


def google_client(model: Model, options: StreamOptions) -> Any:
    key = client_key("google", model, options)
    client = _cache.get(key)
    if client is None:
        from google import genai
        from google.genai import types

        http_options = types.HttpOptions(
            base_url=model["baseUrl"] or None,
            # a configured base URL already ends with the API version (…/v1beta)
            api_version="" if model["baseUrl"] else None,
            headers=merged_headers(model, options) or None,
            timeout=int(options.timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        client = genai.Client(api_key=options.api_key or "no-key", http_options=http_options)
        _cache[key] = client
        if key[1]:  # made on a running loop: closed with it

            async def close() -> None:
                _cache.pop(key, None)
                await client.aio.aclose()
                client.close()

            close_with_loop(close)
    return client


def encode_body(body: dict[str, Any], spliced: dict[str, Any] | None = None) -> bytes:
    """A request body as JSON bytes (msgspec; the standard library for what msgspec cannot write).

    ``spliced``: fields to encode in place of the body's own, holding the same JSON with parts
    already encoded (``msgspec.Raw``, see :meth:`xcsh.ai.prefix_cache.PrefixCache.encoded`);
    the bytes are those of ``body``. The standard-library path encodes ``body`` itself.
    """
    import msgspec

    try:
        return msgspec.json.encode({**body, **spliced} if spliced else body)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
        import json

        return json.dumps(body).encode()  # lone surrogates \u-escaped, big integers whole
