"""Agent-layer wire types and contracts: agent messages, tools, tool results, events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, Protocol, TypedDict

from xcsh.ai.abort import AbortSignal
from xcsh.ai.events import AssistantMessageEvent
from xcsh.ai.types import AssistantMessage, ImageContent, Message, TextContent, ToolResultMessage

# Any message the agent keeps in its context. Beyond the LLM roles, the coding layer
# adds custom roles (bashExecution, custom, compactionSummary …), all plain dicts
# with a "role" key; they are converted before each model call.
AgentMessage = dict[str, Any]


class AgentToolResult(TypedDict):
    """What a tool returns: content for the model, details for hosts and UIs."""

    content: list[TextContent | ImageContent]
    details: NotRequired[Any]
    isWarning: NotRequired[bool]


ToolUpdate = Callable[[AgentToolResult], None]


class ToolExecutor(Protocol):
    def __call__(
        self, tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> Awaitable[AgentToolResult]: ...


@dataclass(slots=True, kw_only=True)
class AgentTool:
    """A tool the agent can run.

    ``execute`` raises on failure (the message becomes an error result for the model).
    ``concurrency``: ``shared`` tools run in parallel with neighbouring shared calls;
    ``exclusive`` ones wait for everything before them. ``abortable`` False means the
    tool gets no abort signal and runs to completion. ``lenient`` skips schema validation.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    execute: ToolExecutor
    label: str = ""
    concurrency: Literal["shared", "exclusive"] = "shared"
    abortable: bool = True
    lenient: bool = False
    hidden: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


QueueMode = Literal["all", "one-at-a-time"]
InterruptMode = Literal["immediate", "wait"]

# ---- events: written verbatim on the wire (rpc-protocol §6), so fields keep the protocol's names


class AgentStartEvent(TypedDict):
    type: Literal["agent_start"]


class AgentEndEvent(TypedDict):
    """The run ended; ``messages`` are the messages it added to the context."""

    type: Literal["agent_end"]
    messages: list[AgentMessage]


class TurnStartEvent(TypedDict):
    type: Literal["turn_start"]


class TurnEndEvent(TypedDict):
    type: Literal["turn_end"]
    message: AgentMessage
    toolResults: list[ToolResultMessage]


class MessageStartEvent(TypedDict):
    type: Literal["message_start"]
    message: AgentMessage


class MessageUpdateEvent(TypedDict):
    """A streaming step of the assistant message; ``message`` is its snapshot so far."""

    type: Literal["message_update"]
    assistantMessageEvent: AssistantMessageEvent
    message: AgentMessage


class MessageEndEvent(TypedDict):
    """The message is final (and persisted before subscribers see this event)."""

    type: Literal["message_end"]
    message: AgentMessage


class ToolExecutionStartEvent(TypedDict):
    type: Literal["tool_execution_start"]
    toolCallId: str
    toolName: str
    args: dict[str, Any]
    intent: NotRequired[str]


class ToolExecutionUpdateEvent(TypedDict):
    type: Literal["tool_execution_update"]
    toolCallId: str
    toolName: str
    args: dict[str, Any]
    partialResult: AgentToolResult


class ToolExecutionEndEvent(TypedDict):
    type: Literal["tool_execution_end"]
    toolCallId: str
    toolName: str
    result: AgentToolResult
    isError: bool
    isWarning: NotRequired[bool]


AgentEvent = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)

__all__ = [
    "AgentEndEvent",
    "AgentEvent",
    "AgentMessage",
    "AgentStartEvent",
    "AgentTool",
    "AgentToolResult",
    "AssistantMessage",
    "InterruptMode",
    "Message",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "QueueMode",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolExecutor",
    "ToolResultMessage",
    "ToolUpdate",
    "TurnEndEvent",
    "TurnStartEvent",
]
