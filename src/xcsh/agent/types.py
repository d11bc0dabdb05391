"""Agent-layer wire types: agent messages, tool results, events.

The tool contract itself (:class:`~xcsh.agent.tool.AgentTool`) is in ``xcsh.agent.tool``: the start-up
path builds tools but needs none of these types at run time (docs/performance.md, "Sixth session:
start-up").
"""

# No ``from __future__ import annotations`` here: a TypedDict turns each string annotation into a
# compiled ForwardRef, which made this module's classes ~2× as slow to create at start-up
# (docs/performance.md, "Fifth session: start-up").

from collections.abc import Callable
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from msgspec import Meta

from xcsh.ai.events import AssistantMessageEvent
from xcsh.ai.types import (
    AssistantMessage,
    DeveloperMessage,
    ImageContent,
    Message,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

# ---- messages of the live context (agent-behaviour §1.2)
# Beyond the LLM roles (xcsh.ai.types), the coding layer keeps messages of its own roles in
# the context; they are converted to LLM messages before each model call. They are wire
# shapes (get_messages, message_* events, session files), so they are declared here, beside
# the LLM ones, and every layer above narrows on "role".


class OutputMeta(TypedDict):
    """`meta` of an execution message: how its output was truncated (agent-behaviour §10.2)."""

    truncation: NotRequired[dict[str, Any]]


class BashExecutionMessage(TypedDict):
    """A user `bash` run recorded in the context (RPC `bash`)."""

    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: NotRequired[int]
    cancelled: bool
    truncated: bool
    meta: NotRequired[OutputMeta]
    timestamp: int
    excludeFromContext: NotRequired[bool]


class PythonExecutionMessage(TypedDict):
    """A user Python run, as the reference records it (read from session files)."""

    role: Literal["pythonExecution"]
    code: str
    output: str
    exitCode: NotRequired[int]
    cancelled: bool
    truncated: bool
    meta: NotRequired[OutputMeta]
    timestamp: int
    excludeFromContext: NotRequired[bool]


class CustomMessage(TypedDict):
    """A message of an extension or feature (`hookMessage` is its legacy name)."""

    role: Literal["custom", "hookMessage"]
    customType: str
    content: str | list[UserContent]
    display: bool
    details: NotRequired[Any]
    attribution: NotRequired[Literal["user", "agent"]]
    timestamp: int


class BranchSummaryMessage(TypedDict):
    """The summary of a branch the conversation came back from (from a `branch_summary` entry)."""

    role: Literal["branchSummary"]
    summary: str
    fromId: str
    timestamp: int


class CompactionSummaryMessage(TypedDict):
    """The summary that replaces compacted history (from a `compaction` entry)."""

    role: Literal["compactionSummary"]
    summary: str
    shortSummary: NotRequired[str]
    tokensBefore: float
    providerPayload: NotRequired[dict[str, Any]]
    timestamp: int


class MentionedFile(TypedDict):
    """A file of a `fileMention` message."""

    path: str
    content: str
    lineCount: NotRequired[int]
    byteSize: NotRequired[int]
    skippedReason: NotRequired[Literal["tooLarge"]]
    image: NotRequired[ImageContent]


class FileMentionMessage(TypedDict):
    """The files a prompt mentioned with `@path`."""

    role: Literal["fileMention"]
    files: list[MentionedFile]
    timestamp: int


CodingMessage = (
    BashExecutionMessage
    | PythonExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
    | FileMentionMessage
)
# Any message the agent keeps in its context: narrow on "role".
AgentMessage = UserMessage | DeveloperMessage | AssistantMessage | ToolResultMessage | CodingMessage


class AgentToolResult(TypedDict):
    """What a tool returned: content for the model, `details` for hosts and UIs."""

    content: list[TextContent | ImageContent]
    details: NotRequired[Any]
    isWarning: NotRequired[bool]


ToolUpdate = Callable[[AgentToolResult], None]


QueueMode = Literal["all", "one-at-a-time"]
InterruptMode = Literal["immediate", "wait"]

# ---- events: written verbatim on the wire (rpc-protocol §6), so fields keep the protocol's names.
# They are also the protocol's schema (xcsh.rpc.frames imports them): docstrings and Meta
# descriptions are what docs/protocol.md shows.


class AgentStartEvent(TypedDict):
    """A run begins (also each automatic continuation)."""

    type: Literal["agent_start"]


class AgentEndEvent(TypedDict):
    """A run ended; the agent may still continue by itself (see `get_state.isStreaming`)."""

    type: Literal["agent_end"]
    messages: Annotated[list[AgentMessage], Meta(description="The messages this run added.")]


class TurnStartEvent(TypedDict):
    """A turn (one model call and its tool calls) begins."""

    type: Literal["turn_start"]


class TurnEndEvent(TypedDict):
    """A turn ended."""

    type: Literal["turn_end"]
    message: Annotated[AgentMessage, Meta(description="The turn's assistant message.")]
    toolResults: Annotated[list[ToolResultMessage], Meta(description="In completion order.")]


class MessageStartEvent(TypedDict):
    """A message begins (an assistant message starts empty and streams)."""

    type: Literal["message_start"]
    message: AgentMessage


class MessageUpdateEvent(TypedDict):
    """A streaming step of the assistant message; ``message`` is its snapshot so far.

    The wire form (xcsh.rpc.frames) may slim delta updates, so it is declared there.
    """

    type: Literal["message_update"]
    assistantMessageEvent: AssistantMessageEvent
    message: AssistantMessage


class MessageEndEvent(TypedDict):
    """A message is final (and persisted)."""

    type: Literal["message_end"]
    message: AgentMessage


class ToolExecutionStartEvent(TypedDict):
    """A tool call starts executing."""

    type: Literal["tool_execution_start"]
    toolCallId: str
    toolName: str
    args: Annotated[dict[str, Any], Meta(description="Validated arguments, without the intent field.")]
    intent: NotRequired[Annotated[str, Meta(description="The model's stated intent for the call.")]]


class ToolExecutionUpdateEvent(TypedDict):
    """Progress of a running tool."""

    type: Literal["tool_execution_update"]
    toolCallId: str
    toolName: str
    args: dict[str, Any]
    partialResult: AgentToolResult


class ToolExecutionEndEvent(TypedDict):
    """A tool call finished."""

    type: Literal["tool_execution_end"]
    toolCallId: str
    toolName: str
    result: AgentToolResult
    isError: bool
    isWarning: NotRequired[Annotated[bool, Meta(description="Absent on synthetic abort/error results.")]]


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
    "AgentToolResult",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CodingMessage",
    "CompactionSummaryMessage",
    "CustomMessage",
    "DeveloperMessage",
    "FileMentionMessage",
    "InterruptMode",
    "MentionedFile",
    "Message",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "OutputMeta",
    "PythonExecutionMessage",
    "QueueMode",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolResultMessage",
    "ToolUpdate",
    "TurnEndEvent",
    "TurnStartEvent",
    "UserMessage",
]
