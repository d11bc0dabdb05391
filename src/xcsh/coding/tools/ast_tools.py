"""``ast_grep`` and ``ast_edit``: structural search and rewrite with ast-grep-py (the ``tools`` extra).

``ast_grep`` contract (reference): ``{pat: [patterns], lang?, path?, glob?, sel?,
limit? (50), offset? (0), context?}``. Patterns are ast-grep code patterns with
metavariables (``$X`` one node, ``$$$ARGS`` several). Files under ``path`` (a file
or directory; default cwd; .gitignore respected) whose language is known from the
extension (or ``lang``) and that match ``glob`` are parsed; each match is shown as
its lines, the first ``N#ID:`` (hashline) or ``N:``, the rest with ``-``, followed by
``  meta: NAME=text`` for captured metavariables, grouped under ``# file`` headers.
No match → ``No matches found`` (``isWarning``). ``details``: ``matchCount``,
``fileCount``, ``filesSearched``, ``limitReached``, ``scopePath``, ``files``,
``fileMatches`` ([{path, count}]).

``ast_edit`` contract: ``{ops: [{pat, out}], lang?, path?, glob?, sel?, limit?}``;
each match of ``pat`` is replaced by ``out`` with its metavariables substituted,
applied immediately (the reference previews and applies through a hidden
``resolve`` tool; see docs/tools.md). The result lists each replaced span
(``-`` old / ``+`` new) per file and ``Applied N replacements in M files``;
``details``: ``totalReplacements``, ``filesTouched``, ``files``, ``diff``.
No match → ``No replacements made`` (``isWarning``). ``sel`` is accepted and ignored.
Files that are not valid UTF-8 are left unchanged and named in the result; ``out`` with an
unpaired surrogate is refused; the changed files are replaced together (``file_write``), so a
failed write leaves every file as it was.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.globs import glob_to_regex
from xcsh.coding.tools.defs_search import AST_DEFAULT_LIMIT as DEFAULT_LIMIT
from xcsh.coding.tools.defs_search import AST_EDIT_DESCRIPTION as _EDIT_DESCRIPTION
from xcsh.coding.tools.defs_search import AST_EDIT_PARAMETERS as _EDIT_PARAMETERS
from xcsh.coding.tools.defs_search import AST_GREP_DESCRIPTION as _GREP_DESCRIPTION
from xcsh.coding.tools.defs_search import AST_GREP_PARAMETERS as _GREP_PARAMETERS
from xcsh.coding.tools.edit_match import unified_diff
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.file_write import FileBatch, check_model_text
from xcsh.coding.tools.find import walk_files
from xcsh.coding.tools.hashline import anchor
from xcsh.coding.tools.optional import require
from xcsh.coding.tools.paths import display_path, resolve_path

MAX_FILE_BYTES = 2 * 1024 * 1024
_META_RE = re.compile(r"\$\$\$([A-Z_][A-Z0-9_]*)|\$([A-Z_][A-Z0-9_]*)")

LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".kt": "kotlin",
    ".swift": "swift",
    ".lua": "lua",
    ".php": "php",
    ".scala": "scala",
    ".sh": "bash",
    ".bash": "bash",
    ".html": "html",
    ".css": "css",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".ex": "elixir",
    ".exs": "elixir",
    ".hs": "haskell",
}
_ALIASES = {
    "py": "python",
    "js": "javascript",
    "ts": "typescript",
    "rs": "rust",
    "c#": "csharp",
    "sh": "bash",
}


@dataclass(slots=True)
class _Scope:
    root: Path
    shown: str
    is_dir: bool
    files: list[tuple[Path, str, str]] = field(default_factory=list)  # path, shown, language


def _language(lang: object) -> str | None:
    if lang is None or (isinstance(lang, str) and not lang.strip()):
        return None
    if not isinstance(lang, str):
        raise ToolError("lang must be a string")
    name = lang.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in set(LANGUAGES.values()):
        raise ToolError(f"Unknown lang {lang!r}; known: {', '.join(sorted(set(LANGUAGES.values())))}")
    return name


def _scope(cwd: Path, args: dict[str, Any]) -> _Scope:
    raw_path = args.get("path")
    root = resolve_path(cwd, raw_path) if isinstance(raw_path, str) and raw_path.strip() else cwd
    shown = display_path(cwd, root)
    if not root.exists():
        raise ToolError(f"Path not found: {shown}")
    lang = _language(args.get("lang"))
    glob = args.get("glob")
    matcher = glob_to_regex(glob.strip()) if isinstance(glob, str) and glob.strip() else None
    scope = _Scope(root=root, shown=shown, is_dir=root.is_dir())
    for path in walk_files(root, hidden=False):
        rel = path.relative_to(root).as_posix() if scope.is_dir else path.name
        if matcher is not None and not (matcher.fullmatch(rel) or matcher.fullmatch(path.name)):
            continue
        file_lang = LANGUAGES.get(path.suffix.lower())
        if file_lang is None or (lang is not None and file_lang != lang):
            if not (lang is not None and not scope.is_dir):
                continue
            file_lang = lang
        scope.files.append((path, display_path(cwd, path), file_lang))
    return scope


def _read_source(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    if b"\0" in raw[:8192]:
        return None
    return raw.decode("utf-8", errors="replace")


def _is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return True


def _not_utf8_note(shown: list[str]) -> str:
    names = ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")
    return f"Skipped (not UTF-8, left unchanged; use bash to edit them): {names}"


def _patterns(raw: object, name: str) -> list[str]:
    items = raw if isinstance(raw, list) else [raw]
    found: list[str] = []
    for item in items:
        if isinstance(item, str) and item.strip() and item.strip() not in found:
            found.append(item.strip())
    if not found:
        raise ToolError(f"`{name}` must include at least one non-empty pattern")
    return found


def _int(args: dict[str, Any], name: str, default: int | None, minimum: int) -> int | None:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise ToolError(f"{name} must be a number >= {minimum}")
    return int(value)


def _find(module: Any, source: str, lang: str, pattern: str) -> list[Any]:
    root = module.SgRoot(source, lang).root()
    try:
        return list(root.find_all(pattern=pattern))
    except BaseException as exc:  # the binding raises a pyo3 panic (BaseException) for bad patterns
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        raise ToolError(f"Invalid pattern {pattern!r} for {lang}: {exc}") from exc


def _meta(node: Any, source: str, names: list[tuple[str, bool]]) -> dict[str, str]:
    values: dict[str, str] = {}
    for name, multiple in names:
        if multiple:
            nodes = node.get_multiple_matches(name)
            if nodes:
                values[name] = source[nodes[0].range().start.index : nodes[-1].range().end.index]
            else:
                values.setdefault(name, "")
        else:
            found = node.get_match(name)
            if found is not None:
                values[name] = found.text()
    return values


def _names(pattern: str) -> list[tuple[str, bool]]:
    seen: list[tuple[str, bool]] = []
    for match in _META_RE.finditer(pattern):
        item = (match.group(1), True) if match.group(1) else (match.group(2), False)
        if item not in seen and item[0] != "_":
            seen.append(item)
    return seen


def _grep(cwd: Path, args: dict[str, Any], hashline: bool) -> AgentToolResult:
    module = require("ast_grep_py", "ast-grep-py", "ast_grep")
    patterns = _patterns(args.get("pat"), "pat")
    limit = _int(args, "limit", DEFAULT_LIMIT, 1) or DEFAULT_LIMIT
    offset = _int(args, "offset", 0, 0) or 0
    context = _int(args, "context", 0, 0) or 0
    scope = _scope(cwd, args)
    out: list[str] = []
    file_counts: dict[str, int] = {}
    total = 0
    shown_count = 0
    for path, shown, lang in scope.files:
        source = _read_source(path)
        if source is None:
            continue
        lines = source.split("\n")
        matches = [m for pattern in patterns for m in _find(module, source, lang, pattern)]
        matches.sort(key=lambda m: m.range().start.index)
        block: list[str] = []
        for match in matches:
            total += 1
            if total <= offset or shown_count >= limit:
                continue
            shown_count += 1
            file_counts[shown] = file_counts.get(shown, 0) + 1
            first = match.range().start.line
            last = match.range().end.line
            for number in range(max(0, first - context), min(len(lines), last + context + 1)):
                text = lines[number]
                separator = ":" if number == first else "-"
                label = anchor(number + 1, text) if hashline else str(number + 1)
                block.append(f"{label}{separator}{text}")
            meta = _meta(match, source, [n for p in patterns for n in _names(p)])
            if meta:
                block.append("  meta: " + ", ".join(f"{k}={v}" for k, v in sorted(meta.items())))
        if block:
            if out:
                out.append("")
            out.append(f"# {shown}")
            out.extend(block)
    details: dict[str, Any] = {
        "matchCount": total,
        "fileCount": len(file_counts),
        "filesSearched": len(scope.files),
        "limitReached": total > offset + shown_count,
        "scopePath": scope.shown,
        "files": list(file_counts),
        "fileMatches": [{"path": p, "count": c} for p, c in file_counts.items()],
    }
    if not out:
        return {
            "content": [{"type": "text", "text": "No matches found"}],
            "details": details,
            "isWarning": True,
        }  # type: ignore[typeddict-unknown-key]
    if details["limitReached"]:
        out += ["", f"[{limit} matches limit reached. Use offset={offset + shown_count} for more]"]
    return {"content": [{"type": "text", "text": "\n".join(out)}], "details": details}


def _substitute(template: str, values: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return values.get(name, match.group(0))

    return _META_RE.sub(replace, template)


def _edit(cwd: Path, args: dict[str, Any]) -> AgentToolResult:
    module = require("ast_grep_py", "ast-grep-py", "ast_edit")
    ops = args.get("ops")
    if not isinstance(ops, list) or not ops:
        raise ToolError("ops must be a non-empty array of {pat, out}")
    for index, op in enumerate(ops):
        if (
            not isinstance(op, dict)
            or not isinstance(op.get("pat"), str)
            or not isinstance(op.get("out"), str)
        ):
            raise ToolError(f"ops[{index}] needs string pat and out")
        if not op["pat"].strip():
            raise ToolError(f"ops[{index}].pat is empty")
        check_model_text(op["out"], f"ops[{index}].out")
    limit = _int(args, "limit", None, 1)
    scope = _scope(cwd, args)
    changes: list[tuple[Path, str, str, str]] = []
    out: list[str] = []
    total = 0
    not_utf8: list[str] = []
    for path, shown, lang in scope.files:
        original = _read_source(path)
        if original is None:
            continue
        if "\ufffd" in original and not _is_utf8(path):
            not_utf8.append(shown)  # rewriting it would turn those bytes into U+FFFD
            continue
        source = original
        block: list[str] = []
        for op in ops:
            if limit is not None and total >= limit:
                break
            spans: list[tuple[int, int, str, str, int]] = []
            for match in _find(module, source, lang, op["pat"]):
                if limit is not None and total + len(spans) >= limit:
                    break
                rng = match.range()
                new = _substitute(op["out"], _meta(match, source, _names(op["pat"])))
                spans.append((rng.start.index, rng.end.index, match.text(), new, rng.start.line + 1))
            spans.sort(key=lambda s: s[0])
            kept: list[tuple[int, int, str, str, int]] = []
            for span in spans:  # nested matches: the outer one wins
                if kept and span[0] < kept[-1][1]:
                    continue
                kept.append(span)
            for start, end, _old, new, _ in reversed(kept):
                source = source[:start] + new + source[end:]
            for _, _, old, new, line in kept:
                block.extend(f"-{line}:{text}" for text in old.split("\n"))
                block.extend(f"+{line}:{text}" for text in new.split("\n"))
            total += len(kept)
        if source != original:
            changes.append((path, shown, original, source))
            out += ([""] if out else []) + [f"# {shown}", *block]
    details: dict[str, Any] = {
        "totalReplacements": total,
        "filesTouched": len(changes),
        "filesSearched": len(scope.files),
        "scopePath": scope.shown,
        "files": [shown for _, shown, _, _ in changes],
    }
    if not changes:
        details["diff"] = ""
        note = f"\n{_not_utf8_note(not_utf8)}" if not_utf8 else ""
        return {
            "content": [{"type": "text", "text": "No replacements made" + note}],
            "details": details,
            "isWarning": True,
        }  # type: ignore[typeddict-unknown-key]
    with FileBatch() as batch:
        for path, shown, _, source in changes:
            batch.write(path, source.encode("utf-8"), shown)
        batch.commit()
    details["diff"] = "".join(unified_diff(before, after, shown) for _, shown, before, after in changes)
    plural = "s" if total != 1 else ""
    file_plural = "s" if len(changes) != 1 else ""
    out += ["", f"Applied {total} replacement{plural} in {len(changes)} file{file_plural}."]
    if not_utf8:
        out.append(_not_utf8_note(not_utf8))
    return {"content": [{"type": "text", "text": "\n".join(out)}], "details": details}


def create_ast_grep_tool(cwd: Path, hashline: bool = True) -> AgentTool:
    """The ``ast_grep`` tool; ``hashline`` shows match lines with anchors."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        return await asyncio.to_thread(_grep, cwd, args, hashline)

    return AgentTool(
        name="ast_grep",
        label="AST Grep",
        description=_GREP_DESCRIPTION,
        parameters=_GREP_PARAMETERS,
        execute=execute,
        concurrency="shared",
        abortable=False,
    )


def create_ast_edit_tool(cwd: Path) -> AgentTool:
    """The ``ast_edit`` tool."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        return await asyncio.to_thread(_edit, cwd, args)

    return AgentTool(
        name="ast_edit",
        label="AST Edit",
        description=_EDIT_DESCRIPTION,
        parameters=_EDIT_PARAMETERS,
        execute=execute,
        concurrency="exclusive",
        abortable=False,
    )
