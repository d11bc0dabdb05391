"""A session file renamed over or removed behind the writer's back is written again, not lost.

The writer appends through a cached ``O_APPEND`` descriptor; after another program renamed a
file over the session's path (an export, an editor's save, a sync tool), appends went to the
unlinked old file and every later entry was lost (review 1 of the eighth session, D1).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from coding.sessions.messages import assistant, user
from xcsh.coding.sessions.store import SessionStore


def _ids(path: Path) -> list[str]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session"
    return [e["id"] for e in lines[1:]]


def test_an_append_after_the_file_was_renamed_over_rewrites_it_with_every_entry(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path)
    ids = [store.append_message(user("q1"))["id"], store.append_message(assistant("a1"))["id"]]
    assert store.path is not None
    replacement = tmp_path / "s" / "replacement"
    replacement.write_text("<!DOCTYPE html>\n")
    os.replace(replacement, store.path)
    ids.append(store.append_message(user("q2"))["id"])
    ids.append(store.append_message(assistant("a2"))["id"])
    store.close()
    assert _ids(store.path) == ids


def test_an_append_after_the_open_file_was_removed_writes_it_again(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path)
    ids = [store.append_message(user("q1"))["id"], store.append_message(assistant("a1"))["id"]]
    assert store.path is not None
    store.path.unlink()
    ids.append(store.append_message(user("q2"))["id"])
    store.close()
    assert _ids(store.path) == ids


def test_a_reopened_session_whose_file_was_replaced_before_its_first_append_keeps_its_entries(
    tmp_path: Path,
) -> None:
    first = SessionStore.create(tmp_path / "s", tmp_path)
    ids = [first.append_message(user("q1"))["id"]]
    assert first.path is not None
    first.close()
    store = SessionStore.open(first.path, cwd_for_new=tmp_path)
    other = tmp_path / "s" / "other"
    other.write_text("not the session any more\n")
    os.replace(other, first.path)
    ids.append(store.append_message(assistant("a1"))["id"])
    store.close()
    assert _ids(first.path) == ids
