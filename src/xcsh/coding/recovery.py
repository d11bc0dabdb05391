"""Recovery for small models: one more turn after a failed tool call; repeated calls named.

A small model often answers a tool error by stopping, with the error as its "answer".
For models whose catalogue entry has ``compat.promptProfile: "small"``, the agent loop
then delivers this hidden message (a ``custom`` message of type ``toolRecovery``,
``display: false``) and lets the model try once more (see ``xcsh.agent.loop``). Other
models end the run as the reference does.

It also loops: the same failing call again and again, with a ``read`` in between. The
``small-model`` feature (``xcsh.coding.small_model``) therefore puts ``repeat_note`` in
front of the error of a call identical (same tool, same arguments) to one that already
failed in this conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xcsh.agent.types import AgentMessage
from xcsh.ai.types import Model, ToolCall, ToolResultMessage
from xcsh.coding.messages import custom_message

SMALL_PROFILE = "small"
RECOVERY_TYPE = "toolRecovery"


def has_small_profile(model: Model) -> bool:
    """True when the model's catalogue entry names the small-model profile."""
    return (model.get("compat") or {}).get("promptProfile") == SMALL_PROFILE


def recovery_message(model: Model, failed: list[ToolResultMessage]) -> AgentMessage | None:
    """The nudge after ``failed`` tool results, or None when ``model`` does not get one."""
    if not has_small_profile(model) or not failed:
        return None
    names = " and ".join(dict.fromkeys(r["toolName"] for r in failed))
    text = (
        f"Your last {names} call failed (the error is above), so the task is probably not done yet. "
        "Do what the error says to fix the call (read the file first if you have not) and continue. "
        "If the task cannot be done, answer with the reason."
    )
    return custom_message(RECOVERY_TYPE, text, display=False)


def earlier_failures(messages: Sequence[AgentMessage], call: ToolCall) -> int:
    """How many earlier calls in ``messages`` had ``call``'s tool and arguments and failed."""
    failed_ids = {
        m.get("toolCallId")
        for m in messages
        if m.get("role") == "toolResult" and m.get("isError") and m.get("toolCallId") != call["id"]
    }
    count = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for block in cast(list[dict[str, Any]], message.get("content") or []):
            if (
                block.get("type") == "toolCall"
                and block.get("id") in failed_ids
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
