"""Warming a provider before its first call: import its module and SDK in a background thread.

Provider SDKs are imported lazily so that start-up stays fast, but then the first prompt pays
for the import (a second or more on a small machine) while the user watches. Once the process
is ready, :func:`warm_in_background` imports what the current model's api needs in a daemon
thread. While it runs, the interpreter's thread switch interval is shortened so the event loop
keeps answering commands promptly; it is restored when the thread ends. Warming is best effort:
a failure is logged at debug level and the first call simply imports as before.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
import threading
from collections.abc import Callable

from xcsh.ai.clients import is_loopback_url, shared_ssl_context

logger = logging.getLogger(__name__)

_SWITCH_INTERVAL_WHILE_WARMING = 0.0005  # seconds; the default is 0.005
_lock = threading.Lock()
_warmed: set[str] = set()
_running = 0
_saved_interval: float | None = None


_OPENAI_CHUNK = {
    "id": "w",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "w",
    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "w"}, "finish_reason": None}],
}
_USAGE = {"input_tokens": 1, "output_tokens": 1}
_ANTHROPIC_EVENTS = [
    {
        "type": "message_start",
        "message": {
            "id": "w",
            "type": "message",
            "role": "assistant",
            "model": "w",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _USAGE,
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "w"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": _USAGE},
    {"type": "message_stop"},
]


def _warm_openai(trust_env: bool) -> None:
    import openai
    from openai import AsyncStream  # noqa: F401
    from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: F401

    # a throwaway client pulls in the HTTP stack (transports, TLS) as a real one does
    verify = shared_ssl_context(trust_env=trust_env)
    http_client = openai.DefaultAsyncHttpxClient(trust_env=trust_env, verify=verify)
    client = openai.AsyncOpenAI(api_key="warm", http_client=http_client)
    # first uses build lazily what every request and stream event needs (~5 ms): do them now
    _warm_http()
    from openai._models import FinalRequestOptions, construct_type

    client._build_request(
        FinalRequestOptions.construct(method="post", url="/chat/completions", content=b"{}")
    )
    construct_type(type_=ChatCompletionChunk, value=_OPENAI_CHUNK)


def _warm_openai_responses(trust_env: bool) -> None:
    _warm_openai(trust_env)
    from openai.types.responses import Response, ResponseStreamEvent  # noqa: F401


def _warm_anthropic(trust_env: bool) -> None:
    import anthropic
    from anthropic.types import Message, RawMessageStreamEvent  # noqa: F401

    verify = shared_ssl_context(trust_env=trust_env)
    http_client = anthropic.DefaultAsyncHttpxClient(trust_env=trust_env, verify=verify)
    client = anthropic.AsyncAnthropic(api_key="warm", http_client=http_client)
    # first uses build lazily what every request and stream event needs (~10 ms): do them now
    _warm_http()
    from anthropic._models import FinalRequestOptions, construct_type

    client._build_request(FinalRequestOptions.construct(method="post", url="/v1/messages", content=b"{}"))
    for event in _ANTHROPIC_EVENTS:
        construct_type(type_=RawMessageStreamEvent, value=event)


# api → (provider module, what else its first call needs)
_WARMERS: dict[str, tuple[str, Callable[[bool], None] | None]] = {
    "openai-completions": ("xcsh.ai.providers.openai_completions", _warm_openai),
    "openai-responses": ("xcsh.ai.providers.openai_responses", _warm_openai_responses),
    "anthropic-messages": ("xcsh.ai.providers.anthropic_messages", _warm_anthropic),
    "google-generative-ai": ("xcsh.ai.providers.google", None),
}


def warm(api: str, base_url: str = "") -> bool:
    """Import what a first call with ``api`` to ``base_url`` needs, in this thread; False if unknown.

    Also builds the shared TLS context the real client will use (see ``shared_ssl_context``).
    """
    entry = _WARMERS.get(api)
    if entry is None:
        return False
    module, extra = entry
    importlib.import_module(module)
    importlib.import_module("xcsh.ai.registry")  # the agent's first call goes through it
    if extra is not None:
        extra(not is_loopback_url(base_url))
    return True


def _warm_http() -> None:
    """The async network backend the SDKs' transport imports at its first connection."""
    importlib.import_module("anyio._backends._asyncio")


def warm_in_background(api: str, base_url: str = "") -> threading.Thread | None:
    """Start warming ``api`` in a daemon thread (once per api per process); the thread, or None."""
    with _lock:
        if api in _warmed or api not in _WARMERS:
            return None
        _warmed.add(api)
    _start_default_executor()
    thread = threading.Thread(target=_run, args=(api, base_url), name=f"warm-{api}", daemon=True)
    _enter()
    try:
        thread.start()
    except RuntimeError:
        _leave()
        return None
    return thread


def _start_default_executor() -> None:
    """The first connection resolves its host in the event loop's default executor: start it now."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    loop.run_in_executor(None, int)


def _run(api: str, base_url: str) -> None:
    try:
        warm(api, base_url)
    except Exception:  # best effort: the first call will import (and report) as before
        logger.debug("warming %s failed", api, exc_info=True)
    finally:
        _leave()


def _enter() -> None:
    global _running, _saved_interval
    with _lock:
        if _running == 0:
            _saved_interval = sys.getswitchinterval()
            sys.setswitchinterval(_SWITCH_INTERVAL_WHILE_WARMING)
        _running += 1


def _leave() -> None:
    global _running, _saved_interval
    with _lock:
        _running -= 1
        if _running == 0 and _saved_interval is not None:
            sys.setswitchinterval(_saved_interval)
            _saved_interval = None
