"""Test extension for scenarios S37–S41: one prompt command per UI method (scenarios.md §E)."""

from __future__ import annotations

from xcsh.coding.extensions import ExtensionAPI, ExtensionContext


async def ui_confirm(args: str, ctx: ExtensionContext) -> None:
    value = await ctx.ui.confirm("Confirm", "Continue?", timeout_ms=30000)
    ctx.ui.notify(f"confirm={'true' if value else 'false'}")


async def ui_input(args: str, ctx: ExtensionContext) -> None:
    value = await ctx.ui.input("Branch name", "feature/...", timeout_ms=300)
    ctx.ui.notify(f"input={value if value is not None else 'none'}", "warning")


async def ui_input_wait(args: str, ctx: ExtensionContext) -> None:
    value = await ctx.ui.input("Branch name", "feature/...")
    ctx.ui.notify(f"input={value if value is not None else 'none'}", "warning")


async def ui_select(args: str, ctx: ExtensionContext) -> None:
    value = await ctx.ui.select("Pick", ["a", "b"])
    ctx.ui.notify(f"select={value if value is not None else 'none'}")


def ui_misc(args: str, ctx: ExtensionContext) -> None:
    ctx.ui.set_status("k", "busy")
    ctx.ui.set_status("k")
    ctx.ui.set_widget("w", ["l1", "l2"], placement="belowEditor")
    ctx.ui.set_editor_text("draft")
    ctx.ui.set_title("T")


def ui_throw(args: str, ctx: ExtensionContext) -> None:
    raise RuntimeError("boom")


def setup(xcsh: ExtensionAPI) -> None:
    xcsh.register_command("ui-confirm", ui_confirm, "confirm round trip")
    xcsh.register_command("ui-input", ui_input, "input with a 300 ms timeout")
    xcsh.register_command("ui-input-wait", ui_input_wait, "input without a timeout")
    xcsh.register_command("ui-select", ui_select, "select without timeout")
    xcsh.register_command("ui-misc", ui_misc, "fire-and-forget methods")
    xcsh.register_command("ui-throw", ui_throw, "a failing command")
