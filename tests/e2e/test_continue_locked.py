"""``--continue`` when the most recent session is open in another process (review 1 of the
eighth session, D6).

One writer per session file stays (``sessions/lock.py``), but a second window's ``--continue``
no longer fails start-up: it continues the most recent session not open elsewhere, or starts a
new one, and says which on stderr. The first process keeps its file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import Workspace
from e2e.helpers import write_linear_session
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _args(ws: Workspace, *extra: str) -> list[str]:
    return ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(ws.sess), *extra]


async def test_continue_takes_the_next_most_recent_session_when_the_newest_is_open_elsewhere(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"), script.text("a2"))
    older = workspace.sess / "2026-01-01T00-00-00-000Z_older.jsonl"
    write_linear_session(older, workspace.proj, 2, lambda i: f"old {i}")
    os.utime(older, (1_700_000_000, 1_700_000_000))
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as first:
        await first.prompt_and_wait("q1?")
        newest = (await first.get_state())["sessionFile"]
        async with RpcClient.spawn(
            args=_args(workspace, "--continue"), cwd=workspace.proj, env=workspace.env
        ) as second:
            continued = await second.get_state()
        await first.prompt_and_wait("q2?")
    assert continued["sessionFile"] == str(older) and continued["messageCount"] == 2
    assert f"the most recent session {newest} is open in process" in second.stderr_tail
    assert f"continuing the most recent session not open elsewhere, {older}" in second.stderr_tail
    texts = [json.loads(line) for line in Path(newest).read_text().splitlines()[1:]]
    assert [e["message"]["content"][0]["text"] for e in texts if e["type"] == "message"] == [
        "q1?",
        "a1",
        "q2?",
        "a2",
    ]


async def test_continue_starts_a_new_session_when_every_session_is_open_elsewhere(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"))
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as first:
        await first.prompt_and_wait("q1?")
        newest = (await first.get_state())["sessionFile"]
        async with RpcClient.spawn(
            args=_args(workspace, "--continue"), cwd=workspace.proj, env=workspace.env
        ) as second:
            fresh = await second.get_state()
    assert fresh["sessionFile"] != newest and fresh["messageCount"] == 0
    assert f"the most recent session {newest} is open in process" in second.stderr_tail
    assert "starting a new session" in second.stderr_tail
