"""The recovery turn for small models: one more turn after a failed tool call.

A small model often answers a tool error by stopping, with the error as its "answer".
For models whose catalogue entry has ``compat.promptProfile: "small"``, the agent loop
then delivers this hidden message (a ``custom`` message of type ``toolRecovery``,
``display: false``) and lets the model try once more (see ``xcsh.agent.loop``). Other
models end the run as the reference does.
"""

from __future__ import annotations

from xcsh.agent.types import AgentMessage
from xcsh.ai.types import Model, ToolResultMessage
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
