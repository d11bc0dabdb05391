"""The ``data`` of each command's success response (rpc-protocol §5), as ``TypedDict`` shapes.

Keys marked ``NotRequired`` are omitted, never ``null``, unless the type says ``| None``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from msgspec import Meta

from xcsh.agent.types import AgentMessage as AgentMessage  # re-exported: response data carries it
from xcsh.ai.types import Model

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
Count = Annotated[int, Meta(ge=0)]


class TodoItem(TypedDict):
    """A task as stored (only these keys are kept)."""

    id: str
    content: str
    status: Literal["pending", "in_progress", "completed", "abandoned"]
    notes: NotRequired[str]


class TodoPhase(TypedDict):
    """A named group of tasks as stored."""

    id: str
    name: str
    tasks: list[TodoItem]


class ToolInfo(TypedDict):
    """An active tool as the model sees it (without the injected intent field)."""

    name: str
    description: str
    parameters: dict[str, Any]


class SessionState(TypedDict):
    """`get_state` data."""

    model: NotRequired[Annotated[Model, Meta(description="The full current model.")]]
    thinkingLevel: Annotated[ThinkingLevel, Meta(description="`off` when unset or not supported.")]
    isStreaming: Annotated[bool, Meta(description="A run or its automatic continuations are in flight.")]
    isCompacting: bool
    steeringMode: Literal["all", "one-at-a-time"]
    followUpMode: Literal["all", "one-at-a-time"]
    interruptMode: Literal["immediate", "wait"]
    sessionFile: NotRequired[Annotated[str, Meta(description="Absolute path; omitted with --no-session.")]]
    sessionId: str
    sessionName: NotRequired[str]
    autoCompactionEnabled: bool
    messageCount: Annotated[Count, Meta(description="Messages in the live context.")]
    queuedMessageCount: Annotated[Count, Meta(description="Steering + follow-up + next-turn messages.")]
    todoPhases: list[TodoPhase]
    systemPrompt: str
    dumpTools: Annotated[list[ToolInfo], Meta(description="The active tools.")]
    messageUpdates: NotRequired[
        Annotated[
            Literal["full", "delta"],
            Meta(description="How `message_update` frames are sent (`--message-updates`; an xcsh extra)."),
        ]
    ]


class CancelledResult(TypedDict):
    """`new_session` / `switch_session` data: whether an extension cancelled the switch."""

    cancelled: bool


class TodosResult(TypedDict):
    """`set_todos` data: the stored copy."""

    todoPhases: list[TodoPhase]


class HostToolsResult(TypedDict):
    """`set_host_tools` data: the normalised names in request order (hidden ones included)."""

    toolNames: list[str]


class IntegrationModel(TypedDict):
    state: Literal["no_provider", "connected", "auth_error"]
    provider: NotRequired[str]
    latencyMs: NotRequired[float]


class IntegrationService(TypedDict):
    name: str
    state: Literal["connected", "unauthenticated", "unavailable"]
    hint: NotRequired[str]


class IntegrationsResult(TypedDict):
    """`get_integrations` data."""

    version: str
    model: IntegrationModel
    services: list[IntegrationService]


class CycleModelResult(TypedDict):
    """`cycle_model` data (null when there is no other model)."""

    model: Model
    thinkingLevel: NotRequired[Annotated[ThinkingLevel, Meta(description="Omitted when unset.")]]
    isScoped: Annotated[bool, Meta(description="The cycle went through the scoped (--models) list.")]


class ModelsResult(TypedDict):
    """`get_available_models` data."""

    models: list[Model]


class ThinkingLevelResult(TypedDict):
    """`cycle_thinking_level` data (null for a model that does not reason)."""

    level: ThinkingLevel


class CompactionDetails(TypedDict):
    readFiles: list[str]
    modifiedFiles: list[str]


class CompactionResult(TypedDict):
    """`compact` data and `auto_compaction_end.result`."""

    summary: Annotated[str, Meta(description="The full summary, with file-operation tags.")]
    shortSummary: NotRequired[Annotated[str, Meta(description="A 2–3 sentence recap.")]]
    firstKeptEntryId: Annotated[str, Meta(description="First session entry kept verbatim.")]
    tokensBefore: Annotated[float, Meta(ge=0, description="Context tokens before compaction.")]
    details: NotRequired[CompactionDetails]
    preserveData: NotRequired[dict[str, Any]]


class BashResult(TypedDict):
    """`bash` data. A non-zero exit status is a success with that `exitCode`."""

    output: Annotated[str, Meta(description="Combined stdout+stderr, the last 50 KiB.")]
    exitCode: NotRequired[Annotated[int, Meta(description="Omitted when cancelled or timed out.")]]
    cancelled: bool
    truncated: bool
    totalLines: Count
    totalBytes: Count
    outputLines: Count
    outputBytes: Count
    artifactId: NotRequired[str]
    newCwd: NotRequired[Annotated[str, Meta(description="The shell's cwd when the command changed it.")]]


class TokenTotals(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float


class SessionStats(TypedDict):
    """`get_session_stats` data, over the live context."""

    sessionFile: NotRequired[str]
    sessionId: str
    userMessages: Count
    assistantMessages: Count
    toolCalls: Count
    toolResults: Count
    totalMessages: Count
    tokens: TokenTotals
    premiumRequests: float
    cost: float


class ExportResult(TypedDict):
    """`export_html` data: the path as given (or the default relative name)."""

    path: str


class BranchResult(TypedDict):
    """`branch` data: the selected message's text (to pre-fill an editor)."""

    text: str
    cancelled: bool


class BranchMessage(TypedDict):
    entryId: str
    text: str


class BranchMessagesResult(TypedDict):
    """`get_branch_messages` data: user messages of the whole file, in file order."""

    messages: list[BranchMessage]


class LastAssistantTextResult(TypedDict):
    """`get_last_assistant_text` data; `text` is omitted when there is none."""

    text: NotRequired[str | None]


class MessagesResult(TypedDict):
    """`get_messages` data: the live context as the agent holds it."""

    messages: list[AgentMessage]


# ---- beyond the reference (docs/host-commands.md) ---------------------------------------------
class CommandInfo(TypedDict):
    """A `/command` a user can type."""

    name: Annotated[str, Meta(description="Typed after `/` (skills: `skill:<name>`).")]
    description: str
    source: Literal["extension", "command", "prompt", "skill"]
    argumentHint: NotRequired[str]
    path: NotRequired[str]


class CommandsResult(TypedDict):
    """`get_commands` data: extension commands, file commands, prompt templates, skills, in that order."""

    commands: list[CommandInfo]


class ClearedQueue(TypedDict):
    """`clear_queue` data: the texts of the dropped messages, in queue order."""

    steering: list[str]
    followUp: list[str]


class SessionInfo(TypedDict):
    """A stored session."""

    path: str
    id: str
    cwd: str
    name: NotRequired[
        Annotated[str, Meta(description="The session name, else a compaction's short summary.")]
    ]
    firstMessage: str
    messageCount: Count
    created: Annotated[str, Meta(description="ISO 8601 time.")]
    modified: Annotated[str, Meta(description="ISO 8601 time of the last change.")]
    parentSession: NotRequired[str]
    current: Annotated[bool, Meta(description="This is the open session's file.")]


class SessionsResult(TypedDict):
    """`list_sessions` data, most recently modified first."""

    sessions: list[SessionInfo]


class TreeNode(TypedDict):
    """A session entry in the tree (`label` entries are folded into their targets)."""

    id: str
    parentId: Annotated[
        str | None, Meta(description="The parent entry's id, past label entries (folded into their targets).")
    ]
    type: str
    timestamp: Any
    role: NotRequired[str]
    preview: NotRequired[Annotated[str, Meta(description="One line, at most 120 characters.")]]
    label: NotRequired[str]
    children: list[TreeNode]


class TreeResult(TypedDict):
    """`get_tree` data."""

    tree: list[TreeNode]
    leafId: Annotated[
        str | None,
        Meta(
            description="The node the next entry attaches under (past label entries, folded into their targets)."
        ),
    ]
    path: Annotated[list[str], Meta(description="Entry ids from the root to the leaf (the active branch).")]


class ToolDetails(TypedDict):
    """A registered tool."""

    name: str
    description: str
    parameters: dict[str, Any]
    active: bool
    source: Literal["builtin", "host", "extension", "feature"]
    label: NotRequired[str]
    hidden: NotRequired[bool]


class ToolsResult(TypedDict):
    """`get_tools` data: every registered tool."""

    tools: list[ToolDetails]
