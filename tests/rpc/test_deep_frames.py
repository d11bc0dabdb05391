"""A value nested past Python's recursion limit is still written, with the whole-value encoder's bytes."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from xcsh.rpc.jsonl import encode_deep, encode_frame_into, encode_json

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
    st.builds(msgspec.Raw, st.sampled_from([b"1", b'"x"', b"[1,{}]", b"null"])),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=5), st.integers(-5, 5)), inner, max_size=4),
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_the_iterative_encoder_writes_the_bytes_of_the_whole_value_encoder(value: Any) -> None:
    assert encode_deep(value) == encode_json(value)


def _chain(depth: int) -> dict[str, Any]:
    """A get_tree-like answer: one node per level, each the only child of the one above."""
    root: dict[str, Any] = {"id": "0", "text": "é\u2028", "children": []}
    node = root
    for i in range(1, depth):
        child: dict[str, Any] = {"id": str(i), "text": "é\u2028", "children": []}
        node["children"].append(child)
        node = child
    return root


def test_a_frame_nested_thousands_of_levels_deep_is_encoded_instead_of_raising() -> None:
    depth = 5000
    expected = b"".join(b'{"id":"%d","text":"\xc3\xa9\xe2\x80\xa8","children":[' % i for i in range(depth))
    expected += b"]}" * depth
    frame = {"type": "response", "data": {"tree": [_chain(depth)]}}
    buffer = bytearray()
    encode_frame_into(frame, buffer)
    assert bytes(buffer) == b'{"type":"response","data":{"tree":[' + expected + b"]}}\n"
    assert encode_json(frame) == bytes(buffer[:-1])


def test_a_message_update_with_tool_arguments_nested_thousands_deep_is_written_instead_of_raising() -> None:
    # a model's arguments can nest past the recursion limit; the update repeating them raised
    # RecursionError out of the frame writer
    depth = 5000
    arguments: Any = "leaf"
    for _ in range(depth):
        arguments = [arguments]
    message = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "arguments": {"x": arguments}}],
    }
    event = {"type": "toolcall_delta", "contentIndex": 0, "delta": "]", "partial": message}
    frame = {"type": "message_update", "assistantMessageEvent": event, "message": message}
    buffer = bytearray()
    encode_frame_into(frame, buffer)
    nested = b"[" * depth + b'"leaf"' + b"]" * depth
    encoded = (
        b'{"role":"assistant","content":[{"type":"toolCall","id":"c1","arguments":{"x":' + nested + b"}}]}"
    )
    head = b'{"type":"message_update","assistantMessageEvent":{"type":"toolcall_delta","contentIndex":0,'
    assert bytes(buffer) == head + b'"delta":"]","partial":' + encoded + b'},"message":' + encoded + b"}\n"
