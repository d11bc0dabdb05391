"""A stop signal stops xcsh even while its reader has stopped reading stdout (docs/fleet.md).

The test owns the stdout pipe: it reads frames until the agent's shell command is running (and
silent), then fills the pipe to the last byte itself and sends the signal. The stop sequence's
frames (the aborted tool call, ``agent_end``) then find no room: xcsh must still end the command,
close the session and exit with ``128 + signal``, dropping those frames.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Workspace
from e2e.test_safety_signals import COMMAND, group_members
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.processes import wait_gone

ARGS = ["--model", "fake/fake-model", "--tools", "bash"]


def _read_until_running(read_fd: int) -> int:
    """Read frames until the shell printed its process group id; return it (bounded by the
    command's 300 s sleep and the test's process kill)."""
    pending = b""
    while True:
        chunk = os.read(read_fd, 1 << 16)
        assert chunk, "xcsh closed stdout before the command ran"
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            frame = json.loads(line)
            if frame.get("type") == "tool_execution_update":
                text = frame["partialResult"]["content"][0]["text"]
                if "pgid=" in text:
                    return int(text.split("pgid=")[1].split()[0])


def _fill(write_fd: int) -> None:
    """Fill the pipe until not one more byte fits, keeping the fd's blocking mode (the open file
    description is xcsh's too)."""
    blocking = os.get_blocking(write_fd)
    os.set_blocking(write_fd, False)
    try:
        for size in (1 << 16, 1):
            try:
                while True:
                    os.write(write_fd, b"#" * size)
            except BlockingIOError:
                pass
    finally:
        os.set_blocking(write_fd, blocking)


def _session_results(sess: Path) -> list[str]:
    (path,) = sess.glob("*.jsonl")
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return [
        e["message"]["toolCallId"]
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]


@pytest.mark.parametrize(
    ("mode", "signum"), [("json", signal.SIGTERM), ("rpc", signal.SIGTERM), ("json", signal.SIGINT)]
)
def test_a_stop_signal_ends_the_run_and_the_process_while_the_host_does_not_read_stdout(
    workspace: Workspace, fake_llm: FakeLLM, mode: str, signum: signal.Signals
) -> None:
    fake_llm.script(script.tool_calls(("b1", "bash", {"command": COMMAND})), script.text("never reached"))
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, 1 << 16)
    argv = [sys.executable, "-m", "xcsh", *ARGS, "--session-dir", str(workspace.sess), "--mode", mode]
    if mode == "json":
        argv += ["-p", "run it"]
    process = subprocess.Popen(
        argv,
        cwd=workspace.proj,
        env=workspace.env,
        stdin=subprocess.PIPE,
        stdout=write_fd,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdin is not None
        if mode == "rpc":
            process.stdin.write(b'{"type":"prompt","message":"run it"}\n')
            process.stdin.flush()
        pgid = _read_until_running(read_fd)
        assert group_members(pgid)
        _fill(write_fd)
        process.send_signal(signum)
        assert process.wait(timeout=30) == 128 + signum
        assert wait_gone(group_members(pgid), within=10) == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(read_fd)
        os.close(write_fd)
    assert _session_results(workspace.sess) == ["b1"]  # the aborted call is in the session file
    fake_llm.reset()
