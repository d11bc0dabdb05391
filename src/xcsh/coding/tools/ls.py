"""The ``ls`` tool and the directory listing it shares with ``read``.

Listing contract: entries (hidden ones included) sorted case-insensitively, a ``/``
suffix on directories (symlinks to directories included), at most ``limit`` entries
(500 by default) followed by a notice naming the total, ``(empty directory)`` for an
empty one. With ``ages`` (``read``'s listing: spec §13.1 "with age") each entry ends with
its modification age, ``name/ (2d ago)``: ``just now`` under a minute, then minutes, hours,
days, weeks, months (30 days), the largest whole unit, as the reference's listing does.
The reference keeps listings inside ``read``; ``ls`` is the pi-mono extra the spec allows
(names only). Class shared.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.defs_files import DEFAULT_LS_LIMIT
from xcsh.coding.tools.defs_files import LS_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_files import LS_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.paths import display_path, resolve_path


def format_age(seconds: float) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``, ``1w ago``, ``4mo ago``."""
    minutes = int(seconds // 60)
    hours, days = minutes // 60, minutes // 1440
    for value, unit in ((days // 30, "mo"), (days // 7, "w"), (days, "d"), (hours, "h"), (minutes, "m")):
        if value > 0:
            return f"{value}{unit} ago"
    return "just now"


def list_directory(
    directory: Path, *, limit: int = DEFAULT_LS_LIMIT, limit_hint: bool = False, ages: bool = False
) -> str:
    """Render a directory listing; raises ToolError when it cannot be read."""
    try:
        with os.scandir(directory) as it:
            entries = [(entry.name, _is_dir(entry), _mtime(entry) if ages else None) for entry in it]
    except FileNotFoundError as exc:
        raise ToolError(f"Path not found: {directory}") from exc
    except NotADirectoryError as exc:
        raise ToolError(f"Not a directory: {directory}") from exc
    except PermissionError as exc:
        raise ToolError(f"Permission denied: {directory}") from exc
    if not entries:
        return "(empty directory)"
    entries.sort(key=lambda item: (item[0].lower(), item[0]))
    now = time.time()
    lines = [
        (name + "/" if is_dir else name)
        + (f" ({format_age(max(0.0, now - mtime))})" if mtime is not None else "")
        for name, is_dir, mtime in entries[:limit]
    ]
    text = "\n".join(lines)
    if len(entries) > limit:
        if limit_hint:
            text += f"\n\n[{limit} entries limit reached. Use limit={limit * 2} for more]"
        else:
            text += f"\n\n[Showing {limit} of {len(entries)} entries]"
    return text


def _mtime(entry: os.DirEntry[str]) -> float | None:
    try:
        return entry.stat().st_mtime
    except OSError:
        try:
            return entry.stat(follow_symlinks=False).st_mtime  # a dangling link: its own age
        except OSError:
            return None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def create_ls_tool(cwd: Path) -> AgentTool:
    """The ``ls`` tool bound to the session cwd."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        raw_path = args.get("path") or "."
        limit = int(args.get("limit") or DEFAULT_LS_LIMIT)
        if limit < 1:
            raise ToolError("limit must be at least 1")
        directory = resolve_path(cwd, str(raw_path))
        if not directory.exists():
            raise ToolError(f"Path not found: {display_path(cwd, directory)}")
        if not directory.is_dir():
            raise ToolError(f"Not a directory: {display_path(cwd, directory)}. Use read to open files.")
        text = await asyncio.to_thread(list_directory, directory, limit=limit, limit_hint=True)
        return {"content": [{"type": "text", "text": text}]}

    return AgentTool(
        name="ls",
        label="List",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="shared",
    )
