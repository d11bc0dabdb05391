"""The ``read`` tool: text files by line range, directory listings and images.

Contract (agent-behaviour §13.1, with this project's decisions):

- ``sel`` selects lines: absent → from line 1, up to 300 lines; ``L50`` → from line
  50, up to 300 lines; ``L50-L120`` → that range; ``L50-`` → from 50 to the end;
  ``raw`` → the whole file from line 1. Every call is capped at 3000 lines and
  51 200 bytes. ``L0`` is rejected (lines are 1-indexed).
- Lines are shown according to ``numbering``: ``hash`` (``edit.mode`` hashline,
  the default) prefixes each line with ``N#ID:`` (see ``hashline``), ``number``
  with ``N:``, ``none`` shows plain text so the model can copy it into the
  replace-mode ``edit``. A CR before the newline is not shown, nor a UTF-8 BOM
  (line 1's anchor is the one ``edit`` expects). Bytes that are not UTF-8 are shown
  as U+FFFD; anchors hash the line's bytes. A trailing newline does not count as
  an extra line.
- When more lines remain, the text ends, after a blank line, with
  ``[Showing lines 1-300 of 1200. Use sel=L301 to continue]`` (``(50.0KB limit)``
  is added when the byte cap cut it short).
- Directories are listed like ``ls``, each entry with its age (``src/ (2d ago)``; max
  500 entries); PNG/JPEG/GIF/WebP files
  (recognised by magic bytes) come back as an image block plus a short text;
  other files containing NUL bytes are refused as binary.
- Class shared; abortable (an abort ends a URL download; file reads are short).
"""

from __future__ import annotations

import asyncio
import base64
import difflib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools import read_sources as sources
from xcsh.coding.tools.defs_files import DEFAULT_READ_LINES, Numbering, read_description
from xcsh.coding.tools.defs_files import READ_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.errors import ToolAbortedError, ToolError
from xcsh.coding.tools.file_write import display_text
from xcsh.coding.tools.hashline import anchor, file_line_hash, format_line
from xcsh.coding.tools.ls import list_directory
from xcsh.coding.tools.paths import display_path, refuse_special_file, resolve_path
from xcsh.coding.tools.truncate import MAX_BYTES, MAX_LINES, format_size

MAX_DIR_ENTRIES = 500
MAX_IMAGE_BYTES = 20 * 1024 * 1024
_SNIFF_BYTES = 8192
_BOM = b"\xef\xbb\xbf"
_SEL_RE = re.compile(r"^L?(\d+)(?:(-)(?:L?(\d+))?)?$", re.IGNORECASE)


@dataclass(slots=True, frozen=True)
class LineSelection:
    """A parsed ``sel``: first line (1-based), optional last line, line cap, explicit end?"""

    start: int
    end: int | None
    limit: int


def parse_selection(sel: str | None) -> LineSelection:
    """Parse ``sel``; raises ToolError with a usable hint when it is malformed."""
    text = (sel or "").strip()
    if not text:
        return LineSelection(1, None, DEFAULT_READ_LINES)
    if text.lower() == "raw":
        return LineSelection(1, None, MAX_LINES)
    match = _SEL_RE.match(text)
    if match is None:
        raise ToolError(f'Invalid sel "{text}". Use L50, L50-L120, L50- or raw.')
    start = int(match.group(1))
    if start < 1:
        raise ToolError(f"L{start} is invalid; lines are 1-indexed. Use sel=L1.")
    if match.group(2) is None:
        return LineSelection(start, None, DEFAULT_READ_LINES)
    if match.group(3) is None:
        return LineSelection(start, None, MAX_LINES)
    end = int(match.group(3))
    if end < start:
        raise ToolError(f'Invalid sel "{text}": the range ends before it starts.')
    return LineSelection(start, end, min(end - start + 1, MAX_LINES))


def image_mime_type(head: bytes) -> str | None:
    """The MIME type of a PNG/JPEG/GIF/WebP image from its first bytes, else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _decode_line(raw: bytes) -> str:
    # bytes that are not UTF-8 stay as lone surrogates, so the anchor hashes the line as the
    # edit tool sees it; they are shown as U+FFFD
    return raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", errors="surrogateescape")


def _numbered(number: int, line: str, numbering: Numbering) -> str:
    if numbering == "hash":
        return format_line(number, line)
    if numbering == "number":
        return f"{number}:{display_text(line)}"
    return display_text(line)


@dataclass(slots=True, frozen=True)
class LongLine:
    """A line too long to hold: its first bytes, its whole size and where it is in its file."""

    head: bytes
    size: int  # bytes, its newline included
    path: Path
    offset: int


_LONG_LINE = 2 * MAX_BYTES  # a longer line is read in pieces, only its head kept
_ABORT_CHECK_LINES = 4096


def file_lines(path: Path, handle: BinaryIO, signal: AbortSignal | None = None) -> Iterator[bytes | LongLine]:
    """The lines of an open file; one past ``_LONG_LINE`` bytes comes as a :class:`LongLine`
    (memory stays bounded). Raises ToolAbortedError when ``signal`` fires."""
    offset = 0
    count = 0
    while raw := handle.readline(_LONG_LINE):
        count += 1
        if count % _ABORT_CHECK_LINES == 0 and signal is not None and signal.aborted:
            raise ToolAbortedError()
        if len(raw) < _LONG_LINE or raw.endswith(b"\n"):
            offset += len(raw)
            yield raw
            continue
        size = len(raw)
        while piece := handle.readline(_LONG_LINE):
            if signal is not None and signal.aborted:
                raise ToolAbortedError()
            size += len(piece)
            if piece.endswith(b"\n"):
                break
        yield LongLine(raw, size, path, offset)
        offset += size


def read_text_file(
    path: Path,
    shown: str,
    selection: LineSelection,
    numbering: Numbering = "none",
    signal: AbortSignal | None = None,
) -> str:
    """Render the selected lines of a text file (prefixed per ``numbering``) with the continuation notice."""
    with path.open("rb") as handle:
        return render_lines(file_lines(path, handle, signal), shown, selection, numbering)


def render_text(text: str, shown: str, selection: LineSelection, numbering: Numbering = "none") -> str:
    """:func:`read_text_file` for text already in memory (converted documents, archive members, pages)."""
    return render_lines(iter(text.encode("utf-8").splitlines(keepends=True)), shown, selection, numbering)


def _line_size(raw: bytes | LongLine) -> int:
    return raw.size if isinstance(raw, LongLine) else len(raw)


def render_lines(
    raw_lines: Iterable[bytes | LongLine], shown: str, selection: LineSelection, numbering: Numbering
) -> str:
    """The selected lines of ``raw_lines`` within the line and byte caps, with the continuation notice."""
    collected: list[str] = []
    collected_bytes = 0
    total = 0
    first_long: LongLine | None = None
    for item in raw_lines:
        total += 1
        raw = item.head if isinstance(item, LongLine) else item
        bom = total == 1 and raw.startswith(_BOM)
        if bom:
            raw = raw[len(_BOM) :]  # a BOM is no part of line 1 (edit keeps it and anchors without it)
        if total >= selection.start and len(collected) < selection.limit and collected_bytes <= MAX_BYTES:
            if not collected and isinstance(item, LongLine):
                skip = len(_BOM) if bom else 0
                first_long = LongLine(raw, item.size - skip, item.path, item.offset + skip)
            collected.append(_decode_line(raw))
            collected_bytes += _line_size(item)
    if total == 0:
        if selection.start > 1:
            raise ToolError(f"Line {selection.start} is beyond the end of {shown} (the file is empty).")
        return "(empty file)"
    if selection.start > total:
        raise ToolError(
            f"Line {selection.start} is beyond the end of {shown} ({total} lines). Use sel=L1 to read from the start."
        )
    first = display_text(collected[0])
    first_size = _text_size(first_long) if first_long is not None else len(first.encode("utf-8"))
    if first_size > MAX_BYTES:
        cut = first.encode("utf-8")[:MAX_BYTES].decode("utf-8", errors="ignore")
        if numbering == "hash":  # the anchor of the whole line, so a range can replace it
            if first_long is not None:
                tag = f"{selection.start}#{file_line_hash(first_long.path, first_long.offset, first_size, selection.start)}"
            else:
                tag = anchor(selection.start, collected[0])
            cut = f"{tag}:{cut}"
        elif numbering == "number":
            cut = f"{selection.start}:{cut}"
        return (
            f"{cut}\n\n[Line {selection.start} is {format_size(first_size)}; showing its first "
            f"{format_size(MAX_BYTES)}. Use bash (e.g. cut -c) to see the rest]"
        )
    kept: list[str] = []
    used = 0
    by_bytes = False
    for offset, raw_line in enumerate(collected):
        line = _numbered(selection.start + offset, raw_line, numbering)
        size = len(line.encode("utf-8")) + 1
        if used + size > MAX_BYTES:
            by_bytes = True
            break
        kept.append(line)
        used += size
    last = selection.start + len(kept) - 1
    text = "\n".join(kept)
    wanted_last = min(selection.end, total) if selection.end is not None else total
    if last < wanted_last:
        limit_note = f" ({format_size(MAX_BYTES)} limit)" if by_bytes else ""
        text += f"\n\n[Showing lines {selection.start}-{last} of {total}{limit_note}. Use sel=L{last + 1} to continue]"
    return text


def _text_size(line: LongLine) -> int:
    """The bytes of a long line without its line ending."""
    with line.path.open("rb") as handle:
        handle.seek(line.offset + line.size - 2)
        tail = handle.read(2)
    ending = 2 if tail == b"\r\n" else 1 if tail.endswith(b"\n") else 0
    return line.size - ending


def _converted(converted: sources.Converted, shown: str, selection: LineSelection) -> AgentToolResult:
    text = render_text(converted.text, shown, selection)
    return {"content": [{"type": "text", "text": text}], "details": converted.details}


def _special(cwd: Path, raw_path: str, path: Path, shown: str, head: bytes) -> sources.Converted | None:
    """Archives, SQLite databases, notebooks and PDFs, or None for an ordinary file."""
    name = path.name.lower()
    if head.startswith(b"SQLite format 3\x00"):
        found = sources.split_sqlite(cwd, str(path))
        if found is not None:
            return sources.read_sqlite(found[0], shown, "", "")
    if name.endswith((".zip", ".tar", ".tar.gz", ".tgz")):
        return sources.read_archive(path, shown, "")
    if name.endswith(".ipynb"):
        return sources.read_notebook(path, shown)
    if head.startswith(b"%PDF-"):
        return sources.read_pdf(path, shown)
    return None


def _read(
    cwd: Path,
    raw_path: str,
    sel: str | None,
    numbering: Numbering,
    timeout: object = None,
    signal: AbortSignal | None = None,
) -> AgentToolResult:
    selection = parse_selection(sel)
    if sources.is_url(raw_path.strip()):
        url = raw_path.strip()
        return _converted(sources.read_url(url, sources.clamp_timeout(timeout), signal), url, selection)
    path = resolve_path(cwd, raw_path)
    shown = display_path(cwd, path)
    if not path.exists():
        target = str(path)
        archive = sources.split_archive(cwd, target)
        if archive is not None:
            refuse_special_file(archive[0], display_path(cwd, archive[0]))
            return _converted(
                sources.read_archive(archive[0], display_path(cwd, archive[0]), archive[1]), shown, selection
            )
        database = sources.split_sqlite(cwd, target)
        if database is not None:
            refuse_special_file(database[0], display_path(cwd, database[0]))
            db_shown = display_path(cwd, database[0])
            return _converted(
                sources.read_sqlite(database[0], db_shown, database[1], database[2]), shown, selection
            )
        raise ToolError(f"File not found: {shown}.{_did_you_mean(cwd, path)}")
    if path.is_dir():
        return {"content": [{"type": "text", "text": list_directory(path, limit=MAX_DIR_ENTRIES, ages=True)}]}
    refuse_special_file(path, shown)
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
        size = path.stat().st_size
        special = _special(cwd, raw_path, path, shown, head)
        if special is not None:
            return _converted(special, shown, selection)
        mime = image_mime_type(head)
        if mime is not None:
            if size > MAX_IMAGE_BYTES:
                raise ToolError(f"Image {shown} is too large to attach ({format_size(size)}).")
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            return {
                "content": [
                    {"type": "text", "text": f"Read image file {shown} [{mime}, {format_size(size)}]"},
                    {"type": "image", "data": data, "mimeType": mime},
                ]
            }
        if b"\0" in head:
            raise ToolError(
                f"Cannot read {shown}: it is a binary file ({format_size(size)}). "
                "Use bash (e.g. file, xxd, strings) to inspect it."
            )
        text = read_text_file(path, shown, selection, numbering, signal)
    except PermissionError as exc:
        raise ToolError(f"Permission denied: {shown}") from exc
    except IsADirectoryError as exc:
        raise ToolError(f"{shown} is a directory") from exc
    return {"content": [{"type": "text", "text": text}]}


def create_read_tool(cwd: Path, numbering: Numbering = "none") -> AgentTool:
    """The ``read`` tool bound to the session cwd, showing lines per ``numbering``."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        raw_path = args.get("path")
        if not isinstance(raw_path, str) or not raw_path.strip():
            raise ToolError("path is required")
        sel = args.get("sel")
        selection = sel if isinstance(sel, str) else None
        return await asyncio.to_thread(
            _read, cwd, raw_path, selection, numbering, args.get("timeout"), signal
        )

    return AgentTool(
        name="read",
        label="Read",
        description=read_description(numbering),
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="shared",
    )


_LIST_FILES = 30


def _did_you_mean(cwd: Path, path: Path) -> str:
    """A hint naming files with a similar name, searched from the nearest existing parent.

    With no similar name in a tree of at most 30 files, the hint lists them all.
    """
    parent = path.parent
    while not parent.is_dir() and parent != parent.parent:
        parent = parent.parent
    cwd = Path(os.path.abspath(cwd))
    if parent != cwd and cwd not in parent.parents:
        parent = cwd  # only the project is searched
    names: list[Path] = []
    try:
        for root, dirs, files in os.walk(parent):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
            names.extend(Path(root) / f for f in files)
            if len(names) > 2000:
                break
    except OSError:
        return ""
    by_name: dict[str, list[Path]] = {}
    for candidate in names:
        by_name.setdefault(candidate.name, []).append(candidate)
    close = difflib.get_close_matches(path.name, list(by_name), n=3, cutoff=0.6)
    found = [display_path(cwd, p) for name in close for p in by_name[name][:2]][:3]
    if found:
        return f" Did you mean {' or '.join(found)}? Use find to locate files by name."
    if 0 < len(names) <= _LIST_FILES:
        listed = ", ".join(sorted(display_path(cwd, p) for p in names))
        return (
            f" No file has a similar name; the files there are: {listed}. "
            "To find which file mentions a name, grep for it."
        )
    return " Use find to locate files by name (read on a directory lists it)."
