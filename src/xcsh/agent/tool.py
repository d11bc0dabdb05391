"""The tool contract of the agent: :class:`AgentTool` and the executor it wraps.

Apart from :mod:`xcsh.agent.types` (the wire ``TypedDict``s, which only annotations here name), so
that building the tools at start-up does not load the wire types (docs/performance.md, "Sixth
session: start-up").
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

if TYPE_CHECKING:  # the wire package imports the types module: keep both free of behaviour modules
    from xcsh.agent.types import AgentToolResult, ToolUpdate
    from xcsh.ai.abort import AbortSignal

    # Typing only: a Protocol class costs ~0.13 M instructions to create, and nothing checks it
    # at run time (docs/performance.md, "Seventh session: start-up").
    class ToolExecutor(Protocol):
        def __call__(
            self, tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
        ) -> Awaitable[AgentToolResult]: ...


class AgentTool(msgspec.Struct, kw_only=True):
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
    meta: dict[str, Any] = msgspec.field(default_factory=dict)


# The argument the loop adds to each tool's schema when intent tracing is on (the model says
# why it calls the tool); tool execution takes it out again before the tool sees its arguments.
INTENT_FIELD = "_i"


__all__ = ["INTENT_FIELD", "AgentTool", "ToolExecutor"]
