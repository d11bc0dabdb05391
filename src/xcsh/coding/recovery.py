"""Recovery for small models: more turns when they stop too early; repeated calls named.

A small model often answers a tool error by stopping, with the error as its "answer",
or claims that a change works without running anything. For models whose catalogue entry
has ``compat.promptProfile: "small"``, when the model stops the agent loop asks
``recovery_message``, which may deliver a hidden message (a ``custom`` message of type
``toolRecovery``, ``display: false``, ``details.kind``) and give one more turn (see
``xcsh.agent.loop``): after a failed call that nothing resolved (``failed``; the turn
must call a tool), or after files were changed with ``edit``/``write`` and no ``bash``
ran afterwards (``verify``; the model may still answer), or when the run attempted no change
at all (no edit or write, no bash command that may change files, fewer calls than the
bound) although the request asks for a change (``unchanged``: an imperative change verb such as
"rename", "add", "fix" opens one of its clauses; only when no other turn was given; the turn
must call a tool; a question is never asked to change anything). Each kind once per run, at most two per run (the loop's
bound). Other models end the run as the reference does.

It also loops: the same failing call again and again, with a ``read`` in between. The
``small-model`` feature (``xcsh.coding.small_model``) therefore puts ``repeat_note`` in
front of the error of a call identical (same tool, same arguments) to one that already
failed in this conversation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from xcsh.ai.patterns import LazyPattern
from xcsh.coding.messages import custom_message, request_text

if TYPE_CHECKING:
    from xcsh.agent.loop import RecoveryTurn
    from xcsh.agent.types import AgentMessage
    from xcsh.ai.types import Model, ToolCall, ToolResultMessage

SMALL_PROFILE = "small"
MAX_TOOL_CALLS = 25  # tool calls per prompt before a small model must answer (``xcsh.coding.small_model``)
RECOVERY_TYPE = "toolRecovery"


def has_small_profile(model: Model) -> bool:
    """True when the model's catalogue entry names the small-model profile."""
    return (model.get("compat") or {}).get("promptProfile") == SMALL_PROFILE


def recovery_message(
    model: Model, failed: list[ToolResultMessage], run: list[AgentMessage]
) -> RecoveryTurn | None:
    """One more turn for a small model that stopped too early, or None (see the module doc).

    Each kind at most once per run: after unresolved ``failed`` calls (``failed``: a tool
    call is required), then after a change to files that nothing was run after (``verify``).
    """
    if not has_small_profile(model):
        return None
    from xcsh.agent.loop import RecoveryTurn  # called by the loop: already imported then

    given = {
        cast(dict[str, Any], m.get("details") or {}).get("kind")
        for m in run
        if m.get("role") == "custom" and m.get("customType") == RECOVERY_TYPE
    }
    if failed and "failed" not in given:
        names = " and ".join(dict.fromkeys(r["toolName"] for r in failed))
        text = (
            f"Your last {names} call failed (the error is above), so the task is probably not done yet. "
            "Do what the error says to fix the call (read the file first if you have not) and continue. "
            "If the task cannot be done, answer with the reason."
        )
        if names == "bash":
            text = (
                "Your last bash command failed (the output is above). If it is the task's own test or "
                "command, the task is not done: fix what it reports and run it again. If the command "
                "itself was wrong (a file, test or module that does not exist), do not change anything "
                "for it: check your change or give your final answer."
            )
        message = custom_message(RECOVERY_TYPE, text, display=False, details={"kind": "failed"})
        return RecoveryTurn(message, tool_choice="required")
    changed = changed_since_last_run(run)
    if changed and "verify" not in given:
        text = (
            f"You changed {', '.join(changed)} but ran nothing after the change. If the task names a "
            "test or a command to run, run it now with bash and fix what still fails. If it names "
            "none, do not ask for one: give your final answer again, saying what you changed."
        )
        return RecoveryTurn(custom_message(RECOVERY_TYPE, text, display=False, details={"kind": "verify"}))
    request = request_text(run, last=False)
    if not given and asks_for_change(request) and _attempted_nothing(run):
        text = (
            "No file has been changed in this run yet, but the task asks for a change. Make the change "
            "now: edit each file that needs it (old_text copied exactly from the file as you read it, "
            "new_text the changed text), then run the task's command if it names one. If you already "
            "made the change with a bash command, run the task's command to show it."
        ) + _rename_hint(request, run)
        message = custom_message(RECOVERY_TYPE, text, display=False, details={"kind": "unchanged"})
        return RecoveryTurn(message, tool_choice="required")
    return None


_CHANGE_REQUEST = LazyPattern(
    r"(?:^|[.!?:;,]\s+|\band\s+)(?:please\s+)?(add|rename|fix|change|set|raise|lower|update|replace|remove|"
    r"delete|implement|create|write|make|move|refactor|edit|increase|decrease|bump|enable|disable|"
    r"convert|append|insert)\b",
    re.IGNORECASE,
)
_BASH_CHANGES = LazyPattern(
    r"\bsed\s+-i|\bperl\s+-\w*i|(?:^|[^2&])>\s*[\w./]|\b(mv|cp|rm|tee|patch|touch|mkdir)\b|\bgit\s+(apply|mv|rm)\b"
)


def asks_for_change(request: str) -> bool:
    """Whether the request asks to change something: an imperative change verb opens one of its clauses.

    "Rename the function …", "In config.json, change the port …" ask for a change; "Which file
    defines …? Answer with …" does not.
    """
    return bool(_CHANGE_REQUEST.search(request.strip()))


_RENAME = LazyPattern(
    r"\brename\b(?:\s+the)?(?:\s+(?:function|method|class|variable|constant|setting))?\s+`?(\w+)`?\s+to\s+`?(\w+)`?",
    re.IGNORECASE,
)
_MAX_HINT_EDITS = 12


def _rename_hint(request: str, run: list[AgentMessage]) -> str:
    """For "rename A to B": the lines with A that ``run`` showed (reads, grep matches), as one edit call."""
    found = _RENAME.search(request)
    if not found:
        return ""
    import json  # a small model's rename only

    old, new = found.groups()
    word = re.compile(rf"\b{re.escape(old)}\b")
    edits: list[dict[str, str]] = []
    for path, text in _read_results(run):
        seen = {e["old_text"] for e in edits if e["path"] == path}
        for line in text.split("\n"):
            if word.search(line) and line not in seen:
                seen.add(line)
                edits.append({"path": path, "old_text": line, "new_text": word.sub(new, line)})
    if not edits:
        return (
            f" To rename {old} to {new}, read each file that uses {old} and edit every line with {old}: "
            f"old_text the line as read, new_text the same line with {new}."
        )
    call = {"tool": "edit", "arguments": {"edits": edits[:_MAX_HINT_EDITS]}}
    return (
        f"\nThe lines with {old} that you have seen, each changed to {new}, as one call ready to copy "
        f"(add any line you have not seen yet):\n{json.dumps(call)}"
    )


_GREP_MATCH = LazyPattern(r"^([^\s:][^:]*):(\d+):(.*)$")


def _read_results(run: list[AgentMessage]) -> list[tuple[str, str]]:
    """(path, text) of what ``run`` showed of files: each successful ``read`` (a path's last read),
    and the matching lines of each successful ``grep`` (``path:line:text``)."""
    paths: dict[str, str | None] = {}  # call id → the read's path, or None for a grep
    for message in run:
        if message.get("role") != "assistant":
            continue
        for block in cast(list[dict[str, Any]], message.get("content") or []):
            path = (block.get("arguments") or {}).get("path") if block.get("type") == "toolCall" else None
            if block.get("name") == "read" and isinstance(path, str):
                paths[str(block.get("id"))] = path
            elif block.get("type") == "toolCall" and block.get("name") == "grep":
                paths[str(block.get("id"))] = None
    texts: dict[str, str] = {}
    for message in run:
        call_id = str(message.get("toolCallId"))
        if message.get("role") != "toolResult" or message.get("isError") or call_id not in paths:
            continue
        blocks = cast(list[dict[str, Any]], message.get("content") or [])
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        read_path = paths[call_id]
        if read_path is not None:
            texts[read_path] = text
            continue
        for line in text.split("\n"):
            match = _GREP_MATCH.match(line)
            if match:
                texts[match[1]] = texts.get(match[1], "") + match[3] + "\n"
    return list(texts.items())


def _attempted_nothing(run: list[AgentMessage]) -> bool:
    """Whether ``run`` holds no edit or write call (but those that changed nothing) and no bash command
    that may change files.

    Also false once the run reached the tool-call bound or made two calls that changed nothing
    (its calls were ended on purpose).
    """
    if sum(m.get("role") == "toolResult" for m in run) >= MAX_TOOL_CALLS:
        return False
    # an edit or write that changed nothing (a no-op edit of old text by itself) attempted nothing
    futile = {m.get("toolCallId") for m in run if m.get("role") == "toolResult" and reports_unchanged(m)}
    if len(futile) >= 2:  # two calls that changed nothing end the tool calls on purpose (small_model)
        return False
    for message in run:
        if message.get("role") != "assistant":
            continue
        for block in cast(list[dict[str, Any]], message.get("content") or []):
            if block.get("type") != "toolCall" or block.get("id") in futile:
                continue
            name = block.get("name")
            command = str((block.get("arguments") or {}).get("command", ""))
            if name in _CHANGING_TOOLS or (name == "bash" and _BASH_CHANGES.search(command)):
                return False
    return True


def changed_since_last_run(run: list[AgentMessage]) -> list[str]:
    """Files changed by successful edit/write calls in ``run`` after its last ``bash`` call.

    A call whose result reports that it changed nothing (``details.unchanged``) changed no file.
    """
    paths: dict[str, None] = {}
    ok = {
        m.get("toolCallId")
        for m in run
        if m.get("role") == "toolResult" and not m.get("isError") and not reports_unchanged(m)
    }
    for message in run:
        if message.get("role") != "assistant":
            continue
        for block in cast(list[dict[str, Any]], message.get("content") or []):
            if block.get("type") != "toolCall":
                continue
            args = block.get("arguments") or {}
            if block.get("name") == "bash":
                paths.clear()
            elif block.get("id") in ok and block.get("name") in _CHANGING_TOOLS:
                for path in _paths_of(args):
                    paths[path] = None
    return list(paths)


_CHANGING_TOOLS = ("edit", "write")


def reports_unchanged(result: Mapping[str, Any]) -> bool:
    """Whether a tool result (or toolResult message) says it changed nothing (``details.unchanged``)."""
    details = result.get("details")
    return isinstance(details, dict) and details.get("unchanged") is True


def _paths_of(args: dict[str, Any]) -> list[str]:
    if isinstance(args.get("path"), str):
        return [args["path"]]
    edits = args.get("edits")
    found = (
        [e["path"] for e in edits if isinstance(e, dict) and isinstance(e.get("path"), str)]
        if isinstance(edits, list)
        else []
    )
    return found or ["a file"]


def earlier_failures(
    messages: Sequence[AgentMessage],
    call: ToolCall,
    changes: Callable[[str], bool] = lambda name: False,
    *,
    failed_ones: bool = True,
) -> int:
    """How many earlier calls had ``call``'s tool and arguments and failed, with nothing changed since.

    Counting starts after the last successful call of a tool for which ``changes`` is true
    (one that may change files: running the same test again after an edit is no repeat),
    unless its result reports that it changed nothing (``details.unchanged``).
    With ``failed_ones=False`` the earlier identical calls that succeeded are counted instead.
    """
    ok = {m.get("toolCallId") for m in messages if m.get("role") == "toolResult" and not m.get("isError")}
    changed = {
        m.get("toolCallId")
        for m in messages
        if m.get("role") == "toolResult" and not m.get("isError") and not reports_unchanged(m)
    }
    failed = (
        ok
        if not failed_ones
        else {m.get("toolCallId") for m in messages if m.get("role") == "toolResult" and m.get("isError")}
    )
    count = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for block in cast(list[dict[str, Any]], message.get("content") or []):
            if block.get("type") != "toolCall" or block.get("id") == call["id"]:
                continue
            if block.get("id") in changed and changes(str(block.get("name"))):
                count = 0
            elif (
                block.get("id") in failed
                and block.get("name") == call["name"]
                and block.get("arguments") == call["arguments"]
            ):
                count += 1
    return count


def repeat_note(name: str, times: int) -> str:
    """The note put before the error of a call that already failed ``times`` times."""
    before = "once before" if times == 1 else f"{times} times before"
    return (
        f"You made exactly this {name} call {before}, with the same arguments, and it failed the same "
        "way. Repeating it cannot work: make a different call, with the arguments changed as the error "
        "below says (copy text exactly from it)."
    )


def same_result_note(name: str, times: int) -> str:
    """The note put before the result of a look (read, grep …) already made ``times`` times."""
    before = "once before" if times == 1 else f"{times} times before"
    return (
        f"You made exactly this {name} call {before} and nothing has changed since, so its result is "
        "the same as before. Do not look again: use what you found (make the change, run the test, "
        "or give your final answer)."
    )
