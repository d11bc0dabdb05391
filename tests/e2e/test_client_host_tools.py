"""The typed clients' side of host tools (rpc-protocol §7.4): every call gets an answer.

The server waits for a host tool's result without a timeout (§7.3), so a call the client
leaves unanswered hangs the run until the host aborts it (review 3 D4); a plain-function
handler of the blocking client runs in a worker thread, and its progress updates must still
be written by the client's loop (review 3 D5).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient
from xcsh.rpc.sync_client import SyncRpcClient
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


def test_progress_from_a_plain_function_handler_of_the_sync_client_never_breaks_the_tool(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # large updates fill the pipe: written from the worker thread while the loop wrote too, an
    # update raised BufferError and the tool failed ("Existing exports of data …")
    fake_llm.script(script.tool_calls(("c1", "big", {})), script.text("done"))
    big = {"name": "big", "description": "Big", "parameters": {"type": "object", "properties": {}}}
    chunks = 60

    def handler(args: dict[str, Any], update: Callable[[dict[str, Any]], None]) -> str:
        for i in range(chunks):
            update({"content": [{"type": "text", "text": f"chunk {i} " + "z" * 300_000}]})
        return "finished"

    # the agent at the lowest priority reads more slowly than we write: the pipe fills
    slow = ["nice", "-n", "19", sys.executable, "-P", "-m", "xcsh"]
    with SyncRpcClient(
        args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, command=slow, timeout=60
    ) as client:
        client.set_host_tools([big])
        client.on_host_tool("big", handler)
        frames = client.prompt_and_wait("go", timeout=120)
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    assert end["isError"] is False
    assert end["result"]["content"] == [{"type": "text", "text": "finished"}]
    updates = [f for f in frames if f["type"] == "tool_execution_update"]
    assert [u["partialResult"]["content"][0]["text"].rsplit(" ", 1)[0] for u in updates] == [
        f"chunk {i}" for i in range(chunks)
    ]
