"""The RPC contract in one table: every command, its request shape and how the server runs it.

Adding a command is a change here plus its handler:

1. write its request ``TypedDict`` in :mod:`xcsh.rpc.commands` (field descriptions in
   ``Meta``) and, when it answers with ``data``, the data type in :mod:`xcsh.rpc.results`;
2. add one :class:`CommandSpec` line to ``_SPECS`` below, naming both types (the request by
   its name in :mod:`xcsh.rpc.commands`, a result type by its name in :mod:`xcsh.rpc.results`);
   if the request has no field but ``type`` and ``id``, add its name to ``_FIELDLESS``;
3. register the handler in ``xcsh.modes.rpc`` and add the client method in
   :mod:`xcsh.rpc.client`;
4. run ``xcsh rpc-schema > docs/rpc-schema.json`` and ``python -m xcsh.rpc.docs > docs/protocol.md``.

Validation, the schema, the docs and the tests (client coverage, schema freshness,
fuzzing) all read this table; they fail until steps 3–4 are done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from xcsh.rpc.validation import Invalid

    # Rewrites a validation failure where the protocol fixes the wording (frame, failure) → failure.
    Explain = Callable[[dict[str, Any], Invalid], Invalid]


class NoData:
    """Marker: the command's success response has no ``data`` key."""


class CommandSpec(msgspec.Struct, frozen=True):
    """One command of the protocol."""

    name: str
    request_name: str  # the request frame's TypedDict: its name in xcsh.rpc.commands (or commands_prompt)
    # the type of the success response's ``data``: a type, or the name of one in
    # :mod:`xcsh.rpc.results` (``"Name | None"`` when it may be null), see :meth:`data_type`
    data: Any = NoData
    control: bool = False  # takes effect at once, even while a blocking command runs (§2.4)
    blocking: bool = False  # answered only when done (bash, compact, session switches …)
    explain: Explain | None = None  # the protocol's own error text for some failures

    @property
    def request(self) -> type:
        """The request's ``TypedDict``. :mod:`xcsh.rpc.commands` (~150 ``TypedDict`` classes) is
        imported on the first use, not at start-up: a command without fields needs no validation
        (``_FIELDLESS``), so the first ``get_state`` answer is given without it."""
        from xcsh.rpc import commands_prompt

        # the prompting commands first: an immediate prompt then skips the ~50 other classes
        found: type | None = getattr(commands_prompt, self.request_name, None)
        if found is None:
            from xcsh.rpc import commands

            found = getattr(commands, self.request_name)
        return found

    def data_type(self) -> Any:
        """The ``data`` type (or :class:`NoData`); result types named by string are resolved here.

        The result types are needed by the schema, the docs and the clients, not by the
        server, so :mod:`xcsh.rpc.results` is imported on the first call, not at start-up.
        """
        if not isinstance(self.data, str):
            return self.data
        from xcsh.rpc import results

        name, _, rest = self.data.partition(" | ")
        found = getattr(results, name)
        return found | None if rest == "None" else found


def _js(value: Any) -> str:
    """``value`` as JavaScript's ``String()`` shows it in a template string."""
    import json  # an error text only

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _thinking_level(frame: dict[str, Any], failure: Invalid) -> Invalid:
    """Any bad ``level`` → ``Invalid thinking level: …`` with the id (rpc-protocol §5.4 decision)."""
    from xcsh.rpc.validation import Invalid  # loaded with the validation that failed

    level = _js(frame["level"]) if "level" in frame else "undefined"
    levels = ", ".join(("off", "minimal", "low", "medium", "high", "xhigh"))
    return Invalid(f"Invalid thinking level: {level}. Valid levels: {levels}", True, failure.path)


def _host_tools(frame: dict[str, Any], failure: Invalid) -> Invalid:
    """Definition fields keep the protocol's texts (rpc-protocol §5.2, scenario S31)."""
    from xcsh.rpc.validation import Invalid  # loaded with the validation that failed

    parts = failure.path.replace("[", ".").replace("]", "").split(".")
    if len(parts) < 3 or parts[0] != "tools" or not parts[1].isdigit():
        return failure
    index, key = int(parts[1]), parts[2]
    tool = frame["tools"][index]
    raw_name = tool.get("name") if isinstance(tool, dict) else None
    name = raw_name.strip() if isinstance(raw_name, str) else ""
    if key == "name" or not name:
        return Invalid(f"Host tool at index {index} must provide a non-empty name", False, failure.path)
    if key == "description":
        return Invalid(f'Host tool "{name}" must provide a non-empty description', False, failure.path)
    if key == "parameters":
        return Invalid(f'Host tool "{name}" must provide a JSON Schema object', False, failure.path)
    return failure


_SPECS = (
    CommandSpec("prompt", "PromptCommand"),
    CommandSpec("steer", "SteerCommand"),
    CommandSpec("follow_up", "FollowUpCommand"),
    CommandSpec("abort", "AbortCommand", control=True),
    CommandSpec("abort_and_prompt", "AbortAndPromptCommand", blocking=True),
    CommandSpec("new_session", "NewSessionCommand", "CancelledResult", blocking=True),
    CommandSpec("get_state", "GetStateCommand", "SessionState"),
    CommandSpec("set_todos", "SetTodosCommand", "TodosResult"),
    CommandSpec("set_host_tools", "SetHostToolsCommand", "HostToolsResult", explain=_host_tools),
    CommandSpec("get_integrations", "GetIntegrationsCommand", "IntegrationsResult"),
    CommandSpec("set_locale", "SetLocaleCommand"),
    CommandSpec("set_model", "SetModelCommand", "Model"),
    CommandSpec("cycle_model", "CycleModelCommand", "CycleModelResult | None"),
    CommandSpec("get_available_models", "GetAvailableModelsCommand", "ModelsResult"),
    CommandSpec("set_thinking_level", "SetThinkingLevelCommand", explain=_thinking_level),
    CommandSpec("cycle_thinking_level", "CycleThinkingLevelCommand", "ThinkingLevelResult | None"),
    CommandSpec("set_steering_mode", "SetSteeringModeCommand"),
    CommandSpec("set_follow_up_mode", "SetFollowUpModeCommand"),
    CommandSpec("set_interrupt_mode", "SetInterruptModeCommand"),
    CommandSpec("compact", "CompactCommand", "CompactionResult", blocking=True),
    CommandSpec("set_auto_compaction", "SetAutoCompactionCommand"),
    CommandSpec("set_auto_retry", "SetAutoRetryCommand"),
    CommandSpec("abort_retry", "AbortRetryCommand", control=True),
    CommandSpec("bash", "BashCommand", "BashResult", blocking=True),
    CommandSpec("abort_bash", "AbortBashCommand", control=True),
    CommandSpec("get_session_stats", "GetSessionStatsCommand", "SessionStats"),
    CommandSpec("export_html", "ExportHtmlCommand", "ExportResult", blocking=True),
    CommandSpec("switch_session", "SwitchSessionCommand", "CancelledResult", blocking=True),
    CommandSpec("branch", "BranchCommand", "BranchResult", blocking=True),
    CommandSpec("get_branch_messages", "GetBranchMessagesCommand", "BranchMessagesResult"),
    CommandSpec("get_last_assistant_text", "GetLastAssistantTextCommand", "LastAssistantTextResult"),
    CommandSpec("set_session_name", "SetSessionNameCommand"),
    CommandSpec("get_messages", "GetMessagesCommand", "MessagesResult"),
    # beyond the reference (docs/host-commands.md)
    CommandSpec("get_commands", "GetCommandsCommand", "CommandsResult"),
    CommandSpec("clear_queue", "ClearQueueCommand", "ClearedQueue"),
    CommandSpec("list_sessions", "ListSessionsCommand", "SessionsResult"),
    CommandSpec("get_tree", "GetTreeCommand", "TreeResult"),
    CommandSpec("get_tools", "GetToolsCommand", "ToolsResult"),
    CommandSpec("set_active_tools", "SetActiveToolsCommand", "HostToolsResult"),
)

SPECS: dict[str, CommandSpec] = {spec.name: spec for spec in _SPECS}
COMMANDS: tuple[str, ...] = tuple(SPECS)
CONTROL_COMMANDS: frozenset[str] = frozenset(s.name for s in _SPECS if s.control)


# Commands whose request has no field but ``type`` and ``id`` (getters, abort …): nothing to convert.
# Named here, not derived from the TypedDicts, so the server does not import them at start-up;
# tests/rpc/test_protocol_table.py checks the list against the classes.
_FIELDLESS = frozenset(
    {
        "abort",
        "abort_bash",
        "abort_retry",
        "clear_queue",
        "cycle_model",
        "cycle_thinking_level",
        "get_available_models",
        "get_branch_messages",
        "get_commands",
        "get_integrations",
        "get_last_assistant_text",
        "get_messages",
        "get_session_stats",
        "get_state",
        "get_tools",
        "get_tree",
    }
)


def check(spec: CommandSpec, frame: dict[str, Any]) -> dict[str, Any] | Invalid:
    """The command's validated copy, or the failure to answer with (see :mod:`xcsh.rpc.validation`)."""
    if spec.name in _FIELDLESS:
        # ``type`` was matched by the dispatcher and ``id`` may be any value: only drop extra keys
        return {key: frame[key] for key in ("type", "id") if key in frame}
    from xcsh.rpc.validation import Invalid, check_command

    result = check_command(spec.request, frame)
    if isinstance(result, Invalid) and spec.explain is not None:
        return spec.explain(frame, result)
    return result


# Inbound frames that are not commands: the host's answers to the server's requests (their
# TypedDicts' names in xcsh.rpc.commands; see answer_types).
ANSWERS: dict[str, str] = {
    "host_tool_result": "HostToolResultFrame",
    "host_tool_update": "HostToolUpdateFrame",
    "extension_ui_response": "ExtensionUiResponseFrame",
}


def answer_types() -> dict[str, type]:
    """:data:`ANSWERS` with each name resolved to its ``TypedDict``."""
    from xcsh.rpc import commands

    return {kind: getattr(commands, name) for kind, name in ANSWERS.items()}
