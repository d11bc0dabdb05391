"""The extensions feature: load extensions for a new session and plug the runner into its hooks.

Modes find the session's runner with :func:`runner_for` to give it a UI and an error
sink (the RPC mode does, see ``xcsh.modes.rpc.extension_ui``). Outside RPC mode
``session_start`` is sent as soon as the session exists.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from xcsh.coding.commands import CommandInfo
from xcsh.coding.extensions.loader import extension_paths

if TYPE_CHECKING:
    from xcsh.coding.extensions.runner import ExtensionRunner
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession

logger = logging.getLogger(__name__)


class ExtensionsLoaded:
    """The session's extension runner, kept in ``session.features`` (only when extensions loaded)."""

    __slots__ = ("runner",)

    def __init__(self, runner: ExtensionRunner) -> None:
        self.runner = runner


def runner_for(session: AgentSession) -> ExtensionRunner | None:
    """The extension runner of ``session`` (None when no extension path was given or found)."""
    loaded = session.features.get(ExtensionsLoaded)
    return loaded.runner if loaded is not None else None


class ExtensionCommands:
    """The slash command hook: ``/name args`` for every command an extension registered."""

    def __init__(self, runner: ExtensionRunner) -> None:
        self._runner = runner

    def matches(self, text: str) -> bool:
        from xcsh.coding.extensions.runner import command_parts

        return text.startswith("/") and command_parts(text)[0] in self._runner.commands

    async def run(self, text: str) -> None:
        await self._runner.run_command(text)

    def command_infos(self) -> list[CommandInfo]:
        """The registered commands for the session's command listing."""
        return [
            CommandInfo(
                name=name, description=spec.description, source="extension", location="path", path=ext.path
            )
            for name, (ext, spec) in self._runner.commands.items()
        ]


class ExtensionsConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Where extensions come from, and whether ``session_start`` is sent at install (not RPC mode)."""

    cwd: Path
    agent_dir: Path
    explicit: list[str] = msgspec.field(default_factory=list)
    discover: bool = True
    # the project's own extensions load only in a trusted directory (coding/trust.py)
    project: bool = False
    start_at_install: bool = True


def configure(options: StartupOptions) -> ExtensionsConfig:
    return ExtensionsConfig(
        cwd=options.cwd,
        agent_dir=options.agent_dir,
        explicit=list(options.extensions),
        discover=not options.no_extensions,
        project=options.project_trusted is True,
        start_at_install=not options.rpc_mode,
    )


def install(session: AgentSession, config: ExtensionsConfig) -> None:
    """Load the session's extensions and wire them into its hooks and tool interception."""
    paths = extension_paths(
        cwd=config.cwd,
        agent_dir=config.agent_dir,
        explicit=config.explicit,
        discover=config.discover,
        project=config.project,
    )
    if not paths:
        return
    # the runner and the extension API load only for a session that has extensions
    from xcsh.coding.extensions.runner import ExtensionRunner

    runner = ExtensionRunner(session)
    runner.load(paths)
    session.features.put(ExtensionsLoaded(runner))
    hooks = session.hooks
    hooks.commands.append(ExtensionCommands(runner))
    hooks.before_switch.append(runner.before_switch)
    hooks.before_branch.append(runner.before_branch)
    hooks.on_session_change.append(runner.on_session_change)
    hooks.on_shutdown.append(runner.shutdown_now)
    hooks.before_tool_call.append(runner.before_tool_call)
    hooks.after_tool_call.append(runner.after_tool_call)
    session.subscribe(runner.on_session_event)
    if config.start_at_install:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            logger.debug("no event loop yet: session_start is sent by the mode")
            return
        runner.start()
