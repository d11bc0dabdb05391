"""Inbound lines decode to exactly what ``json.loads`` gives (values, types, errors).

The server reads frames with msgspec and hands whatever msgspec refuses to ``json.loads``
(xcsh/rpc/jsonl.py: ``decode_frame``), so the standard library's JSON module is not loaded
to answer valid frames; these tests hold the two paths to one behaviour.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import json_values
from xcsh.rpc.jsonl import decode_frame

values = json_values(allow_nan=True)


def outcome(decode: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", decode(text)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def same(a: Any, b: Any) -> bool:
    """Equal values of exactly the same types (NaN equal to NaN, -0.0 apart from 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def check(text: str) -> None:
    mine, theirs = outcome(decode_frame, text), outcome(json.loads, text)
    assert mine[0] == theirs[0], (text, mine, theirs)
    assert same(mine[1], theirs[1]), (text, mine, theirs)


@settings(max_examples=300, deadline=None)
@given(values, st.booleans())
def test_any_json_text_decodes_as_json_loads_decodes_it(value: Any, ascii_only: bool) -> None:
    check(json.dumps(value, ensure_ascii=ascii_only))
    check(json.dumps(value, ensure_ascii=ascii_only, indent=1))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+-tfnrulasx\\ \t\n\r\u00e9\ud800', max_size=30))
def test_any_text_gives_the_same_value_or_the_same_error(text: str) -> None:
    check(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1,"a":2,"b":3}',  # duplicate keys: the last value in the first place
        "NaN",
        "[Infinity,-Infinity]",
        "1e400",
        "-0",
        "-0.0",
        "0.1e-400",
        '"\\ud800"',  # a lone surrogate escape
        '"\\ud83d\\ude00"',
        "9" * 4300,
        "9" * 4301,  # past the integer digit limit: json.loads' ValueError
        "[" * 100_000 + "]" * 100_000,  # too deep
        '{"type":"get_state"} x',
        '"a\x01b"',  # a raw control character
        "\ufeff{}",
        " \t\r\n{}\n ",
        "",
    ],
)
def test_edge_cases_decode_as_json_loads_decodes_them(text: str) -> None:
    check(text)
