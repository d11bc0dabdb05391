"""A session line gives the value ``json.loads`` gives, whichever decoder reads it (msgspec first)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from xcsh.coding.sessions.entries import parse_line


def reference(line: str | bytes) -> dict[str, Any] | None:
    """json.loads's value (the reader before msgspec; it raised for an integer past 4,300 digits, now skipped)."""
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        if not text.strip():
            return None
        value = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN, the same types, and the same key order."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)
AWKWARD = [
    '{"a":NaN,"b":Infinity,"c":-Infinity}',
    '{"big":1e400,"small":-1e400}',
    '{"s":"\\ud800 lone"}',
    '{"dup":1,"x":2,"dup":3}',
    '{"n":' + "9" * 5000 + "}",
    '{"n":123456789012345678901234567890}',
    '{"f":1.0,"g":-0.0,"h":1e-320}',
    '  {"spaced": true}  ',
    "[1,2]",
    '"text"',
    "",
    "   ",
    '{"torn":',
    "{'single': 1}",
    '{"a":1}garbage',
    "[" * 3000 + "]" * 3000,
    '{"x":' + "[" * 3000 + "]" * 3000 + "}",
    '{"t":"\\u2028\\u2029é😀\\u0000"}',
]


@settings(max_examples=400, deadline=None)
@given(JSON, st.sampled_from(["", " ", "\r", "\t"]))
def test_a_json_line_decodes_to_the_json_module_value(value: Any, pad: str) -> None:
    line = json.dumps({"v": value}, ensure_ascii=False) + pad
    assert same(parse_line(line), reference(line))
    assert same(
        parse_line(line.encode("utf-8", "surrogatepass")), reference(line.encode("utf-8", "surrogatepass"))
    )


def test_awkward_lines_decode_as_the_json_module_decodes_them_or_are_skipped() -> None:
    for text in AWKWARD:
        assert same(parse_line(text), reference(text)), text
        assert same(parse_line(text.encode()), reference(text.encode())), text
    assert parse_line(b'{"bad utf8":"\xff"}') is None
