"""Reading the simplest YAML documents without importing PyYAML; anything else is PyYAML's.

Importing ``yaml`` costs ~8 ms of CPU (mostly compiling its resolver's and scanner's regular
expressions), paid at every start-up that finds a ``models.yml`` or ``config.yml``
(docs/performance.md, "Fourth session: first prompt"). Such files are usually a few nested
block mappings and sequences of plain words, so :func:`safe_load` reads that subset itself and
hands every other document to ``yaml.safe_load`` unchanged (errors included).

The subset, read exactly as ``yaml.safe_load`` reads it (tests compare the two on generated
documents): block mappings whose keys are plain words (``[A-Za-z_][A-Za-z0-9_.-]*``, not one of
YAML 1.1's booleans or nulls); block sequences, including a mapping started on the ``- `` line;
a ``key:`` followed by a more indented block, or by a sequence at the key's own indentation;
values that are a plain word or phrase (resolved to ``None``, ``True`` / ``False`` for YAML
1.1's words, an ``int`` for a plain decimal without leading zeros, else a string), a
single-quoted string, or a double-quoted one without escapes; ``#`` comments and blank lines.
Anything else — tabs, flow collections, anchors, tags, block scalars, multi-line plain
scalars, numbers other than plain decimals (floats, octal, sexagesimal …), timestamps,
document markers, a scalar document — means "not the subset".
"""

from __future__ import annotations

import re
from typing import Any

_NULLS = frozenset({"~", "null", "Null", "NULL"})
_TRUE = frozenset({"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
_FALSE = frozenset({"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_CONTROL = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1f]")
# a plain scalar may not start with an indicator; digits, signs and dots could be numbers or
# timestamps of YAML 1.1 (left to PyYAML unless a plain decimal), "<" and "=" are merge / value
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`+.0123456789<=")


class _NotSubset(Exception):
    pass


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``; documents of the subset above are read without importing ``yaml``."""
    try:
        return load_subset(text)
    except _NotSubset:
        import yaml

        return yaml.safe_load(text)


def is_yaml_error(exc: BaseException) -> bool:
    """Whether ``exc`` is PyYAML's ``YAMLError`` (only :func:`safe_load`'s fallback raises one)."""
    import sys

    yaml = sys.modules.get("yaml")
    return yaml is not None and isinstance(exc, yaml.YAMLError)


def load_subset(text: str) -> Any:
    """The document, if it is in the subset; raises ``_NotSubset`` otherwise."""
    if not text.isascii() or "\t" in text or "\x7f" in text or _CONTROL.search(text):
        raise _NotSubset  # tabs, other line breaks and characters PyYAML checks are its business
    lines: list[tuple[int, str]] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        if "\r" in raw:
            raise _NotSubset
        content = raw.lstrip(" ")
        if not content or content.startswith("#"):
            continue
        if content.startswith(("---", "...", "%")):
            raise _NotSubset
        lines.append((len(raw) - len(content), content.rstrip(" ")))
    if not lines:
        return None
    if lines[0][0] != 0:
        raise _NotSubset
    value, end = _block(lines, 0, 0)
    if end != len(lines):
        raise _NotSubset
    return value


def _block(lines: list[tuple[int, str]], at: int, indent: int) -> tuple[Any, int]:
    """The mapping or sequence whose entries start at column ``indent`` from line ``at``."""
    content = lines[at][1]
    if content == "-" or content.startswith("- "):
        return _sequence(lines, at, indent)
    if _split_key(content) is None:
        raise _NotSubset  # a bare scalar where a collection was expected
    return _mapping(lines, at, indent, lines[at][1])


def _sequence(lines: list[tuple[int, str]], at: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    while at < len(lines) and lines[at][0] == indent:
        content = lines[at][1]
        if not content.startswith("- "):
            if content == "-":
                raise _NotSubset  # an item on the following lines
            break
        rest = content[2:]
        column = indent + 2 + (len(rest) - len(rest.lstrip(" ")))
        rest = rest.lstrip(" ")
        if rest.startswith("- ") or rest == "-":
            raise _NotSubset  # a sequence in a sequence on one line
        if _split_key(rest) is not None:
            value, at = _mapping(lines, at, column, rest)
        else:
            value = _scalar(rest)
            at += 1
        items.append(value)
    if at < len(lines) and lines[at][0] > indent:
        raise _NotSubset
    return items, at


def _mapping(lines: list[tuple[int, str]], at: int, indent: int, first: str) -> tuple[dict[str, Any], int]:
    """A block mapping at ``indent``; its first entry's text is ``first`` (it may follow ``- ``)."""
    mapping: dict[str, Any] = {}
    content = first
    while True:
        split = _split_key(content)
        if split is None:
            raise _NotSubset
        key, rest = split
        at += 1
        if rest:
            mapping[key] = _scalar(rest)
        elif at < len(lines) and lines[at][0] > indent:
            mapping[key], at = _block(lines, at, lines[at][0])
        elif at < len(lines) and lines[at][0] == indent and lines[at][1].startswith("- "):
            mapping[key], at = _sequence(lines, at, indent)
        else:
            mapping[key] = None
        if at >= len(lines) or lines[at][0] < indent:
            return mapping, at
        if lines[at][0] > indent:
            raise _NotSubset  # a continuation line, or an odd indentation
        content = lines[at][1]
        if content.startswith("- ") or content == "-":
            raise _NotSubset  # a sequence item where a key was expected


def _split_key(content: str) -> tuple[str, str] | None:
    """(key, value text) of a ``key: value`` / ``key:`` line, or None when it is not one."""
    key, sep, rest = content.partition(":")
    if not sep or (rest and not rest.startswith(" ")):
        return None
    if not _KEY.match(key) or key in _NULLS or key in _TRUE or key in _FALSE:
        if _KEY.match(key):
            raise _NotSubset  # a key YAML 1.1 would read as a boolean or null
        return None
    return key, _strip_comment(rest.strip(" "))


def _strip_comment(text: str) -> str:
    if text.startswith(("'", '"')):
        return text
    at = text.find(" #")
    return text[:at].rstrip(" ") if at >= 0 else text


def _scalar(text: str) -> Any:
    if text.startswith("'"):
        return _single_quoted(text)
    if text.startswith('"'):
        end = text.find('"', 1)
        tail = text[end + 1 :].strip(" ") if end > 0 else ""
        if end < 0 or "\\" in text[:end] or (tail and not tail.startswith("#")):
            raise _NotSubset
        return text[1:end]
    if _DECIMAL.match(text):
        return int(text)
    if text[0] in _NOT_PLAIN_START or ": " in text or text.endswith(":") or " #" in text:
        raise _NotSubset
    if any(c in text for c in "[]{},`"):
        raise _NotSubset  # allowed in a block plain scalar, but not worth the doubt
    if text in _NULLS:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return text


def _single_quoted(text: str) -> str:
    out, at = [], 1
    while True:
        end = text.find("'", at)
        if end < 0:
            raise _NotSubset
        out.append(text[at:end])
        if text[end + 1 : end + 2] == "'":
            out.append("'")
            at = end + 2
            continue
        tail = text[end + 1 :].strip(" ")
        if tail and not tail.startswith("#"):
            raise _NotSubset
        return "".join(out)
