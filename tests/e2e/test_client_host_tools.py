"""The typed clients' side of host tools (rpc-protocol §7.4): a call nobody will answer gets an answer.

The server waits for a host tool's result without a timeout (§7.3), so a call for a tool the
client never registered is answered "not registered" (review 3 D4), while a registered tool
without a handler stays the host's to answer with ``send_raw`` (review 8 D1); a plain-function
handler of the blocking client runs in a worker thread, and its progress updates must still
be written by the client's loop (review 3 D5).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import xcsh
from conftest import BASE_ARGS, Workspace
from xcsh.coding.host_tools import set_host_tools
from xcsh.rpc.client import RpcClient
from xcsh.rpc.sync_client import SyncRpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

LOOKUP = {
    "name": "lookup",
    "description": "Look a word up",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
}


async def test_a_host_tool_registered_without_a_handler_is_left_for_the_host_to_answer(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # a host written for the client before 4402adb: set_host_tools, then it answers the calls
    # itself with send_raw. The client answered "not registered" first, the agent took that
    # answer, and the host's real one was ignored (review 8 D1).
    fake_llm.script(script.tool_calls(("c1", "lookup", {"q": "x"})), script.text("done"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        await client.set_host_tools([LOOKUP])
        start = client.mark()
        await client.prompt("use lookup")
        call = await client.wait_for_type("host_tool_call", since=start, timeout=30)
        answer = {"content": [{"type": "text", "text": "the host's answer"}], "details": {}}
        client.send_raw({"type": "host_tool_result", "id": call["id"], "result": answer})
        frames = await client.wait_for_idle(since=start, timeout=30)
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    assert end["isError"] is False
    assert end["result"] == answer
    sent = fake_llm.requests[1].json
    assert "the host's answer" in json.dumps(sent)
    assert "is not registered" not in json.dumps(sent)


async def test_a_call_for_a_host_tool_this_client_never_registered_is_answered_as_not_registered(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the tool was installed on the in-process core, not with a set_host_tools of this client:
    # nobody will answer its calls and the server waits for ever (rpc-protocol §7.3), so the
    # client answers as the reference clients do (§7.4; review 3 D4)
    fake_llm.script(script.tool_calls(("c1", "lookup", {"q": "x"})), script.text("done"))
    async with xcsh.open_session(
        cwd=workspace.proj,
        args=["--model", "fake/fake-model", "--no-session", "--no-tools"],
        agent_dir=workspace.agent,
        env=workspace.env,
    ) as session:
        set_host_tools(session.core, [LOOKUP])
        frames = await session.prompt_and_wait("use lookup", timeout=30)
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
