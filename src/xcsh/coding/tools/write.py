"""The ``write`` tool: create or overwrite a file.

Contract: parent directories are created; the content is written as UTF-8 exactly
as given (no newline translation), atomically (``file_write``: a failed write leaves the old
file whole; a symbolic link is written through; the file's mode is kept); content with an
unpaired surrogate is refused before the file is touched; the result is ``Successfully wrote <n> bytes to
<path>`` where ``n`` is the content length in characters (the reference's count)
and ``path`` is the path as the model wrote it. Content copied from hashline
``read`` output (every non-empty line starting ``N#ID:``) has those prefixes
removed first. Class exclusive, not abortable.

Overwrite guard (``guard_overwrite=True``, given to small models): a write over an existing
file of at least ``GUARD_MIN_LINES`` non-blank lines is refused, and nothing is written,
when the new content leaves out half of those lines or more (compared ignoring
whitespace). Small models use ``write`` to "edit" a file and keep only the line they
changed; the error says that write replaces the whole file, shows the current content
(up to 60 lines) and points to ``edit``. A complete rewrite that keeps most lines passes.
With the guard, a write of the file's current content (trailing whitespace aside) says
that nothing changed and how to add code (``details.unchanged`` is true),
and a write that breaks the syntax of a Python or JSON file that parsed is refused
(``xcsh.coding.tools.syntax_guard``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.defs_files import WRITE_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_files import WRITE_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.file_write import check_model_text, write_file
from xcsh.coding.tools.hashline import strip_copied_prefixes
from xcsh.coding.tools.paths import display_path, refuse_special_file, resolve_path
from xcsh.coding.tools.syntax_guard import syntax_error_after

GUARD_MIN_LINES = 4
_SHOW_LINES = 60


def _dropped_lines(path: Path, content: str) -> tuple[list[str], list[str]] | None:
    """(current non-blank lines, those missing from ``content``) when the write would drop most."""
    try:
        current = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    old = [line for line in current.splitlines() if line.strip()]
    if len(old) < GUARD_MIN_LINES:
        return None
    new = {" ".join(line.split()) for line in content.splitlines()}
    missing = [line for line in old if " ".join(line.split()) not in new]
    return (old, missing) if len(missing) * 2 >= len(old) else None


def _has_content(path: Path, content: str) -> bool:
    try:
        return path.read_text(encoding="utf-8").rstrip() == content.rstrip()
    except (OSError, UnicodeDecodeError):
        return False


def _breaks_syntax(path: Path, shown: str, content: str) -> str | None:
    try:
        before = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return syntax_error_after(path, shown, before, content)


def _guard_message(shown: str, path: Path, old: list[str], missing: list[str]) -> str:
    text = (
        f"Not written: {shown} already exists with {len(old)} non-blank lines, and this content keeps "
        f"only {len(old) - len(missing)} of them (it drops lines such as `{missing[0].strip()}`). write replaces the WHOLE file, "
        "so every line you leave out is lost. To change part of the file, use edit: old_text copied "
        "exactly from the file, new_text the same lines with your change (to add code, old_text can be "
        "the file's last lines and new_text those lines followed by the new code). To rewrite the file, "
        "write its complete new content, including the lines that stay."
    )
    lines = path.read_text(encoding="utf-8").split("\n")
    if len(lines) <= _SHOW_LINES:
        text += f"\nThe current content of {shown} is:\n" + "\n".join(lines).rstrip("\n")
    return text


def _write(path: Path, shown: str, data: bytes) -> None:
    write_file(path, data, shown)


def create_write_tool(cwd: Path, *, guard_overwrite: bool = False) -> AgentTool:
    """The ``write`` tool bound to the session cwd (with the overwrite guard when asked)."""

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
        check_model_text(content, "content")
        data = content.encode("utf-8")
        path = resolve_path(cwd, raw_path)
        shown = display_path(cwd, path)
        refuse_special_file(path, shown)
        same = False
        if guard_overwrite and path.is_file():
            dropped = await asyncio.to_thread(_dropped_lines, path, content)
            if dropped is not None:
                raise ToolError(_guard_message(shown, path, *dropped))
            same = await asyncio.to_thread(_has_content, path, content)
            broken = await asyncio.to_thread(_breaks_syntax, path, shown, content)
            if broken is not None:
                raise ToolError(broken)
        await asyncio.to_thread(_write, path, shown, data)
        text = f"Successfully wrote {len(content)} bytes to {raw_path}"
        if not same:
            return {"content": [{"type": "text", "text": text}]}
        text += (
            ". The file already had this content: nothing changed. To add code, write the complete "
            "content including the new code, or use edit with old_text = the file's last lines and "
            "new_text = those lines followed by the new code."
        )
        return {"content": [{"type": "text", "text": text}], "details": {"unchanged": True}}

    return AgentTool(
        name="write",
        label="Write",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="exclusive",
        abortable=False,
    )
