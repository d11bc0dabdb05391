"""Todo reminders: after a run stops with open tasks, remind the model and continue (agent-behaviour §8.3).

The reminder is a ``developer`` message appended to the live context only (no events,
not persisted); ``todo_reminder`` tells the host. At most ``todo.reminders.max``
reminders follow one user prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xcsh.coding.hooks import RunAction
from xcsh.coding.messages import developer_message, last_assistant
from xcsh.coding.todos.state import TodoStore, open_tasks_by_phase

if TYPE_CHECKING:
    from xcsh.agent.types import AgentMessage
    from xcsh.coding.session import AgentSession


def reminder_text(open_by_phase: list[tuple[str, list[dict[str, Any]]]], attempt: int, limit: int) -> str:
    """The reminder the model reads (exact layout of agent-behaviour §8.3)."""
    count = sum(len(tasks) for _, tasks in open_by_phase)
    listing = "\n".join(
        f"- {name}\n" + "\n".join(f"  - {task.get('content', '')}" for task in tasks)
        for name, tasks in open_by_phase
    )
    return (
        "<system-reminder>\n"
        f"You stopped with {count} incomplete todo item(s):\n{listing}\n\n"
        "Please continue working on these tasks or mark them complete if finished.\n"
        f"(Reminder {attempt}/{limit})\n"
        "</system-reminder>"
    )


class TodoReminders:
    """Post-run handler: continue the chain with a reminder while todos are open.

    ``count`` is the number of reminders sent since the last user prompt; the feature
    resets it through a pre-prompt hook and on ``new_session``.
    """

    def __init__(self, session: AgentSession, store: TodoStore) -> None:
        self._session = session
        self.store = store
        self.count = 0

    async def after_run(self, added: list[AgentMessage]) -> RunAction | None:
        session = self._session
        last = last_assistant(added)
        if last is None or last.get("stopReason") in ("error", "aborted"):
            return None
        if any(block.get("type") == "toolCall" for block in last.get("content") or []):
            return None
        settings = session.settings
        if not (settings.get_bool("todo.enabled", True) and settings.get_bool("todo.reminders", True)):
            self.count = 0
            return None
        limit = settings.get_int("todo.reminders.max", 3)
        if self.count >= limit:
            return None
        open_by_phase = open_tasks_by_phase(self.store.phases)
        if not open_by_phase:
            self.count = 0
            return None
        self.count += 1
        session.emit(
            {
                "type": "todo_reminder",
                "todos": [
                    {"id": t.get("id"), "content": t.get("content"), "status": t.get("status")}
                    for _, tasks in open_by_phase
                    for t in tasks
                ],
                "attempt": self.count,
                "maxAttempts": limit,
            }
        )
        # live context only: the reminder is neither persisted nor shown (§8.3)
        session.append_message(
            developer_message(reminder_text(open_by_phase, self.count, limit)), persist=False
        )
        return RunAction("continue")

    def cancel(self) -> None:
        """Nothing is pending between runs: the reminder is decided synchronously."""

    async def reset(self) -> None:
        """Pre-prompt hook: a new user prompt starts a fresh reminder budget."""
        self.count = 0
