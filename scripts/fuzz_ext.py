"""The extension `scripts/fuzz_rpc.py` loads: dialogs from commands, tool calls and session switches.

Every dialog either has a short timeout or waits for the host, so the fuzzer's random
`extension_ui_response` frames (right ids, wrong ids, wrong value types, duplicates) meet
dialogs opened from a command, from inside a run (``tool_call``) and from inside a blocking
command (``session_before_switch``, ``session_before_branch``).
"""

from __future__ import annotations

from typing import Any

from xcsh.coding.extensions import ExtensionAPI, ExtensionContext


async def fz_confirm(args: str, ctx: ExtensionContext) -> None:
    ctx.ui.notify(f"confirm={await ctx.ui.confirm('Confirm', 'Continue?', timeout_ms=1500)}")


async def fz_select(args: str, ctx: ExtensionContext) -> None:
    ctx.ui.notify(f"select={await ctx.ui.select('Pick', ['a', 'b'])}")


async def fz_input(args: str, ctx: ExtensionContext) -> None:
    ctx.ui.notify(f"input={await ctx.ui.input('Name', 'x', timeout_ms=800)}")


async def fz_editor(args: str, ctx: ExtensionContext) -> None:
    ctx.ui.notify(f"editor={await ctx.ui.editor('Edit', 'prefill')}")


def fz_misc(args: str, ctx: ExtensionContext) -> None:
    ctx.ui.set_status("k", "busy")
    ctx.ui.set_widget("w", ["l1", "\u2028"], placement="belowEditor")
    ctx.ui.set_editor_text("draft\x00")
    ctx.ui.notify("misc", "error")


def fz_throw(args: str, ctx: ExtensionContext) -> None:
    raise RuntimeError("boom")


async def on_tool_call(event: dict[str, Any], ctx: ExtensionContext) -> dict[str, Any] | None:
    if event.get("toolName") != "bash":
        return None
    ok = await ctx.ui.confirm("Run bash?", str(event.get("input"))[:100], timeout_ms=1000)
    return None if ok else {"block": True, "reason": "refused by the fuzz extension"}


async def on_before_switch(event: dict[str, Any], ctx: ExtensionContext) -> dict[str, Any] | None:
    choice = await ctx.ui.select("Switch?", ["yes", "veto"], timeout_ms=700)
    return {"cancel": True} if choice == "veto" else None


async def on_before_branch(event: dict[str, Any], ctx: ExtensionContext) -> dict[str, Any] | None:
    ok = await ctx.ui.confirm("Branch?", "sure?", timeout_ms=700)
    return None if ok else {"cancel": True}


async def on_turn_end(event: dict[str, Any], ctx: ExtensionContext) -> None:
    ctx.ui.set_status("turn", "ended")


def setup(xcsh: ExtensionAPI) -> None:
    xcsh.register_command("fz-confirm", fz_confirm, "confirm with a timeout")
    xcsh.register_command("fz-select", fz_select, "select without a timeout")
    xcsh.register_command("fz-input", fz_input, "input with a timeout")
    xcsh.register_command("fz-editor", fz_editor, "editor (no timeout)")
    xcsh.register_command("fz-misc", fz_misc, "fire-and-forget methods")
    xcsh.register_command("fz-throw", fz_throw, "a failing command")
    xcsh.on("tool_call", on_tool_call)
    xcsh.on("session_before_switch", on_before_switch)
    xcsh.on("session_before_branch", on_before_branch)
    xcsh.on("turn_end", on_turn_end)
