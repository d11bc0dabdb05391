"""Over the real RPC process: a bash tool call's saved full output lives as long as the session."""

from __future__ import annotations

from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_the_full_output_file_named_in_a_bash_notice_is_removed_when_the_session_ends(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(("b1", "bash", {"command": "seq 1 30000"})),
        script.text("done"),
    )
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "bash"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("count")
        tool = next(m for m in fake_llm.requests[1].json["messages"] if m["role"] == "tool")
        notice = str(tool["content"]).rsplit("Full output: ", 1)[1]
        full = Path(notice.rstrip("]"))
        assert full.read_text().startswith("1\n2\n")  # readable while the session lives
    assert not full.exists() and not full.parent.exists()
