"""A session file (or its whole folder) removed under a running process is written again, whole, at
the next entry, with a warning on stderr: no later entry goes to the deleted file (docs/fleet.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import Workspace
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _texts(path: Path) -> list[str]:
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return [
        e["message"]["content"][0]["text"]
        for e in entries
        if e["type"] == "message" and e["message"]["role"] in ("user", "assistant")
    ]


@pytest.mark.parametrize("removed", ["file", "folder"])
async def test_a_session_file_removed_while_open_is_written_again_with_every_entry(
    workspace: Workspace, fake_llm: FakeLLM, removed: str
) -> None:
    fake_llm.script(script.text("one"), script.text("two"))
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("first")
        path = Path((await client.get_state())["sessionFile"])
        if removed == "file":
            path.unlink()  # a cleanup job, or the user
        else:
            shutil.rmtree(workspace.sess)
        await client.prompt_and_wait("second")
        assert _texts(path) == ["first", "one", "second", "two"]
        # the file written again is locked again: another process cannot open it meanwhile
        other = run_xcsh(workspace, *args, "--session", str(path), "-p", "third")
        assert other.returncode == 1 and b"already open for writing" in other.stderr
        await client.close(timeout=30)
        assert "writing it again" in client.stderr_tail
    assert _texts(path) == ["first", "one", "second", "two"]
