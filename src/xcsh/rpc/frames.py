"""Outbound frames (stdout): ``ready``, responses, session events, host-tool and extension-UI requests.

One ``TypedDict`` per frame kind, keyed by ``type`` (and ``method`` for
``extension_ui_request``) in :data:`EVENTS`, :data:`UI_REQUESTS` and :data:`OTHER_FRAMES`.
Responses are described per command in :mod:`xcsh.rpc.protocol`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from msgspec import Meta

from xcsh.agent.types import (
    AgentEndEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from xcsh.ai.events import (
    BlockDeltaEvent,
    BlockStartEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextEndEvent,
    ToolCallEndEvent,
)
from xcsh.ai.types import AssistantMessage
from xcsh.rpc.host_frames import SettledFrame
from xcsh.rpc.results import CompactionResult

# ---- process and responses ------------------------------------------------------------------


class ReadyFrame(TypedDict):
    """The first line on stdout once the session is built; commands may be sent before it."""

    type: Literal["ready"]
    version: Annotated[str, Meta(description="The xcsh version.")]


class ErrorResponse(TypedDict):
    """A failed command. `parse` errors and unknown commands carry no `id`."""

    id: NotRequired[
        Annotated[Any, Meta(description="The request's id, when the failure is the command's own.")]
    ]
    type: Literal["response"]
    command: NotRequired[
        Annotated[
            Any,
            Meta(
                description="The command's `type`, `parse` for a line that could not be handled, or the "
                "unknown `type` value as sent (omitted when the frame had none)."
            ),
        ]
    ]
    success: Literal[False]
    error: Annotated[str, Meta(description="What went wrong; validation errors name the field.")]


# ---- session events (§6) ----------------------------------------------------------------------
# The agent's events are declared once, in xcsh.agent.types, and imported above; only
# `message_update` has a wire form of its own (slim deltas with --message-updates delta).


class SlimDeltaEvent(TypedDict):
    """A delta without the partial message (`--message-updates delta` only)."""

    type: Literal["text_delta", "thinking_delta", "toolcall_delta"]
    contentIndex: int
    delta: str


AssistantMessageEvent = (
    StartEvent
    | BlockStartEvent
    | BlockDeltaEvent
    | TextEndEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
    | SlimDeltaEvent
)


class MessageUpdateEvent(TypedDict):
    """A streaming step of an assistant message.

    With `--message-updates delta`, a `*_delta` update carries only its event (no `partial`,
    no `message`); append `delta` to block `contentIndex` of the message being streamed.
    """

    type: Literal["message_update"]
    assistantMessageEvent: Annotated[
        AssistantMessageEvent,
        Meta(description="The block-level event; `partial` is the whole message so far."),
    ]
    message: NotRequired[
        Annotated[
            AssistantMessage, Meta(description="The partial assistant message (omitted for slim deltas).")
        ]
    ]


class AutoCompactionStartEvent(TypedDict):
    """Automatic compaction begins."""

    type: Literal["auto_compaction_start"]
    reason: Literal["threshold", "overflow", "idle"]
    action: Literal["context-full", "handoff"]


class AutoCompactionEndEvent(TypedDict):
    """Automatic compaction ended."""

    type: Literal["auto_compaction_end"]
    action: Literal["context-full", "handoff"]
    result: NotRequired[CompactionResult]
    aborted: bool
    willRetry: Annotated[bool, Meta(description="The failed request is retried next (overflow).")]
    errorMessage: NotRequired[str]
    skipped: NotRequired[bool]


class AutoRetryStartEvent(TypedDict):
    """A retryable error: the request is retried after `delayMs`."""

    type: Literal["auto_retry_start"]
    attempt: Annotated[int, Meta(ge=1, description="1-based.")]
    maxAttempts: int
    delayMs: Annotated[float, Meta(ge=0)]
    errorMessage: str


class AutoRetryEndEvent(TypedDict):
    """A retry chain ended (`Retry cancelled` when aborted or superseded by a prompt)."""

    type: Literal["auto_retry_end"]
    success: bool
    attempt: int
    finalError: NotRequired[str]


# "from" is a Python keyword, so this one is declared in the functional form
RetryFallbackAppliedEvent = TypedDict(
    "RetryFallbackAppliedEvent",
    {
        "type": Literal["retry_fallback_applied"],
        "from": Annotated[str, Meta(description="The model selector that failed (`provider/id[:level]`).")],
        "to": Annotated[str, Meta(description="The fallback model selector.")],
        "role": str,
    },
)
RetryFallbackAppliedEvent.__doc__ = "A fallback model was chosen after retries (reference extra)."


class RetryFallbackSucceededEvent(TypedDict):
    """The fallback model answered (reference extra)."""

    type: Literal["retry_fallback_succeeded"]
    model: str
    role: str


class TtsrTriggeredEvent(TypedDict):
    """Rules matched the streaming output; the run is interrupted and resumed with them."""

    type: Literal["ttsr_triggered"]
    rules: Annotated[list[dict[str, Any]], Meta(description="The matched rules as loaded.")]


class TodoReminderTask(TypedDict):
    id: str
    content: str
    status: str


class TodoReminderEvent(TypedDict):
    """Open todos remain: the agent continues with a reminder."""

    type: Literal["todo_reminder"]
    todos: list[TodoReminderTask]
    attempt: int
    maxAttempts: int


class TodoAutoClearEvent(TypedDict):
    """Finished tasks were removed from the todo state."""

    type: Literal["todo_auto_clear"]


# ---- host tools (§7) -------------------------------------------------------------------------


class HostToolCallFrame(TypedDict):
    """Run a host-owned tool; answer with `host_tool_result` (and optional `host_tool_update`s)."""

    type: Literal["host_tool_call"]
    id: Annotated[str, Meta(description="Fresh id of this call; the answer carries it.")]
    toolCallId: Annotated[str, Meta(description="The model's tool-call id.")]
    toolName: str
    arguments: Annotated[dict[str, Any], Meta(description="Validated against the tool's schema.")]


class HostToolCancelFrame(TypedDict):
    """A pending host-tool call was aborted; a later result for it is ignored."""

    type: Literal["host_tool_cancel"]
    id: str
    targetId: Annotated[str, Meta(description="The `id` of the cancelled `host_tool_call`.")]


# ---- extensions (§8) -------------------------------------------------------------------------

UiId = Annotated[str, Meta(description="Fresh id; a dialog's `extension_ui_response` carries it.")]
Timeout = Annotated[float, Meta(description="Milliseconds after which the dialog resolves to its default.")]


class SelectRequest(TypedDict):
    """Pick one option; answer `{value}` or `{cancelled:true}`."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["select"]
    title: str
    options: list[str]
    timeout: NotRequired[Timeout]


class ConfirmRequest(TypedDict):
    """Yes or no; answer `{confirmed}` or `{cancelled:true}`."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["confirm"]
    title: str
    message: str
    timeout: NotRequired[Timeout]


class InputRequest(TypedDict):
    """One line of text; answer `{value}` or `{cancelled:true}`."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["input"]
    title: str
    placeholder: NotRequired[str]
    timeout: NotRequired[Timeout]


class EditorRequest(TypedDict):
    """Multi-line text; answer `{value}` or `{cancelled:true}`; withdrawn with `cancel`."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["editor"]
    title: str
    prefill: NotRequired[str]
    promptStyle: NotRequired[bool]
    timeout: NotRequired[Timeout]


class CancelRequest(TypedDict):
    """A pending `editor` request was withdrawn (no answer expected)."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["cancel"]
    targetId: str


class NotifyRequest(TypedDict):
    """Show a notification (no answer expected)."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["notify"]
    message: str
    notifyType: NotRequired[Literal["info", "warning", "error"]]


class SetStatusRequest(TypedDict):
    """Set or clear (no `statusText`) a status entry."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["setStatus"]
    statusKey: str
    statusText: NotRequired[str]


class SetWidgetRequest(TypedDict):
    """Set or clear (no `widgetLines`) a widget."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["setWidget"]
    widgetKey: str
    widgetLines: NotRequired[list[str]]
    widgetPlacement: NotRequired[Literal["aboveEditor", "belowEditor"]]


class SetTitleRequest(TypedDict):
    """Set the window title (only with `PI_RPC_EMIT_TITLE` on)."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["setTitle"]
    title: str


class SetEditorTextRequest(TypedDict):
    """Replace the host editor's text."""

    type: Literal["extension_ui_request"]
    id: UiId
    method: Literal["set_editor_text"]
    text: str


class ExtensionErrorFrame(TypedDict):
    """An extension handler or command raised."""

    type: Literal["extension_error"]
    extensionPath: Annotated[str, Meta(description="The extension's path, or `command:<name>`.")]
    event: Annotated[str, Meta(description="The event being dispatched, or `command`.")]
    error: str


EVENTS: dict[str, type] = {
    "agent_start": AgentStartEvent,
    "agent_end": AgentEndEvent,
    "turn_start": TurnStartEvent,
    "turn_end": TurnEndEvent,
    "message_start": MessageStartEvent,
    "message_update": MessageUpdateEvent,
    "message_end": MessageEndEvent,
    "tool_execution_start": ToolExecutionStartEvent,
    "tool_execution_update": ToolExecutionUpdateEvent,
    "tool_execution_end": ToolExecutionEndEvent,
    "auto_compaction_start": AutoCompactionStartEvent,
    "auto_compaction_end": AutoCompactionEndEvent,
    "auto_retry_start": AutoRetryStartEvent,
    "auto_retry_end": AutoRetryEndEvent,
    "retry_fallback_applied": RetryFallbackAppliedEvent,
    "retry_fallback_succeeded": RetryFallbackSucceededEvent,
    "ttsr_triggered": TtsrTriggeredEvent,
    "todo_reminder": TodoReminderEvent,
    "todo_auto_clear": TodoAutoClearEvent,
}

UI_REQUESTS: dict[str, type] = {
    "select": SelectRequest,
    "confirm": ConfirmRequest,
    "input": InputRequest,
    "editor": EditorRequest,
    "cancel": CancelRequest,
    "notify": NotifyRequest,
    "setStatus": SetStatusRequest,
    "setWidget": SetWidgetRequest,
    "setTitle": SetTitleRequest,
    "set_editor_text": SetEditorTextRequest,
}

OTHER_FRAMES: dict[str, type] = {
    "ready": ReadyFrame,
    "host_tool_call": HostToolCallFrame,
    "host_tool_cancel": HostToolCancelFrame,
    "extension_error": ExtensionErrorFrame,
    "settled": SettledFrame,
}

# Every outbound frame except responses: what RpcClient.events() yields (narrow on "type").
ServerEvent = (
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
    | AutoCompactionStartEvent
    | AutoCompactionEndEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | RetryFallbackAppliedEvent
    | RetryFallbackSucceededEvent
    | TtsrTriggeredEvent
    | TodoReminderEvent
    | TodoAutoClearEvent
    | SelectRequest
    | ConfirmRequest
    | InputRequest
    | EditorRequest
    | CancelRequest
    | NotifyRequest
    | SetStatusRequest
    | SetWidgetRequest
    | SetTitleRequest
    | SetEditorTextRequest
    | HostToolCallFrame
    | HostToolCancelFrame
    | ExtensionErrorFrame
    | SettledFrame
    | ReadyFrame
)
