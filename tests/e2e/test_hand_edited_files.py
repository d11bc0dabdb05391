"""Project files a repository may hold in any shape (skills, commands, rules, context files):
the process starts without a traceback on stderr and a prompt still reaches the model
(docs/testing.md, "Round 3"). Each row broke this before its fix."""

from __future__ import annotations

import pytest

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

DEEP = b"[" * 5000 + b"]" * 5000

# (what is wrong, path under the project, content)
ROWS: list[tuple[str, str, bytes]] = [
    (
        "a skill whose front matter nests 5,000 levels",
        ".xcsh/skills/s1/SKILL.md",
        b"---\na: " + DEEP + b"\ndescription: d\n---\nbody\n",
    ),
    (  # this one stopped the start-up: exit status 1 before the ready frame
        "a command whose front matter nests 5,000 levels",
        ".xcsh/commands/c1.md",
        b"---\na: " + DEEP + b"\ndescription: d\n---\nbody $1\n",
    ),
]


@pytest.mark.parametrize(("name", "path", "content"), ROWS, ids=[row[0] for row in ROWS])
async def test_a_project_file_of_any_shape_neither_stops_nor_spills_a_traceback(
    workspace: Workspace, fake_llm: FakeLLM, name: str, path: str, content: bytes
) -> None:
    target = workspace.proj / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    fake_llm.script(script.text("ok"))
    args = ["--model", "fake/fake-model", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.call({"type": "get_commands"})
        await client.prompt_and_wait("hi?", timeout=60)
        answer = await client.get_last_assistant_text()
        tail = client.stderr_tail
    assert answer == "ok", name
    assert "Traceback" not in tail and "RecursionError" not in tail, tail
