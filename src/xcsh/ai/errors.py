"""Classify provider failures: readable messages, retry hints, context overflow."""

from __future__ import annotations

import re
from typing import Any

_OVERFLOW_PATTERNS = [
    r"prompt is too long",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"requested tokens?.*exceed.*context (window|length|size)",
    r"context (window|length|size).*(exceeded|overflow|too small)",
    r"(prompt|input).*(too long|too large).*(context|n_ctx)",
    r"requested tokens?.*(exceeds?|greater than).*(n_ctx|context)",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"request_too_large",
    r"request exceeds the maximum size",
    r"payload too large",
    r"entity too large",
    r"\b413\b.*(request|payload|entity).*too large",
    r"model_context_window_exceeded",
]
_OVERFLOW_RE = re.compile("|".join(f"(?:{p})" for p in _OVERFLOW_PATTERNS), re.IGNORECASE)
_NO_BODY_RE = re.compile(r"^(?:status code )?(?:400|413) \(no body\)", re.IGNORECASE)

_RETRYABLE_RE = re.compile(
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|"
    r"service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|"
    r"connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|"
    r"socket hang up|timed? out|timeout|terminated|retry delay|stream stall|before message_start|"
    r"usage.?limit|usage_limit_reached|usage_not_included|limit_reached|quota.?exceeded|resource.?exhausted",
    re.IGNORECASE,
)


def is_context_overflow(error_message: str) -> bool:
    """True when a provider error text says the request exceeded the context window."""
    return bool(_OVERFLOW_RE.search(error_message) or _NO_BODY_RE.match(error_message.strip()))


def is_retryable(error_message: str) -> bool:
    """True for transient failures worth retrying (never for context overflow)."""
    if not error_message or is_context_overflow(error_message):
        return False
    return bool(_RETRYABLE_RE.search(error_message))


_HINT_RES = [
    (re.compile(r"retry-after-ms:\s*(\d+(?:\.\d+)?)", re.I), 1.0),
    (re.compile(r"x-ratelimit-reset-ms:\s*(\d+(?:\.\d+)?)", re.I), 1.0),
    (re.compile(r"retry-after:\s*(\d+(?:\.\d+)?)\b(?!\s*ms)", re.I), 1000.0),
    (re.compile(r"x-ratelimit-reset:\s*(\d+(?:\.\d+)?)", re.I), 1000.0),
]


def retry_hint_ms(error_message: str, *, now_s: float | None = None) -> int | None:
    """The delay a provider asked for, in ms, read from hint text in the error message.

    Absolute epoch values (``x-ratelimit-reset``) become the remaining duration.
    """
    import time

    now = time.time() if now_s is None else now_s
    for pattern, scale in _HINT_RES:
        match = pattern.search(error_message)
        if match:
            value = float(match.group(1))
            if scale == 1000.0 and value > 1_000_000_000:  # absolute epoch seconds
                value = max(0.0, value - now)
            elif scale == 1.0 and value > 1_000_000_000_000:  # absolute epoch ms
                value = max(0.0, value - now * 1000) / 1000
                scale = 1000.0
            return int(value * scale)
    return None


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    return str(value) if value is not None else None


def describe_error(exc: BaseException) -> str:
    """A one-line, human-readable description of a provider/transport failure.

    HTTP errors read ``<status> <vendor message>``; rate-limit hints from the response
    headers are appended as ``(retry-after: N)`` so the retry policy can honour them.
    """
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    message = _vendor_message(exc)
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    hints = []
    for name in ("retry-after-ms", "retry-after", "x-ratelimit-reset-ms"):
        value = _header(headers, name) if headers is not None else None
        if value:
            hints.append(f"{name}: {value}")
    text = message or type(exc).__name__
    import json

    if isinstance(exc, json.JSONDecodeError):
        return f"Malformed response from provider (invalid JSON in stream): {exc}"
    if is_transport_error(exc) and "connection error" not in text.lower():
        text = f"Connection error: {text}"
    if isinstance(status, int) and not text.startswith(str(status)):
        text = f"{status} {text}"
    if hints:
        text = f"{text} ({', '.join(hints)})"
    return text


def _vendor_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            msg = error.get("message")
            kind = error.get("type")
            if isinstance(msg, str) and msg:
                return f"{kind}: {msg}" if isinstance(kind, str) and kind and kind not in msg else msg
        elif isinstance(error, str):
            return error
    msg = getattr(exc, "message", None)
    if isinstance(msg, str) and msg:
        return msg
    text = str(exc)
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        cause_text = str(cause)
        if cause_text and cause_text not in text:
            text = f"{text}: {cause_text}" if text else cause_text
    return text or type(exc).__name__


def is_transport_error(exc: BaseException) -> bool:
    """True for connection-level failures (reset, refused, cut stream, read timeout)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"TransportError", "APIConnectionError", "ConnectionError", "IncompleteRead"})
