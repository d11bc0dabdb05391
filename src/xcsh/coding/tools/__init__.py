"""The built-in coding tools.

``create_coding_tools(cwd, names, options)`` builds :class:`~xcsh.agent.types.AgentTool`
instances bound to the session working directory, in ``BUILTIN_TOOL_NAMES`` order
(``None`` = all). Provided: ``read``, ``bash``, ``edit`` (hashline or replace mode,
per ``ToolOptions.edit_mode``), ``write``, ``grep``, ``find``, ``ast_grep``,
``ast_edit``, ``notebook``, ``calc`` and pi-mono's ``ls`` (opt-in). Tools that need the
session (``todo_write``, ``python``, ``task``, ``inspect_image``) are added by their
features. See docs/tools.md for the full set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xcsh.agent.types import AgentTool
from xcsh.coding.tools.ast_tools import create_ast_edit_tool, create_ast_grep_tool
from xcsh.coding.tools.bash import create_bash_tool
from xcsh.coding.tools.calc import create_calc_tool
from xcsh.coding.tools.edit import create_edit_tool
from xcsh.coding.tools.edit_hashline import create_hashline_edit_tool
from xcsh.coding.tools.errors import ToolAbortedError, ToolError
from xcsh.coding.tools.find import create_find_tool
from xcsh.coding.tools.grep import create_grep_tool
from xcsh.coding.tools.ls import create_ls_tool
from xcsh.coding.tools.notebook import create_notebook_tool
from xcsh.coding.tools.read import Numbering, create_read_tool
from xcsh.coding.tools.write import create_write_tool

BUILTIN_TOOL_NAMES: tuple[str, ...] = (
    "read",
    "bash",
    "edit",
    "write",
    "grep",
    "find",
    "ls",
    "ast_grep",
    "ast_edit",
    "notebook",
    "calc",
)
# active when --tools is not given (pi-mono's ls is opt-in: the reference has none)
DEFAULT_TOOL_NAMES: tuple[str, ...] = tuple(name for name in BUILTIN_TOOL_NAMES if name != "ls")
# the reference's per-tool enabling settings (all default to true)
ENABLING_SETTINGS: dict[str, str] = {
    "grep": "grep.enabled",
    "find": "find.enabled",
    "ast_grep": "astGrep.enabled",
    "ast_edit": "astEdit.enabled",
    "notebook": "notebook.enabled",
    "calc": "calc.enabled",
    "python": "python.enabled",
    "inspect_image": "inspect_image.enabled",
}
# registered (not active) with their text sibling when --tools names it
COMPANIONS: dict[str, str] = {"grep": "ast_grep", "edit": "ast_edit"}

EDIT_MODES: tuple[str, ...] = ("hashline", "replace")


@dataclass(slots=True, frozen=True)
class ToolOptions:
    """What shapes the built-in tools: settings (``edit.mode``, ``readHashLines``, ``readLineNumbers``)
    and, for a small starting model, the ``write`` overwrite guard."""

    edit_mode: str = "hashline"
    read_hash_lines: bool = True
    read_line_numbers: bool = False
    guard_overwrite: bool = False

    @property
    def numbering(self) -> Numbering:
        """How ``read`` prefixes lines: anchors when editing by hashline, else numbers if asked."""
        if self.edit_mode == "hashline" and self.read_hash_lines:
            return "hash"
        return "number" if self.read_line_numbers else "none"


def _edit(cwd: Path, options: ToolOptions) -> AgentTool:
    if options.edit_mode == "replace":
        return create_edit_tool(cwd, check_syntax=options.guard_overwrite)
    return create_hashline_edit_tool(cwd)


_FACTORIES: dict[str, Callable[[Path, ToolOptions], AgentTool]] = {
    "read": lambda cwd, options: create_read_tool(cwd, options.numbering),
    "bash": lambda cwd, _: create_bash_tool(cwd),
    "edit": _edit,
    "write": lambda cwd, options: create_write_tool(cwd, guard_overwrite=options.guard_overwrite),
    "grep": lambda cwd, options: create_grep_tool(cwd, hashline=options.numbering == "hash"),
    "find": lambda cwd, _: create_find_tool(cwd),
    "ls": lambda cwd, _: create_ls_tool(cwd),
    "ast_grep": lambda cwd, options: create_ast_grep_tool(cwd, hashline=options.numbering == "hash"),
    "ast_edit": lambda cwd, _: create_ast_edit_tool(cwd),
    "notebook": lambda cwd, _: create_notebook_tool(cwd),
    "calc": lambda cwd, _: create_calc_tool(cwd),
}


def create_coding_tools(
    cwd: Path, names: Sequence[str] | None = None, options: ToolOptions | None = None
) -> list[AgentTool]:
    """Built-in tools for ``cwd``: the default set (``names=None``) or the named ones, in built-in order.

    Raises ``ValueError`` for a name that is not a built-in tool.
    """
    wanted = DEFAULT_TOOL_NAMES if names is None else tuple(names)
    unknown = [name for name in wanted if name not in _FACTORIES]
    if unknown:
        raise ValueError(f"Unknown built-in tool(s): {', '.join(unknown)}")
    chosen = options or ToolOptions()
    return [_FACTORIES[name](Path(cwd), chosen) for name in BUILTIN_TOOL_NAMES if name in wanted]


__all__ = [
    "BUILTIN_TOOL_NAMES",
    "COMPANIONS",
    "DEFAULT_TOOL_NAMES",
    "EDIT_MODES",
    "ENABLING_SETTINGS",
    "ToolAbortedError",
    "ToolError",
    "ToolOptions",
    "create_bash_tool",
    "create_coding_tools",
    "create_edit_tool",
    "create_find_tool",
    "create_grep_tool",
    "create_hashline_edit_tool",
    "create_ls_tool",
    "create_read_tool",
    "create_write_tool",
]
