"""Started with a closed stderr (``2>&-``, as some daemons start children), xcsh works as usual:
``-p`` answers, RPC mode stops on SIGTERM and exits 0 at the end of its input (docs/cli.md)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from conftest import Workspace
from e2e.test_safety_signals import COMMAND, group_members
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.processes import wait_gone

# the shell closes fd 2, then becomes xcsh
CLOSED_STDERR = ["/bin/sh", "-c", 'exec "$0" "$@" 2>&-', sys.executable, "-m", "xcsh"]


def _spawn(ws: Workspace, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLOSED_STDERR, "--model", "fake/fake-model", "--session-dir", str(ws.sess), *args],
        cwd=ws.proj,
        env=ws.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )


def _frames_until(process: subprocess.Popen[bytes], done: str) -> list[dict[str, object]]:
    """Frames up to the first whose JSON contains ``done`` (bounded by the caller's kill)."""
    assert process.stdout is not None
    frames = []
    for line in process.stdout:
        frames.append(json.loads(line))
        if done in line.decode():
            return frames
    raise AssertionError("stdout ended early")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()


def test_print_mode_with_a_closed_stderr_answers_and_exits_0(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("the answer"))
    process = _spawn(workspace, "--no-tools", "-p", "a question")
    try:
        out, _ = process.communicate(timeout=60)
    finally:
        _stop(process)
    assert (process.returncode, out) == (0, b"the answer\n")


def test_rpc_mode_with_a_closed_stderr_exits_0_at_the_end_of_input(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("the answer"))
    process = _spawn(workspace, "--no-tools", "--mode", "rpc")
    try:
        assert process.stdin is not None
        process.stdin.write(b'{"type":"prompt","message":"a question"}\n')
        process.stdin.flush()
        _frames_until(process, '"type":"agent_end"')
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    finally:
        _stop(process)


def test_rpc_mode_with_a_closed_stderr_stops_on_sigterm_with_status_143(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("b1", "bash", {"command": COMMAND})), script.text("never reached"))
    process = _spawn(workspace, "--tools", "bash", "--mode", "rpc")
    try:
        assert process.stdin is not None
        process.stdin.write(b'{"type":"prompt","message":"run it"}\n')
        process.stdin.flush()
        update = _frames_until(process, '"type":"tool_execution_update"')[-1]
        while "pgid=" not in json.dumps(update):
            update = _frames_until(process, '"type":"tool_execution_update"')[-1]
        text = update["partialResult"]["content"][0]["text"]  # type: ignore[index]
        pgid = int(text.split("pgid=")[1].split()[0])
        assert group_members(pgid)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 128 + signal.SIGTERM
        assert wait_gone(group_members(pgid), within=10) == []
    finally:
        _stop(process)
    fake_llm.reset()
