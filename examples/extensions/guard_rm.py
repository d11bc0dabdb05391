"""Ask before any ``bash`` tool call that runs ``rm -rf``; block it unless the user confirms.

Load it with ``xcsh --mode rpc -e examples/extensions/guard_rm.py`` (or copy it into
``<project>/.xcsh/extensions/``). In RPC mode the question is an ``extension_ui_request``
with ``method: "confirm"``; without a host (print mode) ``confirm`` answers ``False``,
so the command is always blocked there.
"""

from __future__ import annotations

import re
from typing import Any

from xcsh.coding.extensions import ExtensionAPI, ExtensionContext

RM_WITH_FLAGS = re.compile(r"\brm((?:\s+-[A-Za-z]+)+)")


def is_dangerous(command: str) -> bool:
    """True when an ``rm`` has both the recursive and the force flag (``-rf``, ``-fr``, ``-r -f``…)."""
    for match in RM_WITH_FLAGS.finditer(command):
        flags = match.group(1).replace("-", "").replace(" ", "").lower()
        if "r" in flags and "f" in flags:
            return True
    return False


async def guard(event: dict[str, Any], ctx: ExtensionContext) -> dict[str, Any] | None:
    if event["toolName"] != "bash":
        return None
    command = str(event["input"].get("command", ""))
    if not is_dangerous(command):
        return None
    allowed = await ctx.ui.confirm("Dangerous command", f"Allow `{command}`?", signal=ctx.signal)
    if allowed:
        return None
    return {"block": True, "reason": f"Blocked by the user: {command}"}


def setup(xcsh: ExtensionAPI) -> None:
    xcsh.on("tool_call", guard)
