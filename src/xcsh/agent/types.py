"""Agent-layer wire types and contracts: agent messages, tools, tool results, events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, Protocol, TypedDict

from xcsh.ai.abort import AbortSignal
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

# Events are plain dicts written verbatim on the wire: {"type": "agent_start"}, …
AgentEvent = dict[str, Any]

__all__ = [
    "AgentEvent",
    "AgentMessage",
    "AgentTool",
    "AgentToolResult",
    "AssistantMessage",
    "InterruptMode",
    "Message",
    "QueueMode",
    "ToolExecutor",
    "ToolResultMessage",
    "ToolUpdate",
]
