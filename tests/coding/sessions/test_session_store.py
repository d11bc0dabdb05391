"""SessionStore on a real directory: lazy creation, file shapes, branching, switching, titles."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from xcsh.coding.sessions.branching import InvalidBranchEntryError, branch_to_new_file, fork_to
from xcsh.coding.sessions.entries import SessionError
from xcsh.coding.sessions.store import NotASessionError, SessionStore, SessionWriteError


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "attribution": "user",
        "timestamp": ts,
    }


def assistant(text: str, ts: int = 2) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": {
            "input": 10,
            "output": 2,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 12,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": ts,
    }


def read_lines(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


def run(store: SessionStore, prompt: str, reply: str) -> tuple[str, str]:
    u = store.append_message(user(prompt))
    a = store.append_message(assistant(reply))
    return u["id"], a["id"]


def fresh(tmp_path: Path) -> SessionStore:
    store = SessionStore.create(tmp_path / "sessions", tmp_path / "proj", blob_dir=tmp_path / "blobs")
    store.append_model_change("fake/fake-model")
    store.append_thinking_level_change(None)
    return store


def test_nothing_is_written_before_the_first_message_and_the_first_message_writes_the_file(
    tmp_path: Path,
) -> None:
    store = fresh(tmp_path)
    store.set_title("Named")
    assert store.path is not None
    assert not (tmp_path / "sessions").exists()
    store.append_message(user("hello?"))
    lines = read_lines(store.path)
    assert [e["type"] for e in lines] == ["session", "model_change", "thinking_level_change", "message"]
    assert lines[0]["title"] == "Named" and lines[3]["message"]["role"] == "user"
    store.close()


def test_a_custom_message_alone_creates_the_file(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    store.append_custom("state", {"x": 1})
    assert store.path is not None and not store.path.exists()
    store.append_custom_message("prelude", "hidden", False)
    assert [e["type"] for e in read_lines(store.path)][-1] == "custom_message"
    store.close()


def test_session_files_blobs_and_locks_are_private_in_private_new_directories(tmp_path: Path) -> None:
    store = SessionStore.create(
        tmp_path / "a" / "sessions", tmp_path / "proj", blob_dir=tmp_path / "b" / "blobs"
    )
    store.append_message(
        {
            "role": "user",
            "content": [{"type": "image", "data": "QUJD" * 400, "mimeType": "image/png"}],
            "timestamp": 1,
        }
    )
    assert store.path is not None
    lock = store.path.with_name(store.path.name + ".lock")
    blobs = list((tmp_path / "b" / "blobs").iterdir())
    assert len(blobs) == 1
    for file in (store.path, lock, blobs[0]):
        assert file.stat().st_mode & 0o777 == 0o600, file
    for directory in (tmp_path / "a", tmp_path / "a" / "sessions", tmp_path / "b", tmp_path / "b" / "blobs"):
        assert directory.stat().st_mode & 0o777 == 0o700, directory
    store.close()


def test_an_existing_directory_keeps_its_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    store = SessionStore.create(shared, tmp_path / "proj")
    store.append_message(user("hi"))
    assert shared.stat().st_mode & 0o777 == 0o755
    store.close()


@pytest.mark.parametrize(
    "content", [b"# my notes\nnot a session\n", b'{"type":"note"}\n', b"\xa5\x00binary", b"x"]
)
def test_opening_a_file_with_content_that_is_not_a_session_refuses_and_changes_nothing(
    tmp_path: Path, content: bytes
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(content)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(NotASessionError, match="is not a session file"):
        SessionStore.open(notes, cwd_for_new=tmp_path)
    assert notes.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("content", [None, b"", b"\n  \n"])
def test_a_missing_or_empty_file_becomes_a_new_session_at_that_path(
    tmp_path: Path, content: bytes | None
) -> None:
    path = tmp_path / "new.jsonl"
    if content is not None:
        path.write_bytes(content)
    store = SessionStore.open(path, cwd_for_new=tmp_path)
    assert read_lines(path)[0]["type"] == "session"
    store.close()


def test_first_flush_writes_header_and_entries_of_s52(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    store.set_title("Named")
    run(store, "hello?", "hi")
    assert store.path is not None
    assert store.path.parent == tmp_path / "sessions"
    assert store.path.name.endswith(f"_{store.session_id}.jsonl")
    lines = read_lines(store.path)
    header = lines[0]
    assert header == {
        "type": "session",
        "version": 3,
        "id": store.session_id,
        "timestamp": header["timestamp"],
        "cwd": str(tmp_path / "proj"),
        "title": "Named",
        "titleSource": "user",
    }
    assert [e["type"] for e in lines[1:]] == ["model_change", "thinking_level_change", "message", "message"]
    assert lines[1]["model"] == "fake/fake-model" and "role" not in lines[1] and lines[1]["parentId"] is None
    assert lines[2]["thinkingLevel"] is None
    assert [e["message"]["role"] for e in lines[3:]] == ["user", "assistant"]
    for previous, entry in itertools.pairwise(lines[1:]):
        assert entry["parentId"] == previous["id"]
    ids = [e["id"] for e in lines[1:]]
    assert len(set(ids)) == len(ids) and all(len(i) == 8 for i in ids)
    assert len(store.session_id) == 16 and int(store.session_id, 16) >= 0
    store.close()


def test_entries_after_the_flush_are_appended_one_line_each(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    run(store, "q1?", "a1")
    assert store.path is not None
    before = store.path.read_bytes()
    entry = store.append_message(user("q2?"))
    after = store.path.read_bytes()
    assert after.startswith(before)
    appended = after[len(before) :]
    assert appended.count(b"\n") == 1 and json.loads(appended) == entry
    store.close()


def test_reopening_restores_entries_leaf_and_title(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    store.set_title("Kept")
    _, last = run(store, "q1?", "a1")
    path = store.path
    assert path is not None
    store.close()
    reopened = SessionStore.open(path, cwd_for_new=tmp_path)
    assert reopened.session_id == store.session_id
    assert reopened.leaf_id == last
    assert reopened.title == "Kept"
    assert [m["role"] for m in reopened.build_context().messages] == ["user", "assistant"]
    reopened.close()


def test_opening_a_missing_path_creates_a_session_there_at_once(tmp_path: Path) -> None:
    target = tmp_path / "sessions" / "fresh.jsonl"
    store = SessionStore.open(target, cwd_for_new=tmp_path / "proj")
    lines = read_lines(target)
    assert len(lines) == 1
    assert (
        lines[0]["type"] == "session"
        and lines[0]["version"] == 3
        and lines[0]["cwd"] == str(tmp_path / "proj")
    )
    assert store.entries == [] and store.leaf_id is None
    # appends go straight to the file: it already exists
    store.append_message(user("q?"))
    assert read_lines(target)[-1]["message"]["content"][0]["text"] == "q?"
    store.close()


def test_unparseable_lines_in_the_middle_are_skipped(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    run(store, "q1?", "a1")
    path = store.path
    assert path is not None
    store.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.insert(2, "{not json")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reopened = SessionStore.open(path, cwd_for_new=tmp_path)
    assert [e["type"] for e in reopened.entries] == [
        "model_change",
        "thinking_level_change",
        "message",
        "message",
    ]
    reopened.close()


def test_in_memory_store_never_touches_the_disk(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    run(store, "q?", "a")
    assert store.path is None
    assert list(tmp_path.iterdir()) == []
    assert len(store.entries) == 2


def test_custom_messages_are_stored_as_custom_message_entries(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    entry = store.append_message(
        {"role": "custom", "customType": "note", "content": "c", "display": True, "timestamp": 5}
    )
    assert entry["type"] == "custom_message"
    fields = dict(entry)
    assert {k: fields[k] for k in ("customType", "content", "display", "attribution")} == {
        "customType": "note",
        "content": "c",
        "display": True,
        "attribution": "agent",
    }
    with pytest.raises(ValueError):
        store.append_message({"role": "compactionSummary", "summary": "s", "tokensBefore": 1, "timestamp": 1})


def test_branch_writes_a_new_file_with_the_path_to_the_parent_of_s54(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    e1, a1 = run(store, "q1?", "a1")
    e2, _ = run(store, "q2?", "a2")
    f1 = store.path
    assert f1 is not None
    f1_before = f1.read_bytes()
    old_entries = store.entries

    branched = branch_to_new_file(store, e2)
    f2 = branched.path
    assert f2 is not None and f2 != f1 and f2.parent == f1.parent
    lines = read_lines(f2)
    assert lines[0]["parentSession"] == str(f1) and lines[0]["id"] == branched.session_id
    assert lines[1:] == old_entries[:4]  # model_change, thinking_level_change, user q1?, assistant a1
    assert branched.leaf_id == a1
    assert f1.read_bytes() == f1_before
    assert [e["id"] for e in branched.user_message_entries()] == [e1]
    assert len(branched.build_context().messages) == 2

    with pytest.raises(InvalidBranchEntryError, match="Invalid entry ID for branching"):
        branch_to_new_file(branched, a1)
    again = branch_to_new_file(branched, e1)
    assert again.build_context().messages == []
    again.close()


def test_branch_from_a_root_user_message_starts_an_empty_session_with_parent(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path)
    root, _ = run(store, "q1?", "a1")
    new = branch_to_new_file(store, root)
    assert new.entries == []
    assert new.header.get("parentSession") == str(store.path)
    assert new.path is not None and not new.path.exists()  # lazy like any new session
    new.close()


def test_branch_recreates_labels_of_copied_entries(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    e1, a1 = run(store, "q1?", "a1")
    store.append_label(e1, "start")
    e2, _ = run(store, "q2?", "a2")
    branched = branch_to_new_file(store, e2)
    entries = branched.entries
    labels = [e for e in entries if e["type"] == "label"]
    assert len(labels) == 1
    assert labels[0]["targetId"] == e1 and labels[0]["label"] == "start"
    assert labels[0]["parentId"] == a1 and branched.leaf_id == labels[0]["id"]
    assert branched.get_label(e1) == "start"
    branched.close()


def test_set_title_rewrites_an_existing_file_and_user_titles_win_over_auto(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    run(store, "q?", "a")
    assert store.path is not None
    assert store.set_title("  My\x07 \x1b[31mname  ") is True
    store.flush()  # the header is rewritten in the background
    assert read_lines(store.path)[0]["title"] == "My [31mname"
    assert store.set_title("auto title", source="auto") is False
    assert store.set_title("\x00 \x01") is False
    assert read_lines(store.path)[0]["titleSource"] == "user"
    store.close()


def test_rewrite_entries_replaces_in_place_atomically(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    run(store, "q?", "a")
    target = store.user_message_entries()[0]
    pruned = {**target, "message": {**target["message"], "content": [{"type": "text", "text": "[pruned]"}]}}
    store.rewrite_entries({target["id"]: pruned})
    store.flush()  # rewritten in the background
    assert store.path is not None
    assert read_lines(store.path)[3]["message"]["content"][0]["text"] == "[pruned]"
    assert not [p for p in store.path.parent.iterdir() if p.name.endswith(".tmp")]
    store.close()


def test_write_errors_are_latched_and_raised_again(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    run(store, "q?", "a")
    assert store.path is not None
    store.path.unlink()
    store.path.mkdir()  # the file is now a directory: every write fails
    store.set_title("x")  # rewritten in the background, where it fails
    with pytest.raises(SessionWriteError):
        store.flush()
    with pytest.raises(SessionWriteError):
        store.set_title("y")
    store.path.rmdir()
    with pytest.raises(SessionWriteError):
        store.append_message(user("later"))
    store.close()


def test_appends_after_close_are_refused(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    store.close()
    with pytest.raises(SessionError):
        store.append_message(user("q"))


def test_label_on_unknown_entry_is_refused(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    with pytest.raises(SessionError, match="not found"):
        store.append_label("deadbeef", "x")


def test_fork_copies_every_entry_into_a_new_file_whose_parent_is_the_session_id(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    store.set_title("Forked title")
    run(store, "q?", "a")
    forked = fork_to(store, tmp_path / "other", cwd=tmp_path / "elsewhere")
    assert forked.path is not None and forked.path.parent == tmp_path / "other"
    lines = read_lines(forked.path)
    assert lines[0]["parentSession"] == store.session_id
    assert lines[0]["title"] == "Forked title" and lines[0]["cwd"] == str(tmp_path / "elsewhere")
    assert lines[1:] == store.entries
    assert forked.session_id != store.session_id
    forked.close()
    store.close()


def test_in_memory_session_can_record_its_parent(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path, parent_session="/x/a.jsonl")
    assert store.header.get("parentSession") == "/x/a.jsonl"


def test_a_session_whose_first_line_is_torn_garbage_still_opens(tmp_path: Path) -> None:
    store = fresh(tmp_path)
    run(store, "q?", "a")
    assert store.path is not None
    path = store.path
    store.close()
    path.write_bytes(b"\x00garbage\n" + path.read_bytes())
    reopened = SessionStore.open(path, cwd_for_new=tmp_path)
    assert [e["type"] for e in reopened.entries][-2:] == ["message", "message"]
    reopened.close()
