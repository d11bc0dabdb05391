"""Lazy construction of the official SDK clients, retries always off.

Our retry policy (coding layer) is the only one: every retry must be visible on the
protocol, so the SDKs' own transport retries are disabled here.
"""

from __future__ import annotations

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


def _http_client_kwargs(sdk: Any, model: Model, options: StreamOptions) -> dict[str, Any]:
    # A local server (llama.cpp, Ollama, the embedded model, a test double) must not be reached
    # through HTTP(S)_PROXY settings meant for the internet.
    if not is_loopback_url(model.get("baseUrl") or ""):
        return {}
    return {"http_client": sdk.DefaultAsyncHttpxClient(trust_env=False, timeout=options.timeout_s)}


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
