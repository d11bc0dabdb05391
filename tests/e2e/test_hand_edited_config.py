"""A settings file edited by hand with a value of the wrong kind: the process starts, and the
setting reads as its default, so a run still retries, compacts and answers (docs/testing.md,
"Round 3"). Each row broke the run before its fix."""

from __future__ import annotations

import pytest

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# (what is wrong, config.yml)
ROWS: list[tuple[str, str]] = [
    ("retries without end", "retry:\n  baseDelayMs: 1\n  maxRetries: .inf\n  transientMaxRetries: .inf\n"),
]


@pytest.mark.parametrize(("name", "config"), ROWS, ids=[row[0] for row in ROWS])
async def test_a_count_of_the_wrong_kind_reads_as_its_default(
    workspace: Workspace, fake_llm: FakeLLM, name: str, config: str
) -> None:
    workspace.config(config)
    fake_llm.script(script.http_error(529, "Overloaded"), script.text("the answer"))
    args = ["--model", "fake/fake-model", "--no-tools", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        frames = await client.prompt_and_wait("hi?", timeout=60)
        answer = await client.get_last_assistant_text()
    assert [f["attempt"] for f in frames if f["type"] == "auto_retry_start"] == [1], name
    assert answer == "the answer", name
