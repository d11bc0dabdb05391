"""Session events: the agent's events plus those the session's features add (rpc-protocol §6).

Every event is a TypedDict whose fields keep the protocol's names, so the type checker
follows an event from where it is emitted to the frame the server writes.
"""

# No ``from __future__ import annotations`` here: a TypedDict turns each string annotation into a
# compiled ForwardRef, which made this module's classes ~2× as slow to create at start-up
# (docs/performance.md, "Fifth session: start-up").

from typing import Any, Literal, NotRequired, TypedDict

from xcsh.agent.types import AgentEvent


class AutoRetryStartEvent(TypedDict):
    type: Literal["auto_retry_start"]
    attempt: int
    maxAttempts: int
    delayMs: int
    errorMessage: str


class AutoRetryEndEvent(TypedDict):
    type: Literal["auto_retry_end"]
    success: bool
    attempt: int
    finalError: NotRequired[str]


class AutoCompactionStartEvent(TypedDict):
    type: Literal["auto_compaction_start"]
    reason: Literal["threshold", "overflow"]
    action: str


class AutoCompactionEndEvent(TypedDict):
    type: Literal["auto_compaction_end"]
    action: str
    result: NotRequired[Any]
    aborted: bool
    willRetry: bool
    skipped: NotRequired[bool]
    errorMessage: NotRequired[str]


class TtsrTriggeredEvent(TypedDict):
    type: Literal["ttsr_triggered"]
    rules: list[Any]


class TodoReminderEvent(TypedDict):
    type: Literal["todo_reminder"]
    todos: list[dict[str, Any]]
    attempt: int
    maxAttempts: int


class TodoAutoClearEvent(TypedDict):
    type: Literal["todo_auto_clear"]


FeatureEvent = (
    AutoRetryStartEvent
    | AutoRetryEndEvent
    | AutoCompactionStartEvent
    | AutoCompactionEndEvent
    | TtsrTriggeredEvent
    | TodoReminderEvent
    | TodoAutoClearEvent
)

# What session subscribers receive.
SessionEvent = AgentEvent | FeatureEvent
