"""Classify provider failures: readable messages, retry hints, context overflow."""

from __future__ import annotations

import re
from typing import Any

from xcsh.ai.url_secrets import url_secrets

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
# spec §7.5's "400 (no body)" / "413 (no body)"; provider_fault words it "<provider> answered
# HTTP 400 (Bad Request) with an empty body" (the reason phrase is Python's: 413 reads "Request
# Entity Too Large" up to 3.12, "Content Too Large" from 3.13)
_NO_BODY_RE = re.compile(
    r"^(?:status code )?(?:400|413) \(no body\)|\banswered HTTP (?:400|413) \([^)]*\) with an empty body$",
    re.IGNORECASE,
)

_RETRYABLE_RE = re.compile(
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|"
    r"service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|"
    r"connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|"
    r"socket hang up|timed? out|timeout|terminated|retry delay|stream stall|before message_start|"
    r"usage.?limit|usage_limit_reached|usage_not_included|limit_reached|quota.?exceeded|resource.?exhausted",
    re.IGNORECASE,
)


# Failures the vendors' SDKs would retry on their own (HTTP 408/409/429/5xx, connection
# errors, timeouts): errorMessage starts with the status (describe_error's form) or names it.
_TRANSPORT_RE = re.compile(
    r"^(?:(?:408|409|429|5\d\d)\b|connection error\b)|\bHTTP (?:408|409|429|5\d\d)\b", re.IGNORECASE
)


def is_transport_failure(error_message: str) -> bool:
    """True for a retryable failure of the kind provider SDKs retry silently (status or connection)."""
    return is_retryable(error_message) and bool(_TRANSPORT_RE.search(error_message.strip()))


def is_context_overflow(error_message: str) -> bool:
    """True when a provider error text says the request exceeded the context window."""
    return bool(_OVERFLOW_RE.search(error_message) or _NO_BODY_RE.search(error_message.strip()))


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


_HTTP_DATE_RE = re.compile(
    r"retry-after:\s*([A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT)", re.I
)


def retry_hint_ms(error_message: str, *, now_s: float | None = None) -> int | None:
    """The delay a provider asked for, in ms, read from hint text in the error message.

    Absolute values (an epoch ``x-ratelimit-reset`` in seconds or ms, a ``retry-after``
    HTTP date) become the remaining duration.
    """
    import time

    now = time.time() if now_s is None else now_s
    for pattern, scale in _HINT_RES:
        match = pattern.search(error_message)
        if match:
            value = float(match.group(1))
            if value > 1_000_000_000_000:  # absolute epoch ms
                return int(max(0.0, value - now * 1000))
            if scale == 1000.0 and value > 1_000_000_000:  # absolute epoch seconds
                value = max(0.0, value - now)
            return int(value * scale)
    dated = _HTTP_DATE_RE.search(error_message)
    if dated:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(dated.group(1)).timestamp()
        except (TypeError, ValueError):
            return None
        return int(max(0.0, when - now) * 1000)
    return None


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    return str(value) if value is not None else None


def describe_error(
    exc: BaseException, provider: str = "the provider", *, received: bool = True, wire: str | None = None
) -> str:
    """A one-line, human-readable description of a provider/transport failure.

    HTTP errors read ``<status> <vendor message>``; rate-limit hints from the response
    headers are appended as ``(retry-after: N)`` so the retry policy can honour them.
    Faults of the provider itself — a body that is not UTF-8, an empty body, a stream
    that ends early or a connection closed mid-answer — become one plain sentence
    naming ``provider`` (see :func:`provider_fault`); ``received`` says whether any
    content had arrived. A stream whose JSON is invalid or has the wrong shape
    (:class:`~xcsh.ai.wire_shape.MalformedStreamError`) reads ``Malformed response from
    <provider> (<wire> stream): <what was wrong>``.
    """
    malformed = _malformed(exc)
    if malformed is not None:
        where = f"{wire} stream" if wire else "stream"
        return f"Malformed response from {provider} ({where}): {malformed}"
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    fault = provider_fault(exc, provider, received=received)
    message = fault or _vendor_message(exc)
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    hints = []
    for name in ("retry-after-ms", "retry-after", "x-ratelimit-reset-ms", "x-ratelimit-reset"):
        value = _header(headers, name) if headers is not None else None
        if value:
            hints.append(f"{name}: {value}")
    text = message or type(exc).__name__
    if fault is not None:
        return f"{fault} ({', '.join(hints)})" if hints else fault
    if is_transport_error(exc) and "connection error" not in text.lower():
        text = f"Connection error: {text}"
    if isinstance(status, int) and not text.startswith(str(status)):
        text = f"{status} {text}"
    if hints:
        text = f"{text} ({', '.join(hints)})"
    return text


def _malformed(exc: BaseException) -> str | None:
    """What was wrong when ``exc`` is (or was raised from) invalid or wrongly shaped stream JSON."""
    import json

    from xcsh.ai.wire_shape import MalformedStreamError

    if isinstance(exc, MalformedStreamError):
        return str(exc)
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc}"
    return None


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


_EXTRA_REASONS = {
    529: "Overloaded",
    520: "Unknown Error",
    522: "Connection Timed Out",
    524: "A Timeout Occurred",
}
_TRUNCATION_CLASSES = frozenset({"RemoteProtocolError", "ReadError", "IncompleteRead", "IncompleteReadError"})
_STREAM_ENDED_PREFIX = "Connection error: stream ended before"


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return _EXTRA_REASONS.get(status, "error")


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out and len(out) < 8:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _body_bytes(exc: BaseException) -> bytes | None:
    response = getattr(exc, "response", None)
    try:
        content = getattr(response, "content", None)
    except Exception:  # an httpx response whose body was never read raises here
        return None
    return content if isinstance(content, bytes) else None


def provider_fault(exc: BaseException, provider: str, *, received: bool) -> str | None:
    """One plain sentence for a fault of the provider's answer itself, or None for other failures.

    Covers bodies that are not UTF-8 text, empty error bodies, streams that end before the
    answer is complete and connections closed mid-answer. Sentences about cut streams start
    with ``Connection error:`` and HTTP ones keep their status code, so the retry policy
    classifies them as before.
    """
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    if isinstance(status, int):
        body = _body_bytes(exc)
        if body is None:
            return None
        reason = f"HTTP {status} ({_reason(status)})"
        if not body.strip():
            return f"{provider} answered {reason} with an empty body"
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return f"{provider} answered {reason} with a body that is not UTF-8 text"
        return None
    for link in _chain(exc):
        if isinstance(link, UnicodeDecodeError):
            where = f" (byte 0x{link.object[link.start]:02x} at position {link.start})" if link.object else ""
            return f"{provider} sent a response that is not UTF-8 text{where}"
    text = str(exc)
    if "\ufffd" in text and "Failed to parse" in text:
        return f"{provider} sent a response that is not UTF-8 text"
    if text.startswith(_STREAM_ENDED_PREFIX):
        if received:
            return f"Connection error: {provider} ended the stream before the answer was complete"
        return f"Connection error: {provider} ended the stream without sending an answer"
    names = {cls.__name__ for link in _chain(exc) for cls in type(link).__mro__}
    if names & _TRUNCATION_CLASSES:
        if received:
            return f"Connection error: {provider} closed the connection before the answer was complete"
        return f"Connection error: {provider} closed the connection without sending an answer"
    return None


_MIN_SECRET_LEN = 8


def redact_credentials(text: str, model: Any, options: Any) -> str:
    """``text`` with the call's API key, header values and the credentials in the model's
    ``baseUrl`` (its userinfo, query values: :func:`xcsh.ai.url_secrets.url_secrets`) replaced by
    ``[redacted]``.

    Providers sometimes echo a rejected key or a header in their error body, and a network
    error names the URL; the error message goes into frames and the session file. Values
    shorter than 8 characters are left alone (too likely to occur by chance).
    """
    secrets = [getattr(options, "api_key", None)]
    base_url = model.get("baseUrl") if isinstance(model, dict) else None
    if isinstance(base_url, str):
        for start, end in url_secrets(base_url):
            # the whole span, and a userinfo's user and password each (an error may name one)
            secrets.extend([base_url[start:end], *base_url[start:end].split(":")])
    for headers in (
        model.get("headers") if isinstance(model, dict) else None,
        getattr(options, "headers", None),
    ):
        if isinstance(headers, dict):
            secrets.extend(v for v in headers.values() if isinstance(v, str))
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET_LEN and secret in text:
            text = text.replace(secret, "[redacted]")
    return text
