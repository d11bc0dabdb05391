"""Inbound frames: one ``TypedDict`` per command (rpc-protocol §5) and the host's answers (§7, §8).

These classes are the contract: the server validates every command against its class
before any state changes (:mod:`xcsh.rpc.validation`), the JSON Schema is generated from
them (:mod:`xcsh.rpc.schema`), and the client builds its frames from them. A class's
docstring and its fields' ``Meta(description=…)`` become the schema's descriptions.

Optional fields accept ``null`` as "absent" (hosts that serialise ``None``). Fields a
command does not declare are ignored. To add a command, see :mod:`xcsh.rpc.protocol`.

The prompting commands (§5.1) and the field types every command shares are defined in
:mod:`xcsh.rpc.commands_prompt` and imported here, so a first prompt is validated without
creating the rest.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from msgspec import Meta

from xcsh.rpc.commands_prompt import AbortAndPromptCommand as AbortAndPromptCommand
from xcsh.rpc.commands_prompt import AbortCommand as AbortCommand
from xcsh.rpc.commands_prompt import FollowUpCommand as FollowUpCommand
from xcsh.rpc.commands_prompt import Id as Id
from xcsh.rpc.commands_prompt import Images as Images
from xcsh.rpc.commands_prompt import Message as Message
from xcsh.rpc.commands_prompt import PromptCommand as PromptCommand
from xcsh.rpc.commands_prompt import SteerCommand as SteerCommand

# ---- shared field types (Id, Message and Images: xcsh.rpc.commands_prompt) ----------------
QueueModeField = Annotated[
    Literal["all", "one-at-a-time"],
    Meta(description="`one-at-a-time` delivers one queued message per turn; `all` delivers every one."),
]
ThinkingLevelField = Annotated[
    Literal["off", "minimal", "low", "medium", "high", "xhigh"],
    Meta(description="Thinking level; clamped to what the current model supports."),
]
TodoStatus = Literal["pending", "in_progress", "completed", "abandoned"]


class TodoItemInput(TypedDict):
    """One task of a todo phase as the host sends it; keys other than these are dropped."""

    id: str
    content: str
    status: TodoStatus
    notes: NotRequired[str | None]
    details: NotRequired[str | None]


class TodoPhaseInput(TypedDict):
    """A named group of tasks."""

    id: str
    name: str
    tasks: list[TodoItemInput]


class HostToolDefinition(TypedDict):
    """A host-owned tool (rpc-protocol §5.2); names should be lower case."""

    name: Annotated[str, Meta(description="Tool name; trimmed, must not be blank.")]
    description: Annotated[str, Meta(description="Description shown to the model; must not be blank.")]
    parameters: Annotated[dict[str, Any], Meta(description="JSON Schema of the tool's arguments.")]
    label: NotRequired[Annotated[str | None, Meta(description="Display label (default: the name).")]]
    hidden: NotRequired[
        Annotated[bool | None, Meta(description="Registered but not offered to the model when true.")]
    ]


class NewSessionCommand(TypedDict):
    """Start a new, empty session (an extension may cancel it)."""

    type: Literal["new_session"]
    id: NotRequired[Id]
    parentSession: NotRequired[
        Annotated[str | None, Meta(description="Recorded as the new session's parent; empty = absent.")]
    ]


# ---- state (§5.2) -------------------------------------------------------------------------
class GetStateCommand(TypedDict):
    """The session's state (model, levels, modes, counts, todos, tools)."""

    type: Literal["get_state"]
    id: NotRequired[Id]


class SetTodosCommand(TypedDict):
    """Replace the in-memory todo phases; answered with the stored copy."""

    type: Literal["set_todos"]
    id: NotRequired[Id]
    phases: Annotated[list[TodoPhaseInput], Meta(description="The complete new todo state.")]


class SetHostToolsCommand(TypedDict):
    """Replace the set of host-owned tools (rpc-protocol §7); answered with their names."""

    type: Literal["set_host_tools"]
    id: NotRequired[Id]
    tools: Annotated[list[HostToolDefinition], Meta(description="The complete new host tool set.")]


class GetIntegrationsCommand(TypedDict):
    """Version and provider connection state (reference extra)."""

    type: Literal["get_integrations"]
    id: NotRequired[Id]


class SetLocaleCommand(TypedDict):
    """Set the answer language: the system prompt's language instruction (reference extra; docs/context.md)."""

    type: Literal["set_locale"]
    id: NotRequired[Id]
    locale: Annotated[
        str, Meta(description="A locale such as `ja`, `pt-BR` or `de_DE.UTF-8`; `en` removes it.")
    ]


# ---- model (§5.3) -------------------------------------------------------------------------
class SetModelCommand(TypedDict):
    """Switch to an available model, remembered as the default model."""

    type: Literal["set_model"]
    id: NotRequired[Id]
    provider: Annotated[str, Meta(description="Provider name, e.g. `anthropic`.")]
    modelId: Annotated[str, Meta(description="Model id within the provider.")]


class CycleModelCommand(TypedDict):
    """Switch to the next scoped (or available) model; null data when there is no other."""

    type: Literal["cycle_model"]
    id: NotRequired[Id]


class GetAvailableModelsCommand(TypedDict):
    """Every model whose provider has credentials or needs none."""

    type: Literal["get_available_models"]
    id: NotRequired[Id]


# ---- thinking (§5.4) ----------------------------------------------------------------------
class SetThinkingLevelCommand(TypedDict):
    """Set the thinking level (clamped to the model; `off` on a model that does not reason)."""

    type: Literal["set_thinking_level"]
    id: NotRequired[Id]
    level: ThinkingLevelField


class CycleThinkingLevelCommand(TypedDict):
    """Step to the model's next thinking level; null data for a model that does not reason."""

    type: Literal["cycle_thinking_level"]
    id: NotRequired[Id]


# ---- queue modes (§5.5) -------------------------------------------------------------------
class SetSteeringModeCommand(TypedDict):
    """How queued steering messages are delivered; persisted in user settings."""

    type: Literal["set_steering_mode"]
    id: NotRequired[Id]
    mode: QueueModeField


class SetFollowUpModeCommand(TypedDict):
    """How queued follow-up messages are delivered; persisted in user settings."""

    type: Literal["set_follow_up_mode"]
    id: NotRequired[Id]
    mode: QueueModeField


class SetInterruptModeCommand(TypedDict):
    """Whether steering interrupts running tools (`immediate`) or waits for them (`wait`)."""

    type: Literal["set_interrupt_mode"]
    id: NotRequired[Id]
    mode: Annotated[
        Literal["immediate", "wait"],
        Meta(description="`immediate` skips the remaining tool calls; `wait` lets them finish."),
    ]


# ---- compaction, retry, bash (§5.6–§5.8) ---------------------------------------------------
class CompactCommand(TypedDict):
    """Summarise older context now (aborts a run first); answered when done."""

    type: Literal["compact"]
    id: NotRequired[Id]
    customInstructions: NotRequired[
        Annotated[str | None, Meta(description="Extra instructions for the summary.")]
    ]


class SetAutoCompactionCommand(TypedDict):
    """Turn automatic compaction on or off (persisted)."""

    type: Literal["set_auto_compaction"]
    id: NotRequired[Id]
    enabled: bool


class SetAutoRetryCommand(TypedDict):
    """Turn automatic retry of failed model calls on or off (persisted)."""

    type: Literal["set_auto_retry"]
    id: NotRequired[Id]
    enabled: bool


class AbortRetryCommand(TypedDict):
    """Cancel a waiting retry (`auto_retry_end` with `Retry cancelled`); no-op otherwise."""

    type: Literal["abort_retry"]
    id: NotRequired[Id]


class BashCommand(TypedDict):
    """Run a shell command in the session's persistent shell; answered when it ends."""

    type: Literal["bash"]
    id: NotRequired[Id]
    command: Annotated[str, Meta(description="The shell command line.")]


class AbortBashCommand(TypedDict):
    """Stop the running user bash command, if any."""

    type: Literal["abort_bash"]
    id: NotRequired[Id]


# ---- session and messages (§5.9–§5.10) ----------------------------------------------------
class GetSessionStatsCommand(TypedDict):
    """Message, tool-call, token and cost counts over the live context."""

    type: Literal["get_session_stats"]
    id: NotRequired[Id]


class ExportHtmlCommand(TypedDict):
    """Write the session as a self-contained HTML file."""

    type: Literal["export_html"]
    id: NotRequired[Id]
    outputPath: NotRequired[
        Annotated[
            str | None,
            Meta(
                description="Target file (relative to the process cwd). A session file or a session's "
                "lock file is refused (success false, nothing written)."
            ),
        ]
    ]


class SwitchSessionCommand(TypedDict):
    """Open another session file (a missing file becomes a new session at that path)."""

    type: Literal["switch_session"]
    id: NotRequired[Id]
    sessionPath: Annotated[str, Meta(description="Path of the session file.")]


class BranchCommand(TypedDict):
    """Start a new session file from the history before a user message."""

    type: Literal["branch"]
    id: NotRequired[Id]
    entryId: Annotated[str, Meta(description="Id of a user `message` entry.")]


class GetBranchMessagesCommand(TypedDict):
    """The user messages of the whole session file (every branch), to pick a branch point."""

    type: Literal["get_branch_messages"]
    id: NotRequired[Id]


class GetLastAssistantTextCommand(TypedDict):
    """The text of the last assistant message of the live context."""

    type: Literal["get_last_assistant_text"]
    id: NotRequired[Id]


class SetSessionNameCommand(TypedDict):
    """Name the session (control characters become spaces; blank is refused).

    The answer does not wait for the session file: its header is rewritten in the background
    (every later answer already shows the new name; the file has it once the rewrite ends, at
    the latest when the session is closed).
    """

    type: Literal["set_session_name"]
    id: NotRequired[Id]
    name: Annotated[str, Meta(description="The new name.")]


class GetMessagesCommand(TypedDict):
    """The live context, every message as the agent holds it."""

    type: Literal["get_messages"]
    id: NotRequired[Id]


# ---- beyond the reference (docs/host-commands.md) ---------------------------------------------
class GetCommandsCommand(TypedDict):
    """Every `/command` a user can type: extension commands, file commands, prompt templates, skills."""

    type: Literal["get_commands"]
    id: NotRequired[Id]


class ClearQueueCommand(TypedDict):
    """Drop every queued steering and follow-up message; the answer lists their texts."""

    type: Literal["clear_queue"]
    id: NotRequired[Id]


class ListSessionsCommand(TypedDict):
    """Stored sessions, most recently modified first."""

    type: Literal["list_sessions"]
    id: NotRequired[Id]
    scope: NotRequired[
        Annotated[
            str | None,
            Meta(description="`cwd` (default): the session directory in use; `all`: every project."),
        ]
    ]


class GetTreeCommand(TypedDict):
    """The session's entries as a tree, with labels, the current leaf and the path to it."""

    type: Literal["get_tree"]
    id: NotRequired[Id]


class GetToolsCommand(TypedDict):
    """Every registered tool with its schema, source and whether it is active."""

    type: Literal["get_tools"]
    id: NotRequired[Id]


class SetActiveToolsCommand(TypedDict):
    """Make exactly these registered tools active from the next model call."""

    type: Literal["set_active_tools"]
    id: NotRequired[Id]
    toolNames: Annotated[list[str], Meta(description="Names of registered tools; `[]` turns every tool off.")]


# ---- answers to the server's requests (§7, §8) ---------------------------------------------
class ToolResultInput(TypedDict):
    """A tool result as the host sends it."""

    content: Annotated[
        list[dict[str, Any]], Meta(description="Text (`{type:'text', text}`) and image blocks.")
    ]
    details: NotRequired[Annotated[Any, Meta(description="Host-defined details, passed through.")]]


class HostToolResultFrame(TypedDict):
    """Completes a pending `host_tool_call`; frames for unknown ids are ignored."""

    type: Literal["host_tool_result"]
    id: Annotated[str, Meta(description="The `id` of the `host_tool_call`.")]
    result: ToolResultInput
    isError: NotRequired[
        Annotated[bool | None, Meta(description="The call failed; the text blocks are the error.")]
    ]


class HostToolUpdateFrame(TypedDict):
    """Progress of a pending `host_tool_call` (becomes `tool_execution_update`)."""

    type: Literal["host_tool_update"]
    id: Annotated[str, Meta(description="The `id` of the `host_tool_call`.")]
    partialResult: ToolResultInput


class ExtensionUiResponseFrame(TypedDict):
    """Answer to an `extension_ui_request` dialog; unknown ids and other shapes are ignored."""

    type: Literal["extension_ui_response"]
    id: Annotated[str, Meta(description="The `id` of the `extension_ui_request`.")]
    value: NotRequired[Annotated[str, Meta(description="Chosen option or entered text.")]]
    confirmed: NotRequired[Annotated[bool, Meta(description="Answer to a `confirm` dialog.")]]
    cancelled: NotRequired[Annotated[bool, Meta(description="The user dismissed the dialog.")]]
    timedOut: NotRequired[Annotated[bool, Meta(description="With `cancelled`: the host's own timeout.")]]
