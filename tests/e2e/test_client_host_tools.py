"""The typed clients' side of host tools (rpc-protocol §7.4): every call gets an answer.

The server waits for a host tool's result without a timeout (§7.3), so a call the client
leaves unanswered hangs the run until the host aborts it (review 3 D4).
"""

from __future__ import annotations

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

LOOKUP = {
    "name": "lookup",
    "description": "Look a word up",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
}


async def test_a_host_tool_call_without_a_handler_is_answered_as_not_registered(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("c1", "lookup", {"q": "x"})), script.text("done"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        await client.set_host_tools([LOOKUP])  # registered with the agent, but no on_host_tool
        frames = await client.prompt_and_wait("use lookup", timeout=30)
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert end["result"] == {
        "content": [{"type": "text", "text": 'Host tool "lookup" is not registered'}],
        "details": {},
    }
    assert frames[-1]["type"] == "agent_end"
