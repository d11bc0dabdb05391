"""Frames are written as JavaScript's JSON.stringify writes them, whichever encoder path runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec

from xcsh.rpc.jsonl import GrowingStrings, encode_frame, encode_frame_into, encode_json

EVERY_ASCII = "".join(chr(i) for i in range(128))
AWKWARD = EVERY_ASCII + "\u2028\u2029é😀</script>\x7f"


def stdlib(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def test_strings_are_escaped_exactly_as_json_stringify_escapes_them() -> None:
    frame = {"type": "x", "text": AWKWARD, "nested": [{"k": AWKWARD}], "n": 3, "f": 0.5, "t": True}
    assert encode_frame(frame) == stdlib(frame)
    # JSON.stringify's own bytes for the control characters and the non-ASCII tail
    assert encode_json('\x00\x08\t\n\x0b\x0c\r\x1f"\\') == b'"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\\"\\\\"'
    assert encode_json("\u2028é😀\x7f") == '"\u2028é😀\x7f"'.encode()


def test_frames_are_compact_and_end_with_one_newline() -> None:
    assert encode_frame({"a": [1, {"b": None}], "c": "d"}) == b'{"a":[1,{"b":null}],"c":"d"}\n'


def test_non_finite_numbers_become_null() -> None:
    assert (
        encode_frame({"a": float("nan"), "b": [float("inf"), -float("inf")]})
        == b'{"a":null,"b":[null,null]}\n'
    )


def test_a_lone_surrogate_is_escaped_instead_of_failing() -> None:
    line = encode_frame({"text": "a\ud800b"})
    assert line == b'{"text":"a\\ud800b"}\n'
    assert json.loads(line) == {"text": "a\ud800b"}


def test_integers_beyond_64_bits_are_written_whole() -> None:
    assert (
        encode_frame({"n": 2**70, "m": -(2**65)})
        == b'{"n":1180591620717411303424,"m":-36893488147419103232}\n'
    )


def test_a_message_update_writes_its_partial_message_twice_with_identical_bytes() -> None:
    partial = {"role": "assistant", "content": [{"type": "text", "text": AWKWARD}], "usage": {"cost": 0.25}}
    event = {"type": "text_delta", "contentIndex": 0, "delta": "é", "partial": partial}
    frame = {"type": "message_update", "assistantMessageEvent": event, "message": partial}
    line = encode_frame(frame)
    assert line == stdlib(frame)
    decoded = json.loads(line)
    assert decoded["message"] == decoded["assistantMessageEvent"]["partial"] == partial


def test_a_message_update_with_a_lone_surrogate_still_matches_the_standard_encoding() -> None:
    partial = {"role": "assistant", "content": [{"type": "text", "text": "x\udc00"}]}
    event = {"type": "text_delta", "contentIndex": 0, "delta": "\udc00", "partial": partial}
    frame = {"type": "message_update", "assistantMessageEvent": event, "message": partial}
    assert encode_frame(frame) == json.dumps(frame, separators=(",", ":")).encode() + b"\n"


def _update(text: str, thinking: str, partial_json: str, content: str, n: int = 2) -> dict[str, Any]:
    call = {
        "type": "toolCall",
        "id": "c1",
        "name": "write",
        "arguments": {"path": "a.txt", "content": content, "n": n},
        "partialJson": partial_json,
    }
    message = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": thinking}, {"type": "text", "text": text}, call],
        "usage": {"input": 1},
    }
    event = {"type": "text_delta", "contentIndex": 1, "delta": text[-3:], "partial": message}
    return {"type": "message_update", "assistantMessageEvent": event, "message": message}


def whole_message_encoded_once(frame: dict[str, Any]) -> bytes:
    """The frame as written before incremental encoding: the whole message encoded, spliced twice."""
    raw = msgspec.Raw(encode_json(frame["message"]))
    event = {**frame["assistantMessageEvent"], "partial": raw}
    return encode_json({**frame, "assistantMessageEvent": event, "message": raw}) + b"\n"


def _growing_frames() -> Iterator[tuple[dict[str, Any], tuple[str, str, str, str]]]:
    """60 ``message_update`` frames of one growing partial message (awkward pieces appended to
    its text, thinking, partial JSON and string argument), each with those four strings.

    At step 20 an integer beyond 64 bits and from step 45 a lone surrogate send the message the
    standard way (the whole-frame path and its fallback); at step 30 a new message starts, its
    strings shorter than the cached ones.
    """
    pieces = [AWKWARD, "\\", '"', "\x00", "\u2028", "😀", "é" * 300, "plain " * 120, "\x1f\n\t"]
    text = thinking = partial = content = ""
    for step in range(60):
        piece = pieces[step % len(pieces)]
        text, thinking, partial, content = (
            text + piece,
            thinking + piece[::-1],
            partial + piece,
            content + piece,
        )
        if step == 30:
            text, partial = piece, piece
        if step == 45:
            content += "\ud800"
        frame = _update(text, thinking, partial, content, 2**70 if step == 20 else step)
        yield frame, (text, thinking, partial, content)


def test_growing_strings_encoded_incrementally_give_the_bytes_of_a_whole_encoding() -> None:
    """Every tail is appended to the cached encoding; the frame must equal a fresh full encoding."""
    buffer = bytearray()
    for frame, (_, _, _, content) in _growing_frames():
        assert encode_frame(frame) == whole_message_encoded_once(frame)
        encode_frame_into(frame, buffer)  # the writer's path: one buffer reused for every frame
        assert buffer == whole_message_encoded_once(frame)
        if "\ud800" not in content:
            assert encode_frame(frame) == encode_json(frame) + b"\n"


def test_an_encoding_still_referenced_is_not_changed_when_its_string_grows() -> None:
    # the cached encoding is extended in place; one an earlier frame still holds must stay as it was
    strings = GrowingStrings()
    text = "x" * 600
    first = strings.encode((0, "text"), text)
    held = msgspec.Raw(first)  # holds the buffer, as a frame still being written would
    before = bytes(held)
    second = strings.encode((0, "text"), text + 'é"\n')
    assert bytes(held) == before == encode_json(text)
    assert second == encode_json(text + 'é"\n')
    third = strings.encode((0, "text"), text + 'é"\nmore')  # and it grows on from the new buffer
    assert third == encode_json(text + 'é"\nmore')


def test_a_tail_that_cannot_be_encoded_leaves_no_half_written_encoding_behind() -> None:
    strings = GrowingStrings()
    text = "y" * 600
    strings.encode((1, "text"), text)
    try:
        strings.encode((1, "text"), text + "\udc00")
    except (TypeError, ValueError, UnicodeEncodeError):
        pass
    assert strings.encode((1, "text"), text + "ok") == encode_json(text + "ok")
