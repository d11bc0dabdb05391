"""Temp files a process killed mid-rewrite of its session left behind are removed by the next
process that opens that session (and holds its lock) — never while another process holds it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import Workspace
from e2e.helpers import write_linear_session
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

NAME = "2026-01-01T00-00-00-000Z_0000000000000001.jsonl"
OTHER = "2026-01-01T00-00-00-000Z_0000000000000002.jsonl"


def _leftovers(sess: Path) -> tuple[Path, Path, Path]:
    """What a writer killed between writing its temp file and renaming it leaves (the temp name
    of the session's writer), one for another session, and a file that only looks alike."""
    stale = sess / f".{NAME}.0123456789ab.tmp"
    other = sess / f".{OTHER}.0123456789ab.tmp"
    alike = sess / f".{NAME}.notours.tmp"
    for path in (stale, other, alike):
        path.write_text('{"type":"session"}\n' * 1000)
    return stale, other, alike


def _print_on(ws: Workspace, session: Path) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-m", "xcsh", "--model", "fake/fake-model", "--no-tools"]
    return subprocess.run(
        [*argv, "--session", str(session), "-p", "go on"],
        cwd=ws.proj,
        env=ws.env,
        capture_output=True,
        timeout=60,
    )


def test_opening_a_session_removes_the_temp_files_a_killed_writer_left_beside_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    session = workspace.sess / NAME
    write_linear_session(session, workspace.proj, 4)
    stale, other, alike = _leftovers(workspace.sess)
    fake_llm.script(script.text("done"))
    result = _print_on(workspace, session)
    assert (result.returncode, result.stdout) == (0, b"done\n")
    assert not stale.exists()
    assert other.exists() and alike.exists()  # another session's, and not a temp name of ours


def test_a_process_that_cannot_take_the_lock_leaves_the_holders_temp_files(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    session = workspace.sess / NAME
    write_linear_session(session, workspace.proj, 4)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xcsh",
            "--mode",
            "rpc",
            "--model",
            "fake/fake-model",
            "--session",
            str(session),
        ],
        cwd=workspace.proj,
        env=workspace.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert b'"type":"ready"' in holder.stdout.readline()  # the holder has the lock
        live, _, _ = _leftovers(workspace.sess)  # as if the holder were rewriting the file now
        result = _print_on(workspace, session)
        assert result.returncode == 1 and b"close it there" in result.stderr  # locked
        assert live.exists()
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
