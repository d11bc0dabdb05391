"""Rewrites in place run on a background thread: no caller waits, and appends made meanwhile
land in the new file after the rewritten entries, once each, in order.

The rewrite is held at a known point with a value whose encoding waits for an event
(:mod:`coding.sessions.held`).
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from coding.sessions.held import BOUND_S, HeldOnceArmed, HeldOpen
from xcsh.coding.sessions.entries import serialize_entry
from xcsh.coding.sessions.entry_types import SessionHeader
from xcsh.coding.sessions.store import SessionStore, SessionWriteError


def user(text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "attribution": "user",
        "timestamp": 1,
    }


def full_encoding(store: SessionStore) -> bytes:
    objects = [store.header, *store.entries]
    return b"".join((serialize_entry(o, store.blobs) + "\n").encode("utf-8") for o in objects)


def line_of(store: SessionStore, entry: Any) -> bytes:
    return (serialize_entry(entry, store.blobs) + "\n").encode("utf-8")


def stored(tmp_path: Path) -> SessionStore:
    store = SessionStore.create(tmp_path / "sessions", tmp_path / "proj")
    store.append_model_change("fake/fake-model")
    for i in range(20):
        store.append_message(user(f"question {i} " + "x" * 200))
        store.append_custom("note", {"i": i})
    assert store.path is not None and store.is_flushed
    return store


@pytest.mark.parametrize("replaced_behind", [False, True], ids=["own file", "file replaced behind the store"])
def test_appends_while_a_rewrite_runs_are_written_at_once_and_end_up_after_it_once_each_in_order(
    tmp_path: Path, replaced_behind: bool
) -> None:
    store = stored(tmp_path)
    path = store.path
    assert path is not None
    if replaced_behind:  # its lines cannot be copied from it: every line is encoded again
        copy = path.with_name("copy")
        shutil.copyfile(path, copy)
        os.replace(copy, path)
    original = os.open(path, os.O_RDONLY)  # held open: its inode number is not reused meanwhile
    entered, release = threading.Event(), threading.Event()
    target = next(e for e in store.entries if e["type"] == "custom")
    try:
        store.rewrite_entries({target["id"]: {**target, "data": HeldOpen(entered, release, held=True)}})
        assert entered.wait(BOUND_S)  # the rewrite is running, on another thread, held in that entry

        first = store.append_message(user("while the rewrite runs"))
        assert store.set_title("renamed meanwhile")  # a second rewrite, asked for during the first
        second = store.append_custom("note", {"after": "the second request"})

        if not replaced_behind:
            # nothing has been renamed yet: the appends are in the current file, complete, at its end
            assert os.path.samestat(os.stat(path), os.fstat(original))
            assert path.read_bytes().endswith(line_of(store, first) + line_of(store, second))
        # else the first append found another file at the path and wrote the session whole again
        # (the running rewrite is then stale and dropped)
        assert b"renamed meanwhile" not in path.read_bytes()
    finally:
        release.set()
    store.flush()

    data = path.read_bytes()
    assert not os.path.samestat(os.stat(path), os.fstat(original))  # a new file was renamed over it
    os.close(original)
    assert data == full_encoding(store)
    assert data.count(line_of(store, first)) == 1 and data.count(line_of(store, second)) == 1
    assert data.endswith(line_of(store, first) + line_of(store, second))
    assert b'"held":true' in data and b'"title":"renamed meanwhile"' in data
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".lock"]

    third = store.append_message(user("after it"))  # appends go to the new file
    assert path.read_bytes() == data + line_of(store, third)
    store.close()
    reopened = SessionStore.open(path, cwd_for_new=tmp_path)
    assert [e["id"] for e in reopened.entries] == [e["id"] for e in store.entries]
    reopened.close()


def test_closing_waits_for_a_requested_rewrite(tmp_path: Path) -> None:
    store = stored(tmp_path)
    path = store.path
    assert path is not None
    target = store.user_message_entries()[3]
    pruned = {**target, "message": {**target["message"], "content": [{"type": "text", "text": "[pruned]"}]}}
    store.rewrite_entries({target["id"]: pruned})
    store.close()
    assert path.read_bytes() == full_encoding(store)
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_rewrite_that_fails_in_the_background_leaves_the_old_file_and_is_raised_by_the_next_write(
    tmp_path: Path,
) -> None:
    store = stored(tmp_path)
    path = store.path
    assert path is not None
    before = path.read_bytes()
    target = store.user_message_entries()[0]
    store.rewrite_entries({target["id"]: {**target, "unencodable": object()}})
    with pytest.raises(SessionWriteError):
        store.flush()
    with pytest.raises(SessionWriteError):
        store.append_message(user("refused"))
    assert path.read_bytes() == before  # the old file, complete
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".lock"]
    store.close()


def reopened(tmp_path: Path) -> tuple[SessionStore, Path, Any]:
    """A stored session closed and opened again (nothing appended yet, so no descriptor is open):
    (store, its path, its custom entry)."""
    first = stored(tmp_path)
    path = first.path
    assert path is not None
    first.close()
    store = SessionStore.open(path, cwd_for_new=tmp_path)
    return store, path, next(e for e in store.entries if e["type"] == "custom")


def test_a_whole_write_during_a_rewrite_makes_that_rewrite_stale_and_it_is_dropped(tmp_path: Path) -> None:
    """The file vanishes while a rewrite runs: the next append writes it whole again (everything
    in memory), and the rewrite, started from the older state, must not be renamed over it."""
    store, path, target = reopened(tmp_path)
    entered, release = threading.Event(), threading.Event()
    try:
        store.rewrite_entries({target["id"]: {**target, "data": HeldOpen(entered, release, held=True)}})
        assert entered.wait(BOUND_S)
        path.unlink()
        later = store.append_message(user("after the file vanished"))  # writes the whole file
        written = path.read_bytes()
        assert written.endswith(line_of(store, later)) and b'"held":true' in written
    finally:
        release.set()
    store.flush()
    assert path.read_bytes() == written == full_encoding(store)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".lock"]
    store.close()


def test_a_rewrite_made_stale_before_it_reads_where_the_lines_are_is_dropped_and_latches_no_error(
    tmp_path: Path,
) -> None:
    """The rewrite is held in its header's encoding — before it reads the table of where each
    line is. The file vanishes and the next append writes it whole, with a new table. The rewrite
    must copy with the table of the file it opened (not the new one, whose offsets do not fit that
    file), and then, stale, be dropped: the session stays writable."""
    draft = SessionStore.in_memory(tmp_path / "proj")
    for i in range(8):
        draft.append_message(user(f"question {i} " + "x" * 100))
    entered, release = threading.Event(), threading.Event()
    hold = HeldOnceArmed(entered, release, held=True)
    header = cast(SessionHeader, {**draft.header, "hold": hold})
    store = SessionStore.from_entries(
        header, list(draft.entries), session_dir=tmp_path / "sessions", blobs=None
    )
    path = store.path
    assert path is not None and path.exists()  # written whole; no descriptor is open for appends yet
    try:
        hold.arm()
        assert store.set_title("a title long enough to move every line of the file that follows it")
        assert entered.wait(BOUND_S)  # the rewrite has opened the file and is encoding the header
        path.unlink()
        later = store.append_message(user("after the file vanished"))  # writes the whole file
        written = path.read_bytes()
        assert written.endswith(line_of(store, later)) and b"a title long enough" in written
    finally:
        release.set()
    store.flush()  # raises if the stale rewrite latched its failure
    assert path.read_bytes() == written == full_encoding(store)
    last = store.append_message(user("the session is still writable"))
    assert path.read_bytes() == written + line_of(store, last)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".lock"]
    store.close()


def test_the_lines_appended_during_a_rewrite_are_the_old_files_own_bytes_in_the_renamed_file(
    tmp_path: Path,
) -> None:
    """The rewrite copies the bytes appended since its request from the old file into the new one
    before the rename. (That it fdatasyncs them before the rename, so lines already fsynced in the
    old file stay durable, is a system-call order no test here observes; see the writer.)"""
    store = stored(tmp_path)
    path = store.path
    assert path is not None
    size_at_request = path.stat().st_size
    original = os.open(path, os.O_RDONLY)
    entered, release = threading.Event(), threading.Event()
    target = next(e for e in store.entries if e["type"] == "custom")
    try:
        store.rewrite_entries({target["id"]: {**target, "data": HeldOpen(entered, release, held=True)}})
        assert entered.wait(BOUND_S)
        appended = [store.append_message(user(f"during the rewrite {i}")) for i in range(3)]
    finally:
        release.set()
    store.flush()
    old_tail = os.pread(original, 1 << 20, size_at_request)
    os.close(original)
    assert old_tail == b"".join(line_of(store, entry) for entry in appended)
    data = path.read_bytes()
    assert data.endswith(old_tail) and data == full_encoding(store) and b'"held":true' in data
    store.close()


def test_a_rewrite_that_fails_after_a_whole_write_made_it_stale_is_dropped_and_latches_nothing(
    tmp_path: Path,
) -> None:
    """The held rewrite's entry cannot be encoded, but before it fails the entry is replaced, the
    file vanishes and the next append writes it whole: the failure belongs to a stale rewrite."""
    store, path, target = reopened(tmp_path)
    entered, release = threading.Event(), threading.Event()
    try:
        store.rewrite_entries({target["id"]: {**target, "data": HeldOpen(entered, release, bad=object())}})
        assert entered.wait(BOUND_S)
        store.rewrite_entries({target["id"]: {**target, "data": {"good": True}}})
        path.unlink()
        store.append_message(user("after the file vanished"))  # writes the whole file
        written = path.read_bytes()
    finally:
        release.set()  # the held rewrite now fails to encode its entry
    store.flush()
    assert path.read_bytes() == written == full_encoding(store) and b'"good":true' in written
    last = store.append_message(user("the session is still writable"))
    assert path.read_bytes() == written + line_of(store, last)
    store.close()
