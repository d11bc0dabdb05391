"""Lazy construction of the official SDK clients, retries always off.

Our retry policy (coding layer) is the only one: every retry must be visible on the
protocol, so the SDKs' own transport retries are disabled here.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Model

if TYPE_CHECKING:
    import anthropic
    import openai

_cache: dict[tuple[Any, ...], Any] = {}


def _headers(model: Model, options: StreamOptions) -> dict[str, str]:
    return {**model.get("headers", {}), **options.headers}


def _key(kind: str, model: Model, options: StreamOptions) -> tuple[Any, ...]:
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
        tuple(sorted(_headers(model, options).items())),
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
    """The process's TLS context (one per ``trust_env``), made by the SDKs' HTTP library.

    Each new HTTP client would otherwise build its own, loading the CA bundle again (100 ms
    or more of CPU on a small machine, paid on the first prompt). Contexts are thread-safe
    and meant to be shared between connections.
    """
    with _ssl_lock:
        context = _ssl_contexts.get(trust_env)
        if context is None:
            import importlib

            try:
                http = importlib.import_module("httpx2")
            except ImportError:  # an SDK release still on httpx
                http = importlib.import_module("httpx")
            context = http.create_ssl_context(trust_env=trust_env)
            _ssl_contexts[trust_env] = context
    return context


def _http_client_kwargs(sdk: Any, model: Model, options: StreamOptions) -> dict[str, Any]:
    # A local server (llama.cpp, Ollama, the embedded model, a test double) must not be reached
    # through HTTP(S)_PROXY settings meant for the internet.
    trust_env = not is_loopback_url(model.get("baseUrl") or "")
    verify = shared_ssl_context(trust_env=trust_env)
    return {
        "http_client": sdk.DefaultAsyncHttpxClient(
            trust_env=trust_env, timeout=options.timeout_s, verify=verify
        )
    }


def openai_client(model: Model, options: StreamOptions) -> openai.AsyncOpenAI:
    key = _key("openai", model, options)
    client = _cache.get(key)
    if client is None:
        import openai

        client = openai.AsyncOpenAI(
            api_key=options.api_key or "no-key",
            base_url=model["baseUrl"] or None,
            max_retries=0,
            timeout=options.timeout_s,
            default_headers=_headers(model, options) or None,
            **_http_client_kwargs(openai, model, options),
        )
        _cache[key] = client
    return client  # type: ignore[no-any-return]  # cache holds Any


def anthropic_client(model: Model, options: StreamOptions) -> anthropic.AsyncAnthropic:
    key = _key("anthropic", model, options)
    client = _cache.get(key)
    if client is None:
        import anthropic

        client = anthropic.AsyncAnthropic(
            api_key=options.api_key or "no-key",
            base_url=model["baseUrl"] or None,
            max_retries=0,
            timeout=options.timeout_s,
            default_headers=_headers(model, options) or None,
            **_http_client_kwargs(anthropic, model, options),
        )
        _cache[key] = client
    return client  # type: ignore[no-any-return]  # cache holds Any


def google_client(model: Model, options: StreamOptions) -> Any:
    key = _key("google", model, options)
    client = _cache.get(key)
    if client is None:
        from google import genai
        from google.genai import types

        http_options = types.HttpOptions(
            base_url=model["baseUrl"] or None,
            # a configured base URL already ends with the API version (…/v1beta)
            api_version="" if model["baseUrl"] else None,
            headers=_headers(model, options) or None,
            timeout=int(options.timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        client = genai.Client(api_key=options.api_key or "no-key", http_options=http_options)
        _cache[key] = client
    return client


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body as JSON bytes (msgspec; the standard library for what msgspec cannot write)."""
    import msgspec

    try:
        return msgspec.json.encode(body)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
        import json

        return json.dumps(body).encode()  # lone surrogates \u-escaped, big integers whole


async def post_stream(client: Any, path: str, body: dict[str, Any], *, cast_to: Any, stream_cls: Any) -> Any:
    """POST an already well-formed JSON ``body`` through an SDK client and return its event stream.

    The SDKs' typed ``create`` methods copy and re-walk the whole request (every message of the
    history) through their typing machinery on each call, which made each prompt cost more than
    the last. The body built by a provider is already plain JSON, so it is encoded once here and
    handed to the client's own ``post``: transport, auth headers, HTTP errors, SSE parsing and
    the typed stream events stay the SDK's.
    """
    body = {**body, "stream": True}
    return await client.post(
        path, cast_to=cast_to, content=encode_body(body), stream=True, stream_cls=stream_cls
    )


async def post_chat_completions(client: openai.AsyncOpenAI, body: dict[str, Any]) -> Any:
    """Stream ``POST /chat/completions``; chunks are attribute views of their JSON (plain_stream.py)."""
    from openai.types.chat import ChatCompletion

    from xcsh.ai.plain_stream import PlainChunkStream

    return await post_stream(
        client, "/chat/completions", body, cast_to=ChatCompletion, stream_cls=PlainChunkStream
    )


async def post_responses(client: openai.AsyncOpenAI, body: dict[str, Any]) -> Any:
    """Stream ``POST /responses`` (events: ``ResponseStreamEvent``)."""
    from openai import AsyncStream
    from openai.types.responses import Response, ResponseStreamEvent

    stream_cls = AsyncStream[ResponseStreamEvent]
    return await post_stream(client, "/responses", body, cast_to=Response, stream_cls=stream_cls)


async def post_messages(client: anthropic.AsyncAnthropic, body: dict[str, Any]) -> Any:
    """Stream ``POST /v1/messages`` (events: ``RawMessageStreamEvent``)."""
    from anthropic import AsyncStream
    from anthropic.types import Message, RawMessageStreamEvent

    stream_cls = AsyncStream[RawMessageStreamEvent]
    return await post_stream(client, "/v1/messages", body, cast_to=Message, stream_cls=stream_cls)
