"""Best-effort parsing of a JSON object that is still streaming in.

:func:`parse_partial_json` parses a whole prefix (natively, with jiter's partial mode).
:class:`PartialJsonObject` follows a stream of fragments: while the fragments only extend
the string value being written (the common case: a file's content, a command), it decodes
just the new characters, so the work per fragment does not grow with what came before;
any other fragment re-parses the prefix. Either way the result equals
``parse_partial_json`` of the text so far.
"""

from __future__ import annotations

import json
import json.decoder
import re
from collections.abc import Callable
from typing import Any

import jiter

# the JSON string scanner that json.loads runs (C when available); typeshed does not declare it
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

# an unfinished escape at the end of a string's raw text: a lone backslash, a \u with fewer
# than four hex digits, or a complete high-surrogate escape still waiting for its low half
_UNFINISHED = re.compile(r"(?:\\u[dD][89abAB][0-9a-fA-F]{2})?(?:\\u[0-9a-fA-F]{0,3}|\\)?\Z")


def parse_partial_json(text: str) -> dict[str, Any]:
    """Parse ``text`` as a JSON object, completing it if it is cut short.

    Returns ``{}`` when nothing sensible can be recovered or the value is not an object.
    """
    if not text.strip():
        return {}
    try:
        value = jiter.from_json(text.encode(), partial_mode="trailing-strings", cache_mode="keys")
    except ValueError:
        value = _parse_by_closing(text)  # raw control characters, lone surrogates, junk
    return value if isinstance(value, dict) else {}


def _close(text: str) -> str:
    stack: list[str] = []
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    if in_string:
        if escaped:
            text = text[:-1]
        text += '"'
    return text + "".join(reversed(stack))


def _parse_by_closing(text: str) -> Any:
    """The slow, forgiving path: close open strings and containers, drop a dangling token.

    Nesting deeper than the parsers follow (jiter ~1,000 levels, ``json`` the recursion
    limit) gives ``{}``: arguments no tool can take, never an exception in the stream.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        return {}
    candidate = text.rstrip()
    for _ in range(8):
        try:
            return json.loads(_close(candidate))
        except json.JSONDecodeError:
            pass
        except RecursionError:
            return {}
        # drop the trailing incomplete token (a dangling comma, colon, key or literal)
        cut = max(candidate.rfind(","), candidate.rfind(":"), candidate.rfind("{"), candidate.rfind("["))
        if cut <= 0:
            break
        candidate = candidate[:cut] if candidate[cut] in ",:" else candidate[: cut + 1]
        candidate = candidate.rstrip().rstrip(",:")
        if candidate.endswith('"') and candidate.count('"') % 2 == 1:
            candidate = candidate[: candidate.rfind('"', 0, len(candidate) - 1)].rstrip().rstrip(",")
    return {}


def _split_unfinished(raw: str) -> tuple[str, str]:
    """``raw`` string content → (the part that can be decoded now, an unfinished escape)."""
    if "\\" not in raw[-11:]:  # an unfinished escape is at most 11 characters, from a backslash
        return raw, ""
    found = _UNFINISHED.search(raw, max(0, len(raw) - 14))
    if found is None or found.start() == len(raw):
        return raw, ""
    # the match must start at a real escape (an even number of backslashes before it)
    start = found.start()
    if (start - len(raw[:start].rstrip("\\"))) % 2:
        return raw, ""
    return raw[:start], raw[start:]


class PartialJsonObject:
    """The arguments of one streaming tool call, updated fragment by fragment.

    :meth:`feed` returns a new dict each time (earlier results are never changed, so events
    that carry them stay true to the moment they were made).
    """

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self.value: dict[str, Any] = {}
        # a small scanner over the raw text: container stack, string state, key position
        self._stack: list[str] = []
        self._in_string = False
        self._escaped = False
        self._expect_key = False
        self._string_is_key = False
        self._string_start = 0  # offset of the open string's content in the whole text
        self._length = 0
        # fast path: where the open string value sits in ``value``, and its undecoded tail
        self._path: list[str | int] | None = None
        self._pending = ""

    @property
    def text(self) -> str:
        """Every fragment so far, joined."""
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def feed(self, fragment: str) -> dict[str, Any]:
        """Add a fragment of the JSON text; return the object parsed from the text so far."""
        if not fragment:
            return self.value
        in_value_string = self._in_string and not self._string_is_key and self._path is not None
        if in_value_string and not self._escaped and '"' not in fragment and "\\" not in fragment:
            self._chunks.append(fragment)  # plain string content: nothing to scan
            self._length += len(fragment)
            return self._extend(fragment)
        structural = self._scan(fragment)
        self._chunks.append(fragment)
        self._length += len(fragment)
        if in_value_string and not structural:
            return self._extend(fragment)
        return self._reparse()

    def _extend(self, fragment: str) -> dict[str, Any]:
        raw, self._pending = _split_unfinished(self._pending + fragment)
        if not raw:
            return self.value
        decoded = _decoded(raw)
        if decoded is None:
            return self._reparse()
        assert self._path is not None
        self.value = _appended(self.value, self._path, decoded)
        return self.value

    def _reparse(self) -> dict[str, Any]:
        text = self.text
        self.value = parse_partial_json(text)
        self._path, self._pending = None, ""
        if self._in_string and not self._string_is_key:
            path = _last_path(self.value)
            raw, pending = _split_unfinished(text[self._string_start :])
            # the leaf must be this very string (a repeated key could put another one last)
            if path is not None and _leaf(self.value, path) == _decoded(raw):
                self._path, self._pending = path, pending
        return self.value

    def _scan(self, fragment: str) -> bool:
        """Advance the scanner; True if anything but the open string's content was seen."""
        structural = not self._in_string
        offset = self._length
        for i, ch in enumerate(fragment):
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._in_string = False
                    structural = True
                continue
            structural = True
            if ch == '"':
                self._in_string = True
                self._string_is_key = bool(self._stack) and self._stack[-1] == "{" and self._expect_key
                self._string_start = offset + i + 1
            elif ch in "{[":
                self._stack.append(ch)
                self._expect_key = ch == "{"
            elif ch in "}]":
                if self._stack:
                    self._stack.pop()
                self._expect_key = False
            elif ch == ",":
                self._expect_key = bool(self._stack) and self._stack[-1] == "{"
            elif ch == ":":
                self._expect_key = False
        return structural


def _last_path(value: Any) -> list[str | int] | None:
    """The path to the last-written leaf of ``value`` if that leaf is a string."""
    path: list[str | int] = []
    node = value
    while True:
        if isinstance(node, dict) and node:
            key = next(reversed(node))
            path.append(key)
            node = node[key]
        elif isinstance(node, list) and node:
            path.append(len(node) - 1)
            node = node[-1]
        else:
            return path if isinstance(node, str) and path else None


def _leaf(value: Any, path: list[str | int]) -> Any:
    for key in path:
        value = value[key]
    return value


def _decoded(raw: str) -> str | None:
    """``json.loads('"' + raw + '"')``, or None where that raises (an unescaped quote or control
    character, a bad or cut escape)."""
    if '"' not in raw and "\\" not in raw and raw.isprintable():
        return raw  # nothing to unescape and nothing JSON forbids (control characters are not printable)
    try:
        value, end = _scanstring(raw + '"', 0, True)  # the string scanner json.loads itself runs
    except json.JSONDecodeError:
        return None
    return value if end == len(raw) + 1 else None


def _appended(value: Any, path: list[str | int], text: str) -> Any:
    """A copy of ``value`` with ``text`` appended to the string at ``path`` (containers on the path copied)."""
    if not path:
        return value + text
    head, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _appended(value[head], rest, text)
    return copy
