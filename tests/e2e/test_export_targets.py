"""An export never replaces a session file or a session's lock file (review 1 of the eighth session, D1).

The real process: ``export_html`` with ``outputPath`` naming the open session file, another
session file or the open session's ``.lock`` is refused with its id and writes nothing, and the
session keeps every later entry; ``xcsh --export a.jsonl a.jsonl`` fails the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Workspace
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _args(ws: Workspace, *extra: str) -> list[str]:
    return ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(ws.sess), *extra]


def _texts(path: Path) -> list[str]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session"
    return [
        block["text"]
        for e in lines[1:]
        if e["type"] == "message"
        for block in e["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "text"
    ]


async def test_export_html_refuses_the_open_session_file_another_session_and_the_lock_file(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("other"), script.text("a1"), script.text("a2"))
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as other:
        await other.prompt_and_wait("other session?")
        other_file = Path((await other.get_state())["sessionFile"])
    other_bytes = other_file.read_bytes()
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("q1?")
        own = Path((await client.get_state())["sessionFile"])
        lock = own.with_name(own.name + ".lock")
        lock_bytes = lock.read_bytes()
        answers: list[dict[str, Any]] = []
        for n, target in enumerate((str(own), str(other_file), str(lock))):
            answers.append(await client.request({"id": f"e{n}", "type": "export_html", "outputPath": target}))
        await client.prompt_and_wait("q2?")
    assert [a["success"] for a in answers] == [False, False, False]
    assert [a["id"] for a in answers] == ["e0", "e1", "e2"]
    assert "this session's file" in answers[0]["error"]
    assert "is a session file" in answers[1]["error"]
    assert "lock file" in answers[2]["error"]
    assert _texts(own) == ["q1?", "a1", "q2?", "a2"]
    assert other_file.read_bytes() == other_bytes
    assert lock_bytes.strip().isdigit()


def test_cli_export_refuses_to_overwrite_its_own_source(workspace: Workspace, fake_llm: FakeLLM) -> None:
    source = workspace.proj / "exp.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/",
    }
    source.write_text(json.dumps(header) + "\n")
    before = source.read_bytes()
    result = run_xcsh(workspace, "--export", "exp.jsonl", "exp.jsonl")
    assert result.returncode == 1
    assert b"Refusing to export to exp.jsonl" in result.stderr and result.stdout == b""
    assert source.read_bytes() == before
