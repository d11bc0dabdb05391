"""Print mode leaves its stdout blocking for the other processes writing to the same pipe.

``O_NONBLOCK`` lives on the open file description that every process inheriting the pipe shares
(``make -j … | tee log``, ``{ xcsh -p … & other; } | reader``): while xcsh runs, the others'
writes to a full pipe must wait for the reader as usual, not fail with ``EAGAIN`` (review 8 D2).
"""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import sys
import threading
import time

import pytest

from conftest import BASE_ARGS, Workspace
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# one write larger than the pipe: a blocking description waits for the reader until all of it is
# written; a non-blocking one returns short (or raises) once the pipe is full
SIBLING = """
import os, sys
data = b"\\x01" * int(sys.argv[1])
try:
    written = os.write(1, data)
except BlockingIOError:
    sys.exit(3)
sys.exit(0 if written == len(data) else 4)
"""


def _read_until(read_fd: int, wanted: bytes) -> None:
    seen = b""
    while wanted not in seen:
        chunk = os.read(read_fd, 1 << 16)
        assert chunk, "xcsh closed stdout early"
        seen = seen[-len(wanted) :] + chunk


def _wait_full_or_ended(write_fd: int, sibling: subprocess.Popen[bytes], within: float = 30.0) -> None:
    """Wait until the pipe has no room (the sibling's write then waits or has returned short) or
    the sibling has ended."""
    deadline = time.monotonic() + within
    while select.select([], [write_fd], [], 0)[1] and sibling.poll() is None:
        assert time.monotonic() < deadline, "the pipe never filled up"
        try:
            sibling.wait(timeout=0.01)
        except subprocess.TimeoutExpired:
            pass


@pytest.mark.parametrize("extra", [["--mode", "json"], []])
def test_another_process_writing_to_the_same_stdout_pipe_waits_for_the_reader_while_xcsh_runs(
    workspace: Workspace, fake_llm: FakeLLM, extra: list[str]
) -> None:
    gate = script.Gate()
    fake_llm.script(script.hold("partial answer", gate))
    read_fd, write_fd = os.pipe()
    argv = [sys.executable, "-m", "xcsh", "-p", "hi", *extra, *BASE_ARGS]
    agent = subprocess.Popen(
        argv, cwd=workspace.proj, env=workspace.env, stdin=subprocess.DEVNULL, stdout=write_fd,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    sibling: subprocess.Popen[bytes] | None = None
    try:
        if extra:
            _read_until(read_fd, b"partial answer")  # xcsh is writing its events, mid-answer
        else:  # plain -p writes only the answer: wait until the model streams it
            fake_llm.wait_for_requests(1, timeout=30)
        size = fcntl.fcntl(read_fd, fcntl.F_GETPIPE_SZ)
        sibling = subprocess.Popen([sys.executable, "-c", SIBLING, str(4 * size)], stdout=write_fd)
        _wait_full_or_ended(write_fd, sibling)
        os.close(write_fd)
        write_fd = -1
        received = bytearray()

        def drain() -> None:
            while chunk := os.read(read_fd, 1 << 16):
                received.extend(chunk)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        assert sibling.wait(timeout=30) == 0, "the other process's write failed (stdout made non-blocking)"
        gate.release()
        assert agent.wait(timeout=60) == 0
        reader.join(timeout=30)
        assert not reader.is_alive()
        assert received.count(b"\x01") == 4 * size
        assert b"partial answer" in received
    finally:
        gate.release()
        for process in (agent, sibling):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
    fake_llm.reset()
