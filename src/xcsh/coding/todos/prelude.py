"""The eager todo prelude: the first prompt of a conversation asks the model to plan first (agent-behaviour §8.4).

A hidden ``custom`` message goes before the user message, and the run's first model
call forces ``todo_write``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xcsh.coding.hooks import PromptContributor
from xcsh.coding.messages import custom_message
from xcsh.coding.recovery import has_small_profile
from xcsh.coding.todos.state import TodoStore
from xcsh.coding.todos.tool import TOOL_NAME

if TYPE_CHECKING:
    from xcsh.agent.types import AgentMessage
    from xcsh.coding.session import AgentSession

PRELUDE_TYPE = "eager-todo-prelude"

PRELUDE_TEXT = """<system-reminder>
Plan before you act: your first action for the request below is a `todo_write` call.

- Call `todo_write` once, with a single `replace` op holding the whole plan.
- Split the work into phases that run from understanding the problem through the change itself to checking the result.
- Give every task a short label (a few words) in `content`; put files, commands and specifics in `details`.
- Exactly one task is `in_progress` (the first); all the others are `pending`.

Once that call succeeds, carry on with the request in this same turn, and call `todo_write` again only when a task's state really changes.
</system-reminder>"""


def wants_prelude(session: AgentSession, store: TodoStore, text: str) -> bool:
    """Whether this prompt gets the prelude (every condition of agent-behaviour §8.4)."""
    settings = session.settings
    if not (settings.get_bool("todo.eager", False) and settings.get_bool("todo.enabled", True)):
        return False
    if not store.is_empty:
        return False
    if any(m.get("role") == "user" for m in session.messages):
        return False
    if text.rstrip().endswith(("?", "!")):
        return False
    if has_small_profile(session.model):
        # a forced plan costs a small local model minutes and derails it (docs/local-model.md)
        return False
    # Registered is enough (it may be inactive, as with --no-tools); plan mode does not
    # exist here, and every provider we ship can force a named tool.
    return session.has_tool(TOOL_NAME)


def eager_prelude(session: AgentSession, store: TodoStore) -> PromptContributor:
    """A ``before_user_message`` contributor that adds the prelude and forces ``todo_write``."""

    def contribute(text: str) -> list[AgentMessage]:
        if not wants_prelude(session, store, text):
            return []
        session.force_next_tool(TOOL_NAME)
        return [custom_message(PRELUDE_TYPE, PRELUDE_TEXT, display=False)]

    return contribute
