"""Nothing lost once acknowledged, nothing overwritten that is not ours, nothing readable by others.

The real ``xcsh`` process: a kill right after the prompt's ``message_end`` leaves the prompt on
disk; ``-r`` / ``switch_session`` on a file that is not a session refuse and leave it
byte-identical; session files, locks and exports are ``0600`` in ``0700`` directories.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Workspace
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

NOTES = b"# My notes\n\nNot a session: keep me exactly as I am.\n\xa5 even this byte\n"


def _args(ws: Workspace, *extra: str) -> list[str]:
    return ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(ws.sess), *extra]


async def test_a_kill_right_after_the_first_message_end_leaves_that_message_on_disk(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.hold("thinking about it"))
    client = await RpcClient.start(args=_args(workspace), cwd=workspace.proj, env=workspace.env)
    session_file = Path((await client.get_state())["sessionFile"])
    mark = client.mark()
    await client.prompt("remember this prompt?")
    end = await client.wait_for_type("message_end", since=mark, timeout=30)
    client.process.kill()
    await client.process.wait()
    await client.close()
    assert end["message"]["role"] == "user"
    lines = [json.loads(line) for line in session_file.read_text().splitlines()]
    assert lines[0]["type"] == "session"
    stored = [e["message"] for e in lines[1:] if e["type"] == "message"]
    assert stored == [end["message"]]
    fake_llm.reset()  # the held answer was never consumed: the process was killed on purpose


async def test_a_session_that_never_had_a_message_leaves_no_file(workspace: Workspace) -> None:
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as client:
        session_file = Path((await client.get_state())["sessionFile"])
        await client.set_session_name("Named but empty")
    assert not session_file.exists()
    assert not workspace.sess.exists() or not any(workspace.sess.iterdir())


def test_resuming_a_file_that_is_not_a_session_refuses_and_leaves_it_byte_identical(
    workspace: Workspace,
) -> None:
    notes = workspace.proj / "notes.md"
    notes.write_bytes(NOTES)
    before = sorted(p.name for p in workspace.proj.iterdir())
    result = run_xcsh(workspace, *_args(workspace), "-r", "./notes.md", "-p", "summarise")
    assert result.returncode == 1
    assert b"notes.md is not a session file" in result.stderr
    assert result.stdout == b""
    assert notes.read_bytes() == NOTES
    assert sorted(p.name for p in workspace.proj.iterdir()) == before


async def test_switch_session_to_a_non_session_file_fails_with_its_id_and_changes_nothing(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    notes = workspace.proj / "notes.md"
    notes.write_bytes(NOTES)
    fake_llm.script(script.text("still here"))
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as client:
        before = await client.get_state()
        response = await client.request({"id": "s", "type": "switch_session", "sessionPath": str(notes)})
        assert response["id"] == "s" and response["success"] is False
        assert "is not a session file" in response["error"]
        assert (await client.get_state())["sessionFile"] == before["sessionFile"]
        await client.prompt_and_wait("are you still here?")
        assert await client.get_last_assistant_text() == "still here"
    assert notes.read_bytes() == NOTES
    assert sorted(p.name for p in workspace.proj.iterdir()) == ["notes.md"]


async def test_session_files_locks_and_exports_are_private(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("hi"))
    sessions = workspace.proj / "new" / "sessions"
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(sessions)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("hello?")
        session_file = Path((await client.get_state())["sessionFile"])
        lock = session_file.with_name(session_file.name + ".lock")
        assert lock.stat().st_mode & 0o777 == 0o600
        exported = workspace.proj / await client.export_html("out/session.html")
    assert session_file.stat().st_mode & 0o777 == 0o600
    assert exported.stat().st_mode & 0o777 == 0o600
    assert (workspace.proj / "new").stat().st_mode & 0o777 == 0o700
    assert sessions.stat().st_mode & 0o777 == 0o700
