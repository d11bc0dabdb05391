"""Assistant-message stream events (the provider streaming contract).

Order is fixed: ``start``; paired ``*_start``/``*_delta``/``*_end`` per content block;
then exactly one ``done`` or ``error``. Every event carries ``partial``, the whole
assistant message so far.
"""

# No ``from __future__ import annotations`` here: a TypedDict turns each string annotation into a
# compiled ForwardRef, which made this module's classes ~2× as slow to create at start-up
# (docs/performance.md, "Fifth session: start-up").

from typing import Literal, TypedDict

from xcsh.ai.types import AssistantMessage, ToolCall


class StartEvent(TypedDict):
    type: Literal["start"]
    partial: AssistantMessage


class BlockStartEvent(TypedDict):
    type: Literal["text_start", "thinking_start", "toolcall_start"]
    contentIndex: int
    partial: AssistantMessage


class BlockDeltaEvent(TypedDict):
    type: Literal["text_delta", "thinking_delta", "toolcall_delta"]
    contentIndex: int
    delta: str
    partial: AssistantMessage


class TextEndEvent(TypedDict):
    type: Literal["text_end", "thinking_end"]
    contentIndex: int
    content: str
    partial: AssistantMessage


class ToolCallEndEvent(TypedDict):
    type: Literal["toolcall_end"]
    contentIndex: int
    toolCall: ToolCall
    partial: AssistantMessage


class DoneEvent(TypedDict):
    type: Literal["done"]
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


class ErrorEvent(TypedDict):
    type: Literal["error"]
    reason: Literal["aborted", "error"]
    error: AssistantMessage


AssistantMessageEvent = (
    StartEvent | BlockStartEvent | BlockDeltaEvent | TextEndEvent | ToolCallEndEvent | DoneEvent | ErrorEvent
)
