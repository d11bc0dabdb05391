"""A stop signal while the session file is being rewritten (a long pruning rewrite): the stop
waits for the rewrite off the event loop, so a second signal still exits at once."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path
from typing import Any

from coding.session_helpers import fake_session
from coding.sessions.held import BOUND_S, HeldOpen
from xcsh.coding.sessions.entries import serialize_entry
from xcsh.coding.sessions.store import SessionStore
from xcsh.modes.signals import install_stop_handlers
from xcsh.testing.fake_llm import FakeLLM


def user(text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "attribution": "user",
        "timestamp": 1,
    }


def resumed_session(tmp_path: Path, fake_llm: FakeLLM) -> tuple[Any, SessionStore, Path]:
    """A session on the fake model resuming a file of ten user messages: (session, store, path)."""
    session = fake_session(tmp_path, fake_llm.base_url)
    store = SessionStore.create(tmp_path / "sessions", tmp_path)
    for i in range(10):
        store.append_message(user(f"question {i}"))
    session.adopt_store(store, "resume")
    assert store.path is not None
    return session, store, store.path


async def test_a_second_stop_signal_exits_at_once_while_the_first_waits_for_a_rewrite_of_the_session_file(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    session, store, path = resumed_session(tmp_path, fake_llm)
    original = os.open(path, os.O_RDONLY)  # the file before the rewrite is renamed over it
    exits: list[tuple[int, bool]] = []  # (status, whether the rewrite was still running then)
    exited = asyncio.Event()

    def record_exit(status: int) -> None:
        exits.append((status, os.path.samestat(os.stat(path), os.fstat(original))))
        exited.set()

    stop = install_stop_handlers(lambda: session, exit=record_exit)
    # the second signal arrives as the first stop reaches the session's shutdown, before its wait
    session.hooks.on_shutdown.append(lambda: os.kill(os.getpid(), signal.SIGTERM))
    entered, release = threading.Event(), threading.Event()
    target = store.entries[3]
    try:
        store.rewrite_entries(
            {target["id"]: {**target, "message": HeldOpen(entered, release, **target["message"])}}
        )
        assert entered.wait(BOUND_S)  # the rewrite runs, held in that entry's encoding
        os.kill(os.getpid(), signal.SIGTERM)
        async with asyncio.timeout(BOUND_S):
            await exited.wait()
        # the loop ran the second signal's handler while the first stop waited for the rewrite
        assert exits == [(128 + signal.SIGTERM, True)]
    finally:
        release.set()
        try:
            async with asyncio.timeout(BOUND_S):
                await stop.settle()  # the first stop goes on once the rewrite ends: closes, exits
        finally:
            stop.remove()
            os.close(original)
    assert exits == [(128 + signal.SIGTERM, True), (128 + signal.SIGTERM, False)]
    expected = [store.header, *store.entries]
    assert path.read_bytes() == b"".join((serialize_entry(o, None) + "\n").encode() for o in expected)
    SessionStore.open(path, cwd_for_new=tmp_path).close()  # the first stop closed the file (its lock is free)


async def test_a_shutdown_cancelled_while_it_waits_for_a_rewrite_still_closes_the_file_and_frees_its_lock(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    session, store, path = resumed_session(tmp_path, fake_llm)
    entered, release = threading.Event(), threading.Event()
    target = store.entries[3]
    store.rewrite_entries(
        {target["id"]: {**target, "message": HeldOpen(entered, release, **target["message"])}}
    )
    assert entered.wait(BOUND_S)  # the rewrite runs, held in that entry's encoding
    shutdown = asyncio.ensure_future(session.shutdown_async())
    for _ in range(1000):  # loop turns until the shutdown waits on its worker thread
        if shutdown.done() or not store.is_rewriting:
            break
        await asyncio.sleep(0)
    shutdown.cancel()  # e.g. an in-process host killing the session at close
    release.set()  # the close left in the cancelled shutdown waits for the rewrite, then closes
    try:
        async with asyncio.timeout(BOUND_S):
            await shutdown
    except asyncio.CancelledError:
        pass
    expected = [store.header, *store.entries]
    assert path.read_bytes() == b"".join((serialize_entry(o, None) + "\n").encode() for o in expected)
    SessionStore.open(path, cwd_for_new=tmp_path).close()  # closed: its lock is free
