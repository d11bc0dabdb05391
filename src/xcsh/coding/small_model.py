"""The ``small-model`` feature: look first, and a note on a call that already failed the same way.

For a model with the small profile (checked when it matters, so a model switch takes
effect at once; other models are untouched):

- **Look first**: the first model call of every prompt must be a tool call
  (``tool_choice: required``) when the session has active tools. A small model otherwise
  answers questions about the code without reading it, with a plausible guess.
- **Repeats named**: the error of a call identical to one that already failed in this
  conversation (same tool, same arguments), with no successful call of a tool that may
  change things (concurrency ``exclusive``) in between, starts with
  ``recovery.repeat_note``: that it failed before, how often, and that only different
  arguments can work. Running the same failing test again after an edit is no repeat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xcsh.agent.types import AgentMessage, AgentToolResult
from xcsh.ai.types import ToolCall
from xcsh.coding.recovery import earlier_failures, has_small_profile, repeat_note

if TYPE_CHECKING:
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession


def configure(options: StartupOptions) -> bool:
    """Always on: whether a call is noted is decided by the model in use at that time."""
    return True


def install(session: AgentSession, config: bool) -> None:
    """Note repeated failing calls of small models (an ``after_tool_call`` hook)."""

    def changes(name: str) -> bool:
        tool = session.tool(name)
        return tool is not None and tool.concurrency == "exclusive"  # edit, write, bash …

    async def note_repeats(call: ToolCall, result: AgentToolResult, is_error: bool) -> AgentToolResult | None:
        if not is_error or not has_small_profile(session.model):
            return None
        times = earlier_failures(session.messages, call, changes)
        if not times:
            return None
        noted: AgentToolResult = {**result}
        noted["content"] = [{"type": "text", "text": repeat_note(call["name"], times)}, *result["content"]]
        return noted

    def look_first(text: str) -> list[AgentMessage]:
        if has_small_profile(session.model) and session.active_tools():
            session.force_next_tool("required")  # any tool: the choice stays the model's
        return []

    session.hooks.before_user_message.append(look_first)
    session.hooks.after_tool_call.append(note_repeats)
