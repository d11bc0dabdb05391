"""One-shot modes end quietly with the documented status when interrupted during start-up (130) or
when the reader of stdout has gone (141, as a process ended by SIGPIPE), never with a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading

from conftest import Workspace
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

ARGS = ["--model", "fake/fake-model", "--no-tools", "--session-dir"]


def _default_sigint() -> None:
    # a suite started in the background (`cmd &` in a script, as CI runners do) has SIGINT
    # ignored, and an ignored signal stays ignored across exec: the child would never see it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _spawn(ws: Workspace, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "xcsh", *ARGS, str(ws.sess), *args],
        cwd=ws.proj,
        env=ws.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )


def _finish(process: subprocess.Popen[bytes]) -> tuple[int, bytes]:
    """The exit status and stderr, bounded; kills the process on a timeout."""
    try:
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, err


def test_sigint_while_print_mode_still_reads_its_prompt_from_stdin_exits_130_quietly(
    workspace: Workspace,
) -> None:
    process = _spawn(workspace, "-p")  # no message: the prompt is read from stdin, before any handler
    assert process.stdin is not None
    # more than a pipe holds: once written, xcsh is inside its read of stdin (it waits for the end)
    writer = threading.Thread(target=process.stdin.write, args=(b"x" * (4 << 20),))
    writer.start()
    writer.join(60)
    assert not writer.is_alive()
    process.send_signal(signal.SIGINT)
    assert _finish(process) == (130, b"")


def test_json_mode_whose_reader_closed_stdout_after_the_header_exits_141_quietly(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    gate = script.Gate()
    fake_llm.script(script.hold("partial", gate))
    process = _spawn(workspace, "--mode", "json", "-p", "go")
    assert process.stdout is not None
    assert json.loads(process.stdout.readline())["type"] == "session"  # as `| head -1` reads it
    process.stdout.close()
    gate.release()  # the answer's frames (if the run got that far) find the reader gone
    assert _finish(process) == (141, b"")
    fake_llm.reset()  # the run may have ended before its request


def test_print_mode_whose_reader_has_gone_exits_141_quietly(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("the answer"))
    process = _spawn(workspace, "-p", "go")
    assert process.stdout is not None
    process.stdout.close()  # print mode writes stdout only at the end
    assert _finish(process) == (141, b"")
