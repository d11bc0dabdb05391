"""Paths a host names may be devices, pipes or sockets: they are never replaced nor opened to read.

The tests use a FIFO in the test's directory (never a real device): renaming a file over it
would turn it into a regular file, and opening it to read would block until a writer came.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from pathlib import Path

import pytest

from xcsh.coding.private_fs import write_private_file
from xcsh.coding.sessions.store import SessionStore

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


def _release(path: Path) -> None:
    """Let a read that is blocked opening ``path`` go on (only a failing test leaves one)."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_an_atomic_write_refuses_to_replace_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path)
    with pytest.raises(OSError, match="not a regular file"):
        write_private_file(fifo, b"page")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.jsonl"]  # no temp file left


async def test_opening_a_session_at_a_pipe_fails_at_once_instead_of_waiting_for_a_writer(
    tmp_path: Path,
) -> None:
    fifo = _fifo(tmp_path)
    try:
        with pytest.raises(OSError, match="not a regular file"):
            await asyncio.wait_for(asyncio.to_thread(SessionStore.open, fifo, cwd_for_new=tmp_path), 10)
    finally:
        _release(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
