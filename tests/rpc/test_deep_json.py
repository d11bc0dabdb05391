"""The client's reader for frames nested past the recursion limit (``xcsh.rpc.deep_json``) gives
what ``json.loads`` gives: integers of any size, exponents beyond a double, lone surrogates."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from conftest import json_values
from xcsh.rpc.deep_json import decode_deep

values = json_values(allow_nan=False)


def _deep(inner: str, depth: int) -> str:
    return '{"a":' * depth + inner + "}" * depth


def _innermost(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = value["a"]
    return value


@settings(max_examples=200, deadline=None)
@given(values)
def test_any_json_value_decodes_as_json_loads_decodes_it(value: Any) -> None:
    text = json.dumps(value)
    assert decode_deep(text) == json.loads(text)


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("18446744073709551616", 2**64),  # one past yajl's 64-bit integers
        ("-99999999999999999999999", -99999999999999999999999),
        ("[1.5e400, -1e400, 1e-400, 2.5]", [float("inf"), float("-inf"), 0.0, 2.5]),
        ('"\\ud800"', "\ud800"),  # a lone surrogate escape, as the server echoes one a host sent
        ('["\\ud83d\\ude00", 12345678901234567890123]', ["\U0001f600", 12345678901234567890123]),
    ],
)
def test_a_frame_deeper_than_the_recursion_limit_keeps_numbers_and_strings_json_loads_keeps(
    inner: str, expected: Any
) -> None:
    depth = 5_000
    assert _innermost(decode_deep(_deep(inner, depth)), depth) == expected


@pytest.mark.parametrize(
    "text", ["[1,2", "[1] [2]", "", _deep("18446744073709551616", 3000)[:-1], '["\\ud800"']
)
def test_text_that_is_not_one_json_value_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        decode_deep(text)
