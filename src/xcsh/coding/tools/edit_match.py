"""Text matching and diffs for the ``edit`` tool (pure functions).

Matching contract: an exact substring match is tried first. When there is none,
whole-line windows of the file are compared with ``old_text`` after collapsing
runs of whitespace (so indentation and spacing differences are tolerated), scored
with ``difflib.SequenceMatcher``; windows scoring at least 0.95 match, and so does a
window equal to ``old_text`` once all whitespace is removed (``x=1`` vs ``x = 1``). Quote
characters are never read as one another, except in Python files (``.py``, ``.pyi``), where
the quote style of a string means nothing: there ``'C'`` matches ``"C"`` and the result says
it matched ignoring quote style (``Replacement.quotes``). In a shell script ``'$HOME'`` and
``"$HOME"`` differ, so elsewhere they never match.
Blank lines at the start or end of ``old_text`` are ignored for that comparison. A
fuzzy match replaces the whole matched lines; if the file's indentation differs from
``old_text``'s, ``new_text`` is re-indented the same way. More than one match is an
error unless every occurrence was asked for. When nothing matches, the error shows
the current text of the most similar window with two lines of context around it
(or the whole file when it is short and nothing is similar), so the caller can copy
``old_text`` from it; a window of up to 8 lines is also given as a JSON string, ready to
paste as ``old_text``. When ``old_text`` is a single line holding literal ``\\n``
escapes (a model that escaped twice) and only its unescaped form matches, both texts
are unescaped.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.file_write import display_text

FUZZY_THRESHOLD = 0.95
_MAX_CLOSEST_LINES = 40
_CONTEXT_LINES = 2
_SHORT_FILE_LINES = 60
_SUGGEST_LINES = 8


@dataclass(slots=True, frozen=True)
class Replacement:
    """The outcome of replacing one ``old_text`` in a text."""

    content: str
    count: int
    fuzzy: bool
    quotes: bool = False  # matched only once quote characters were read as one (Python files)


@dataclass(slots=True, frozen=True)
class _Window:
    start_line: int  # 0-based index of the first line
    score: float
    quotes: bool = False


def _normalize(line: str) -> str:
    return " ".join(line.split())


def _squeeze(lines: list[str]) -> str:
    return "\n".join("".join(line.split()) for line in lines)


def _quote_blind(text: str) -> str:
    return text.replace("'", '"')


def quote_style_free(path: str) -> bool:
    """Whether ``path`` is a file whose strings mean the same in either quote (Python)."""
    return path.endswith((".py", ".pyi"))


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


def _trim_blank_lines(text: str) -> str:
    """``text`` without whole blank lines at its start and end (a trailing newline is kept)."""
    lines = text.split("\n")
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if start == end:
        return text
    trimmed = "\n".join(lines[start:end])
    return trimmed + "\n" if end < len(lines) else trimmed


def _score_windows(lines: list[str], old_lines: list[str], floor: float, quotes: bool) -> list[_Window]:
    size = len(old_lines)
    target = "\n".join(_normalize(line) for line in old_lines)
    squeezed_target = _squeeze(old_lines)
    blind_target = _quote_blind(squeezed_target)
    normalized = [_normalize(line) for line in lines]
    windows: list[_Window] = []
    for start in range(len(lines) - size + 1):
        window = "\n".join(normalized[start : start + size])
        score = _similarity(window, target, floor)
        by_quotes = False
        if score < floor:
            squeezed = _squeeze(normalized[start : start + size])
            if squeezed == squeezed_target:
                score = 1.0
            elif quotes and _quote_blind(squeezed) == blind_target:
                score, by_quotes = 1.0, True
        if score >= floor and score > 0:
            windows.append(_Window(start, score, by_quotes))
    return windows


def closest_window(content: str, old_text: str) -> tuple[int, int, str, float] | None:
    """The 1-based line range, text and similarity (0-1) of the window most like ``old_text``."""
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
    return best.start_line + 1, best.start_line + size, "\n".join(shown), best.score


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
    found = _try_replace(content, old_text, new_text, path=path, replace_all=replace_all)
    if found is None and "\n" not in old_text.rstrip("\n") and "\\n" in old_text:
        found = _try_replace(
            content, _unescape(old_text), _unescape(new_text), path=path, replace_all=replace_all
        )
    if found is not None:
        return found
    raise ToolError(not_found_message(content, old_text, path))


def find_text(content: str, old_text: str, *, path: str) -> bool:
    """True when ``old_text`` occurs in ``content`` by the matching rules (ambiguity counts as found)."""
    try:
        return _try_replace(content, old_text, old_text, path=path, replace_all=True) is not None
    except ToolError:
        return True


def _try_replace(
    content: str, old_text: str, new_text: str, *, path: str, replace_all: bool
) -> Replacement | None:
    count = content.count(old_text)
    if count > 1 and not replace_all:
        raise ToolError(
            f"Found {count} occurrences of the text in {path}. The text must match exactly one place: "
            "include more surrounding lines to make it unique, or set all=true to replace every occurrence."
        )
    if count:
        limit = -1 if replace_all else 1
        return Replacement(content=content.replace(old_text, new_text, limit), count=count, fuzzy=False)
    trimmed = _trim_blank_lines(old_text)
    if trimmed != old_text and trimmed.strip():
        new_trimmed = _trim_blank_lines(new_text) if new_text.strip() else new_text
        exact = _try_replace(content, trimmed, new_trimmed, path=path, replace_all=replace_all)
        if exact is not None:
            return exact
    old_lines, _ = _old_lines(old_text)
    windows = _pick_disjoint(
        _score_windows(content.split("\n"), old_lines, FUZZY_THRESHOLD, quote_style_free(path)),
        len(old_lines),
    )
    if len(windows) > 1 and not replace_all:
        places = ", ".join(f"line {w.start_line + 1}" for w in windows[:10])
        raise ToolError(
            f"Found {len(windows)} places in {path} that match the text when whitespace is ignored ({places}). "
            "Include more surrounding lines to make it unique, or set all=true to replace every occurrence."
        )
    if windows:
        return Replacement(
            content=_fuzzy_replace(content, old_text, new_text, windows),
            count=len(windows),
            fuzzy=True,
            quotes=any(w.quotes for w in windows),
        )
    return None


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')


def not_found_message(content: str, old_text: str, path: str) -> str:
    """:func:`_not_found_message` with bytes that were not UTF-8 shown as U+FFFD."""
    return display_text(_not_found_message(content, old_text, path))


def _not_found_message(content: str, old_text: str, path: str) -> str:
    """The error for an ``old_text`` that matches nowhere: the current text the caller needs."""
    head = f"Could not find old_text in {path}."
    lines = content.split("\n")
    if content.endswith("\n"):
        lines = lines[:-1]
    closest = closest_window(content, old_text)
    if closest is None or closest[3] < 0.5:
        if not content.strip():
            return f"{head} The file is empty. Use write to give it content."
        if len(lines) <= _SHORT_FILE_LINES:
            body = "\n".join(lines)
            return (
                f"{head} Nothing in it is similar. Its current content ({len(lines)} lines) is:\n{body}\n"
                "Copy old_text exactly from this content and retry."
            )
        return f"{head} Nothing in it is similar. Read {path} to see its current content, then retry."
    first, last, window, _ = closest
    start = max(1, first - _CONTEXT_LINES)
    end = min(len(lines), last + _CONTEXT_LINES, start + _MAX_CLOSEST_LINES - 1)
    region = "\n".join(lines[start - 1 : end])
    text = (
        f"{head} The closest match is lines {first}-{last}; the current text of lines {start}-{end} is:\n"
        f"{region}\nCopy old_text exactly from this text (or read {path} again) and retry."
    )
    if last - first < _SUGGEST_LINES and window.strip():
        # the exact string, JSON-quoted: what a small model copies most reliably
        text += (
            f"\nThe closest lines as they are now, to use as old_text (then write the changed lines as "
            f'new_text):\n"old_text": {json.dumps(window, ensure_ascii=False)}'
        )
    return text


def unified_diff(before: str, after: str, path: str, *, context: int = 3) -> str:
    """A unified diff of two versions of one file (``a/path`` → ``b/path``); bytes that were not
    UTF-8 are shown as U+FFFD."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    return display_text(
        "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
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
