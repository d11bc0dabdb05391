"""A whole rewrite that copies unchanged lines writes exactly the bytes of encoding every entry again.

The reference is :func:`full_encoding`: the header and every entry through ``serialize_entry``,
one line each — what every rewrite wrote before lines were reused.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xcsh.coding.sessions.branching import branch_to_new_file, fork_to
from xcsh.coding.sessions.entries import MAX_PERSIST_CHARS, parse_line, serialize_entry
from xcsh.coding.sessions.fileio import ParsedFile
from xcsh.coding.sessions.store import SessionStore


def full_encoding(store: SessionStore) -> bytes:
    """What a rewrite that encodes every entry again writes for ``store``."""
    objects = [store.header, *store.entries]
    return b"".join((serialize_entry(o, store.blobs) + "\n").encode("utf-8") for o in objects)


def on_disk(store: SessionStore) -> bytes:
    assert store.path is not None
    store.flush()
    return store.path.read_bytes()


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "attribution": "user",
        "timestamp": ts,
    }


def deep(levels: int) -> Any:
    value: Any = "bottom"
    for i in range(levels):
        value = {"d": [value, i]}
    return value


PNG = "iVBORw0KGgo" + "A" * 2000  # long enough to be externalised to the blob store

AWKWARD_DETAILS: list[Any] = [
    {"unicode": "é ü 中文 𝄞 emoji 😀", "controls": "\x00\x01\x1f\x7f\x80\x9f", "seps": "\u2028\u2029"},
    {"lone": "a\ud800b", "low": "\udfff", "escaped": "\\ud800", "quote": '"\\/'},
    {"nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"), "text": "NaN Infinity"},
    {"floats": [1e-05, 3e-05, 1.5e-05, 1e-07, 0.0001, 1e16, 1e21, 1.234e16, -0.0, 5e-324, 0.1, 1.0, 2.5]},
    {"ints": [2**63, 2**70, -(2**64), 0, -1], "bool": [True, False, None]},
    {"deep": deep(300)},
    {"partialJson": '{"a":', "nested": {"jsonlEvents": ["x"], "keep": 1}},
    {"huge": "x" * (MAX_PERSIST_CHARS + 10), "lineCount": 1, "content": "y\n" * 10},
    {"looks like a float": ":1e5, [0.00003, ,1E16]", "hex ids": "3e4f 1e99"},
]


def awkward_store(tmp_path: Path) -> SessionStore:
    store = SessionStore.create(tmp_path / "sessions", tmp_path / "proj", blob_dir=tmp_path / "blobs")
    store.append_model_change("fake/fake-model")
    store.append_message(user("hello é 😀"))
    for i, details in enumerate(AWKWARD_DETAILS):
        store.append_custom("awkward", details)
        store.append_message(
            {
                "role": "toolResult",
                "toolCallId": f"call_{i}",
                "toolName": "read",
                "content": [
                    {"type": "text", "text": f"output {i} " + "z" * 50},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                ],
                "details": {"image_url": "data:image/png;base64," + PNG},
                "isError": False,
                "timestamp": 100 + i,
            }
        )
    store.append_label(store.entries[1]["id"], "start")
    return store


def test_rewrites_after_appends_prunes_renames_and_reopening_equal_a_full_encoding(tmp_path: Path) -> None:
    store = awkward_store(tmp_path)
    assert store.path is not None
    path = store.path
    assert on_disk(store) == full_encoding(store)
    store.set_title("first name")
    assert on_disk(store) == full_encoding(store)
    store.close()

    for round_ in range(3):  # loaded lines (checked), then lines this store wrote, then reopened again
        store = SessionStore.open(path, cwd_for_new=tmp_path, blob_dir=tmp_path / "blobs")
        store.set_title(f"name {round_}")
        assert on_disk(store) == full_encoding(store)
        store.append_message(user(f"more é {round_}"))
        store.append_custom("awkward", AWKWARD_DETAILS[round_ % len(AWKWARD_DETAILS)])
        results = [
            e for e in store.entries if e.get("type") == "message" and e["message"]["role"] == "toolResult"
        ]
        target = results[round_]
        pruned = {
            **target,
            "message": {**target["message"], "content": [{"type": "text", "text": "[pruned]"}]},
        }
        store.rewrite_entries({target["id"]: pruned})
        assert on_disk(store) == full_encoding(store)
        store.append_message(user("after the prune"))
        store.set_title(f"renamed {round_}")
        assert on_disk(store) == full_encoding(store)
        store.close()


def test_a_file_written_in_other_forms_is_rewritten_as_a_full_encoding(tmp_path: Path) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": "abc",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/",
    }
    lines = [
        json.dumps(header),
        '{"type": "custom", "id": "a1", "parentId": null, "timestamp": "t", "customType": "x", "data": 1}',
        '{"type":"custom","id":"a2","parentId":"a1","timestamp":"t","customType":"x","data":"\\u00e9\\/"}',
        '{"type":"custom","id":"a3","parentId":"a2","timestamp":"t","customType":"x","data":[1e-7,0.00003,1e21]}',
        '{"type":"custom","id":"a4","parentId":"a3","timestamp":"t","customType":"x","data":1,"data":2}',
        '{"type":"custom","id":"a5","parentId":"a4","timestamp":"t","customType":"x","data":NaN}',
        '{"type":"custom","id":"a6","parentId":"a5","timestamp":"t","customType":"x","data":"\\ud800"}',
        '{"type":"custom","id":"a7","parentId":"a6","timestamp":"t","customType":"x","data":1.5e-05}',
        '{"type":"custom","id":"a8","parentId":"a7","timestamp":"t","customType":"x","data":{"partialJson":"{"}}',
        '{"type":"custom","id":"a9","parentId":"a8","timestamp":"t","customType":"x","data":[1.0,2.50]}\r',
        '{"type":"custom","id":"b1","parentId":"a9","timestamp":"t","customType":"x","data":"plain"}',
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines))  # no final newline: the reader adds it
    store = SessionStore.open(path, cwd_for_new=tmp_path)
    store.set_title("renamed")
    assert on_disk(store) == full_encoding(store)
    store.close()


def test_compact_lines_of_another_writer_that_a_write_would_change_are_encoded_again(tmp_path: Path) -> None:
    """Lines in exactly the compact form, but holding what the write transforms change (an
    over-long string, an inline image and a data URL with a blob store), or with a CR or spaces
    before the newline: the rewrite writes the full encoding, not the lines as they were."""
    header = {"type": "session", "version": 3, "id": "abc", "timestamp": "t", "cwd": "/"}
    png = base64.b64encode(b"\x89PNG\r\n" + bytes(range(256)) * 4).decode()  # valid: it is externalised

    def custom(n: int, data: Any) -> str:
        entry = {"type": "custom", "id": f"c{n}", "parentId": f"c{n - 1}" if n else None, "timestamp": "t"}
        return json.dumps(
            {**entry, "customType": "x", "data": data}, ensure_ascii=False, separators=(",", ":")
        )

    lines = [
        serialize_entry(header),
        custom(0, {"huge": "x" * (MAX_PERSIST_CHARS + 10)}),
        custom(1, "before the image"),
        json.dumps(
            {
                "type": "message",
                "id": "c2",
                "parentId": "c1",
                "timestamp": "t",
                "message": {
                    "role": "toolResult",
                    "toolCallId": "call_1",
                    "toolName": "read",
                    "content": [{"type": "image", "data": png, "mimeType": "image/png"}],
                    "details": {"image_url": "data:image/png;base64," + png},
                    "isError": False,
                    "timestamp": 1,
                },
            },
            separators=(",", ":"),
        ),
        custom(3, "carriage return") + "\r",
        custom(4, "trailing spaces") + "  ",
        custom(5, "plain"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    store = SessionStore.open(path, cwd_for_new=tmp_path, blob_dir=tmp_path / "blobs")
    store.set_title("renamed")
    written = on_disk(store)
    assert written == full_encoding(store)
    assert b"\r" not in written and b"  \n" not in written and png.encode() not in written
    store.close()


def test_a_branch_copies_its_lines_and_equals_a_full_encoding(tmp_path: Path) -> None:
    store = awkward_store(tmp_path)
    store.append_message(user("second question"))
    store.close()
    path = store.path
    for _ in range(2):  # from a freshly opened file (loaded lines), then from that branch's file
        assert path is not None
        store = SessionStore.open(path, cwd_for_new=tmp_path, blob_dir=tmp_path / "blobs")
        target = store.user_message_entries()[-1]
        kept = [e["id"] for e in store.branch_path(target["parentId"]) if e["type"] != "label"]
        branched = branch_to_new_file(store, target["id"])
        assert on_disk(branched) == full_encoding(branched)
        assert [e["id"] for e in branched.entries if e["type"] != "label"] == kept
        branched.close()
        path = branched.path


def test_a_fork_copies_its_lines_and_equals_a_full_encoding(tmp_path: Path) -> None:
    store = awkward_store(tmp_path)
    store.close()
    assert store.path is not None
    source = SessionStore.open(store.path, cwd_for_new=tmp_path, blob_dir=tmp_path / "blobs")
    forked = fork_to(source, tmp_path / "forks")
    source.close()
    assert on_disk(forked) == full_encoding(forked)
    assert [e["id"] for e in forked.entries] == [e["id"] for e in source.entries]
    forked.close()


def test_a_file_replaced_behind_the_store_is_encoded_again(tmp_path: Path) -> None:
    store = awkward_store(tmp_path)
    assert store.path is not None
    original = store.path.read_bytes()
    other = store.path.with_name("other")
    other.write_bytes(original.replace(b"output 1 ", b"OUTPUT 1 "))  # same size, other bytes
    os.replace(other, store.path)
    store.set_title("after the swap")
    assert on_disk(store) == full_encoding(store)
    store.close()


TEXT = st.text(st.characters(blacklist_categories=()), max_size=12)  # lone surrogates too
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=16,
)
STYLES = st.sampled_from(["serialize", "msgspec", "json", "json-ascii", "spaced"])


def encode_in(style: str, obj: dict[str, Any]) -> str:
    """One line for ``obj`` as this writer or another tool would write it."""
    if style == "serialize":
        return serialize_entry(obj)
    if style == "msgspec":
        try:
            return msgspec.json.encode(obj).decode("utf-8")
        except (TypeError, ValueError, RecursionError):
            return json.dumps(obj)
    if style == "json":
        return (
            json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
            .encode("utf-8", "backslashreplace")
            .decode()
        )
    if style == "json-ascii":
        return json.dumps(obj, separators=(",", ":"))
    return json.dumps(obj)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(JSON, STYLES), min_size=1, max_size=6), st.integers(0, 5))
def test_any_values_written_in_any_form_rewrite_as_a_full_encoding(
    tmp_path_factory: Any, values: list[tuple[Any, str]], replace_at: int
) -> None:
    directory = tmp_path_factory.mktemp("s")
    header = {"type": "session", "version": 3, "id": "h", "timestamp": "t", "cwd": "/"}
    lines = [serialize_entry(header)]
    parent = None
    for i, (value, style) in enumerate(values):
        entry = {
            "type": "custom",
            "id": f"e{i}",
            "parentId": parent,
            "timestamp": "t",
            "customType": "v",
            "data": value,
        }
        lines.append(encode_in(style, entry))
        parent = f"e{i}"
    path = directory / "s.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    store = SessionStore.open(path, cwd_for_new=directory)
    store.set_title("t")
    assert on_disk(store) == full_encoding(store)
    store.append_custom("v", values[0][0])
    entries = store.entries
    if entries:
        target = entries[replace_at % len(entries)]
        store.rewrite_entries({target["id"]: {**target, "data": "replaced"}})
    assert on_disk(store) == full_encoding(store)
    store.close()


def test_the_file_reader_gives_parse_lines_values() -> None:
    lines = [
        '{"a":NaN,"b":Infinity}',
        '{"s":"\\ud800 lone"}',
        '{"dup":1,"dup":3}',
        '{"n":' + "9" * 5000 + "}",
        '{"n":123456789012345678901234567890,"f":1e-320,"g":-0.0,"h":1e400}',
        '  {"spaced": true}  ',
        "[1,2]",
        "",
        '{"torn":',
        "[" * 3000 + "]" * 3000,
        '{"deep":' + "[" * 3000 + "]" * 3000 + "}",
        '{"plain":"é","x":[1.5,1e-05,2]}',
    ]
    data = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n\xff\xfe\n" + b'{"bad":"\xed\xa0\x80"}\n'
    parsed = ParsedFile(data)
    expected = [v for v in (parse_line(line) for line in data.split(b"\n")) if v is not None]
    assert json.dumps(parsed.objects, sort_keys=False) == json.dumps(expected, sort_keys=False)
    # marked: what only json.loads reads (NaN, a lone surrogate, 1e400) and a float below 1e-4
    assert [next(iter(o)) for o in parsed.objects] == ["a", "s", "dup", "n", "spaced", "plain"]
    assert [i for i, risky in enumerate(parsed.float_risk) if risky] == [0, 1, 3, 5]


def test_an_entry_changed_in_place_after_it_was_stored_keeps_its_stored_line(tmp_path: Path) -> None:
    """Stored entries are never changed in place (a change is a replacement, ``rewrite_entries``):
    a rewrite copies the line an entry was stored with instead of encoding the entry again."""
    store = awkward_store(tmp_path)
    entry = store.append_message(user("as stored"))
    line = (serialize_entry(entry, store.blobs) + "\n").encode("utf-8")
    entry["message"]["content"][0]["text"] = "changed in place"  # against the contract
    store.set_title("renamed")
    assert line in on_disk(store)
    assert b"changed in place" not in on_disk(store)
    store.close()
