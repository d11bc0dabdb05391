"""Crash safety of session files: torn tails, killed writers, and one writer per file."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from coding.sessions.messages import assistant, user
from xcsh.coding.sessions.lock import SessionLockedError
from xcsh.coding.sessions.store import SessionStore


def assert_valid_jsonl(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.split(b"\n")[:-1]]


def make_session(tmp_path: Path, n: int) -> tuple[Path, list[str]]:
    store = SessionStore.create(tmp_path / "s", tmp_path)
    ids = [store.append_message(user("q")).get("id", ""), store.append_message(assistant("a")).get("id", "")]
    ids += [store.append_message(user(f"m{i}"))["id"] for i in range(n)]
    assert store.path is not None
    store.close()
    return store.path, ids


def test_torn_last_line_is_truncated_and_complete_entries_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, ids = make_session(tmp_path, 3)
    complete = path.read_bytes()
    half = json.dumps({"type": "message", "id": "torn0001", "parentId": ids[-1], "message": user("x" * 50)})
    path.write_bytes(complete + half[: len(half) // 2].encode())

    with caplog.at_level(logging.WARNING):
        store = SessionStore.open(path, cwd_for_new=tmp_path)
    assert [e["id"] for e in store.entries] == ids
    assert path.read_bytes() == complete
    assert any("incomplete entry" in r.getMessage() for r in caplog.records)
    appended = store.append_message(user("after repair"))
    store.close()
    lines = assert_valid_jsonl(path)
    assert [e["id"] for e in lines[1:]] == [*ids, appended["id"]]


def test_complete_last_line_missing_its_newline_is_kept(tmp_path: Path) -> None:
    path, ids = make_session(tmp_path, 1)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    store = SessionStore.open(path, cwd_for_new=tmp_path)
    assert [e["id"] for e in store.entries] == ids
    store.append_message(user("next"))
    store.close()
    assert len(assert_valid_jsonl(path)) == len(ids) + 2


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from xcsh.coding.sessions.store import SessionStore

    store = SessionStore.create(Path(sys.argv[1]), Path(sys.argv[1]))
    big = "y" * 400_000  # big lines keep the writer inside write() often, so kills tear lines
    msg = lambda role, text: {"role": role, "content": [{"type": "text", "text": t} for t in text.split("|")],
                              "timestamp": 1, "provider": "p", "model": "m", "usage": {}, "stopReason": "stop"}
    store.append_message(msg("user", "first"))
    store.append_message(msg("assistant", "answer"))
    print(store.path, flush=True)
    i = 0
    while True:
        entry = store.append_message(msg("user", f"{i}:{big}|{big}|{big}"))
        print(entry["id"], flush=True)
        i += 1
    """
)


async def test_writer_killed_mid_append_leaves_a_readable_file_losing_no_acknowledged_entry(
    tmp_path: Path,
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _WRITER, str(tmp_path), stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    acknowledged: list[str] = []
    async with asyncio.timeout(30):
        path = Path((await proc.stdout.readline()).decode().strip())
        while len(acknowledged) < 40:
            acknowledged.append((await proc.stdout.readline()).decode().strip())
        proc.send_signal(signal.SIGKILL)
        rest, _ = await proc.communicate()
    acknowledged += [line for line in rest.decode().split("\n") if line]

    store = SessionStore.open(path, cwd_for_new=tmp_path)
    stored = [e["id"] for e in store.entries]
    store.close()
    assert set(acknowledged) <= set(stored)
    lines = assert_valid_jsonl(path)
    assert [e["id"] for e in lines[1:]] == stored


_HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from xcsh.coding.sessions.store import SessionStore

    store = SessionStore.open(Path(sys.argv[1]), cwd_for_new=Path(sys.argv[1]).parent)
    print("locked", flush=True)
    sys.stdin.readline()
    store.append_message({"role": "user", "content": "from holder", "timestamp": 1})
    store.close()
    print("released", flush=True)
    """
)


async def _start_holder(path: Path) -> asyncio.subprocess.Process:
    """A separate Python process running ``_HOLDER`` on ``path`` (pipes on stdin and stdout)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _HOLDER,
        str(path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


async def test_second_process_cannot_open_a_session_file_held_by_another(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    proc = await _start_holder(path)
    assert proc.stdin is not None and proc.stdout is not None
    async with asyncio.timeout(15):
        assert (await proc.stdout.readline()).strip() == b"locked"
        with pytest.raises(SessionLockedError, match=f"process {proc.pid}"):
            SessionStore.open(path, cwd_for_new=tmp_path)
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
        assert (await proc.stdout.readline()).strip() == b"released"
        assert await proc.wait() == 0

    store = SessionStore.open(path, cwd_for_new=tmp_path)
    assert [e["message"]["content"] for e in store.entries] == ["from holder"]
    store.close()
    assert not (tmp_path / "shared.jsonl.lock").exists()


def test_same_file_cannot_be_opened_twice_in_one_process(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    first = SessionStore.open(path, cwd_for_new=tmp_path)
    with pytest.raises(SessionLockedError, match="already open for writing"):
        SessionStore.open(path, cwd_for_new=tmp_path)
    first.close()
    SessionStore.open(path, cwd_for_new=tmp_path).close()


async def test_lock_of_a_killed_holder_is_released_by_the_kernel(tmp_path: Path) -> None:
    path = tmp_path / "crashed.jsonl"
    proc = await _start_holder(path)
    assert proc.stdout is not None
    async with asyncio.timeout(15):
        assert (await proc.stdout.readline()).strip() == b"locked"
        proc.kill()
        await proc.wait()
    store = SessionStore.open(path, cwd_for_new=tmp_path)  # stale lock file, but no live lock
    store.close()


def test_an_appended_entry_is_in_the_file_at_once_and_the_fsync_thread_ends_at_close(tmp_path: Path) -> None:
    """Group commit: the line is written before append returns; fsync runs in the background."""
    before = set(threading.enumerate())
    store = SessionStore.create(tmp_path / "s", tmp_path)
    store.append_message(user("first"))
    assert store.path is not None
    for i in range(20):
        store.append_message(user(f"later {i}"))
        lines = assert_valid_jsonl(store.path)  # read through another descriptor, at once
        assert lines[-1]["message"]["content"][0]["text"] == f"later {i}"
    syncers = [t for t in set(threading.enumerate()) - before if t.name == "session-fsync"]
    assert syncers
    store.close()
    for thread in syncers:
        thread.join(timeout=10)
    assert not any(t.is_alive() for t in syncers)
    assert len(assert_valid_jsonl(store.path)) == 22  # header + 21 entries


def test_appends_while_the_fsync_thread_gathers_are_written_at_once_and_close_ends_it(tmp_path: Path) -> None:
    """The fsync thread waits to gather entries; every line is still in the file when append returns,
    and closing the store fsyncs at once and ends the thread without waiting out the gathering."""
    before = set(threading.enumerate())
    store = SessionStore.create(tmp_path / "s", tmp_path, sync_gather_s=3600.0)
    store.append_message(user("first"))
    assert store.path is not None
    for i in range(5):
        store.append_message(user(f"later {i}"))
        assert assert_valid_jsonl(store.path)[-1]["message"]["content"][0]["text"] == f"later {i}"
    syncers = [t for t in set(threading.enumerate()) - before if t.name == "session-fsync"]
    assert len(syncers) == 1
    store.close()
    syncers[0].join(timeout=10)
    assert not syncers[0].is_alive()
    assert len(assert_valid_jsonl(store.path)) == 7  # header + 6 entries


def test_a_symlink_to_an_open_session_file_is_refused_like_the_file(tmp_path: Path) -> None:
    first = SessionStore.create(tmp_path / "s", tmp_path)
    first.append_message(user("q"))
    assert first.path is not None
    alias = first.path.with_name("alias.jsonl")
    alias.symlink_to(first.path.name)
    with pytest.raises(SessionLockedError, match="already open for writing"):
        SessionStore.open(alias, cwd_for_new=tmp_path)
    first.close()


def test_a_session_opened_through_a_symlink_is_rewritten_in_its_real_file_and_the_link_kept(
    tmp_path: Path,
) -> None:
    first = SessionStore.create(tmp_path / "s", tmp_path)
    first.append_message(user("q"))
    real = first.path
    assert real is not None
    first.close()
    alias = tmp_path / "alias.jsonl"
    alias.symlink_to(real)
    store = SessionStore.open(alias, cwd_for_new=tmp_path)
    assert store.path == real
    store.set_title("renamed through the link")
    store.append_message(assistant("a"))
    store.close()
    assert alias.is_symlink() and alias.resolve() == real
    lines = assert_valid_jsonl(real)
    assert lines[0]["title"] == "renamed through the link" and len(lines) == 3
