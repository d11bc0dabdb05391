"""A stop signal right after start-up ends ``xcsh --mode rpc`` with the shell's status, whether the
host waited for ``ready`` or wrote its first command at once.

An RPC process that finds a command already waiting answers it before installing its stop
handlers (docs/performance.md, "Sixth session: start-up"); one that finds none installs them
before its ``ready`` frame. Either way a SIGTERM the host sends after what it waited for is a
graceful stop (status 143), never the default action.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

from conftest import Workspace


def _spawn(ws: Workspace) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "xcsh", "--mode", "rpc", "--model", "fake/fake-model"]
    return subprocess.Popen(
        [*argv, "--session-dir", str(ws.sess)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ws.proj,
        env=ws.env,
    )


def _read_until(process: subprocess.Popen[bytes], marker: bytes) -> None:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        assert line, "the process ended before the expected frame"
        if marker in line:
            return


def test_sigterm_after_the_answer_to_a_command_written_at_once_is_a_graceful_stop(
    workspace: Workspace,
) -> None:
    process = _spawn(workspace)
    assert process.stdin is not None
    process.stdin.write(b'{"type":"get_state","id":"s1"}\n')
    process.stdin.flush()
    _read_until(process, b'"id":"s1"')
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 128 + signal.SIGTERM


def test_sigterm_after_the_ready_frame_of_an_idle_start_is_a_graceful_stop(workspace: Workspace) -> None:
    process = _spawn(workspace)
    _read_until(process, b'"type":"ready"')
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 128 + signal.SIGTERM


async def test_a_stop_signal_held_before_the_handlers_are_installed_is_handled_once() -> None:
    from xcsh.modes.signals import StopHandlers

    exits: list[int] = []
    stop = StopHandlers(lambda: None, exit=exits.append)
    stop.hold()
    try:
        os.kill(os.getpid(), signal.SIGHUP)  # noted while held: neither the default action nor lost
        for _ in range(100):  # loop turns: the Python-level handler runs between bytecodes
            await asyncio.sleep(0)
        stop.install()
        async with asyncio.timeout(30):
            await stop.settle()
        for _ in range(100):  # loop turns: a second delivery of the same signal would show here
            await asyncio.sleep(0)
    finally:
        stop.remove()
    assert exits == [128 + signal.SIGHUP]
