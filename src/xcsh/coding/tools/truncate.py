"""Output limits shared by the tools: keep the head or the tail of a text.

Two independent limits apply, whichever is hit first: a line count and a UTF-8
byte count (3000 lines / 51 200 bytes by default). Head truncation keeps whole
lines from the start; tail truncation keeps whole lines from the end, except that
a single last line longer than the byte budget is cut to its final bytes. Lines
are counted as ``text.split("\\n")``, so a trailing newline yields an empty last
line (the bash rule "newline count + 1").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MAX_LINES = 3000
MAX_BYTES = 51_200
GREP_MAX_LINE_CHARS = 1024


def format_size(size: int) -> str:
    """Human size as the notices print it: ``512B``, ``50.0KB``, ``1.5MB``."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


@dataclass(slots=True, kw_only=True)
class Truncation:
    """What survived a truncation and why."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def truncate_head(text: str, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep whole lines from the start within both limits."""
    total_bytes = _utf8_len(text)
    lines = text.split("\n")
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return Truncation(
            content=text,
            truncated=False,
            truncated_by=None,
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=total_lines,
            output_bytes=total_bytes,
        )
    if _utf8_len(lines[0]) > max_bytes:
        return Truncation(
            content="",
            truncated=True,
            truncated_by="bytes",
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=0,
            output_bytes=0,
            first_line_exceeds_limit=True,
        )
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    for line in lines[:max_lines]:
        size = _utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    content = "\n".join(kept)
    return Truncation(
        content=content,
        truncated=True,
        truncated_by=truncated_by,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=len(kept),
        output_bytes=_utf8_len(content),
    )


def tail_bytes(text: str, max_bytes: int) -> str:
    """The last ``max_bytes`` UTF-8 bytes of ``text``, never starting inside a character."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:].decode("utf-8")


def truncate_tail(text: str, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep whole lines from the end within both limits (a huge last line is cut to its tail)."""
    total_bytes = _utf8_len(text)
    lines = text.split("\n")
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return Truncation(
            content=text,
            truncated=False,
            truncated_by=None,
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=total_lines,
            output_bytes=total_bytes,
        )
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            truncated_by = "lines"
            break
        size = _utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if not kept:
                kept.append(tail_bytes(line, max_bytes))
                partial = True
            break
        kept.append(line)
        used += size
    kept.reverse()
    content = "\n".join(kept)
    return Truncation(
        content=content,
        truncated=True,
        truncated_by=truncated_by,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=len(kept),
        output_bytes=_utf8_len(content),
        last_line_partial=partial,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_CHARS) -> str:
    """Cut one over-long line, marking the cut."""
    if len(line) <= max_chars:
        return line
    return line[:max_chars] + "… [line truncated]"
