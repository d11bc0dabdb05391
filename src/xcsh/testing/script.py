"""Script steps for the fake LLM server: what to answer to each incoming request.

Steps are vendor-neutral; each wire module renders them in its vendor's real
streaming format. One request consumes one step, in order.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any


class Gate:
    """A release switch for a held stream: the test calls ``release()`` when ready."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def release(self) -> None:
        self._event.set()

    @property
    def released(self) -> bool:
        return self._event.is_set()


@dataclass(slots=True)
class ToolCallSpec:
    id: str
    name: str
    arguments: str  # raw JSON text, streamed in fragments
    fragment_size: int = 0  # characters per streamed fragment; 0: two halves

    def fragments(self) -> list[str]:
        """The argument text as streamed: two halves, or pieces of ``fragment_size``."""
        raw = self.arguments
        if self.fragment_size > 0:
            return [raw[i : i + self.fragment_size] for i in range(0, len(raw), self.fragment_size)]
        if len(raw) < 2:
            return [raw] if raw else []
        half = len(raw) // 2
        return [raw[:half], raw[half:]]


@dataclass(slots=True, kw_only=True)
class Reply:
    """A streamed model answer: optional thinking, text and tool calls, then a stop reason.

    ``stop`` is vendor-neutral: ``stop`` | ``length`` | ``toolUse`` (default from content),
    or any other string, which is sent raw as the vendor's finish reason.
    Pacing: ``delay_ms`` pauses after the first content delta; ``gate`` holds the stream
    there until released (or the client disconnects); ``cut`` closes the connection there
    without finishing the response.
    """

    thinking: list[str] = field(default_factory=list)
    thinking_signature: str = "sig-fake-thinking"
    text: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    prompt_tokens: int = 1
    completion_tokens: int = 1
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    stop: str | None = None
    delay_ms: int = 0
    gate: Gate | None = None
    hold_forever: bool = False
    cut: bool = False

    @property
    def stop_reason(self) -> str:
        if self.stop:
            return self.stop
        return "toolUse" if self.tool_calls else "stop"


@dataclass(slots=True, kw_only=True)
class HttpError:
    """An HTTP error response with a vendor-style JSON error body (or exactly ``raw_body``)."""

    status: int
    message: str
    retry_after: float | None = None
    error_type: str | None = None
    raw_body: bytes | None = None


@dataclass(slots=True, kw_only=True)
class Garbage:
    """A 200 streaming response whose SSE data is not valid JSON (or not UTF-8, or nothing);
    ``cut``: the connection is dropped after ``payload``, without the body's final chunk."""

    payload: bytes = b"data: {this is not json\n\n"
    cut: bool = False


Step = Reply | HttpError | Garbage


def _chunks(s: str, parts: int = 2) -> list[str]:
    if len(s) < 2:
        return [s]
    size = max(1, -(-len(s) // parts))
    return [s[i : i + size] for i in range(0, len(s), size)]


def text(
    s: str,
    *,
    chunks: list[str] | None = None,
    usage: tuple[int, int] = (1, 1),
    delay_ms: int = 0,
    stop: str | None = None,
) -> Reply:
    """Stream ``s`` as two or more text deltas (or exactly ``chunks``)."""
    return Reply(
        text=chunks or _chunks(s),
        prompt_tokens=usage[0],
        completion_tokens=usage[1],
        delay_ms=delay_ms,
        stop=stop,
    )


def thinking(t: str, answer: str = "", *, usage: tuple[int, int] = (1, 1)) -> Reply:
    """Stream thinking ``t`` then text ``answer``."""
    return Reply(
        thinking=_chunks(t),
        text=_chunks(answer) if answer else [],
        prompt_tokens=usage[0],
        completion_tokens=usage[1],
    )


def tool_calls(
    *calls: tuple[str, str, dict[str, Any] | str], usage: tuple[int, int] = (1, 1), text_before: str = ""
) -> Reply:
    """Stream tool calls ``(id, name, arguments)``; arguments are split into 2+ fragments."""
    specs = [ToolCallSpec(i, n, a if isinstance(a, str) else json.dumps(a)) for i, n, a in calls]
    return Reply(
        tool_calls=specs,
        text=_chunks(text_before) if text_before else [],
        prompt_tokens=usage[0],
        completion_tokens=usage[1],
    )


def hold(s: str, gate: Gate | None = None) -> Reply:
    """Stream ``s`` as one delta, then keep the connection open until released or disconnected."""
    if gate is None:
        return Reply(text=[s], hold_forever=True)
    return Reply(text=[s], gate=gate)


def cut(s: str) -> Reply:
    """Stream ``s`` as one delta, then drop the connection mid-response."""
    return Reply(text=[s, "never sent"], cut=True)


def http_error(
    status: int,
    message: str = "error",
    *,
    retry_after: float | None = None,
    error_type: str | None = None,
    raw_body: bytes | None = None,
) -> HttpError:
    """An HTTP error; ``raw_body`` replaces the vendor's JSON body byte for byte (``b""``: empty)."""
    return HttpError(
        status=status, message=message, retry_after=retry_after, error_type=error_type, raw_body=raw_body
    )


def garbage(payload: bytes = b"data: {this is not json\n\n", *, cut: bool = False) -> Garbage:
    """A 200 stream carrying ``payload`` (``b""``: a stream that ends without any data);
    ``cut``: the connection drops after it instead of the body ending."""
    return Garbage(payload=payload, cut=cut)
