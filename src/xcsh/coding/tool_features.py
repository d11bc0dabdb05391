"""Feature installer for the tools that need the session: ``python``, ``task`` and ``inspect_image``.

Each is registered (and activated) by the rules of the other built-ins: on by
default (``python.enabled``, ``inspect_image.enabled``), listed by ``--tools``,
registered-but-inactive under ``--no-tools``. ``task`` is also left out when
``task.maxRecursionDepth`` is 0, and ``inspect_image`` when no available model takes
images. The python kernel is per session, started on first use and killed when the
session shuts down.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import msgspec

from xcsh.agent.tool import AgentTool
from xcsh.coding.options import tool_selection
from xcsh.coding.tools import defined_tool, defs_search

if TYPE_CHECKING:
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession
    from xcsh.coding.tools.kernel import PythonKernel

logger = logging.getLogger(__name__)


class SessionToolsConfig(msgspec.Struct, frozen=True):
    """The ``--tools`` / ``--no-tools`` choice these tools follow (with their enabling settings)."""

    tools: str | None = None
    no_tools: bool = False


def configure(options: StartupOptions) -> SessionToolsConfig:
    return SessionToolsConfig(tools=options.tools, no_tools=options.no_tools)


def install(session: AgentSession, config: SessionToolsConfig) -> None:
    """Register python, task and inspect_image on ``session`` per the tool selection."""
    from xcsh.coding.bash.spill import hold_spill_files

    # the bash output saved past the limit (paths in notices) lives as long as the session
    session.hooks.on_shutdown.append(hold_spill_files())
    added: list[AgentTool] = []
    active: list[str] = []

    def add(tool: AgentTool, activate: bool) -> None:
        if session.has_tool(tool.name):
            logger.warning("a tool named %s is already registered; the built-in one is not added", tool.name)
            return
        added.append(tool)
        if activate:
            active.append(tool.name)

    registered, activate = tool_selection(config, session.settings, "python")
    if registered:
        add(_python_tool(session), activate)
    registered, activate = tool_selection(config, session.settings, "task")
    if registered and session.settings.get_int("task.maxRecursionDepth", 2) != 0:
        from xcsh.coding.subagents.tool import create_task_tool

        add(create_task_tool(session), activate)
    registered, activate = tool_selection(config, session.settings, "inspect_image")
    if registered and session.registry.any_available(lambda m: "image" in m.get("input", [])):
        from xcsh.coding.tools.inspect_image import create_inspect_image_tool

        tool = create_inspect_image_tool(
            session.cwd, session.registry, session.settings, lambda: session.model
        )
        add(tool, activate)
    session.update_tools(add=added, active=[*session.active_tool_names, *active])


def _python_tool(session: AgentSession) -> AgentTool:
    """The ``python`` tool, defined now; its kernel and code load on the first call."""
    kernels: list[PythonKernel] = []

    def build() -> AgentTool:
        from xcsh.coding.tools.kernel import PythonKernel
        from xcsh.coding.tools.python import create_python_tool

        kernel = PythonKernel(session.cwd)
        kernels.append(kernel)
        return create_python_tool(session.cwd, kernel)

    def kill() -> None:
        for kernel in kernels:
            kernel.kill()

    session.hooks.on_shutdown.append(kill)
    description, parameters = defs_search.PYTHON_DESCRIPTION, defs_search.PYTHON_PARAMETERS
    return defined_tool("python", "Python", description, parameters, "exclusive", build)
