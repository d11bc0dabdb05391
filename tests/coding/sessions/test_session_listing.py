"""Per-project session directories, most-recent lookup, and ``--session`` argument resolution."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from xcsh.coding.sessions.listing import (
    SessionNotFoundError,
    find_most_recent,
    list_sessions,
    resolve_session_arg,
    session_dir_for,
)
from xcsh.coding.sessions.store import SessionStore


def saved_session(directory: Path, prompt: str, *, mtime: float | None = None) -> SessionStore:
    store = SessionStore.create(directory, directory)
    store.append_message({"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": 1})
    reply: dict[str, Any] = {
        "role": "assistant",
        "content": [],
        "provider": "p",
        "model": "m",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }
    store.append_message(reply)
    store.close()
    assert store.path is not None
    if mtime is not None:
        os.utime(store.path, (mtime, mtime))
    return store


def test_session_dir_names_follow_the_cwd_encoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "src" / "app").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "sessions"
    assert session_dir_for(home / "src" / "app", root) == root / "-src-app"
    assert session_dir_for(home, root) == root / "-"
    assert session_dir_for(Path("/srv/app"), root) == root / "--srv-app--"


def test_cwd_in_the_temp_directory_is_encoded_relative_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", "/nonexistent-home")
    import tempfile

    temp_root = Path(tempfile.gettempdir()).resolve()
    name = session_dir_for(tmp_path, Path("/r")).name
    relative = str(tmp_path.resolve().relative_to(temp_root)).replace("/", "-")
    assert name == f"-tmp-{relative}"


def test_most_recent_session_is_by_modification_time(tmp_path: Path) -> None:
    older = saved_session(tmp_path, "old", mtime=1_000_000)
    newer = saved_session(tmp_path, "new", mtime=2_000_000)
    (tmp_path / "not-a-session.jsonl").write_text("garbage\n", encoding="utf-8")
    assert find_most_recent(tmp_path) == newer.path
    assert find_most_recent(tmp_path / "missing") is None
    infos = list_sessions(tmp_path)
    assert [i.path for i in infos] == [newer.path, older.path]
    assert infos[0].first_message == "new" and infos[0].message_count == 2


def test_paths_are_returned_as_given_and_ids_are_matched_by_prefix(tmp_path: Path) -> None:
    project = tmp_path / "sessions" / "-proj"
    other = tmp_path / "sessions" / "-other"
    mine = saved_session(project, "mine")
    theirs = saved_session(other, "theirs")
    root = tmp_path / "sessions"

    assert resolve_session_arg("x/new.jsonl", project, root) == Path(os.path.abspath("x/new.jsonl"))
    assert resolve_session_arg("plain.jsonl", project, root).name == "plain.jsonl"
    assert resolve_session_arg(mine.session_id, project, root) == mine.path
    assert resolve_session_arg(theirs.session_id.upper(), project, root) == theirs.path  # found globally
    assert mine.path is not None
    assert resolve_session_arg(mine.path.name[:-6], project, root) == mine.path


def test_unknown_or_ambiguous_ids_raise_a_clear_error(tmp_path: Path) -> None:
    project = tmp_path / "p"
    first = saved_session(project, "a")
    saved_session(project, "b")
    with pytest.raises(SessionNotFoundError, match='No session found matching "zzzz"'):
        resolve_session_arg("zzzz", project, None)
    shared_prefix = first.session_id[:2]
    with pytest.raises(SessionNotFoundError, match=f'Multiple sessions match "{shared_prefix}"'):
        resolve_session_arg(shared_prefix, project, None)
