"""Entry ids, timestamps, line serialisation and the write transforms of session-format §4."""

from __future__ import annotations

import json
from typing import Any

from xcsh.coding.sessions.entries import (
    MAX_PERSIST_CHARS,
    TRUNCATION_NOTICE,
    generate_entry_id,
    iso_now,
    iso_to_epoch_ms,
    new_session_id,
    parse_line,
    serialize_entry,
)


def entry_with(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "abcd1234",
        "parentId": None,
        "timestamp": "2026-07-02T10:00:00.000Z",
        "message": message,
    }


def test_serialized_entry_is_one_compact_line_keeping_non_ascii() -> None:
    line = serialize_entry(entry_with({"role": "user", "content": "héllo ✓\nnext", "timestamp": 1}))
    assert "\n" not in line
    assert '"content":"héllo ✓\\nnext"' in line
    assert line.startswith('{"type":"message","id":"abcd1234","parentId":null,')


def test_strings_over_the_limit_are_cut_with_the_notice_within_the_limit() -> None:
    big = "x" * (MAX_PERSIST_CHARS + 10)
    entry = entry_with({"role": "toolResult", "content": [{"type": "text", "text": big}], "timestamp": 1})
    parsed = json.loads(serialize_entry(entry))
    text = parsed["message"]["content"][0]["text"]
    assert text.endswith(TRUNCATION_NOTICE)
    assert len(text) == MAX_PERSIST_CHARS
    assert entry["message"]["content"][0]["text"] is big  # the in-memory entry is untouched


def test_a_string_of_exactly_the_limit_is_kept() -> None:
    exact = "x" * MAX_PERSIST_CHARS
    parsed = json.loads(serialize_entry(entry_with({"role": "user", "content": exact, "timestamp": 1})))
    assert parsed["message"]["content"] == exact


def test_oversized_signatures_are_emptied_not_cut() -> None:
    sig = "s" * (MAX_PERSIST_CHARS + 1)
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "t", "thinkingSignature": sig},
            {"type": "text", "text": "a", "textSignature": sig},
            {"type": "toolCall", "id": "c", "name": "n", "arguments": {}, "thoughtSignature": sig},
        ],
    }
    blocks = json.loads(serialize_entry(entry_with(message)))["message"]["content"]
    assert blocks[0]["thinkingSignature"] == ""
    assert blocks[1]["textSignature"] == ""
    assert blocks[2]["thoughtSignature"] == ""


def test_transient_keys_are_removed_everywhere() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c", "name": "n", "arguments": {}, "partialJson": "{"}],
        "details": {"nested": [{"jsonlEvents": [1, 2], "keep": True}]},
    }
    line = serialize_entry(entry_with(message))
    assert "partialJson" not in line and "jsonlEvents" not in line
    assert json.loads(line)["message"]["details"] == {"nested": [{"keep": True}]}


def test_line_count_follows_a_truncated_content() -> None:
    content = "line\n" * (MAX_PERSIST_CHARS // 5 + 10)
    file_block = {"path": "a.txt", "content": content, "lineCount": 999_999}
    message = {"role": "fileMention", "files": [file_block], "timestamp": 1}
    saved = json.loads(serialize_entry(entry_with(message)))["message"]["files"][0]
    assert saved["lineCount"] == len(saved["content"].split("\n"))
    small = {
        "role": "fileMention",
        "files": [{"path": "b", "content": "a\nb", "lineCount": 7}],
        "timestamp": 1,
    }
    assert json.loads(serialize_entry(entry_with(small)))["message"]["files"][0]["lineCount"] == 7


def test_lone_surrogates_are_written_as_json_escapes() -> None:
    line = serialize_entry(entry_with({"role": "user", "content": "bad \ud800 char", "timestamp": 1}))
    line.encode("utf-8")
    assert "\\ud800" in line
    assert json.loads(line)["message"]["content"] == "bad \ud800 char"


def test_parse_line_returns_objects_only() -> None:
    assert parse_line('{"a":1}') == {"a": 1}
    assert parse_line(b'{"a":1}\r') == {"a": 1}
    assert parse_line("[1,2]") is None
    assert parse_line("{torn") is None
    assert parse_line("") is None
    assert parse_line(b"\xff\xfe") is None


def test_entry_ids_are_eight_hex_and_avoid_existing_ones() -> None:
    existing: set[str] = set()
    for _ in range(2000):
        new = generate_entry_id(existing)
        assert len(new) == 8 and int(new, 16) >= 0 and new not in existing
        existing.add(new)


def test_session_ids_are_sixteen_hex_and_strictly_increasing() -> None:
    ids = [new_session_id() for _ in range(1000)]
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_iso_timestamps_round_trip_to_epoch_ms() -> None:
    stamp = iso_now()
    assert stamp.endswith("Z") and len(stamp) == len("2026-07-02T10:00:00.000Z")
    assert iso_to_epoch_ms("2026-07-02T10:00:05.000Z") == 1_782_986_405_000
    assert iso_to_epoch_ms("not a date") == 0


def test_a_line_the_write_transforms_leave_alone_is_the_walked_line_and_so_is_every_other(
    tmp_path: Any,
) -> None:
    """serialize_entry walks an entry for the §4 transforms only when its encoded line shows one
    may apply; the line is always the one the walk gives (including when a mark is only text)."""
    import base64

    from xcsh.coding.sessions.blobs import BlobStore
    from xcsh.coding.sessions.entries import _dumps, prepare_for_persistence

    image = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 8).decode()
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": 'plain \u00e9 \u2028 \x01 "q" 1e-05'}]},
        {"role": "assistant", "content": [{"type": "text", "text": 'says "partialJson": and NaN'}]},
        {"role": "assistant", "usage": {"cost": {"input": 3e-05, "total": float("nan")}}, "content": []},
        {"role": "assistant", "usage": {"cost": {"output": float("-inf")}}, "content": []},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "partialJson": "{"}]},
        {"role": "toolResult", "details": {"deep": [{"jsonlEvents": []}]}, "content": []},
        {"role": "toolResult", "content": [{"type": "text", "text": "x" * (MAX_PERSIST_CHARS + 1)}]},
        {"role": "user", "content": [{"type": "image", "data": image, "mimeType": "image/png"}]},
        {"role": "user", "content": [{"type": "text", "text": 'a "type":"image" in text'}]},
        {"role": "user", "content": [{"type": "image_url", "image_url": "data:image/png;base64," + image}]},
        {"role": "user", "content": [{"type": "text", "text": "lone \ud800 surrogate"}]},
    ]
    for blobs in (None, BlobStore(tmp_path)):
        for message in messages:
            entry = entry_with(message)
            assert serialize_entry(entry, blobs) == _dumps(prepare_for_persistence(dict(entry), blobs))  # type: ignore[arg-type]


def test_iso_now_writes_the_clock_as_datetime_did() -> None:
    from datetime import UTC, datetime, timedelta

    from xcsh.coding.sessions import entries

    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    instants = [
        1_782_986_405_000_000_000,  # a whole second
        1_782_986_405_999_999_999,  # the last nanosecond before the next one
        1_782_986_406_000_999_999,
        1_709_164_800_123_456_789,  # 2024-02-29, a leap day
        4_107_542_399_999_000_000,  # the end of 2099
    ]
    for ns in instants:
        expected = (epoch + timedelta(microseconds=ns // 1000)).isoformat(timespec="milliseconds")
        assert entries.iso_now(ns) == expected.replace("+00:00", "Z")
        assert entries.iso_now(ns) == expected.replace("+00:00", "Z")  # the cached second
