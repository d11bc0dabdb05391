"""The built-in coding tools.

``create_coding_tools(cwd, names)`` builds :class:`~xcsh.agent.types.AgentTool`
instances bound to the session working directory, in ``BUILTIN_TOOL_NAMES`` order
(``None`` = all). Provided: ``read``, ``bash``, ``edit`` (replace mode), ``write``,
``grep``, ``find`` and pi-mono's ``ls``. Not provided: the reference's optional
tools (agent-behaviour §13.2) and hashline editing; ``todo_write`` lives with the
todo feature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from xcsh.agent.types import AgentTool
from xcsh.coding.tools.bash import create_bash_tool
from xcsh.coding.tools.edit import create_edit_tool
from xcsh.coding.tools.errors import ToolAbortedError, ToolError
from xcsh.coding.tools.find import create_find_tool
from xcsh.coding.tools.grep import create_grep_tool
from xcsh.coding.tools.ls import create_ls_tool
from xcsh.coding.tools.read import create_read_tool
from xcsh.coding.tools.write import create_write_tool

BUILTIN_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")

_FACTORIES: dict[str, Callable[[Path], AgentTool]] = {
    "read": create_read_tool,
    "bash": create_bash_tool,
    "edit": create_edit_tool,
    "write": create_write_tool,
    "grep": create_grep_tool,
    "find": create_find_tool,
    "ls": create_ls_tool,
}


def create_coding_tools(cwd: Path, names: Sequence[str] | None = None) -> list[AgentTool]:
    """Built-in tools for ``cwd``: all of them (``names=None``) or the named ones, in built-in order.

    Raises ``ValueError`` for a name that is not a built-in tool.
    """
    wanted = BUILTIN_TOOL_NAMES if names is None else tuple(names)
    unknown = [name for name in wanted if name not in _FACTORIES]
    if unknown:
        raise ValueError(f"Unknown built-in tool(s): {', '.join(unknown)}")
    return [_FACTORIES[name](Path(cwd)) for name in BUILTIN_TOOL_NAMES if name in wanted]


__all__ = [
    "BUILTIN_TOOL_NAMES",
    "ToolAbortedError",
    "ToolError",
    "create_bash_tool",
    "create_coding_tools",
    "create_edit_tool",
    "create_find_tool",
    "create_grep_tool",
    "create_ls_tool",
    "create_read_tool",
    "create_write_tool",
]
