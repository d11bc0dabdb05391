"""The ``edit`` tool in the spec's ``replace`` mode.

Contract: ``{edits: [{path, old_text, new_text, all?}]}``. Edits are applied in
order (several may target one file; each sees the previous ones' result). Every
edit of the call is validated in memory first; if any fails nothing is written and
the error names the failing edit (every failing edit, each with its error, when several
fail, so the caller can correct them all at once). Matching rules live in ``edit_match`` (exact,
then whitespace-tolerant fuzzy at similarity ≥ 0.95; ambiguity needs ``all``).
Line endings: text is matched as LF; a file whose every line ends in CRLF is written back as
CRLF, a file of mixed endings keeps each untouched line's own ending (a replaced line takes the
ending of the line it replaces). A UTF-8 BOM is preserved (an ``old_text`` copied with it
still matches). Bytes that are not UTF-8 are written back unchanged where no edit touches them.
One file named twice (a symbolic link and its target) is edited as one. ``new_text`` with an
unpaired surrogate is refused. Files are written through ``file_write.FileBatch``: a write
that fails (disk full, permission) leaves every file of the call as it was. An edit whose ``old_text`` and ``new_text`` are identical changes nothing:
when that text is in the file it succeeds with "No change needed" (nothing is
written); when it is not, the error is the usual not-found one, showing the current
text. The result text summarises each file's change; ``details`` carries the
unified ``diff`` of all files and ``firstChangedLine`` (of the first edited file).
Class exclusive, not abortable.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import textwrap
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.defs_files import EDIT_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_files import EDIT_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.edit_match import (
    diff_stats,
    find_text,
    first_changed_line,
    not_found_message,
    replace_text,
    unified_diff,
)
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.file_write import (
    FileBatch,
    check_model_text,
    decode_file_text,
    encode_file_text,
    file_identity,
    shown_errors,
)
from xcsh.coding.tools.paths import display_path, refuse_special_file, resolve_path
from xcsh.coding.tools.syntax_guard import syntax_error_after

_BOM = "\ufeff"


@dataclass(slots=True)
class _FileEdit:
    path: Path
    shown: str
    original: str
    content: str
    bom: bool
    crlf: bool
    raw: str  # the text as read (BOM removed), CRs in place: the endings of a mixed file
    replacements: int = 0
    fuzzy: bool = False
    quotes: bool = False
    edits: list[int] = field(default_factory=list)
    unchanged: int = 0
    noop_texts: list[str] = field(default_factory=list)  # old_text of the edits that changed nothing


def _load(path: Path, shown: str) -> _FileEdit:
    refuse_special_file(path, shown)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise ToolError(f"File not found: {shown}. Use write to create new files.") from exc
    except IsADirectoryError as exc:
        raise ToolError(f"Cannot edit {shown}: it is a directory") from exc
    except PermissionError as exc:
        raise ToolError(f"Permission denied: {shown}") from exc
    if b"\0" in raw[:8192]:
        raise ToolError(f"Cannot edit {shown}: it is a binary file")
    text = decode_file_text(raw)
    bom = text.startswith(_BOM)
    if bom:
        text = text[1:]
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    normalized = text.replace("\r\n", "\n")
    return _FileEdit(
        path=path, shown=shown, original=normalized, content=normalized, bom=bom, crlf=crlf, raw=text
    )


def _plan(cwd: Path, edits: list[Any]) -> list[_FileEdit]:
    files: dict[Hashable, _FileEdit] = {}
    failures: list[tuple[str, str]] = []  # (label, error) of edits whose old_text did not match
    for index, edit in enumerate(edits):
        label = f"edits[{index}]"
        if not isinstance(edit, dict):
            raise ToolError(f"{label} must be an object with path, old_text and new_text")
        raw_path, old_text, new_text = edit.get("path"), edit.get("old_text"), edit.get("new_text")
        if not isinstance(raw_path, str) or not raw_path.strip():
            raise ToolError(f"{label}.path is required")
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            raise ToolError(f"{label} needs string old_text and new_text")
        check_model_text(new_text, f"{label}.new_text")
        path = resolve_path(cwd, raw_path)
        key = file_identity(path)
        if key not in files:
            files[key] = _load(path, display_path(cwd, path))
        state = files[key]
        old_text = old_text.replace("\r\n", "\n")
        new_text = new_text.replace("\r\n", "\n")
        if state.bom and old_text.startswith(_BOM):  # copied from a read that showed the BOM
            old_text = old_text[1:]
            new_text = new_text.removeprefix(_BOM)
        if old_text == new_text:
            # nothing to do when the text is already there; an error only when it is not
            if old_text and find_text(state.content, old_text, path=state.shown):
                state.unchanged += 1
                state.noop_texts.append(old_text)
                continue
            message = "old_text and new_text are identical, and " + not_found_message(
                state.content, old_text, state.shown
            ).replace("Could not find", "could not find", 1)
            failures.append((label, message))
            continue
        try:
            result = replace_text(
                state.content, old_text, new_text, path=state.shown, replace_all=bool(edit.get("all"))
            )
        except ToolError as exc:
            failures.append((label, str(exc)))
            continue
        state.content = result.content
        state.replacements += result.count
        state.fuzzy = state.fuzzy or result.fuzzy
        state.quotes = state.quotes or result.quotes
        state.edits.append(index)
    if failures:
        raise ToolError(_failure_text(failures, len(edits)))
    return list(files.values())


def planned_changes(cwd: Path, edits: list[Any]) -> list[tuple[Path, str, str, str]]:
    """What ``edits`` would make of each file, nothing written: (path, shown path, before, after).

    Empty when the edits cannot be applied (the tool itself then reports why).
    """
    try:
        return [(s.path, s.shown, s.original, s.content) for s in _plan(cwd, edits)]
    except ToolError:
        return []


def _plan_or_none(cwd: Path, edits: list[Any]) -> list[_FileEdit] | None:
    try:
        return _plan(cwd, edits)
    except ToolError:
        return None


def _failure_text(failures: list[tuple[str, str]], total: int) -> str:
    """One failed edit: its error (named when the call had several); more: every one of them."""
    if total == 1:
        return failures[0][1]
    if len(failures) == 1:
        label, message = failures[0]
        return f"{label} failed, so no file was changed. {message}"
    labels = ", ".join(label for label, _ in failures)
    details = "\n\n".join(f"{label}: {message}" for label, message in failures)
    return f"{len(failures)} of the {total} edits failed ({labels}), so no file was changed.\n\n{details}"


def _file_text(state: _FileEdit) -> str:
    """What is written: the edited text with the file's line endings and BOM."""
    if state.crlf:
        text = state.content.replace("\n", "\r\n")
    elif "\r\n" in state.raw:
        text = _keep_endings(state.raw, state.original, state.content)
    else:
        text = state.content
    return _BOM + text if state.bom else text


def _keep_endings(raw: str, before: str, after: str) -> str:
    """``after`` (LF) with the CRs of a mixed-ending file kept: an unchanged line keeps its own
    ending, a replacing line takes that of the line it replaces, an added one is LF."""
    raw_lines, old, new = raw.split("\n"), before.split("\n"), after.split("\n")
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(raw_lines[i1:i2])
            continue
        for k, line in enumerate(new[j1:j2]):
            replaced = i1 + k if i1 + k < i2 else None
            ends = j1 + k < len(new) - 1  # the last piece is what follows the final newline
            cr = ends and replaced is not None and raw_lines[replaced].endswith("\r")
            out.append(line + "\r" if cr else line)
    return "\n".join(out)


def _commit(files: list[_FileEdit]) -> None:
    with FileBatch() as batch:
        for state in files:
            if state.content != state.original:
                batch.write(state.path, encode_file_text(_file_text(state)), state.shown)
        batch.commit()


def _syntax_problem(files: list[_FileEdit]) -> str | None:
    for state in files:
        problem = syntax_error_after(state.path, state.shown, state.original, state.content)
        if problem is not None:
            return problem
    return None


def _reindented(cwd: Path, edits: list[Any]) -> list[Any] | None:
    """``edits`` with each multi-line ``new_text`` indented like the line its ``old_text`` starts in.

    Applies to an edit whose ``old_text`` starts without whitespace and occurs once, after
    indentation, in the file (``def total(self):`` inside a class): the lines of ``new_text``
    after its first get that indentation. None when no edit is of that kind.
    """
    changed = False
    contents: dict[Path, str] = {}
    result: list[Any] = []
    for edit in edits:
        old, new, raw = edit.get("old_text"), edit.get("new_text"), edit.get("path")
        if isinstance(old, str) and isinstance(new, str) and isinstance(raw, str) and old and "\n" in new:
            path = resolve_path(cwd, raw)
            if path not in contents:
                contents[path] = _load(path, display_path(cwd, path)).content
            content = contents[path]
            if not old[0].isspace() and content.count(old) == 1:
                start = content.index(old)
                indent = content[content.rfind("\n", 0, start) + 1 : start]
                if indent and not indent.strip():
                    first, *rest = new.split("\n")
                    edit = {
                        **edit,
                        "new_text": "\n".join([first, *(indent + x if x.strip() else x for x in rest)]),
                    }
                    changed = True
        result.append(edit)
    return result if changed else None


def _whole_functions(cwd: Path, edits: list[Any]) -> list[Any] | None:
    """``edits`` with each ``old_text`` that is only a function's ``def`` line widened to the whole function.

    Applies to an edit of a ``.py`` file whose ``old_text`` is one line equal (stripped) to the
    ``def`` line of exactly one function and whose ``new_text`` starts with a ``def``: the model
    wrote a new version of the function but aimed at its first line only. ``new_text`` is then
    indented like that function. None when no edit is of that kind.
    """
    changed = False
    result: list[Any] = []
    for edit in edits:
        old, new, raw = edit.get("old_text"), edit.get("new_text"), edit.get("path")
        widened = None
        if isinstance(old, str) and isinstance(new, str) and isinstance(raw, str) and "\n" not in old.strip():
            head = new.lstrip()
            if raw.endswith(".py") and head.startswith(("def ", "async def ")):
                path = resolve_path(cwd, raw)
                widened = _function_span(_load(path, display_path(cwd, path)).content, old.strip())
        if widened is not None:
            source, indent = widened
            body = textwrap.dedent(new.strip("\n"))
            edit = {**edit, "old_text": source, "new_text": textwrap.indent(body, indent)}
            changed = True
        result.append(edit)
    return result if changed else None


def _function_span(content: str, def_line: str) -> tuple[str, str] | None:
    """(the source lines, the indentation) of the one function whose def line is ``def_line``."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError):
        return None
    lines = content.split("\n")
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and lines[node.lineno - 1].strip() == def_line
        and node.end_lineno is not None
    ]
    if len(found) != 1:
        return None
    node = found[0]
    first = lines[node.lineno - 1]
    return "\n".join(lines[node.lineno - 1 : node.end_lineno]), first[: len(first) - len(first.lstrip())]


def _function_lines(state: _FileEdit) -> str:
    """For no-op edits whose old_text is a function's def line: that function's lines, to copy from."""
    shown: list[str] = []
    for old in state.noop_texts:
        span = _function_span(state.original, old.strip()) if state.path.suffix == ".py" else None
        if span is not None and span[0] not in shown:
            shown.append(span[0])
    if not shown:
        return ""
    return (
        "\nold_text was only a def line. To fix code inside the function, use as old_text the line to "
        "fix, copied from its current text below, and as new_text that line corrected:\n" + "\n\n".join(shown)
    )


def _apply(cwd: Path, edits: list[Any], check_syntax: bool = False) -> AgentToolResult:
    files = _plan(cwd, edits)
    rescued = ""
    if check_syntax:
        problem = _syntax_problem(files)
        if problem is not None:
            # a small model's usual slips: a new version of a function aimed at its def line only;
            # the new lines indented from column 0, not from old_text's line
            for rescue, note in (
                (_whole_functions, "old_text was a def line: the whole function was replaced by new_text"),
                (
                    _reindented,
                    "new_text indented like the line old_text starts in, so that the file still parses",
                ),
            ):
                retry = rescue(cwd, edits)
                retried = _plan_or_none(cwd, retry) if retry is not None else None
                if retried is not None and _syntax_problem(retried) is None:
                    files, rescued = retried, note
                    break
            else:
                raise ToolError(problem)
    _commit(files)
    summaries: list[str] = []
    diffs: list[str] = []
    first_line: int | None = None
    for state in files:
        if state.content == state.original:
            summaries.append(
                f"No change needed in {state.shown}: old_text and new_text are identical and that text "
                "is already in the file. To change it, put the changed version in new_text."
                + (_function_lines(state) if check_syntax else "")
            )
            continue
        diff = unified_diff(state.original, state.content, state.shown)
        diffs.append(diff)
        added, removed = diff_stats(diff)
        plural = "s" if state.replacements != 1 else ""
        note = " (matched ignoring whitespace differences)" if state.fuzzy else ""
        if state.quotes:
            note = " (matched ignoring whitespace differences and quote style)"
        if rescued:
            note += f" ({rescued})"
        summaries.append(
            f"Edited {state.shown}: {state.replacements} replacement{plural}, +{added} -{removed} lines{note}."
        )
        if first_line is None:
            first_line = first_changed_line(state.original, state.content)
    details: dict[str, Any] = {"diff": "".join(diffs), "firstChangedLine": first_line}
    if check_syntax and not diffs:
        details["unchanged"] = True  # small models: a change of nothing counts as no change
    return {"content": [{"type": "text", "text": "\n".join(summaries)}], "details": details}


def create_edit_tool(cwd: Path, *, check_syntax: bool = False) -> AgentTool:
    """The ``edit`` tool (replace mode) bound to the session cwd.

    With ``check_syntax`` an edit that breaks a Python or JSON file's syntax is refused
    (``xcsh.coding.tools.syntax_guard``), unless replacing the whole function (for an
    ``old_text`` that is only a function's ``def`` line and a ``new_text`` that starts with
    ``def``), or else indenting the lines of a multi-line ``new_text`` like the line its
    ``old_text`` starts in, makes it parse; then that is applied and the result says so.
    """

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        edits = args.get("edits")
        if not isinstance(edits, list) or not edits:
            raise ToolError("edits must be a non-empty array of {path, old_text, new_text}")
        return await asyncio.to_thread(shown_errors, lambda: _apply(cwd, edits, check_syntax))

    return AgentTool(
        name="edit",
        label="Edit",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="exclusive",
        abortable=False,
    )
