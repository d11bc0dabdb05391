"""Image externalisation to the blob store, and v1/v2 files migrated on open."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from xcsh.coding.sessions.blobs import BlobStore, parse_blob_ref
from xcsh.coding.sessions.migrate import migrate_to_current, strip_responses_replay_metadata
from xcsh.coding.sessions.store import SessionStore

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8).decode()
TINY = base64.b64encode(b"tiny").decode()


def image_message() -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "image", "data": TINY, "mimeType": "image/png"},
        ],
        "timestamp": 1,
    }


def assistant() -> dict[str, Any]:
    payload = {"type": "x", "items": [{"image_url": "data:image/png;base64," + PNG}]}
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "provider": "p",
        "model": "m",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
        "providerPayload": payload,
    }


def test_large_images_are_stored_as_blobs_and_resolved_on_open(tmp_path: Path) -> None:
    blobs = tmp_path / "blobs"
    store = SessionStore.create(tmp_path / "s", tmp_path, blob_dir=blobs)
    store.append_message(image_message())
    store.append_message(assistant())
    assert store.path is not None
    path = store.path
    store.close()

    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    blocks = lines[1]["message"]["content"]
    digest = hashlib.sha256(base64.b64decode(PNG)).hexdigest()
    assert blocks[1]["data"] == f"blob:sha256:{digest}"
    assert blocks[2]["data"] == TINY  # under 1024 characters: stays inline
    assert (blobs / digest).read_bytes() == base64.b64decode(PNG)
    url_ref = lines[2]["message"]["providerPayload"]["items"][0]["image_url"]
    assert parse_blob_ref(url_ref) is not None

    reopened = SessionStore.open(path, cwd_for_new=tmp_path, blob_dir=blobs)
    assert reopened.entries[0]["message"]["content"][1]["data"] == PNG
    items = reopened.entries[1]["message"]["providerPayload"]["items"]
    assert items[0]["image_url"] == "data:image/png;base64," + PNG
    reopened.close()


def test_missing_blob_leaves_the_reference_in_place(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path, blob_dir=tmp_path / "blobs")
    store.append_message(image_message())
    store.append_message(assistant())
    assert store.path is not None
    store.close()
    reopened = SessionStore.open(store.path, cwd_for_new=tmp_path, blob_dir=tmp_path / "elsewhere")
    assert reopened.entries[0]["message"]["content"][1]["data"].startswith("blob:sha256:")
    reopened.close()


def test_malformed_blob_refs_never_leave_the_blob_directory(tmp_path: Path) -> None:
    (tmp_path / "secret").write_bytes(b"nope")
    store = BlobStore(tmp_path / "blobs")
    assert parse_blob_ref("blob:sha256:../secret") is None
    assert store.get("../secret") is None


def test_v1_file_gets_ids_linear_parents_and_compaction_target(tmp_path: Path) -> None:
    v1 = [
        {"type": "session", "id": "old", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"},
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "a", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "h",
                "content": "x",
                "display": True,
                "timestamp": 2,
            },
        },
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "summary": "s",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 9,
        },
    ]
    path = tmp_path / "v1.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in v1), encoding="utf-8")

    store = SessionStore.open(path, cwd_for_new=tmp_path)
    entries = store.entries
    assert store.header.get("version") == 3
    assert [e["parentId"] for e in entries] == [None, entries[0]["id"], entries[1]["id"]]
    assert entries[2]["firstKeptEntryId"] == entries[1]["id"] and "firstKeptEntryIndex" not in entries[2]
    assert entries[1]["message"]["role"] == "custom"
    store.close()
    rewritten = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert rewritten[0]["version"] == 3
    assert rewritten[1:] == entries


def test_migration_is_pure_and_skips_current_files() -> None:
    v2 = [
        {"type": "session", "version": 2, "id": "s", "timestamp": "t", "cwd": "/"},
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "hookMessage"},
        },
    ]
    migrated, changed = migrate_to_current(v2)
    assert changed and migrated[1]["message"]["role"] == "custom"
    assert v2[1]["message"]["role"] == "hookMessage" and v2[0]["version"] == 2
    same, changed_again = migrate_to_current(migrated)
    assert not changed_again and same is migrated


def test_responses_replay_metadata_is_stripped_on_load() -> None:
    entry = {
        "type": "message",
        "id": "a",
        "message": {
            "role": "assistant",
            "providerPayload": {"type": "openaiResponsesHistory", "items": []},
            "content": [{"type": "thinking", "thinking": "t", "thinkingSignature": "sig"}],
        },
    }
    stripped = strip_responses_replay_metadata(entry)
    assert "providerPayload" not in stripped["message"]
    assert stripped["message"]["content"] == [{"type": "thinking", "thinking": "t"}]
    other = {"type": "message", "id": "b", "message": {"role": "assistant", "providerPayload": {"type": "x"}}}
    assert strip_responses_replay_metadata(other) is other
