"""Test extension for the lifecycle: session_start after ready, extension-requested shutdown."""

from __future__ import annotations

import asyncio
from typing import Any

from xcsh.coding.extensions import ExtensionAPI, ExtensionContext


def started(event: dict[str, Any], ctx: ExtensionContext) -> None:
    ctx.ui.notify("session started")


def quit_command(args: str, ctx: ExtensionContext) -> None:
    ctx.shutdown()
    ctx.ui.notify("quitting")


async def goodbye(event: dict[str, Any], ctx: ExtensionContext) -> None:
    await asyncio.sleep(0)  # a real suspension: this handler is awaited to the end
    ctx.ui.notify("goodbye")


def setup(xcsh: ExtensionAPI) -> None:
    xcsh.on("session_start", started)
    xcsh.on("session_shutdown", goodbye)
    xcsh.register_command("quit", quit_command, "ask the process to exit")
