"""The ``edit`` tool in hashline mode (the default ``edit.mode``).

Contract: ``{edits: [{path, loc?, content?, delete?, move?}]}`` where ``loc`` is
``"append"``, ``"prepend"``, ``{append: "N#ID"}``, ``{prepend: "N#ID"}`` or
``{range: {pos: "N#ID", end: "N#ID"}}`` and ``content`` is an array of lines, a
string, or null (deletes the range). Anchors come from ``read`` and address the file
as it was read; all edits of one file are checked together (see ``hashline``).
``{path, delete: true}`` deletes a file; ``move`` renames it (after any content
edits). ``append``/``prepend`` on a missing file create it.

Every file of the call is planned in memory first; if any edit fails nothing is
written and the error names the file (and the failing edit for malformed input). Then every
file is staged and replaced together (``file_write.FileBatch``): a write that fails (disk full,
permission) leaves every file of the call as it was. One file named twice (a symbolic link and
its target, two hard links) is one plan. A UTF-8 BOM is kept; a file whose every line ends in
CRLF keeps CRLF (new lines get it too), a file of mixed endings keeps each line's own; bytes
that are not UTF-8 are written back unchanged where the edit does not touch them. A ``move``
target must not exist yet (a directory or an existing file is refused; the moved file keeps
its mode). The result text is, per file, ``Updated
<path>`` (or Created/Deleted/Moved), ``Changes: +A -R`` and a short preview of the
changed lines with their new anchors, so a further edit needs no re-read of those
lines. ``details``: ``diff`` (unified, all files), ``firstChangedLine`` (first
file), ``op`` (``update``/``create``/``delete``) and ``move`` when moved.
Class exclusive, not abortable.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.defs_files import HASHLINE_EDIT_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_files import HASHLINE_EDIT_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.edit_match import unified_diff
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.file_write import (
    FileBatch,
    check_model_text,
    decode_file_text,
    display_text,
    encode_file_text,
    file_identity,
    shown_errors,
)
from xcsh.coding.tools.hashline import (
    Document,
    LineEdit,
    apply_edits,
    boundary_warnings,
    content_lines,
    format_line,
    resolve_loc,
)
from xcsh.coding.tools.paths import display_path, refuse_special_file, resolve_path

_BOM = "\ufeff"
PREVIEW_MAX_LINES = 16
ANCHOR_LISTING_MAX_LINES = 60  # a malformed anchor's error lists a file this short whole
PREVIEW_RUN = 3


@dataclass(slots=True)
class _FilePlan:
    path: Path
    shown: str
    exists: bool
    original: str = ""
    bom: bool = False
    crlf: bool = False
    edits: list[LineEdit] = field(default_factory=list)
    delete: bool = False
    move: Path | None = None
    move_shown: str | None = None
    result: str = ""
    first_line: int | None = None
    warnings: list[str] = field(default_factory=list)
    before_lines: list[str] = field(default_factory=list)
    after_lines: list[str] = field(default_factory=list)


def _load(plan: _FilePlan) -> None:
    refuse_special_file(plan.path, plan.shown)
    try:
        raw = plan.path.read_bytes()
    except IsADirectoryError as exc:
        raise ToolError(f"Cannot edit {plan.shown}: it is a directory") from exc
    except PermissionError as exc:
        raise ToolError(f"Permission denied: {plan.shown}") from exc
    if b"\0" in raw[:8192]:
        raise ToolError(f"Cannot edit {plan.shown}: it is a binary file")
    text = decode_file_text(raw)
    plan.bom = text.startswith(_BOM)
    if plan.bom:
        text = text[1:]
    # CRLF throughout: edited as LF, written back as CRLF; mixed endings: each line keeps its CR
    plan.crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    plan.original = text.replace("\r\n", "\n") if plan.crlf else text


def _group(cwd: Path, edits: list[Any]) -> list[_FilePlan]:
    plans: dict[Hashable, _FilePlan] = {}
    for index, edit in enumerate(edits):
        label = f"edits[{index}]"
        if not isinstance(edit, dict):
            raise ToolError(f"{label} must be an object with path and loc/content, delete or move")
        unknown = set(edit) - {"path", "loc", "content", "delete", "move"}
        if unknown:
            raise ToolError(
                f"{label} has unknown field(s) {', '.join(sorted(unknown))}; expected path, loc, content, delete, move"
            )
        raw_path = edit.get("path")
        if not isinstance(raw_path, str) or not raw_path.strip():
            raise ToolError(f"{label}.path is required")
        path = resolve_path(cwd, raw_path)
        key = file_identity(path)
        plan = plans.get(key)
        if plan is None:
            refuse_special_file(path, display_path(cwd, path))
            plan = _FilePlan(path=path, shown=display_path(cwd, path), exists=path.is_file())
            plans[key] = plan
            if plan.exists:
                _load(plan)
            elif path.is_dir():
                raise ToolError(f"Cannot edit {plan.shown}: it is a directory")
        if edit.get("delete"):
            plan.delete = True
        move = edit.get("move")
        if move is not None:
            if not isinstance(move, str) or not move.strip():
                raise ToolError(f"{label}.move must be a path")
            plan.move = resolve_path(cwd, move)
            plan.move_shown = display_path(cwd, plan.move)
            if file_identity(plan.move) == key:
                raise ToolError(f"{label}.move names the file itself ({plan.shown})")
            if plan.move.is_dir():
                raise ToolError(
                    f"{label}.move: {plan.move_shown} is a directory; give the file's full new path "
                    f"(e.g. {display_path(cwd, plan.move / path.name)})"
                )
            if os.path.lexists(plan.move):
                raise ToolError(
                    f"{label}.move: {plan.move_shown} already exists; move never replaces a file. "
                    "Delete it first (its own edit: {path, delete: true}) or choose another name."
                )
        if "loc" in edit and edit["loc"] is not None:
            if path.suffix.lower() == ".ipynb":
                raise ToolError(
                    f"{label}: edit cannot change notebooks ({plan.shown}); use the notebook tool"
                )
            try:
                lines = content_lines(edit.get("content"))
                check_model_text("\n".join(lines), f"{label}.content")
                plan.edits.append(resolve_loc(edit["loc"], lines, index))
            except ToolError as exc:
                raise ToolError(f"{label}: {exc}{_current_anchors(plan)}") from exc
        elif not edit.get("delete") and move is None:
            raise ToolError(f"{label} needs loc (with content), delete: true, or move")
    return list(plans.values())


def _current_anchors(plan: _FilePlan) -> str:
    """For a malformed anchor: the file's current anchors when it is short, else a hint to read it."""
    if not plan.exists:
        return ""
    lines = Document.parse(plan.original).lines
    if len(lines) > ANCHOR_LISTING_MAX_LINES:
        return f" Read {plan.shown} to get its anchors."
    listing = "\n".join(format_line(number, line) for number, line in enumerate(lines, start=1))
    return f" The current anchors of {plan.shown} are:\n{listing}"


def _plan(plan: _FilePlan) -> None:
    if plan.delete:
        if plan.edits or plan.move is not None:
            raise ToolError(f"{plan.shown}: delete cannot be combined with other edits of the same file")
        if not plan.exists:
            raise ToolError(f"File not found: {plan.shown}")
        return
    if not plan.exists and (
        plan.move is not None or any(e.kind not in ("append", "prepend") for e in plan.edits)
    ):
        raise ToolError(
            f"File not found: {plan.shown}. Anchored edits need an existing file; "
            'use loc "append" (or write) to create one.'
        )
    doc = Document.parse(plan.original)
    plan.before_lines = doc.lines
    if plan.edits:
        new_doc, plan.first_line = apply_edits(doc, plan.edits, plan.shown)
        plan.warnings = boundary_warnings(doc, plan.edits)
        plan.after_lines = new_doc.lines
        plan.result = new_doc.render()
        if plan.exists and plan.result == plan.original and plan.move is None:
            raise ToolError(
                f"No changes made to {plan.shown}: the edits reproduce the current content. "
                "Make sure content differs from the lines it replaces."
            )
    else:
        plan.after_lines = doc.lines
        plan.result = plan.original


def _stage(plan: _FilePlan, batch: FileBatch) -> None:
    if plan.delete:
        batch.delete(plan.path, plan.shown)
        return
    text = plan.result.replace("\n", "\r\n") if plan.crlf else plan.result
    if plan.bom:
        text = _BOM + text
    if plan.move is None:
        batch.write(plan.path, encode_file_text(text), plan.shown)
        return
    assert plan.move_shown is not None
    batch.write(plan.move, encode_file_text(text), plan.move_shown, mode_from=plan.path)
    batch.delete(plan.path, plan.shown)


def _preview(before: list[str], after: list[str]) -> tuple[str, int, int]:
    """Changed lines with a little context: new lines carry their new anchors, removed ones a ``-``."""
    out: list[str] = []
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for group in matcher.get_grouped_opcodes(1):
        if out:
            out.append("    ...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(f"  {format_line(j + 1, after[j])}" for j in range(j1, j2))
                continue
            gone = before[i1:i2]
            removed += len(gone)
            out.extend(
                f"- {i1 + k + 1}   :{display_text(line.removesuffix(chr(13)))}"
                for k, line in enumerate(gone[:PREVIEW_RUN])
            )
            if len(gone) > PREVIEW_RUN:
                out.append(f"  ... {len(gone) - PREVIEW_RUN} more removed lines")
            new = list(range(j1, j2))
            added += len(new)
            out.extend(f"+ {format_line(j + 1, after[j])}" for j in new[:PREVIEW_RUN])
            if len(new) > PREVIEW_RUN:
                out.append(f"  ... {len(new) - PREVIEW_RUN} more added lines")
    if len(out) > PREVIEW_MAX_LINES:
        hidden = len(out) - PREVIEW_MAX_LINES
        out = [*out[:PREVIEW_MAX_LINES], f"  ... {hidden} more preview lines"]
    return "\n".join(out), added, removed


def _apply(cwd: Path, edits: list[Any]) -> AgentToolResult:
    plans = _group(cwd, edits)
    for plan in plans:
        _plan(plan)
    with FileBatch() as batch:
        for plan in plans:
            _stage(plan, batch)
        batch.commit()
    blocks: list[str] = []
    diffs: list[str] = []
    details: dict[str, Any] = {}
    for plan in plans:
        if plan.delete:
            blocks.append(f"Deleted {plan.shown}")
            details.setdefault("op", "delete")
            continue
        diff = unified_diff(plan.original, plan.result, plan.move_shown or plan.shown)
        diffs.append(diff)
        verb = (
            f"Moved {plan.shown} to {plan.move_shown}"
            if plan.move_shown
            else ("Updated" if plan.exists else "Created") + f" {plan.shown}"
        )
        details.setdefault("op", "update" if plan.exists else "create")
        if plan.move_shown:
            details.setdefault("move", plan.move_shown)
        details.setdefault("firstChangedLine", plan.first_line)
        if not plan.edits:
            blocks.append(verb)
            continue
        preview, added, removed = _preview(plan.before_lines, plan.after_lines)
        block = f"{verb}\nChanges: +{added} -{removed}" + (f"\n\nDiff preview:\n{preview}" if preview else "")
        if plan.warnings:
            block += "\n\nWarnings:\n" + "\n".join(plan.warnings)
        blocks.append(block)
    details["diff"] = "".join(diffs)
    details.setdefault("firstChangedLine", None)
    return {"content": [{"type": "text", "text": "\n\n".join(blocks)}], "details": details}


def create_hashline_edit_tool(cwd: Path) -> AgentTool:
    """The ``edit`` tool (hashline mode) bound to the session cwd."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        edits = args.get("edits")
        if not isinstance(edits, list) or not edits:
            raise ToolError(
                'edits must be a non-empty array of {path, loc, content}, e.g. [{"path": "a.py", "loc": "append", "content": ["x = 1"]}]'
            )
        return await asyncio.to_thread(shown_errors, lambda: _apply(cwd, edits))

    return AgentTool(
        name="edit",
        label="Edit",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="exclusive",
        abortable=False,
    )
