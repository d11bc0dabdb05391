"""RPC wire contract: command names, frame shapes and the session-state payload."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from xcsh.ai.types import ImageContent, Model

COMMANDS = (
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "abort_and_prompt",
    "new_session",
    "get_state",
    "set_todos",
    "set_host_tools",
    "get_integrations",
    "set_locale",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "set_steering_mode",
    "set_follow_up_mode",
    "set_interrupt_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "export_html",
    "switch_session",
    "branch",
    "get_branch_messages",
    "get_last_assistant_text",
    "set_session_name",
    "get_messages",
)

# The ten event types the reference client forwards to listeners.
CORE_EVENT_TYPES = frozenset(
    {
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
    }
)


class ReadyFrame(TypedDict):
    type: Literal["ready"]
    version: str


class RpcResponse(TypedDict):
    type: Literal["response"]
    command: NotRequired[str]
    success: bool
    id: NotRequired[str]
    data: NotRequired[Any]
    error: NotRequired[str]


class PromptCommand(TypedDict):
    type: Literal["prompt"]
    message: str
    id: NotRequired[str]
    images: NotRequired[list[ImageContent]]
    streamingBehavior: NotRequired[Literal["steer", "followUp"]]


class RpcSessionState(TypedDict):
    model: NotRequired[Model]
    thinkingLevel: str
    isStreaming: bool
    isCompacting: bool
    steeringMode: str
    followUpMode: str
    interruptMode: str
    sessionFile: NotRequired[str]
    sessionId: str
    sessionName: NotRequired[str]
    autoCompactionEnabled: bool
    messageCount: int
    queuedMessageCount: int
    todoPhases: list[dict[str, Any]]
    systemPrompt: str
    dumpTools: list[dict[str, Any]]


class RpcHostToolDefinition(TypedDict):
    name: str
    description: str
    parameters: dict[str, Any]
    label: NotRequired[str]
    hidden: NotRequired[bool]


class HostToolCallFrame(TypedDict):
    type: Literal["host_tool_call"]
    id: str
    toolCallId: str
    toolName: str
    arguments: dict[str, Any]


class ExtensionUiRequest(TypedDict):
    type: Literal["extension_ui_request"]
    id: str
    method: str
