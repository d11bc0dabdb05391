"""Todos: the phased todo list, the ``todo_write`` tool, reminders, auto-clear and the eager prelude.

``install(session, options)`` wires everything into a session; ``todos_of(session)``
returns its :class:`TodoStore` (what ``set_todos`` writes and ``get_state`` reads).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from xcsh.agent.types import AgentEvent
from xcsh.coding.messages import custom_message
from xcsh.coding.todos.prelude import eager_prelude
from xcsh.coding.todos.reminders import TodoReminders
from xcsh.coding.todos.state import TodoStore, latest_todo_phases, without_done
from xcsh.coding.todos.tool import TOOL_NAME, create_todo_write_tool

if TYPE_CHECKING:
    from xcsh.coding.factory import StartupOptions
    from xcsh.coding.session import AgentSession

__all__ = ["TOOL_NAME", "TodoStore", "install", "todos_of"]

logger = logging.getLogger(__name__)

ERROR_REMINDER_TYPE = "todo-write-error-reminder"


def todos_of(session: AgentSession) -> TodoStore | None:
    """The session's todo store, or None when the todo feature is not installed."""
    provider = session.todo_provider
    return provider if isinstance(provider, TodoStore) else None


def _tool_selection(options: StartupOptions) -> tuple[bool, bool]:
    """(registered, active) for ``todo_write`` under ``--tools`` / ``--no-tools``."""
    if options.tools is None:
        return True, not options.no_tools
    listed = "todo_write" in {name.strip().lower() for name in options.tools.split(",")}
    return listed, listed


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


def install(session: AgentSession, options: StartupOptions) -> None:
    """Add the todo feature to ``session`` (tool, hooks, provider for ``get_state``)."""
    store = TodoStore(
        clear_delay_s=lambda: _clear_delay(session),
        on_auto_clear=lambda: session.emit({"type": "todo_auto_clear"}),
    )
    session.todo_provider = store
    registered, active = _tool_selection(options)
    if TOOL_NAME in session.tool_registry:
        logger.warning("a tool named %s is already registered; the built-in one is not added", TOOL_NAME)
    elif registered and session.settings.get_bool("todo.enabled", True):
        tool = create_todo_write_tool(
            store, lambda: "session" if session.store.path is not None else "memory"
        )
        session.tool_registry[tool.name] = tool
        if active and tool.name not in session.active_tool_names:
            session.active_tool_names.append(tool.name)
        session.refresh_tools()

    reminders = TodoReminders(store)
    session.hooks.post_run.append(reminders)
    session.hooks.pre_prompt.append(reminders.reset)
    session.hooks.before_user_message.append(eager_prelude(store))

    def on_event(event: AgentEvent) -> None:
        if event.get("type") != "message_end":
            return
        message = event.get("message") or {}
        if message.get("role") != "toolResult" or message.get("toolName") != TOOL_NAME:
            return
        if message.get("isError"):
            session.hidden_next_turn.append(_error_reminder(message))

    session.subscribe(on_event)

    def on_session_change(changed: AgentSession, reason: str) -> None:
        if reason == "new":
            store.clear()
            reminders.count = 0
        else:
            restore_from_branch(changed, store)

    session.hooks.on_session_change.append(on_session_change)
    restore_from_branch(session, store)


def _error_reminder(message: dict[str, Any]) -> dict[str, Any]:
    """Hidden next-turn note asking the model to fix a failed ``todo_write`` call."""
    error = next(
        (b.get("text") for b in message.get("content") or [] if b.get("type") == "text" and b.get("text")),
        None,
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
