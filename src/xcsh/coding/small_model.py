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
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from xcsh.coding.messages import request_text
from xcsh.coding.recovery import (
    MAX_TOOL_CALLS,
    earlier_failures,
    has_small_profile,
    repeat_note,
    reports_unchanged,
    same_result_note,
)

LIMIT_NOTE = (
    "You have made {n} tool calls for this request, the most allowed. Answer now: say what you "
    "changed or found, and what is left to do."
)
MAX_UNCHANGED = 2
UNCHANGED_NOTE = (
    "That is {n} calls for this request that changed nothing. Stop calling tools and answer now: "
    "say what you changed or found, and what is left to do."
)

REAPPLY_NOTE = (
    "Not applied: you made exactly this edit before in this task and it was applied, so the file "
    "already has its new_text; applying it again would add the same text a second time. If the "
    "task's test still fails, this change was not the fix: read the failing line again and change "
    "a different line (old_text = that line as it is now, new_text = the corrected line)."
)
MAX_REPEATS = 3
REPEATS_NOTE = (
    "\n\nThat is {n} times the same call failed the same way. Stop calling tools and answer now: say "
    "what you tried, what failed, and what is left to do."
)

if TYPE_CHECKING:
    from xcsh.agent.types import AgentMessage, AgentToolResult
    from xcsh.ai.types import TextContent, ToolCall
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
        times = 0
        if is_error:
            times = earlier_failures(session.messages, call, changes)
            if times:
                head.append({"type": "text", "text": repeat_note(call["name"], times) + "\n\n"})
        elif not changes(call["name"]):
            times = earlier_failures(session.messages, call, changes, failed_ones=False)
            if times:
                head.append({"type": "text", "text": same_result_note(call["name"], times) + "\n\n"})
        made, unchanged = _this_prompt(session.messages)
        this_unchanged = not is_error and reports_unchanged(result)
        calls, unchanged = made + 1, unchanged + this_unchanged
        repeated = is_error and bool(head) and times >= MAX_REPEATS - 1
        if calls >= MAX_TOOL_CALLS or unchanged >= MAX_UNCHANGED or repeated:
            session.force_next_tool("none")
        tail: list[TextContent] = []
        if calls == MAX_TOOL_CALLS:
            tail.append({"type": "text", "text": LIMIT_NOTE.format(n=calls)})
        elif unchanged == MAX_UNCHANGED and this_unchanged:
            tail.append({"type": "text", "text": UNCHANGED_NOTE.format(n=unchanged)})
        elif repeated:
            tail.append({"type": "text", "text": REPEATS_NOTE.format(n=times + 1)})
        elif call["name"] == "read" and not is_error and isinstance(call["arguments"].get("path"), str):
            from xcsh.coding.small_guards import test_read_note  # its patterns compile on import
            from xcsh.coding.tools.paths import display_path, resolve_path

            path = resolve_path(session.cwd, call["arguments"]["path"])
            note = test_read_note(
                session.cwd, path, display_path(session.cwd, path), request_text(session.messages)
            )
            if note:
                tail.append({"type": "text", "text": note})
        if not (head or tail):
            return None
        noted: AgentToolResult = {**result}
        noted["content"] = [*head, *result["content"], *tail]
        return noted

    def look_first(text: str) -> list[AgentMessage]:
        if has_small_profile(session.model) and session.active_tools():
            session.force_next_tool("required")  # any tool: the choice stays the model's
        return []

    created: set[Path] = set()  # files this session's write created: the model's own, never guarded

    async def guard(call: ToolCall, args: dict[str, Any]) -> str | None:
        if call["name"] not in ("edit", "write") or not has_small_profile(session.model):
            return None
        from xcsh.coding.small_guards import definition_problem, test_file_problem  # on a small model's edit

        cwd = session.cwd
        prompt = request_text(session.messages)
        if call["name"] == "edit" and _applied_before(session.messages, call):
            return await refused(call, REAPPLY_NOTE)
        if call["name"] == "write":
            raw, content = args.get("path"), args.get("content")
            if not isinstance(raw, str) or not isinstance(content, str):
                return None
            from xcsh.coding.tools.paths import display_path, resolve_path  # a small model's first write

            path = resolve_path(cwd, raw)
            if not path.is_file():
                created.add(path)
                return None
            try:
                before = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
            changes = [(path, display_path(cwd, path), before, content, content)]
        else:
            edits = args.get("edits")
            if not isinstance(edits, list):
                return None
            added = "\n".join(str(e.get("new_text", "")) for e in edits if isinstance(e, dict))
            # an edit that changes nothing is checked too: on a test file it is the same mistake
            from xcsh.coding.tools.edit import planned_changes  # the edit tool's code: loaded on use

            changes = [(p, shown, b, a, added) for p, shown, b, a in planned_changes(cwd, edits)]
        for path, shown, before, after, added in changes:
            if path not in created:
                problem = test_file_problem(cwd, path, shown, prompt)
                if problem:
                    return await refused(call, problem)
            if path.suffix == ".py":
                problem = definition_problem(shown, before, after, prompt, added)
                if problem:
                    return await refused(call, problem)
        return None

    async def refused(call: ToolCall, text: str) -> str:
        """A guard's refusal with the notes an error of the tool would get (repeats, bounds)."""
        error: AgentToolResult = {"content": [{"type": "text", "text": text}], "details": {}}
        noted = await annotate(call, error, True)
        blocks = (noted or error)["content"]
        return "".join(b["text"] for b in blocks if b["type"] == "text")

    session.hooks.before_user_message.append(look_first)
    session.hooks.before_tool_call.append(guard)
    session.hooks.after_tool_call.append(annotate)


def _applied_before(messages: Sequence[AgentMessage], call: ToolCall) -> bool:
    """Whether an edit with ``call``'s arguments already changed a file since the last user message."""
    changed: set[str] = set()
    for message in messages[::-1]:
        role = message.get("role")
        if role == "user":
            return False
        if role == "toolResult" and not message.get("isError") and not reports_unchanged(message):
            changed.add(str(message.get("toolCallId")))
        if role == "assistant":
            for block in cast(list[dict[str, Any]], message.get("content") or []):
                if (
                    block.get("type") == "toolCall"
                    and block.get("id") != call["id"]
                    and str(block.get("id")) in changed
                    and block.get("name") == call["name"]
                    and block.get("arguments") == call["arguments"]
                ):
                    return True
    return False


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
