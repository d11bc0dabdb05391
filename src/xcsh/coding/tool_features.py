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

from xcsh.agent.types import AgentTool

if TYPE_CHECKING:
    from xcsh.coding.factory import StartupOptions
    from xcsh.coding.session import AgentSession

logger = logging.getLogger(__name__)


def _add(session: AgentSession, tool: AgentTool, active: bool) -> None:
    if tool.name in session.tool_registry:
        logger.warning("a tool named %s is already registered; the built-in one is not added", tool.name)
        return
    session.tool_registry[tool.name] = tool
    if active and tool.name not in session.active_tool_names:
        session.active_tool_names.append(tool.name)


def install(session: AgentSession, options: StartupOptions) -> None:
    """Register python, task and inspect_image on ``session`` per the tool selection."""
    from xcsh.coding.factory import tool_selection

    registered, active = tool_selection(options, session.settings, "python")
    if registered:
        from xcsh.coding.tools.kernel import PythonKernel
        from xcsh.coding.tools.python import create_python_tool

        kernel = PythonKernel(session.cwd)
        _add(session, create_python_tool(session.cwd, kernel), active)
        session.hooks.on_shutdown.append(lambda _session: kernel.kill())
    registered, active = tool_selection(options, session.settings, "task")
    if registered and session.settings.get_int("task.maxRecursionDepth", 2) != 0:
        from xcsh.coding.subagents.tool import create_task_tool

        _add(session, create_task_tool(session), active)
    registered, active = tool_selection(options, session.settings, "inspect_image")
    if registered and any("image" in m.get("input", []) for m in session.registry.available_models()):
        from xcsh.coding.tools.inspect_image import create_inspect_image_tool

        tool = create_inspect_image_tool(
            session.cwd, session.registry, session.settings, lambda: session.model
        )
        _add(session, tool, active)
    session.refresh_tools()
