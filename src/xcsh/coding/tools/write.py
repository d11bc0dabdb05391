"""The ``write`` tool: create or overwrite a file.

Contract: parent directories are created; the content is written as UTF-8 exactly
as given (no newline translation); the result is ``Successfully wrote <n> bytes to
<path>`` where ``n`` is the content length in characters (the reference's count)
and ``path`` is the path as the model wrote it. Content copied from hashline
``read`` output (every non-empty line starting ``N#ID:``) has those prefixes
removed first. Class exclusive, not abortable.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from xcsh.agent.types import AgentTool, AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.hashline import strip_copied_prefixes
from xcsh.coding.tools.paths import display_path, resolve_path

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File to write, relative to the working directory or absolute.",
        },
        "content": {"type": "string", "description": "The complete new content of the file."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}

_DESCRIPTION = (
    "Write a file, creating it (and any missing parent directories) or replacing its whole content. "
    "Use it for new files or complete rewrites; prefer `edit` for changing part of an existing file. "
    "The content is written exactly as given."
)


def _write(path: Path, shown: str, content: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as handle:
            handle.write(content)
    except IsADirectoryError as exc:
        raise ToolError(f"Cannot write {shown}: it is a directory") from exc
    except PermissionError as exc:
        raise ToolError(f"Permission denied: {shown}") from exc
    except (NotADirectoryError, FileExistsError) as exc:
        raise ToolError(f"Cannot write {shown}: a parent path is not a directory") from exc


def create_write_tool(cwd: Path) -> AgentTool:
    """The ``write`` tool bound to the session cwd."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        raw_path = args.get("path")
        content = args.get("content")
        if not isinstance(raw_path, str) or not raw_path.strip():
            raise ToolError("path is required")
        if not isinstance(content, str):
            raise ToolError("content must be a string")
        if "#" in content:
            content = "\n".join(strip_copied_prefixes(content.split("\n")))
        path = resolve_path(cwd, raw_path)
        await asyncio.to_thread(_write, path, display_path(cwd, path), content)
        return {
            "content": [{"type": "text", "text": f"Successfully wrote {len(content)} bytes to {raw_path}"}]
        }

    return AgentTool(
        name="write",
        label="Write",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="exclusive",
        abortable=False,
    )
