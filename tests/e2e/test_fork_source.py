"""``--fork <path>`` only reads its source (review 1 of the eighth session, D4).

The real process: a mistyped source path fails with ``Cannot fork: …`` and leaves no file
behind; a session open in another process can be forked (its lock is not taken) and keeps
appending; an old-version source is migrated in memory, its file left byte-identical.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import Workspace
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _args(ws: Workspace, *extra: str) -> list[str]:
    return ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(ws.sess), *extra]


def _run(ws: Workspace, *extra: str) -> subprocess.CompletedProcess[bytes]:
    return run_xcsh(ws, *_args(ws, *extra), "-p", "hello?")


def test_forking_a_missing_path_fails_and_creates_nothing(workspace: Workspace) -> None:
    missing = workspace.sess / "does-not-exist.jsonl"
    result = _run(workspace, "--fork", str(missing))
    assert result.returncode == 1 and result.stdout == b""
    assert f"Cannot fork: source session file is empty or invalid: {missing}".encode() in result.stderr
    assert not missing.exists()
    assert not any(workspace.sess.iterdir())


async def test_a_session_open_in_another_process_can_be_forked_and_keeps_its_writer(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"), script.text("b1"), script.text("a2"))
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as live:
        await live.prompt_and_wait("q1?")
        source = Path((await live.get_state())["sessionFile"])
        async with RpcClient.spawn(
            args=_args(workspace, "--fork", str(source)), cwd=workspace.proj, env=workspace.env
        ) as fork:
            forked = await fork.get_state()
            await fork.prompt_and_wait("in the fork?")
        await live.prompt_and_wait("q2?")
    assert forked["sessionFile"] != str(source) and forked["messageCount"] == 2
    texts = [
        e["message"]["content"][0]["text"]
        for e in map(json.loads, source.read_text().splitlines()[1:])
        if e["type"] == "message"
    ]
    assert texts == ["q1?", "a1", "q2?", "a2"]


def test_forking_an_old_version_file_leaves_the_source_byte_identical(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("answer"))
    source = workspace.sess / "v1.jsonl"
    rows = [
        {
            "type": "session",
            "id": "old1",
            "timestamp": "2025-01-01T00:00:00.000Z",
            "cwd": str(workspace.proj),
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "q1"}], "timestamp": 1},
        },
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = source.read_bytes()
    result = _run(workspace, "--fork", str(source))
    assert result.returncode == 0, result.stderr
    assert source.read_bytes() == before
    forks = [p for p in workspace.sess.glob("*.jsonl") if p != source]
    assert len(forks) == 1
    lines = [json.loads(line) for line in forks[0].read_text().splitlines()]
    assert lines[0]["version"] == 3 and lines[0]["parentSession"] == "old1"
    assert [e["message"]["content"][0]["text"] for e in lines[1:] if e["type"] == "message"][:1] == ["q1"]
