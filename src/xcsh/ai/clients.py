"""What every provider's HTTP client shares: the pool key, headers, loopback detection, TLS.

Also the lazily built Google SDK client (the only provider still on its vendor SDK; the
Anthropic and OpenAI wires go through :mod:`xcsh.ai.transport`). Retries are always off:
our retry policy (coding layer) is the only one, so every retry is visible on the protocol.
"""

from __future__ import annotations

import threading
from typing import Any

from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Model

_cache: dict[tuple[Any, ...], Any] = {}


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
