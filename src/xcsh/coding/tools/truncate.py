"""Output limits shared by the tools: keep the head or the tail of a text.

Two independent limits apply, whichever is hit first: a line count and a UTF-8
byte count (3000 lines / 51 200 bytes by default). Head truncation keeps whole
lines from the start; tail truncation keeps whole lines from the end, except that
a single last line longer than the byte budget is cut to its final bytes. Lines
are counted as ``text.split("\\n")``, so a trailing newline yields an empty last
line (the bash rule "newline count + 1").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

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


class Truncation(msgspec.Struct, kw_only=True):
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


def _whole(text: str, max_lines: int, max_bytes: int) -> tuple[list[str], int, Truncation | None]:
    """The lines and UTF-8 size of ``text``, and its untruncated result when it fits both limits."""
    total_bytes = _utf8_len(text)
    lines = text.split("\n")
    if len(lines) > max_lines or total_bytes > max_bytes:
        return lines, total_bytes, None
    whole = Truncation(
        content=text,
        truncated=False,
        truncated_by=None,
        total_lines=len(lines),
        total_bytes=total_bytes,
        output_lines=len(lines),
        output_bytes=total_bytes,
    )
    return lines, total_bytes, whole


def _take(
    lines: Iterable[str], max_lines: int, max_bytes: int
) -> tuple[list[str], Literal["lines", "bytes"]]:
    """Whole lines in the order given while both limits hold, and the limit that stopped them."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if len(kept) >= max_lines:
            return kept, "lines"
        size = _utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            return kept, "bytes"
        kept.append(line)
        used += size
    return kept, "lines"


def _cut(
    kept: list[str],
    truncated_by: Literal["lines", "bytes"],
    total_lines: int,
    total_bytes: int,
    *,
    last_line_partial: bool = False,
    first_line_exceeds_limit: bool = False,
) -> Truncation:
    content = "\n".join(kept)
    return Truncation(
        content=content,
        truncated=True,
        truncated_by=truncated_by,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=len(kept),
        output_bytes=_utf8_len(content),
        last_line_partial=last_line_partial,
        first_line_exceeds_limit=first_line_exceeds_limit,
    )


def truncate_head(text: str, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep whole lines from the start within both limits."""
    lines, total_bytes, whole = _whole(text, max_lines, max_bytes)
    if whole is not None:
        return whole
    if _utf8_len(lines[0]) > max_bytes:
        return _cut([], "bytes", len(lines), total_bytes, first_line_exceeds_limit=True)
    kept, truncated_by = _take(lines, max_lines, max_bytes)
    return _cut(kept, truncated_by, len(lines), total_bytes)


def head_bytes(text: str, max_bytes: int) -> str:
    """The first ``max_bytes`` UTF-8 bytes of ``text``, never ending inside a character."""
    data = text.encode("utf-8")
    return text if len(data) <= max_bytes else data[:max_bytes].decode("utf-8", errors="ignore")


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
    lines, total_bytes, whole = _whole(text, max_lines, max_bytes)
    if whole is not None:
        return whole
    kept, truncated_by = _take(reversed(lines), max_lines, max_bytes)
    partial = truncated_by == "bytes" and not kept
    if partial:
        kept = [tail_bytes(lines[-1], max_bytes)]
    kept.reverse()
    return _cut(kept, truncated_by, len(lines), total_bytes, last_line_partial=partial)


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_CHARS) -> str:
    """Cut one over-long line, marking the cut."""
    if len(line) <= max_chars:
        return line
    return line[:max_chars] + "… [line truncated]"
