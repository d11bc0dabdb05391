"""The approval dialog's title and message: everything that decides what a call will do.

- ``bash``: ``cwd: …`` and one ``env: NAME=value`` line per variable when the call passes
  them, then ``$ command``; ``python``: the ``cwd`` and ``reset``, then each cell's code;
- ``write``: a unified diff of the content the tool will write against the file it will
  write (the path resolved as the tool resolves it: ``~``, ``@``, relative to the cwd);
- ``edit``: a diff of each replacement, or each hashline edit's location and lines, with
  deletes and moves (``move a.md → /home/u/x.sh``);
- ``notebook``: the action, cell and new source; ``ast_edit``: each rewrite and where;
- any other tool: its arguments as JSON.

Paths are shown relative to the cwd when inside it, else absolute; a path whose symlinks
lead elsewhere also shows where (``docs/cfg/.profile (→ /home/u/.profile)``). Control
characters, ANSI escapes, carriage returns and invisible format characters (bidi overrides,
zero-width characters) are shown escaped (``\\x1b``, ``\\r``, ``\\u202e``) in the title and the
message, so a terminal host cannot be made to show other text than the call's; line breaks
stay in the message (and are escaped in the title). What changes how the call runs (``cwd``,
``env``, ``reset``, ``ast_edit``'s other arguments, a notebook's action) comes first and is
never clipped; only the body (command, code, diff, JSON) is clipped to :data:`MAX_SHOWN_LINES`
lines, with a line saying how many more there are.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from xcsh.coding.tools.paths import display_path, resolve_path

MAX_SHOWN_LINES = 200
MAX_DIFFED_BYTES = 4 * 1024 * 1024  # a larger existing file is not read for the diff
# anything outside printable ASCII, newline and tab is looked at one by one
_SUSPECT = re.compile(r"[^\x20-\x7e\n\t]")
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r":
        return "\\r"
    if ord(char) >= 0xA0 and unicodedata.category(char) not in _INVISIBLE:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str, *, multiline: bool = True) -> str:
    """``text`` with control, escape and invisible characters escaped (line breaks kept if ``multiline``)."""
    shown = _SUSPECT.sub(_escape_char, text)
    return shown if multiline else shown.replace("\n", "\\n").replace("\t", "\\t")


def _one_line(text: str) -> str:
    """A value shown on a line of its own (a path, a variable): its line breaks escaped."""
    return text.replace("\n", "\\n")


def _shown_file(cwd: Path, raw: str) -> str:
    return _one_line(display_path(cwd, resolve_path(cwd, raw)))


def _clip(lines: list[str]) -> str:
    if len(lines) > MAX_SHOWN_LINES:
        lines = [*lines[:MAX_SHOWN_LINES], f"… {len(lines) - MAX_SHOWN_LINES} more lines"]
    return "\n".join(lines)


def shown_path(cwd: Path, raw: str) -> str:
    """``raw`` resolved as the tools resolve it, plus where its symlinks lead when that differs."""
    path = resolve_path(cwd, raw)
    shown = _one_line(display_path(cwd, path))
    try:
        real = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return shown
    expected = Path(os.path.realpath(cwd)) / path.relative_to(cwd) if _under(path, cwd) else path
    return shown if real == expected else f"{shown} (→ {_one_line(str(real))})"


def _under(path: Path, cwd: Path) -> bool:
    return path == cwd or cwd in path.parents


def describe(tool_name: str, args: dict[str, Any], cwd: Path) -> tuple[str, str]:
    """The dialog's title and message for a call of ``tool_name`` (escaped; the body clipped)."""
    title, head, body = _describe(tool_name, args, Path(os.path.normpath(cwd)))
    message = "\n".join(head) + "\n" + _clip(body) if head else _clip(body)
    return visible(title, multiline=False), visible(message)


def _describe(tool_name: str, args: dict[str, Any], cwd: Path) -> tuple[str, list[str], list[str]]:
    """Title, the lines that change how the call runs (never clipped), and the body."""
    if tool_name == "bash" and isinstance(args.get("command"), str):
        first, *more = args["command"].split("\n")
        return f"Allow {tool_name}?", _cwd_env(args, cwd), [f"$ {first}", *(f"> {line}" for line in more)]
    if tool_name == "python" and isinstance(args.get("cells"), list):
        reset = ["reset: the kernel restarts first (its variables are lost)"] if args.get("reset") else []
        return f"Allow {tool_name}?", [*_cwd_env(args, cwd), *reset], _cells(args["cells"])
    if tool_name == "write" and isinstance(args.get("path"), str) and isinstance(args.get("content"), str):
        title, body = _write(args["path"], args["content"], cwd)
        return title, [], body
    if tool_name == "notebook" and isinstance(args.get("notebook_path"), str):
        return _notebook(args, cwd)
    if tool_name == "ast_edit" and isinstance(args.get("ops"), list):
        return _ast_edit(args, cwd)
    edits = args.get("edits")
    if isinstance(edits, list) and edits and all(isinstance(e, dict) for e in edits):
        title, body = _edits(tool_name, edits, cwd)  # the title names every path and move target
        return title, [], body
    return f"Allow {tool_name}?", [], json.dumps(args, indent=2, ensure_ascii=False, default=str).split("\n")


def _cwd_env(args: dict[str, Any], cwd: Path) -> list[str]:
    lines: list[str] = []
    run_dir = args.get("cwd")
    if run_dir is not None and run_dir != "":
        lines.append(f"cwd: {shown_path(cwd, run_dir) if isinstance(run_dir, str) else json.dumps(run_dir)}")
    env = args.get("env")
    if isinstance(env, dict):
        lines += [f"env: {_one_line(str(name))}={_one_line(str(value))}" for name, value in env.items()]
    elif env is not None:
        lines.append(f"env: {json.dumps(env, ensure_ascii=False, default=str)}")
    return lines


def _cells(cells: list[Any]) -> list[str]:
    lines: list[str] = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            lines.append(f"# cell {number}: {json.dumps(cell, ensure_ascii=False, default=str)}")
            continue
        label = f" ({cell['title']})" if isinstance(cell.get("title"), str) else ""
        lines.append(f"# cell {number}{_one_line(label)}")
        lines += [f"  {line}" for line in str(cell.get("code", "")).split("\n")]
    return lines


def _write(raw: str, content: str, cwd: Path) -> tuple[str, list[str]]:
    from xcsh.coding.tools.hashline import strip_copied_prefixes

    if "#" in content:  # as the write tool does
        content = "\n".join(strip_copied_prefixes(content.split("\n")))
    target = resolve_path(cwd, raw)
    shown = _shown_file(cwd, raw)
    title = f"Allow write to {shown_path(cwd, raw)}?"
    try:
        size = target.stat().st_size if target.is_file() else 0
        if size > MAX_DIFFED_BYTES:
            head = [f"replaces the whole existing file ({size} bytes; too large to diff) with:"]
            return title, head + [f"+{line}" for line in content.splitlines()]
        old = target.read_text(encoding="utf-8", errors="replace").splitlines() if size else []
    except OSError:
        old = []
    diff = difflib.unified_diff(old, content.splitlines(), *_sides(shown), lineterm="")
    return title, list(diff)


def _sides(name: str) -> tuple[str, str]:
    """A diff's two file names: ``a/x``, ``b/x`` inside the cwd, the absolute path twice outside."""
    return (name, name) if name.startswith("/") else (f"a/{name}", f"b/{name}")


def _edits(tool_name: str, edits: list[dict[str, Any]], cwd: Path) -> tuple[str, list[str]]:
    lines: list[str] = []
    named: list[str] = []
    for edit in edits:
        raw = edit.get("path")
        name = shown_path(cwd, raw) if isinstance(raw, str) else json.dumps(raw)
        lines += _edit_lines(edit, _shown_file(cwd, raw) if isinstance(raw, str) else name)
        move = edit.get("move")
        if move is not None:
            target = shown_path(cwd, move) if isinstance(move, str) else json.dumps(move)
            lines.append(f"move {name} → {target}")
            name = f"{name} → {target}"
        if name not in named:
            named.append(name)
    return f"Allow {tool_name} of {', '.join(named)}?", lines


def _edit_lines(edit: dict[str, Any], name: str) -> list[str]:
    """One edit as diff lines: replace-mode old/new text, or a hashline edit's location and lines."""
    if any(k in edit for k in ("old_text", "oldText", "new_text", "newText")):
        old_text = edit.get("old_text", edit.get("oldText", ""))
        new_text = edit.get("new_text", edit.get("newText", ""))
        diff = difflib.unified_diff(
            str(old_text).splitlines(), str(new_text).splitlines(), *_sides(name), lineterm=""
        )
        return [*diff, *(["(every occurrence)"] if edit.get("all") else [])]
    if edit.get("delete"):
        return [f"delete {name}"]
    if "loc" not in edit and "content" not in edit:
        return []
    from xcsh.coding.tools.errors import ToolError
    from xcsh.coding.tools.hashline import content_lines

    where = json.dumps(edit.get("loc"), ensure_ascii=False) if "loc" in edit else "(whole file)"
    try:
        new = content_lines(edit.get("content"))
        body = [f"+{line}" for line in new] if new else ["(lines removed)"]
    except ToolError:
        body = [json.dumps(edit.get("content"), ensure_ascii=False, default=str)]
    return [f"@@ {name} at {where}", *body]


def _notebook(args: dict[str, Any], cwd: Path) -> tuple[str, list[str], list[str]]:
    shown = shown_path(cwd, args["notebook_path"])
    action, index = args.get("action"), args.get("cell_index")
    kind = f" ({args['cell_type']})" if isinstance(args.get("cell_type"), str) else ""
    body = (
        [f"+{line}" for line in args["content"].split("\n")] if isinstance(args.get("content"), str) else []
    )
    return f"Allow notebook {action} in {shown}?", [_one_line(f"{action} cell {index}{kind}")], body


def _ast_edit(args: dict[str, Any], cwd: Path) -> tuple[str, list[str], list[str]]:
    raw = args.get("path")
    where = shown_path(cwd, raw) if isinstance(raw, str) and raw.strip() else "."
    lines: list[str] = []
    for op in args["ops"]:
        if isinstance(op, dict):
            lines += [f"- {line}" for line in str(op.get("pat", "")).split("\n")]
            lines += [f"+ {line}" for line in str(op.get("out", "")).split("\n")]
        else:
            lines.append(json.dumps(op, ensure_ascii=False, default=str))
    extra = {k: v for k, v in args.items() if k not in ("ops", "path")}
    head = [json.dumps(extra, ensure_ascii=False, default=str)] if extra else []
    return f"Allow ast_edit of {where}?", head, lines
