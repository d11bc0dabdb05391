"""A status line and a small widget: the turn count and the last tool the agent used.

Each turn updates the ``status-line`` status (``setStatus``) and, after a tool runs, the
``status-line`` widget (``setWidget``) shown below the host's editor. ``/status-reset``
clears both.
"""

from __future__ import annotations

from typing import Any

from xcsh.coding.extensions import ExtensionAPI, ExtensionContext

KEY = "status-line"


class StatusLine:
    def __init__(self) -> None:
        self.turns = 0
        self.last_tool: str | None = None

    def lines(self) -> list[str]:
        return [f"turns: {self.turns}", f"last tool: {self.last_tool or '-'}"]

    def on_turn_start(self, event: dict[str, Any], ctx: ExtensionContext) -> None:
        self.turns += 1
        ctx.ui.set_status(KEY, f"turn {self.turns}")

    def on_tool_end(self, event: dict[str, Any], ctx: ExtensionContext) -> None:
        self.last_tool = str(event["toolName"])
        ctx.ui.set_widget(KEY, self.lines(), placement="belowEditor")

    def on_agent_end(self, event: dict[str, Any], ctx: ExtensionContext) -> None:
        ctx.ui.set_status(KEY, f"idle after {self.turns} turns")

    def reset(self, args: str, ctx: ExtensionContext) -> None:
        self.turns = 0
        self.last_tool = None
        ctx.ui.set_status(KEY)
        ctx.ui.set_widget(KEY)


def setup(xcsh: ExtensionAPI) -> None:
    status = StatusLine()
    xcsh.on("turn_start", status.on_turn_start)
    xcsh.on("tool_execution_end", status.on_tool_end)
    xcsh.on("agent_end", status.on_agent_end)
    xcsh.register_command("status-reset", status.reset, "clear the status line and widget")
