"""Hashline anchors: line addresses that double as staleness checks (pure functions).

Contract (agent-behaviour §13.1, ``edit.mode = hashline``):

- A line's anchor is ``N#HH``: its 1-based number and two letters of the alphabet
  ``ZPMQVRWSNKTXJBYH`` naming the high and low nibble of the low byte of the
  xxHash32 of the line's UTF-8 text with CRs and trailing whitespace removed. The
  seed is 0, or the line number when the line has no letter or digit (so blank and
  brace-only lines at different places get different anchors).
- ``read`` shows lines as ``N#HH:text``; ``parse_anchor`` accepts what a model copies
  back (``"12#QX"``, ``"12#QX:text"``, ``">>> 12 # QX"``).
- A file is a list of lines plus a trailing-newline flag; the newline that ends the
  file is not a line of its own (as ``read`` shows it).
- ``apply_edits`` checks every anchor of a batch against the current text before
  changing anything; stale anchors raise :class:`StaleAnchorsError`, whose message
  shows each stale line (marked ``>>>``) with two lines of context and fresh anchors.
  Edits address the text as it was read: they are applied bottom-up so earlier
  line numbers stay valid; overlapping replaced ranges are rejected.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.file_write import display_text

ALPHABET = "ZPMQVRWSNKTXJBYH"
_PAIRS = tuple(ALPHABET[i >> 4] + ALPHABET[i & 0xF] for i in range(256))
_ANCHOR_RE = re.compile(rf"^\s*[>+-]*\s*(\d+)\s*#\s*([{ALPHABET}]{{2}})")
_COPIED_PREFIX_RE = re.compile(rf"^\s*(?:>>>|>>)?\s*\+?\s*\d+\s*#\s*[{ALPHABET}]{{2}}:")
STALE_CONTEXT = 2


def _xxh32(data: bytes, seed: int) -> int:
    import xxhash

    return int(xxhash.xxh32_intdigest(data, seed))


def line_hash(number: int, line: str) -> str:
    """The two-letter hash of ``line`` at 1-based ``number``."""
    text = line.replace("\r", "").rstrip()
    seed = 0 if any(ch.isalnum() for ch in text) else number
    # bytes that were not UTF-8 (kept as lone surrogates by the edit tools) hash as themselves
    return _PAIRS[_xxh32(text.encode("utf-8", "surrogateescape"), seed) & 0xFF]


_ALNUM_RE = re.compile(r"[^\W_]")  # exactly str.isalnum()
_TRAILING_SPACE = b" \t\r\n\x0b\x0c\x1c\x1d\x1e\x1f"
_CHUNK = 1 << 20


def file_line_hash(path: Path, offset: int, length: int, number: int) -> str:
    """:func:`line_hash` of the ``length`` bytes at ``offset`` of ``path`` (a line too long to
    hold), read in pieces. Trailing whitespace is taken as ASCII whitespace here."""
    import codecs

    import xxhash

    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    has_alnum = False
    end = position = 0
    with path.open("rb") as handle:
        handle.seek(offset)
        while position < length:
            chunk = handle.read(min(_CHUNK, length - position))
            if not chunk:
                break
            if not has_alnum and _ALNUM_RE.search(decoder.decode(chunk)):
                has_alnum = True
            kept = chunk.rstrip(_TRAILING_SPACE)
            if kept:
                end = position + len(kept)
            position += len(chunk)
        digest = xxhash.xxh32(seed=0 if has_alnum else number)
        handle.seek(offset)
        position = 0
        while position < end:
            chunk = handle.read(min(_CHUNK, end - position))
            if not chunk:
                break
            digest.update(chunk.replace(b"\r", b""))
            position += len(chunk)
    return _PAIRS[digest.intdigest() & 0xFF]


def anchor(number: int, line: str) -> str:
    """``N#HH`` for ``line`` at ``number``."""
    return f"{number}#{line_hash(number, line)}"


def format_line(number: int, line: str) -> str:
    """The ``N#HH:text`` form ``read`` shows (a CR ending the line not shown, bytes that are not
    UTF-8 as U+FFFD)."""
    return f"{anchor(number, line)}:{display_text(line.removesuffix(chr(13)))}"


@dataclass(slots=True, frozen=True)
class Anchor:
    line: int
    hash: str

    def __str__(self) -> str:
        return f"{self.line}#{self.hash}"


def parse_anchor(raw: object) -> Anchor:
    """Parse a copied anchor; raises ToolError naming the expected form."""
    if not isinstance(raw, str):
        raise ToolError(f'Invalid anchor {raw!r}: expected a string like "5#QX" copied from read output.')
    match = _ANCHOR_RE.match(raw)
    if match is None:
        raise ToolError(f'Invalid anchor "{raw}": expected "LINE#ID" (e.g. "5#QX") copied from read output.')
    number = int(match.group(1))
    if number < 1:
        raise ToolError(f'Invalid anchor "{raw}": lines are 1-indexed.')
    return Anchor(number, match.group(2))


def strip_copied_prefixes(lines: list[str]) -> list[str]:
    """Drop ``N#HH:`` prefixes when every non-empty line carries one (text copied from read)."""
    filled = [line for line in lines if line]
    if not filled or not all(_COPIED_PREFIX_RE.match(line) for line in filled):
        return lines
    return [_COPIED_PREFIX_RE.sub("", line, count=1) for line in lines]


def content_lines(content: object) -> list[str]:
    """``content`` as lines: a list of strings (an item with newlines is several lines), a string
    (one final newline ignored) or null (no lines)."""
    if content is None:
        return []
    if isinstance(content, str):
        text = content.replace("\r", "")
        if text.endswith("\n"):
            text = text[:-1]
        return strip_copied_prefixes(text.split("\n"))
    if isinstance(content, list) and all(isinstance(item, str) for item in content):
        # an item holding newlines is several lines (the file gets the same text either way)
        split = [line for item in content for line in item.replace("\r", "").split("\n")]
        return strip_copied_prefixes(split)
    raise ToolError("content must be an array of lines, a string, or null")


@dataclass(slots=True)
class Document:
    """A text as lines plus whether it ends with a newline."""

    lines: list[str]
    trailing_newline: bool

    @classmethod
    def parse(cls, text: str) -> Document:
        if not text:
            return cls([], False)
        trailing = text.endswith("\n")
        body = text[:-1] if trailing else text
        return cls(body.split("\n"), trailing)

    def render(self) -> str:
        if not self.lines:
            return ""
        return "\n".join(self.lines) + ("\n" if self.trailing_newline else "")


OpKind = Literal["replace", "after", "before", "append", "prepend"]


@dataclass(slots=True)
class LineEdit:
    """One resolved edit: replace lines ``start..end``, insert after/before a line, or at either end."""

    kind: OpKind
    lines: list[str]
    start: Anchor | None = None
    end: Anchor | None = None
    index: int = 0
    anchors: list[Anchor] = field(default_factory=list)


def resolve_loc(loc: object, lines: list[str], index: int) -> LineEdit:
    """Turn a model-supplied ``loc`` into a :class:`LineEdit`."""
    if loc == "append":
        return LineEdit("append", lines, index=index)
    if loc == "prepend":
        return LineEdit("prepend", lines, index=index)
    if isinstance(loc, dict) and len(loc) == 1:
        key, value = next(iter(loc.items()))
        if key in ("append", "prepend"):
            target = parse_anchor(value)
            kind: OpKind = "after" if key == "append" else "before"
            return LineEdit(kind, lines, start=target, index=index, anchors=[target])
        if key == "range" and isinstance(value, dict):
            start, end = parse_anchor(value.get("pos")), parse_anchor(value.get("end"))
            if end.line < start.line:
                raise ToolError(f"range end {end} comes before its pos {start}.")
            return LineEdit("replace", lines, start=start, end=end, index=index, anchors=[start, end])
    raise ToolError(
        'loc must be "append", "prepend", {"append": "N#ID"}, {"prepend": "N#ID"} '
        'or {"range": {"pos": "N#ID", "end": "N#ID"}}'
    )


class StaleAnchorsError(ToolError):
    """Anchors that no longer match the file; the message shows fresh ones."""

    def __init__(self, shown: str, stale: Sequence[Anchor], lines: list[str]) -> None:
        self.stale = list(stale)
        super().__init__(self._message(shown, lines))

    def _message(self, shown: str, lines: list[str]) -> str:
        marked = {a.line for a in self.stale}
        visible: set[int] = set()
        for number in marked:
            visible.update(range(max(1, number - STALE_CONTEXT), min(len(lines), number + STALE_CONTEXT) + 1))
        count = len(marked)
        head = (
            f"{count} line{'s' if count != 1 else ''} of {shown} changed since you read "
            f"{'them' if count != 1 else 'it'}; nothing was edited. Use the current anchors below "
            "(>>> marks the changed lines) or read the file again."
        )
        out = [head, ""]
        previous = 0
        for number in sorted(visible):
            if previous and number > previous + 1:
                out.append("    ...")
            previous = number
            mark = ">>> " if number in marked else "    "
            out.append(mark + format_line(number, lines[number - 1]))
        return "\n".join(out)


def check_anchors(edits: Sequence[LineEdit], doc: Document, shown: str) -> None:
    """Raise for anchors past the end of the file, stale anchors, or overlapping replaced ranges."""
    total = len(doc.lines)
    stale: dict[int, Anchor] = {}
    for edit in edits:
        for item in edit.anchors:
            if item.line > total:
                raise ToolError(
                    f"Anchor {item} is past the end of {shown} ({total} line{'s' if total != 1 else ''}). "
                    "Read the file again for current anchors."
                )
            if line_hash(item.line, doc.lines[item.line - 1]) != item.hash:
                stale.setdefault(item.line, item)
    if stale:
        raise StaleAnchorsError(shown, [stale[k] for k in sorted(stale)], doc.lines)
    ranges = sorted(
        (e.start.line, e.end.line, e.index)
        for e in edits
        if e.kind == "replace" and e.start is not None and e.end is not None
    )
    for (a_start, a_end, a_index), (b_start, b_end, b_index) in itertools.pairwise(ranges):
        if b_start <= a_end:
            raise ToolError(
                f"edits[{a_index}] (lines {a_start}-{a_end}) and edits[{b_index}] (lines {b_start}-{b_end}) "
                f"of {shown} overlap; merge them into one range."
            )
    for edit in edits:
        if edit.kind not in ("after", "before") or edit.start is None:
            continue
        line = edit.start.line
        for start, end, index in ranges:
            inside = start <= line < end if edit.kind == "after" else start < line <= end
            if inside:
                raise ToolError(
                    f"edits[{edit.index}] inserts inside the range of edits[{index}] (lines {start}-{end}) "
                    f"of {shown}; put the inserted lines into that range's content instead."
                )


def _sort_key(edit: LineEdit, total: int) -> tuple[int, int, int]:
    # applied bottom-up; at one line: inserts after it, then the range ending there, then inserts
    # before it. Inserts at one place go in last-first (each pushes the earlier ones down), so
    # they come out in call order; "append" extends the end, so it goes first-first.
    if edit.kind == "after" and edit.start is not None:
        return (-edit.start.line, 0, -edit.index)
    if edit.kind == "replace" and edit.end is not None:
        return (-edit.end.line, 1, edit.index)
    if edit.kind == "before" and edit.start is not None:
        return (-edit.start.line, 2, -edit.index)
    if edit.kind == "append":
        return (-(total + 1), 0, edit.index)
    return (0, 2, -edit.index)


def boundary_warnings(doc: Document, edits: Sequence[LineEdit]) -> list[str]:
    """Warn when a range's last new line repeats the line right after the range (a doubled closer)."""
    warnings: list[str] = []
    for edit in edits:
        if edit.kind != "replace" or edit.end is None or not edit.lines or edit.end.line >= len(doc.lines):
            continue
        following = doc.lines[edit.end.line]
        last = edit.lines[-1].strip()
        if last and last == following.strip():
            tag = anchor(edit.end.line + 1, following)
            warnings.append(
                f"edits[{edit.index}]: the last new line `{last}` repeats the line after the range ({tag}), "
                f"which was kept. If the range should have included it, set end to {tag}."
            )
    return warnings


def apply_edits(doc: Document, edits: Sequence[LineEdit], shown: str) -> tuple[Document, int | None]:
    """Apply checked edits to a copy of ``doc``; returns it and the first changed line (1-based)."""
    check_anchors(edits, doc, shown)
    lines = list(doc.lines)
    first: int | None = None
    ordered = sorted(edits, key=lambda e: _sort_key(e, len(doc.lines)))
    for edit in ordered:
        if edit.kind == "replace" and edit.start is not None and edit.end is not None:
            lines[edit.start.line - 1 : edit.end.line] = edit.lines
            changed = edit.start.line
        elif edit.kind == "after" and edit.start is not None:
            lines[edit.start.line : edit.start.line] = edit.lines
            changed = edit.start.line + 1
        elif edit.kind == "before" and edit.start is not None:
            lines[edit.start.line - 1 : edit.start.line - 1] = edit.lines
            changed = edit.start.line
        elif edit.kind == "append":
            changed = len(lines) + 1
            lines.extend(edit.lines)
        else:
            lines[0:0] = edit.lines
            changed = 1
        if edit.lines or edit.kind == "replace":
            first = changed if first is None else min(first, changed)
    trailing = doc.trailing_newline or (not doc.lines and bool(lines))
    return Document(lines, trailing), first
