"""Session file entry types (v3): the TypedDicts of ``session-format.md`` §2–§3, field for field.

They are the file format, so they keep the TypeScript spelling. Only annotations name them; they are
apart from :mod:`xcsh.coding.sessions.entries` (ids, timestamps, line (de)serialisation) because they
name the agent's message types, which a fresh process does not load before its first answer
(docs/performance.md, "Sixth session: start-up").
"""

# No ``from __future__ import annotations`` here: a TypedDict turns each string annotation into a
# compiled ForwardRef, which made this module's classes ~2× as slow to create at start-up
# (docs/performance.md, "Fifth session: start-up").

from typing import Any, Literal, NotRequired, TypedDict

from xcsh.agent.types import AgentMessage
from xcsh.ai.types import UserContent


class SessionHeader(TypedDict):
    type: Literal["session"]
    version: NotRequired[int]
    id: str
    timestamp: str
    cwd: str
    title: NotRequired[str]
    titleSource: NotRequired[Literal["auto", "user"]]
    parentSession: NotRequired[str]


class MessageEntry(TypedDict):
    type: Literal["message"]
    id: str
    parentId: str | None
    timestamp: str
    message: AgentMessage


class CustomMessageEntry(TypedDict):
    type: Literal["custom_message"]
    id: str
    parentId: str | None
    timestamp: str
    customType: str
    content: str | list[UserContent]
    display: bool
    details: NotRequired[Any]
    attribution: NotRequired[Literal["user", "agent"]]


class ThinkingLevelChangeEntry(TypedDict):
    type: Literal["thinking_level_change"]
    id: str
    parentId: str | None
    timestamp: str
    thinkingLevel: str | None


class ModelChangeEntry(TypedDict):
    type: Literal["model_change"]
    id: str
    parentId: str | None
    timestamp: str
    model: str
    role: NotRequired[str]


class ServiceTierChangeEntry(TypedDict):
    type: Literal["service_tier_change"]
    id: str
    parentId: str | None
    timestamp: str
    serviceTier: str | None


class CompactionEntry(TypedDict):
    type: Literal["compaction"]
    id: str
    parentId: str | None
    timestamp: str
    summary: str
    shortSummary: NotRequired[str]
    firstKeptEntryId: str
    tokensBefore: int
    details: NotRequired[Any]
    preserveData: NotRequired[dict[str, Any]]
    fromExtension: NotRequired[bool]


class BranchSummaryEntry(TypedDict):
    type: Literal["branch_summary"]
    id: str
    parentId: str | None
    timestamp: str
    fromId: str
    summary: str
    details: NotRequired[Any]
    fromExtension: NotRequired[bool]


class CustomEntry(TypedDict):
    type: Literal["custom"]
    id: str
    parentId: str | None
    timestamp: str
    customType: str
    data: NotRequired[Any]


class LabelEntry(TypedDict):
    type: Literal["label"]
    id: str
    parentId: str | None
    timestamp: str
    targetId: str
    label: NotRequired[str]


class TtsrInjectionEntry(TypedDict):
    type: Literal["ttsr_injection"]
    id: str
    parentId: str | None
    timestamp: str
    injectedRules: list[str]


class McpToolSelectionEntry(TypedDict):
    type: Literal["mcp_tool_selection"]
    id: str
    parentId: str | None
    timestamp: str
    selectedToolNames: list[str]


class SessionInitEntry(TypedDict):
    type: Literal["session_init"]
    id: str
    parentId: str | None
    timestamp: str
    systemPrompt: str
    task: str
    tools: list[str]
    outputSchema: NotRequired[Any]


class ModeChangeEntry(TypedDict):
    type: Literal["mode_change"]
    id: str
    parentId: str | None
    timestamp: str
    mode: str
    data: NotRequired[dict[str, Any]]


class ContextChangeEntry(TypedDict):
    type: Literal["context_change"]
    id: str
    parentId: str | None
    timestamp: str
    contextName: str
    tenant: str
    namespace: str


__all__ = [
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextChangeEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "LabelEntry",
    "McpToolSelectionEntry",
    "MessageEntry",
    "ModeChangeEntry",
    "ModelChangeEntry",
    "ServiceTierChangeEntry",
    "SessionHeader",
    "SessionInitEntry",
    "ThinkingLevelChangeEntry",
    "TtsrInjectionEntry",
]
