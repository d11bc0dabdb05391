"""The extensions feature: load extensions for a new session and plug the runner into its hooks.

Modes find the session's runner with :func:`runner_for` to give it a UI and an error
sink (the RPC mode does, see ``xcsh.modes.rpc.extension_ui``). Outside RPC mode
``session_start`` is sent as soon as the session exists.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import TYPE_CHECKING, Any

from xcsh.agent.types import AgentToolResult
from xcsh.ai.types import ToolCall
from xcsh.coding.commands import CommandInfo
from xcsh.coding.extensions.loader import extension_paths
from xcsh.coding.extensions.runner import ExtensionRunner, command_parts

if TYPE_CHECKING:
    from xcsh.coding.factory import StartupOptions
    from xcsh.coding.session import AgentSession

logger = logging.getLogger(__name__)

_RUNNERS: weakref.WeakKeyDictionary[AgentSession, ExtensionRunner] = weakref.WeakKeyDictionary()


def runner_for(session: AgentSession) -> ExtensionRunner | None:
    """The extension runner of ``session`` (None when no extension path was given or found)."""
    return _RUNNERS.get(session)


class ExtensionCommands:
    """The slash command hook: ``/name args`` for every command an extension registered."""

    def __init__(self, runner: ExtensionRunner) -> None:
        self._runner = runner

    def matches(self, text: str) -> bool:
        return text.startswith("/") and command_parts(text)[0] in self._runner.commands

    async def run(self, session: AgentSession, text: str) -> None:
        await self._runner.run_command(text)

    def command_infos(self) -> list[CommandInfo]:
        """The registered commands for the session's command listing."""
        return [
            CommandInfo(
                name=name, description=spec.description, source="extension", location="path", path=ext.path
            )
            for name, (ext, spec) in self._runner.commands.items()
        ]


def install(session: AgentSession, options: StartupOptions) -> None:
    """Load the session's extensions and wire them into its hooks and tool interception."""
    paths = extension_paths(
        cwd=options.cwd,
        agent_dir=options.agent_dir,
        explicit=options.extensions,
        discover=not options.no_extensions,
        project=options.project_trusted is True,
    )
    if not paths:
        return
    runner = ExtensionRunner(session)
    runner.load(paths)
    _RUNNERS[session] = runner
    hooks = session.hooks
    hooks.commands.append(ExtensionCommands(runner))
    hooks.before_switch.append(runner.before_switch)
    hooks.before_branch.append(runner.before_branch)
    hooks.on_session_change.append(runner.on_session_change)
    hooks.on_shutdown.append(lambda _session: runner.shutdown_now())
    session.subscribe(runner.on_session_event)
    _chain_tool_hooks(session, runner)
    if not options.rpc_mode:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            logger.debug("no event loop yet: session_start is sent by the mode")
            return
        runner.start()


def _chain_tool_hooks(session: AgentSession, runner: ExtensionRunner) -> None:
    """Run the extensions' tool hooks after any hook installed before them."""
    agent = session.agent
    previous_before = agent.before_tool_call
    previous_after = agent.after_tool_call

    async def before(call: ToolCall, args: dict[str, Any]) -> str | None:
        if previous_before is not None:
            blocked = await previous_before(call, args)
            if blocked:
                return blocked
        return await runner.before_tool_call(call, args)

    async def after(call: ToolCall, result: AgentToolResult, is_error: bool) -> AgentToolResult | None:
        replaced = None
        if previous_after is not None:
            replaced = await previous_after(call, result, is_error)
        ours = await runner.after_tool_call(call, replaced if replaced is not None else result, is_error)
        return ours if ours is not None else replaced

    agent.before_tool_call = before
    agent.after_tool_call = after
