"""Text matching and diffs for the ``edit`` tool (pure functions).

Matching contract: an exact substring match is tried first. When there is none,
whole-line windows of the file are compared with ``old_text`` after collapsing
runs of whitespace (so indentation and spacing differences are tolerated), scored
with ``difflib.SequenceMatcher``; windows scoring at least 0.95 match. A fuzzy
match replaces the whole matched lines; if the file's indentation differs from
``old_text``'s, ``new_text`` is re-indented the same way. More than one match is an
error unless every occurrence was asked for. When nothing matches, the error names
the most similar window ("closest match is lines N-M").
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from xcsh.coding.tools.errors import ToolError

FUZZY_THRESHOLD = 0.95
_MAX_CLOSEST_LINES = 40


@dataclass(slots=True, frozen=True)
class Replacement:
    """The outcome of replacing one ``old_text`` in a text."""

    content: str
    count: int
    fuzzy: bool


@dataclass(slots=True, frozen=True)
class _Window:
    start_line: int  # 0-based index of the first line
    score: float


def _normalize(line: str) -> str:
    return " ".join(line.split())


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _similarity(a: str, b: str, floor: float) -> float:
    if a == b:
        return 1.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
        return 0.0
    return matcher.ratio()


def _old_lines(old_text: str) -> tuple[list[str], bool]:
    trailing_newline = old_text.endswith("\n")
    body = old_text[:-1] if trailing_newline else old_text
    return body.split("\n"), trailing_newline


def _score_windows(lines: list[str], old_lines: list[str], floor: float) -> list[_Window]:
    size = len(old_lines)
    target = "\n".join(_normalize(line) for line in old_lines)
    normalized = [_normalize(line) for line in lines]
    windows: list[_Window] = []
    for start in range(len(lines) - size + 1):
        score = _similarity("\n".join(normalized[start : start + size]), target, floor)
        if score >= floor and score > 0:
            windows.append(_Window(start, score))
    return windows


def closest_window(content: str, old_text: str) -> tuple[int, int, str] | None:
    """The 1-based line range and text of the window most similar to ``old_text``, if any."""
    lines = content.split("\n")
    old_lines, _ = _old_lines(old_text)
    size = min(len(old_lines), len(lines))
    if not content or size == 0:
        return None
    target = "\n".join(_normalize(line) for line in old_lines)
    normalized = [_normalize(line) for line in lines]
    best: _Window | None = None
    for start in range(len(lines) - size + 1):
        floor = best.score if best is not None else 0.0
        score = _similarity("\n".join(normalized[start : start + size]), target, floor)
        if score > floor or best is None:
            best = _Window(start, score)
    if best is None or best.score <= 0:
        return None
    shown = lines[best.start_line : best.start_line + min(size, _MAX_CLOSEST_LINES)]
    return best.start_line + 1, best.start_line + size, "\n".join(shown)


def _pick_disjoint(windows: list[_Window], size: int) -> list[_Window]:
    chosen: list[_Window] = []
    for window in sorted(windows, key=lambda w: (-w.score, w.start_line)):
        if all(abs(window.start_line - other.start_line) >= size for other in chosen):
            chosen.append(window)
    return sorted(chosen, key=lambda w: w.start_line)


def _reindent(new_text: str, old_indent: str, file_indent: str) -> str:
    if old_indent == file_indent:
        return new_text
    out: list[str] = []
    for line in new_text.split("\n"):
        if line.strip() and line.startswith(old_indent):
            line = file_indent + line[len(old_indent) :]
        out.append(line)
    return "\n".join(out)


def _fuzzy_replace(content: str, old_text: str, new_text: str, windows: list[_Window]) -> str:
    lines = content.split("\n")
    old_lines, trailing_newline = _old_lines(old_text)
    size = len(old_lines)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    first_real = next((i for i, line in enumerate(old_lines) if line.strip()), 0)
    pieces: list[str] = []
    cursor = 0
    for window in windows:
        start = offsets[window.start_line]
        last = window.start_line + size - 1
        end = offsets[last] + len(lines[last])
        if trailing_newline and last < len(lines) - 1:
            end += 1
        replacement = _reindent(
            new_text, _indent(old_lines[first_real]), _indent(lines[window.start_line + first_real])
        )
        pieces.append(content[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(content[cursor:])
    return "".join(pieces)


def replace_text(content: str, old_text: str, new_text: str, *, path: str, replace_all: bool) -> Replacement:
    """Replace ``old_text`` in ``content``; raises ToolError when it is missing or ambiguous."""
    if not old_text:
        raise ToolError(f"old_text must not be empty (editing {path}). Use write to create a file.")
    count = content.count(old_text)
    if count > 1 and not replace_all:
        raise ToolError(
            f"Found {count} occurrences of the text in {path}. The text must match exactly one place: "
            "include more surrounding lines to make it unique, or set all=true to replace every occurrence."
        )
    if count:
        limit = -1 if replace_all else 1
        return Replacement(content=content.replace(old_text, new_text, limit), count=count, fuzzy=False)
    old_lines, _ = _old_lines(old_text)
    windows = _pick_disjoint(_score_windows(content.split("\n"), old_lines, FUZZY_THRESHOLD), len(old_lines))
    if len(windows) > 1 and not replace_all:
        places = ", ".join(f"line {w.start_line + 1}" for w in windows[:10])
        raise ToolError(
            f"Found {len(windows)} places in {path} that match the text when whitespace is ignored ({places}). "
            "Include more surrounding lines to make it unique, or set all=true to replace every occurrence."
        )
    if windows:
        return Replacement(
            content=_fuzzy_replace(content, old_text, new_text, windows), count=len(windows), fuzzy=True
        )
    closest = closest_window(content, old_text)
    if closest is None:
        raise ToolError(f"Could not find the text in {path}.")
    first, last, text = closest
    raise ToolError(f"Could not find the text in {path}. The closest match is lines {first}-{last}:\n{text}")


def unified_diff(before: str, after: str, path: str, *, context: int = 3) -> str:
    """A unified diff of two versions of one file (``a/path`` → ``b/path``)."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def first_changed_line(before: str, after: str) -> int | None:
    """1-based number (in ``after``) of the first line that differs, None if equal."""
    if before == after:
        return None
    old_lines = before.split("\n")
    new_lines = after.split("\n")
    for index, (old, new) in enumerate(zip(old_lines, new_lines, strict=False)):
        if old != new:
            return index + 1
    return min(len(old_lines), len(new_lines)) + (0 if len(new_lines) < len(old_lines) else 1)


def diff_stats(diff: str) -> tuple[int, int]:
    """Numbers of added and removed lines in a unified diff."""
    added = removed = 0
    for line in diff.split("\n"):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed
