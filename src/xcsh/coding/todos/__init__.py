"""Todos: the phased todo list, the ``todo_write`` tool, reminders, auto-clear and the eager prelude.

``install(session, config)`` wires everything into a session; ``todos_of(session)``
returns its :class:`TodoStore` (what ``set_todos`` writes and ``get_state`` reads).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from xcsh.coding.messages import custom_message
from xcsh.coding.todos.prelude import eager_prelude
from xcsh.coding.todos.reminders import TodoReminders
from xcsh.coding.todos.state import TodoStore, latest_todo_phases, without_done
from xcsh.coding.todos.tool import TOOL_NAME, create_todo_write_tool

if TYPE_CHECKING:
    from xcsh.agent.types import CustomMessage, ToolResultMessage
    from xcsh.coding.events import SessionEvent
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession

__all__ = ["TOOL_NAME", "TodoConfig", "TodoStore", "configure", "install", "todos_of"]

logger = logging.getLogger(__name__)

ERROR_REMINDER_TYPE = "todo-write-error-reminder"


def todos_of(session: AgentSession) -> TodoStore | None:
    """The session's todo store, or None when the todo feature is not installed."""
    return session.features.get(TodoStore)


def set_todos(session: AgentSession, phases: Sequence[Any]) -> list[dict[str, Any]]:
    """The ``set_todos`` operation: replace the phases; returns the stored copy."""
    store = todos_of(session)
    if store is None:
        raise RuntimeError("todos are not available in this session")
    return store.set(phases)


class TodoConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Whether ``todo_write`` is registered and active (from ``--tools`` / ``--no-tools``)."""

    register_tool: bool = True
    activate_tool: bool = True


def configure(options: StartupOptions) -> TodoConfig:
    if options.tools is None:
        return TodoConfig(register_tool=True, activate_tool=not options.no_tools)
    listed = TOOL_NAME in {name.strip().lower() for name in options.tools.split(",")}
    return TodoConfig(register_tool=listed, activate_tool=listed)


def _clear_delay(session: AgentSession) -> float:
    value = session.settings.get("tasks.todoClearDelay", 60)
    try:
        return float(value)
    except (TypeError, ValueError):
        return 60.0


def restore_from_branch(session: AgentSession, store: TodoStore) -> None:
    """Todos of the current branch: the last successful ``todo_write``, minus finished tasks."""
    entries: list[Any] = session.store.branch_path(session.store.leaf_id)
    store.clear()
    store.set(without_done(latest_todo_phases(entries)))


def install(session: AgentSession, config: TodoConfig) -> None:
    """Add the todo feature to ``session`` (tool, hooks, the store ``get_state`` reads)."""
    store = TodoStore(
        clear_delay_s=lambda: _clear_delay(session),
        on_auto_clear=lambda: session.emit({"type": "todo_auto_clear"}),
    )
    session.features.put(store)
    if session.has_tool(TOOL_NAME):
        logger.warning("a tool named %s is already registered; the built-in one is not added", TOOL_NAME)
    elif config.register_tool and session.settings.get_bool("todo.enabled", True):
        tool = create_todo_write_tool(
            store, lambda: "session" if session.store.path is not None else "memory"
        )
        active = [*session.active_tool_names, tool.name] if config.activate_tool else None
        session.update_tools(add=[tool], active=active)

    reminders = TodoReminders(session, store)
    session.features.put(reminders)
    session.hooks.set_after_run("todo-reminders", reminders)
    session.hooks.set_pre_prompt("todo-reminders", reminders.reset)
    session.hooks.before_user_message.append(eager_prelude(session, store))

    def on_event(event: SessionEvent) -> None:
        if event["type"] != "message_end":
            return
        message = event["message"]
        if message["role"] != "toolResult" or message["toolName"] != TOOL_NAME:
            return
        if message.get("isError"):
            session.queue_hidden_next_turn(_error_reminder(message))

    session.subscribe(on_event)

    def on_session_change(reason: str) -> None:
        if reason == "new":
            store.clear()
            reminders.count = 0
        else:
            restore_from_branch(session, store)

    session.hooks.on_session_change.append(on_session_change)
    restore_from_branch(session, store)


def _error_reminder(message: ToolResultMessage) -> CustomMessage:
    """Hidden next-turn note asking the model to fix a failed ``todo_write`` call."""
    error = next(
        (b["text"] for b in message.get("content") or [] if b["type"] == "text" and b.get("text")), None
    )
    text = "\n".join(
        [
            "<system-reminder>",
            "The last todo_write call failed, so the user cannot see your todo progress.",
            f"Error: {error}" if error else "Error: todo_write returned an error.",
            "Correct the todo_write arguments and call it again before you continue.",
            "</system-reminder>",
        ]
    )
    return custom_message(
        ERROR_REMINDER_TYPE, text, display=False, details={"toolName": TOOL_NAME, "errorText": error}
    )
