"""The ``notebook`` tool: edit, insert or delete one cell of a Jupyter notebook.

Contract (reference ``notebook``): ``{action: edit|insert|delete, notebook_path,
cell_index (0-based), content?, cell_type?: code|markdown}``. ``edit`` replaces a
cell's source (its type, outputs and metadata stay), ``insert`` adds a cell at
``cell_index`` (0..count; default type ``code``, with no outputs), ``delete``
removes it. ``content`` is required for edit/insert. The notebook is read and
written with nbformat (the ``tools`` extra), keeping its format version; the
result says ``Replaced cell N (type)`` / ``Inserted <type> cell at position N`` /
``Deleted cell N (type)`` and the new cell count; ``details``: ``action``,
``cellIndex``, ``cellType``, ``totalCells``, ``cellSource`` (lines). The file is replaced
atomically (``file_write``); ``content`` with an unpaired surrogate is refused before it is
touched. Class exclusive.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.defs_files import NOTEBOOK_ACTIONS as ACTIONS
from xcsh.coding.tools.defs_files import NOTEBOOK_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_files import NOTEBOOK_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.file_write import check_model_text, write_file
from xcsh.coding.tools.optional import require
from xcsh.coding.tools.paths import display_path, refuse_special_file, resolve_path


def _source_lines(source: Any) -> list[str]:
    text = "".join(source) if isinstance(source, list) else str(source)
    return text.splitlines(keepends=True)


def _apply(cwd: Path, args: dict[str, Any]) -> AgentToolResult:
    nbformat = require("nbformat", "nbformat", "notebook")
    action, raw_path, index = args.get("action"), args.get("notebook_path"), args.get("cell_index")
    content, cell_type = args.get("content"), args.get("cell_type") or "code"
    if action not in ACTIONS:
        raise ToolError(f"action must be one of {', '.join(ACTIONS)}")
    if not isinstance(raw_path, str) or not raw_path.strip():
        raise ToolError("notebook_path is required")
    if isinstance(index, float) and index.is_integer():
        index = int(index)
    if not isinstance(index, int) or isinstance(index, bool):
        raise ToolError("cell_index must be an integer")
    if cell_type not in ("code", "markdown"):
        raise ToolError("cell_type must be code or markdown")
    path = resolve_path(cwd, raw_path)
    shown = display_path(cwd, path)
    refuse_special_file(path, shown)
    try:
        notebook = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    except FileNotFoundError as exc:
        raise ToolError(f"Notebook not found: {shown}") from exc
    except Exception as exc:
        raise ToolError(f"Cannot read {shown} as a notebook: {exc}") from exc
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise ToolError(f"Invalid notebook structure (no cells list): {shown}")
    count = len(cells)
    upper = count if action == "insert" else count - 1
    if not 0 <= index <= upper:
        raise ToolError(f"Cell index {index} out of range (0-{upper}) for {action} in {shown}")
    if action != "delete" and not isinstance(content, str):
        raise ToolError(f"content (a string) is required for {action}")
    if isinstance(content, str):
        check_model_text(content, "content")
    v4 = nbformat.v4
    if action == "edit":
        cells[index]["source"] = content
        kind = str(cells[index].get("cell_type"))
        source = _source_lines(content)
        message = f"Replaced cell {index} ({kind})"
    elif action == "insert":
        cell = v4.new_code_cell(content) if cell_type == "code" else v4.new_markdown_cell(content)
        if int(notebook.get("nbformat_minor", 5)) < 5:
            cell.pop("id", None)
        cells.insert(index, cell)
        kind = cell_type
        source = _source_lines(content)
        message = f"Inserted {kind} cell at position {index}"
    else:
        removed = cells.pop(index)
        kind = str(removed.get("cell_type"))
        source = _source_lines(removed.get("source", ""))
        message = f"Deleted cell {index} ({kind})"
    text = nbformat.writes(notebook)
    write_file(path, (text if text.endswith("\n") else text + "\n").encode("utf-8"), shown)
    total = len(cells)
    details = {
        "action": action,
        "cellIndex": index,
        "cellType": kind,
        "totalCells": total,
        "cellSource": source,
    }
    return {
        "content": [{"type": "text", "text": f"{message}. Notebook now has {total} cells."}],
        "details": details,
    }


def create_notebook_tool(cwd: Path) -> AgentTool:
    """The ``notebook`` tool bound to the session cwd."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        return await asyncio.to_thread(_apply, cwd, args)

    return AgentTool(
        name="notebook",
        label="Notebook",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="exclusive",
        abortable=False,
    )
