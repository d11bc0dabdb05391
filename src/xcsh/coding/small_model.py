"""The ``small-model`` feature: look first, and a note on a call that already failed the same way.

For a model with the small profile (checked when it matters, so a model switch takes
effect at once; other models are untouched):

- **Look first**: the first model call of every prompt must be a tool call
  (``tool_choice: required``) when the session has active tools. A small model otherwise
  answers questions about the code without reading it, with a plausible guess.
- **Bounded runs**: after ``MAX_TOOL_CALLS`` tool calls for one prompt, the last result
  says so and the next model call may only answer (``tool_choice: none``), so a model
  that loops ends with a report instead of running until someone stops it.
- **Nothing changed, twice**: the second successful call in one prompt that reports it
  changed nothing (``details.unchanged``: a ``write`` of a file's current content) ends the
  tool calls like the bound above: a model that rewrites the same file over and over (seen
  on the task benchmark, 15 identical writes until the timeout) answers instead.
- **Repeats named**: the error of a call identical to one that already failed in this
  conversation (same tool, same arguments), with no successful call of a tool that may
  change things (concurrency ``exclusive``) in between, starts with
  ``recovery.repeat_note``: that it failed before, how often, and that only different
  arguments can work. Running the same failing test again after an edit is no repeat.
  Likewise a look (a tool that changes nothing: read, grep, find) repeated with the same
  arguments and nothing changed since starts with ``recovery.same_result_note``: the
  result is the same as before, use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xcsh.agent.types import AgentMessage, AgentToolResult
from xcsh.ai.types import TextContent, ToolCall
from xcsh.coding.recovery import (
    earlier_failures,
    has_small_profile,
    repeat_note,
    reports_unchanged,
    same_result_note,
)

MAX_TOOL_CALLS = 25
LIMIT_NOTE = (
    "You have made {n} tool calls for this request, the most allowed. Answer now: say what you "
    "changed or found, and what is left to do."
)
MAX_UNCHANGED = 2
UNCHANGED_NOTE = (
    "That is {n} calls for this request that changed nothing. Stop calling tools and answer now: "
    "say what you changed or found, and what is left to do."
)

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

    async def annotate(call: ToolCall, result: AgentToolResult, is_error: bool) -> AgentToolResult | None:
        if not has_small_profile(session.model):
            return None
        head: list[TextContent] = []
        if is_error:
            times = earlier_failures(session.messages, call, changes)
            if times:
                head.append({"type": "text", "text": repeat_note(call["name"], times)})
        elif not changes(call["name"]):
            times = earlier_failures(session.messages, call, changes, failed_ones=False)
            if times:
                head.append({"type": "text", "text": same_result_note(call["name"], times)})
        made, unchanged = _this_prompt(session.messages)
        this_unchanged = not is_error and reports_unchanged(result)
        calls, unchanged = made + 1, unchanged + this_unchanged
        if calls >= MAX_TOOL_CALLS or unchanged >= MAX_UNCHANGED:
            session.force_next_tool("none")
        tail: list[TextContent] = []
        if calls == MAX_TOOL_CALLS:
            tail.append({"type": "text", "text": LIMIT_NOTE.format(n=calls)})
        elif unchanged == MAX_UNCHANGED and this_unchanged:
            tail.append({"type": "text", "text": UNCHANGED_NOTE.format(n=unchanged)})
        if not (head or tail):
            return None
        noted: AgentToolResult = {**result}
        noted["content"] = [*head, *result["content"], *tail]
        return noted

    def look_first(text: str) -> list[AgentMessage]:
        if has_small_profile(session.model) and session.active_tools():
            session.force_next_tool("required")  # any tool: the choice stays the model's
        return []

    session.hooks.before_user_message.append(look_first)
    session.hooks.after_tool_call.append(annotate)


def _this_prompt(messages: Sequence[AgentMessage]) -> tuple[int, int]:
    """Tool results since the last user message: (all of them, the successful ones that changed nothing)."""
    calls = unchanged = 0
    for message in messages[::-1]:
        role = message.get("role")
        if role == "user":
            break
        if role == "toolResult":
            calls += 1
            unchanged += not message.get("isError") and reports_unchanged(message)
    return calls, unchanged
