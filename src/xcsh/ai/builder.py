"""One accumulator shared by every provider: vendor deltas in, contract events out.

Providers translate their wire into calls on :class:`MessageBuilder`; the builder
keeps the partial assistant message, opens and closes content blocks, and pushes the
events of the streaming contract in the right order. ``finish`` and ``fail`` end the
stream, so a provider cannot emit two terminal events.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any, cast

from xcsh.ai.cost import apply_cost
from xcsh.ai.stream import AssistantMessageStream
from xcsh.ai.types import (
    AssistantContent,
    AssistantMessage,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    zero_usage,
)

if TYPE_CHECKING:
    from xcsh.ai.partial_json import PartialJsonObject

ABORTED_MESSAGE = "Request was aborted"
_BACKLOG = 8  # queued events before a provider yields to the consumer (see ``pace``)


def now_ms() -> int:
    return int(time.time() * 1000)


def empty_assistant_message(model: Model) -> AssistantMessage:
    """An assistant message with no content and zero usage for ``model``."""
    return {
        "role": "assistant",
        "content": [],
        "api": model["api"],
        "provider": model["provider"],
        "model": model["id"],
        "usage": zero_usage(),
        "stopReason": "stop",
        "timestamp": now_ms(),
    }


class MessageBuilder:
    """Accumulates one streamed assistant message and pushes contract events."""

    def __init__(self, model: Model, stream: AssistantMessageStream) -> None:
        self.model = model
        self.stream = stream
        self.message = empty_assistant_message(model)
        self._open: int | None = None  # index of the block still receiving deltas
        self._started = False
        self._t0 = time.monotonic()
        self._first_token: float | None = None
        # the open tool call's arguments, parsed incrementally as fragments arrive
        self._arguments: PartialJsonObject | None = None

    # ---- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        """Emit ``start`` once the response stream is established."""
        if not self._started:
            self._started = True
            self.stream.push({"type": "start", "partial": self.snapshot()})

    @property
    def started(self) -> bool:
        """Whether ``start`` has been emitted (the provider has its answer's stream)."""
        return self._started

    def taken(self) -> bool:
        """Whether the consumer has taken every event pushed so far."""
        return self.stream.backlog == 0

    async def pace(self) -> None:
        """Let the consumer catch up when events pile up; providers await this once per chunk.

        A stream hands over a whole network read of chunks without suspending, and each event
        holds its own snapshot of the growing message, so a slow consumer (a host reading
        stdout slowly) would otherwise make the queue, and memory, grow with the answer.
        """
        if self.stream.backlog > _BACKLOG:
            await asyncio.sleep(0)

    def _mark_token(self) -> None:
        if self._first_token is None:
            self._first_token = time.monotonic()

    def _content(self) -> list[AssistantContent]:
        return self.message["content"]

    def snapshot(self) -> AssistantMessage:
        """The partial message as of now, for an event.

        Consumers may read events after the provider has moved on, so each event gets
        its own view. Only the last block and the usage can still change, so copying
        those (and the containers) is enough.
        """
        message = dict(self.message)
        content = list(self.message["content"])
        if content:
            content[-1] = cast(AssistantContent, dict(content[-1]))
        message["content"] = content
        usage = dict(self.message["usage"])
        usage["cost"] = dict(self.message["usage"]["cost"])
        message["usage"] = usage
        return cast(AssistantMessage, message)

    def end_block(self) -> None:
        """Close the open block (emits its ``*_end`` event)."""
        if self._open is None:
            return
        index, self._open = self._open, None
        block = self._content()[index]
        if block["type"] == "text":
            self.stream.push(
                {
                    "type": "text_end",
                    "contentIndex": index,
                    "content": block["text"],
                    "partial": self.snapshot(),
                }
            )
        elif block["type"] == "thinking":
            self.stream.push(
                {
                    "type": "thinking_end",
                    "contentIndex": index,
                    "content": block["thinking"],
                    "partial": self.snapshot(),
                }
            )
        elif block["type"] == "toolCall":
            raw = block.pop("partialJson", "")
            block["arguments"] = _parse_arguments(raw)
            self.stream.push(
                {"type": "toolcall_end", "contentIndex": index, "toolCall": block, "partial": self.snapshot()}
            )

    def _open_block(self, block: AssistantContent) -> int:
        self.end_block()
        self._content().append(block)
        self._open = len(self._content()) - 1
        return self._open

    def _current(self, kind: str) -> AssistantContent | None:
        if self._open is None:
            return None
        block = self._content()[self._open]
        return block if block["type"] == kind else None

    # ---- text and thinking ------------------------------------------------------------
    def text(self, delta: str, *, new_block: bool = False) -> None:
        if not delta and not new_block:
            return
        self.start()
        self._mark_token()
        block = None if new_block else self._current("text")
        if block is None:
            index = self._open_block({"type": "text", "text": ""})
            self.stream.push({"type": "text_start", "contentIndex": index, "partial": self.snapshot()})
            block = self._content()[index]
        text_block = cast(TextContent, block)
        if delta:
            text_block["text"] += delta
            self.stream.push(
                {
                    "type": "text_delta",
                    "contentIndex": self._open or 0,
                    "delta": delta,
                    "partial": self.snapshot(),
                }
            )

    def thinking(self, delta: str, *, new_block: bool = False) -> None:
        if not delta and not new_block:
            return
        self.start()
        self._mark_token()
        block = None if new_block else self._current("thinking")
        if block is None:
            index = self._open_block({"type": "thinking", "thinking": ""})
            self.stream.push({"type": "thinking_start", "contentIndex": index, "partial": self.snapshot()})
            block = self._content()[index]
        thinking_block = cast(ThinkingContent, block)
        if delta:
            thinking_block["thinking"] += delta
            self.stream.push(
                {
                    "type": "thinking_delta",
                    "contentIndex": self._open or 0,
                    "delta": delta,
                    "partial": self.snapshot(),
                }
            )

    def set_signature(self, signature: str) -> None:
        """Attach a provider signature to the open (or last) text/thinking block."""
        target = self._open if self._open is not None else len(self._content()) - 1
        if target < 0:
            return
        block = self._content()[target]
        if block["type"] == "thinking":
            block["thinkingSignature"] = block.get("thinkingSignature", "") + signature
        elif block["type"] == "text":
            block["textSignature"] = signature

    def redacted_thinking(self, data: str) -> None:
        self.start()
        self.end_block()
        self._content().append({"type": "redactedThinking", "data": data})

    # ---- tool calls -------------------------------------------------------------------
    def begin_tool_call(self, call_id: str, name: str, *, thought_signature: str | None = None) -> None:
        """Open a tool-call block; an id another call of this message already has is made unique
        (:func:`unique_call_id`), so every event, result and later request names one call."""
        self.start()
        self._mark_token()
        content = self._content()
        if any(block["type"] == "toolCall" and block["id"] == call_id for block in content):
            call_id = unique_call_id(
                call_id, {block["id"] for block in content if block["type"] == "toolCall"}
            )
        block: ToolCall = {
            "type": "toolCall",
            "id": call_id,
            "name": name,
            "arguments": {},
            "partialJson": "",
        }
        if thought_signature:
            block["thoughtSignature"] = thought_signature
        index = self._open_block(block)
        self._arguments = _new_arguments()
        self.stream.push({"type": "toolcall_start", "contentIndex": index, "partial": self.snapshot()})

    def tool_arguments(self, delta: str) -> None:
        block = self._current("toolCall")
        if block is None or not delta:
            return
        call = cast(ToolCall, block)
        call["partialJson"] = call.get("partialJson", "") + delta
        if self._arguments is None:
            self._arguments = _new_arguments()
            self._arguments.feed(call["partialJson"][: -len(delta)])
        call["arguments"] = self._arguments.feed(delta)
        self.stream.push(
            {
                "type": "toolcall_delta",
                "contentIndex": self._open or 0,
                "delta": delta,
                "partial": self.snapshot(),
            }
        )

    def sign_tool_calls(self, signatures: dict[str, str]) -> None:
        """Set the ``thoughtSignature`` of each tool call whose id ``signatures`` maps (a signature
        some wires send apart from the call, after it or before it)."""
        for block in self._content():
            if block["type"] == "toolCall" and block["id"] in signatures:
                block["thoughtSignature"] = signatures[block["id"]]

    def has_open_tool_call(self) -> bool:
        return self._current("toolCall") is not None

    def has_tool_calls(self) -> bool:
        return any(block["type"] == "toolCall" for block in self._content())

    # ---- metadata ---------------------------------------------------------------------
    def set_usage(
        self,
        *,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        total: int | None = None,
    ) -> None:
        usage = self.message["usage"]
        if input_tokens is not None:
            usage["input"] = input_tokens
        if output_tokens is not None:
            usage["output"] = output_tokens
        if cache_read is not None:
            usage["cacheRead"] = cache_read
        if cache_write is not None:
            usage["cacheWrite"] = cache_write
        usage["totalTokens"] = (
            total
            if total is not None
            else usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
        )

    @property
    def usage(self) -> Usage:
        return self.message["usage"]

    def set_response_id(self, response_id: str | None) -> None:
        if response_id:
            self.message["responseId"] = response_id

    # ---- terminal ---------------------------------------------------------------------
    def _stamp(self) -> None:
        self.message["duration"] = int((time.monotonic() - self._t0) * 1000)
        if self._first_token is not None:
            self.message["ttft"] = int((self._first_token - self._t0) * 1000)

    def finish(self, stop_reason: StopReason | None = None) -> AssistantMessage:
        """End the stream successfully; the stop reason defaults to toolUse/stop by content."""
        self.start()
        self.end_block()
        if stop_reason is None or (stop_reason == "stop" and self.has_tool_calls()):
            stop_reason = "toolUse" if self.has_tool_calls() else "stop"
        if stop_reason in ("error", "aborted"):
            return self.fail(
                self.message.get("errorMessage") or "Provider error", aborted=stop_reason == "aborted"
            )
        self.message["stopReason"] = stop_reason
        apply_cost(self.model, self.message["usage"])
        self._stamp()
        reason = cast(Any, stop_reason)
        self.stream.push({"type": "done", "reason": reason, "message": self.message})
        self.stream.end(self.message)
        return self.message

    def fail(self, error_message: str, *, aborted: bool = False) -> AssistantMessage:
        """End the stream with ``error`` (or ``aborted``); open blocks are left unclosed."""
        self._open = None
        for block in self._content():
            if block["type"] == "toolCall" and "partialJson" in block:
                raw = block.pop("partialJson", "")
                block["arguments"] = _parse_arguments(raw) if raw else block.get("arguments", {})
        self.message["stopReason"] = "aborted" if aborted else "error"
        self.message["errorMessage"] = (
            ABORTED_MESSAGE if aborted else (error_message or "Unknown provider error")
        )
        try:
            apply_cost(self.model, self.message["usage"])
        except (TypeError, ValueError, OverflowError):
            # a usage no provider should have set (see xcsh.ai.wire_shape.count): ending the
            # stream matters more than its cost; a stream left open would hang its consumer
            self.message["usage"] = zero_usage()
        self._stamp()
        self.stream.push(
            {"type": "error", "reason": "aborted" if aborted else "error", "error": self.message}
        )
        self.stream.end(self.message)
        return self.message


def unique_call_id(call_id: str, taken: set[str]) -> str:
    """``call_id`` with the first suffix ``_2``, ``_3`` … that no id in ``taken`` has.

    Two calls of one answer with the same id both run (the model asked for two), so the later
    one is renamed (docs/decisions.md, "Duplicate tool-call ids"). An OpenAI Responses id
    ``call|item`` gets the suffix on both parts, which that wire sends back separately.
    """
    head, bar, tail = call_id.partition("|")
    base = head or "call"
    for n in range(2, len(taken) + 3):
        candidate = f"{base}_{n}{bar}{tail}_{n}" if bar else f"{base}_{n}"
        if candidate not in taken:
            return candidate
    raise AssertionError("unreachable: more candidates than taken ids")


def _new_arguments() -> PartialJsonObject:
    """An incremental parser for one tool call's arguments.

    The partial-JSON module (with ``jiter``, a compiled extension) loads with the first tool
    call rather than with the builder: an answer of plain text never needs it, and the first
    request of a process goes out only after the builder is imported (docs/performance.md,
    "Fifth session: immediate prompt"). The RPC mode's idle warm-up imports it beforehand.
    """
    from xcsh.ai.partial_json import PartialJsonObject

    return PartialJsonObject()


def _parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        from xcsh.ai.partial_json import parse_partial_json

        return parse_partial_json(raw)
    except RecursionError:
        return {}  # nested deeper than the parser follows: arguments no tool can take
    return value if isinstance(value, dict) else {}
