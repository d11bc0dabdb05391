"""Streaming tool-call arguments: the incremental parser agrees with a full parse at every fragment."""

from __future__ import annotations

import json
import random

import pytest

from xcsh.ai.partial_json import PartialJsonObject, parse_partial_json

DOCUMENTS = [
    {"path": "a.py", "content": 'print("hi")\n\tx = "\\\\"  # é 😀 \u2028 end'},
    {"command": "echo 'a\\b' \"q\"", "timeout": 12, "flags": [1, 2.5, None, True, False]},
    {"nested": {"list": ["a", {"b": "c\\u00e9"}, "tail 😀😀"], "n": -3.25e-5}, "last": "x" * 300},
    {"edits": [{"old": "a\nb", "new": "c\rd"}, {"old": "\\u", "new": "\u0001"}]},
    {"": "", "k": {}, "l": [], "s": "😀 pair and \\ escapes \\n"},
]


def fragmentations(text: str, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    single = list(text)
    tens = [text[i : i + 10] for i in range(0, len(text), 10)]
    rand: list[str] = []
    i = 0
    while i < len(text):
        step = rng.randint(1, 7)
        rand.append(text[i : i + step])
        i += step
    return [single, tens, rand]


def fed_like_full_parses(fragments: list[str]) -> PartialJsonObject:
    """A parser fed ``fragments`` one by one, each answer checked against a full parse of the text so far."""
    parser = PartialJsonObject()
    seen = ""
    for fragment in fragments:
        seen += fragment
        assert parser.feed(fragment) == parse_partial_json(seen), repr(seen)
    return parser


@pytest.mark.parametrize("document", DOCUMENTS)
def test_each_fragment_yields_what_a_full_parse_of_the_prefix_yields(document: dict[str, object]) -> None:
    for ascii_only in (True, False):
        text = json.dumps(document, ensure_ascii=ascii_only)
        for fragments in fragmentations(text, seed=len(text)):
            parser = fed_like_full_parses(fragments)
            assert parser.value == document
            assert parser.text == text


def test_earlier_results_are_not_changed_by_later_fragments() -> None:
    parser = PartialJsonObject()
    first = parser.feed('{"content": "abc')
    second = parser.feed("def")
    assert first == {"content": "abc"}
    assert second == {"content": "abcdef"}


def test_a_repeated_key_still_parses_like_the_whole_text() -> None:
    text = '{"a": "first", "b": 1, "a": "second and longer"}'
    parser = PartialJsonObject()
    for i in range(0, len(text), 3):
        assert parser.feed(text[i : i + 3]) == parse_partial_json(text[: i + 3])


def test_a_prefix_that_cannot_be_completed_gives_an_empty_object() -> None:
    assert parse_partial_json('{"a": tr') == {}
    assert parse_partial_json("[1, 2") == {}
    assert parse_partial_json("  ") == {}
    assert parse_partial_json('{"a": "raw\tcontrol"}') == {}  # not JSON, as before


def test_arguments_nested_deeper_than_the_parsers_follow_read_as_an_empty_object() -> None:
    # before: RecursionError from the fallback parser, inside the provider's stream
    deep = '{"command":"ls","x":' + '{"a":' * 1_500 + "1" + "}" * 1_500 + "}"
    assert parse_partial_json(deep) == {}
    assert parse_partial_json(deep[:-700]) == {}
    parser = PartialJsonObject()
    for i in range(0, len(deep), 500):  # streamed: each prefix parses or reads as {}, never raises
        assert isinstance(parser.feed(deep[i : i + 500]), dict)
    assert parser.value == {}


NOT_QUITE_JSON = [
    '{"content": "raw\tcontrol and a raw\nnewline, then more text after them"}',
    '{"content": "ab \ncd"}',  # a raw newline after a space: it once read as an unfinished escape
    '{"content": "a stray \\q escape, a cut \\u12 one and \\u00e9 a good one"}',
    '{"content": "del \x7f, separators \u2028\u2029, nbsp \u00a0 and \\\\ \\" escapes"}',
    '{"content": "quote" inside" and more", "next": "value"}',
]


@pytest.mark.parametrize("text", NOT_QUITE_JSON)
def test_awkward_string_content_streams_to_what_a_full_parse_of_the_prefix_yields(text: str) -> None:
    """Raw control characters, bad or cut escapes, separators and stray quotes in a streamed string
    value: every fragment gives what parsing the text so far gives (the decoding fast paths
    never take text that the JSON string scanner would refuse or read otherwise)."""
    for fragments in fragmentations(text, seed=len(text)):
        fed_like_full_parses(fragments)
