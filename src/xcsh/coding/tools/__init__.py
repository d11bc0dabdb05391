"""The built-in coding tools.

``create_coding_tools(cwd, names, options)`` builds :class:`~xcsh.agent.tool.AgentTool`
instances bound to the session working directory, in ``BUILTIN_TOOL_NAMES`` order
(``None`` = all). Provided: ``read``, ``bash``, ``edit`` (hashline or replace mode,
per ``ToolOptions.edit_mode``), ``write``, ``grep``, ``find``, ``ast_grep``,
``ast_edit``, ``notebook``, ``calc`` and pi-mono's ``ls`` (opt-in). Tools that need the
session (``todo_write``, ``python``, ``task``, ``inspect_image``) are added by their
features. See docs/tools.md for the full set.

Each tool is built from its definition (:mod:`.defs_files`, :mod:`.defs_search`); the module
that runs it is imported on its first call (:func:`defined_tool`) or by the idle warm-up, so
the session's tool list costs no implementation imports (docs/performance.md, profile 19).
The eager builders (``create_read_tool`` …) stay importable from here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from xcsh.agent.tool import AgentTool
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools import defs_files as files
from xcsh.coding.tools import defs_search as search
from xcsh.coding.tools.defs_files import Numbering
from xcsh.coding.tools.errors import ToolAbortedError, ToolError

if TYPE_CHECKING:
    from xcsh.agent.types import AgentToolResult, ToolUpdate
    from xcsh.coding.tools.bash import create_bash_tool
    from xcsh.coding.tools.edit import create_edit_tool
    from xcsh.coding.tools.edit_hashline import create_hashline_edit_tool
    from xcsh.coding.tools.find import create_find_tool
    from xcsh.coding.tools.grep import create_grep_tool
    from xcsh.coding.tools.ls import create_ls_tool
    from xcsh.coding.tools.read import create_read_tool
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
# Tools that features register when ``--tools`` lists them (not built-ins).
FEATURE_TOOL_NAMES = frozenset({"todo_write", "python", "task", "inspect_image"})
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


class ToolOptions(msgspec.Struct, frozen=True):
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


class _FirstUse:
    """A tool's executor that imports and builds the tool's implementation on its first call.

    The session's tool list (``dumpTools``, the system prompt) needs only the definitions
    (:mod:`.defs_files`, :mod:`.defs_search`); the code that runs a tool, with its own imports,
    loads when the model first calls it (or when the idle warm-up imports it).
    """

    __slots__ = ("_build", "_execute")

    def __init__(self, build: Callable[[], AgentTool]) -> None:
        self._build: Callable[[], AgentTool] | None = build
        self._execute: Callable[..., Awaitable[AgentToolResult]] | None = None

    def __call__(
        self, tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> Awaitable[AgentToolResult]:
        if self._execute is None:
            assert self._build is not None
            self._execute = self._build().execute
            self._build = None
        return self._execute(tool_call_id, args, signal, on_update)


def defined_tool(
    name: str,
    label: str,
    description: str,
    parameters: dict[str, Any],
    concurrency: Literal["shared", "exclusive"],
    build: Callable[[], AgentTool],
    *,
    abortable: bool = True,
) -> AgentTool:
    """A tool whose definition is known now and whose implementation ``build`` makes on the first call.

    ``build`` imports the implementation module and returns the eager tool; only its
    ``execute`` is used. A ``build`` that raises fails that call (an error result for the
    model) and is tried again on the next one.
    """
    return AgentTool(
        name=name,
        label=label,
        description=description,
        parameters=parameters,
        execute=_FirstUse(build),
        concurrency=concurrency,
        abortable=abortable,
    )


def _read(cwd: Path, options: ToolOptions) -> AgentTool:
    def build() -> AgentTool:
        from xcsh.coding.tools.read import create_read_tool

        return create_read_tool(cwd, options.numbering)

    description = files.read_description(options.numbering)
    return defined_tool("read", "Read", description, files.READ_PARAMETERS, "shared", build)


def _bash(cwd: Path, options: ToolOptions) -> AgentTool:
    def build() -> AgentTool:
        from xcsh.coding.tools.bash import create_bash_tool

        return create_bash_tool(cwd)

    return defined_tool("bash", "Bash", search.BASH_DESCRIPTION, search.BASH_PARAMETERS, "exclusive", build)


def _edit(cwd: Path, options: ToolOptions) -> AgentTool:
    if options.edit_mode == "replace":

        def replace() -> AgentTool:
            from xcsh.coding.tools.edit import create_edit_tool

            return create_edit_tool(cwd, check_syntax=options.guard_overwrite)

        description, parameters, build = files.EDIT_DESCRIPTION, files.EDIT_PARAMETERS, replace
    else:

        def hashline() -> AgentTool:
            from xcsh.coding.tools.edit_hashline import create_hashline_edit_tool

            return create_hashline_edit_tool(cwd)

        description, parameters = files.HASHLINE_EDIT_DESCRIPTION, files.HASHLINE_EDIT_PARAMETERS
        build = hashline
    return defined_tool("edit", "Edit", description, parameters, "exclusive", build, abortable=False)


def _write(cwd: Path, options: ToolOptions) -> AgentTool:
    def build() -> AgentTool:
        from xcsh.coding.tools.write import create_write_tool

        return create_write_tool(cwd, guard_overwrite=options.guard_overwrite)

    description, parameters = files.WRITE_DESCRIPTION, files.WRITE_PARAMETERS
    return defined_tool("write", "Write", description, parameters, "exclusive", build, abortable=False)


def _grep(cwd: Path, options: ToolOptions) -> AgentTool:
    hashline = options.numbering == "hash"

    def build() -> AgentTool:
        from xcsh.coding.tools.grep import create_grep_tool

        return create_grep_tool(cwd, hashline=hashline)

    description = search.grep_description(hashline)
    return defined_tool("grep", "Grep", description, search.GREP_PARAMETERS, "shared", build)


def _find(cwd: Path, options: ToolOptions) -> AgentTool:
    def build() -> AgentTool:
        from xcsh.coding.tools.find import create_find_tool

        return create_find_tool(cwd)

    return defined_tool("find", "Find", search.FIND_DESCRIPTION, search.FIND_PARAMETERS, "shared", build)


def _ls(cwd: Path, options: ToolOptions) -> AgentTool:
    def build() -> AgentTool:
        from xcsh.coding.tools.ls import create_ls_tool

        return create_ls_tool(cwd)

    return defined_tool("ls", "List", files.LS_DESCRIPTION, files.LS_PARAMETERS, "shared", build)


def _ast_grep(cwd: Path, options: ToolOptions) -> AgentTool:
    hashline = options.numbering == "hash"

    def build() -> AgentTool:
        from xcsh.coding.tools.ast_tools import create_ast_grep_tool

        return create_ast_grep_tool(cwd, hashline=hashline)

    description, parameters = search.AST_GREP_DESCRIPTION, search.AST_GREP_PARAMETERS
    return defined_tool("ast_grep", "AST Grep", description, parameters, "shared", build, abortable=False)


def _ast_edit(cwd: Path, options: ToolOptions) -> AgentTool:
    def build() -> AgentTool:
        from xcsh.coding.tools.ast_tools import create_ast_edit_tool

        return create_ast_edit_tool(cwd)

    description, parameters = search.AST_EDIT_DESCRIPTION, search.AST_EDIT_PARAMETERS
    return defined_tool("ast_edit", "AST Edit", description, parameters, "exclusive", build, abortable=False)


def _notebook(cwd: Path, options: ToolOptions) -> AgentTool:
    def build() -> AgentTool:
        from xcsh.coding.tools.notebook import create_notebook_tool

        return create_notebook_tool(cwd)

    description, parameters = files.NOTEBOOK_DESCRIPTION, files.NOTEBOOK_PARAMETERS
    return defined_tool("notebook", "Notebook", description, parameters, "exclusive", build, abortable=False)


def _calc(cwd: Path, options: ToolOptions) -> AgentTool:
    def build() -> AgentTool:
        from xcsh.coding.tools.calc import create_calc_tool

        return create_calc_tool(cwd)

    description, parameters = search.CALC_DESCRIPTION, search.CALC_PARAMETERS
    return defined_tool("calc", "Calc", description, parameters, "shared", build, abortable=False)


_FACTORIES: dict[str, Callable[[Path, ToolOptions], AgentTool]] = {
    "read": _read,
    "bash": _bash,
    "edit": _edit,
    "write": _write,
    "grep": _grep,
    "find": _find,
    "ls": _ls,
    "ast_grep": _ast_grep,
    "ast_edit": _ast_edit,
    "notebook": _notebook,
    "calc": _calc,
}

# the implementation modules, imported by a tool's first call (or by ``import_implementations``)
IMPLEMENTATIONS: tuple[str, ...] = (
    "xcsh.coding.tools.read",
    "xcsh.coding.tools.bash",
    "xcsh.coding.tools.edit",
    "xcsh.coding.tools.edit_hashline",
    "xcsh.coding.tools.write",
    "xcsh.coding.tools.grep",
    "xcsh.coding.tools.find",
    "xcsh.coding.tools.ls",
    "xcsh.coding.tools.ast_tools",
    "xcsh.coding.tools.notebook",
    "xcsh.coding.tools.calc",
)


def create_coding_tools(
    cwd: Path, names: Sequence[str] | None = None, options: ToolOptions | None = None
) -> list[AgentTool]:
    """Built-in tools for ``cwd``: the default set (``names=None``) or the named ones, in built-in order.

    Each tool's definition is ready at once; its implementation module is imported on the
    tool's first call. Raises ``ValueError`` for a name that is not a built-in tool.
    """
    wanted = DEFAULT_TOOL_NAMES if names is None else tuple(names)
    unknown = [name for name in wanted if name not in _FACTORIES]
    if unknown:
        raise ValueError(f"Unknown built-in tool(s): {', '.join(unknown)}")
    chosen = options or ToolOptions()
    return [_FACTORIES[name](Path(cwd), chosen) for name in BUILTIN_TOOL_NAMES if name in wanted]


def import_implementations() -> None:
    """Import every built-in tool's implementation now (the idle warm-up; idempotent)."""
    import importlib

    for module in IMPLEMENTATIONS:
        importlib.import_module(module)


_EAGER_NAMES = {
    "create_bash_tool": "bash",
    "create_edit_tool": "edit",
    "create_find_tool": "find",
    "create_grep_tool": "grep",
    "create_hashline_edit_tool": "edit_hashline",
    "create_ls_tool": "ls",
    "create_read_tool": "read",
    "create_write_tool": "write",
}


def __getattr__(name: str) -> Any:
    """``create_read_tool`` and the other eager builders, imported from their modules when asked for."""
    module = _EAGER_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


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
