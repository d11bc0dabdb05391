"""Warming a provider before its first call: import its module and HTTP stack in a background thread.

Providers and their HTTP stack (``httpx2``; Google's SDK) are imported lazily so that start-up
stays fast, but then the first prompt would pay for the import while the user watches. Once the
process is ready, :func:`warm_in_background` imports what the current model's api needs in a
daemon thread (and builds the TLS context if its URL is https). While it runs, the
interpreter's thread switch interval is shortened so the event loop keeps answering commands
promptly; it is restored when the thread ends. Warming is best effort: a failure is logged at
debug level and the first call simply imports as before.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
import threading
from typing import TYPE_CHECKING, Any

from xcsh.ai.options import StreamOptions

if TYPE_CHECKING:
    from xcsh.ai.transport import Vendor

logger = logging.getLogger(__name__)

_SWITCH_INTERVAL_WHILE_WARMING = 0.0005  # seconds; the default is 0.005
_lock = threading.Lock()
_warmed: set[str] = set()
_running = 0
_saved_interval: float | None = None


_SAMPLE_EVENTS = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"w"}}\n\n'
)


def _warm_transport(vendor: Vendor, url: str) -> None:
    """What the first streamed request over :mod:`xcsh.ai.transport` builds lazily."""
    from xcsh.ai import sse, transport

    model: Any = {"baseUrl": url, "headers": {}}
    # a throwaway client: the real call pools its own on its loop; this builds the TLS context
    # for an https URL and nothing of the kind for plain http
    client = transport.new_client(vendor, model, StreamOptions(api_key="warm"))
    client.build_request(
        "POST", transport.endpoint_url(transport.base_url(vendor, model), "x"), content=b"{}"
    )
    parser = sse.SseParser()
    for line in sse.LineSplitter().feed(_SAMPLE_EVENTS):
        event = parser.line(line)
        if event is not None:
            transport.decode_json(event[1])
    importlib.import_module("anyio._backends._asyncio")  # httpcore2's pool locks; https connections
    importlib.import_module("h11")


# api → (provider module, the vendor wire of xcsh.ai.transport its first call uses, if any)
_WARMERS: dict[str, tuple[str, Vendor | None]] = {
    "openai-completions": ("xcsh.ai.providers.openai_completions", "openai"),
    "openai-responses": ("xcsh.ai.providers.openai_responses", "openai"),
    "anthropic-messages": ("xcsh.ai.providers.anthropic_messages", "anthropic"),
    "google-generative-ai": ("xcsh.ai.providers.google", None),
}


def warm(api: str, base_url: str = "") -> bool:
    """Import what a first call with ``api`` to ``base_url`` needs, in this thread; False if unknown.

    For an https ``base_url`` this also builds the shared TLS context the real client will use
    (see ``shared_ssl_context``); a plain-http one never needs it.
    """
    entry = _WARMERS.get(api)
    if entry is None:
        return False
    module, vendor = entry
    importlib.import_module(module)
    importlib.import_module("xcsh.ai.registry")  # the agent's first call goes through it
    if vendor is not None:
        _warm_transport(vendor, base_url)
    return True


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
