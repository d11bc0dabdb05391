"""Host tools against the real process: registration (S31, S32), stray frames and EOF (S35, S36)."""

from __future__ import annotations

import pytest

from conftest import BASE_ARGS, Workspace, tool_defs
from e2e.host_tools import ECHO, ECHO_SCHEMA, spawn
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Host-tool scenarios run on both the OpenAI Chat Completions and the Anthropic Messages wire.
pytestmark = pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)


# ---- S31, S32: registration ------------------------------------------------------------------


async def test_s31_invalid_host_tool_lists_get_the_exact_parse_errors(workspace: Workspace) -> None:
    cases = [
        (
            [{"name": "  ", "description": "d", "parameters": {}}],
            "Host tool at index 0 must provide a non-empty name",
        ),
        (
            [{"name": "a", "description": " ", "parameters": {}}],
            'Host tool "a" must provide a non-empty description',
        ),
        (
            [{"name": "a", "description": "d", "parameters": []}],
            'Host tool "a" must provide a JSON Schema object',
        ),
        (
            [
                {"name": "a", "description": "d", "parameters": {}},
                {"name": "a", "description": "e", "parameters": {}},
            ],
            "RPC host tool names must be unique",
        ),
        (
            [{"name": "read", "description": "d", "parameters": {"type": "object"}}],
            'RPC host tool "read" conflicts with an existing tool',
        ),
    ]
    async with spawn(workspace) as client:
        for tools, error in cases:
            mark = client.mark()
            client.send_raw({"id": "h", "type": "set_host_tools", "tools": tools})
            frame = await client.wait_for_type("response", since=mark)
            assert frame == {
                "type": "response",
                "command": "parse",
                "success": False,
                "error": f"Failed to parse command: {error}",
            }
        state = await client.get_state()
    assert state["dumpTools"] == []


async def test_set_host_tools_without_a_tools_array_is_a_parse_error(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        response = await client.request({"type": "set_host_tools", "tools": {"name": "x"}})
    assert response["command"] == "parse" and response["success"] is False
    assert response["error"].startswith("Failed to parse command: ") and "id" not in response


async def test_s32_registration_replacement_and_hidden_tools(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("hello"))
    tools = [
        {
            "name": " echo_host ",
            "label": "Echo Host",
            "description": " Echo a value ",
            "parameters": ECHO_SCHEMA,
        },
        {"name": "secret_tool", "description": "hidden", "parameters": {"type": "object"}, "hidden": True},
    ]
    async with spawn(workspace) as client:
        response = await client.request({"id": "r", "type": "set_host_tools", "tools": tools})
        assert response == {
            "id": "r",
            "type": "response",
            "command": "set_host_tools",
            "success": True,
            "data": {"toolNames": ["echo_host", "secret_tool"]},
        }
        dump = (await client.get_state())["dumpTools"]
        assert dump == [{"name": "echo_host", "description": "Echo a value", "parameters": ECHO_SCHEMA}]
        await client.prompt_and_wait("hi?")
        response = await client.request({"id": "r2", "type": "set_host_tools", "tools": []})
        assert response["data"] == {"toolNames": []}
        assert (await client.get_state())["dumpTools"] == []
    sent = [t["name"] for t in tool_defs(fake_llm.requests[0].json)]
    assert sent == ["echo_host"]


async def test_kept_host_tools_keep_their_state_and_registering_twice_is_no_conflict(
    workspace: Workspace,
) -> None:
    hidden = {"name": "quiet", "description": "q", "parameters": {"type": "object"}, "hidden": True}
    async with spawn(workspace) as client:
        assert await client.set_host_tools([ECHO, hidden]) == ["echo_host", "quiet"]
        # the same names again: not a conflict with themselves; quiet stays inactive even unhidden
        unhidden = {**hidden, "hidden": False}
        assert await client.set_host_tools([unhidden, ECHO]) == ["quiet", "echo_host"]
        names = [t["name"] for t in (await client.get_state())["dumpTools"]]
    assert names == ["echo_host"]


# ---- S35, S36: stray frames and EOF ------------------------------------------------------------


async def test_s35_stray_frames_are_ignored_and_malformed_ones_are_unknown_commands(
    workspace: Workspace,
) -> None:
    async with spawn(workspace) as client:
        mark = client.mark()
        client.send_raw({"type": "host_tool_result", "id": "unknown", "result": {"content": []}})
        client.send_raw({"type": "host_tool_update", "id": "unknown", "partialResult": {"content": []}})
        await client.get_state()
        assert [f["type"] for f in client.frames[mark:]] == ["response"]
        mark = client.mark()
        client.send_raw({"type": "host_tool_result", "id": "x", "result": {"text": "no content array"}})
        frame = await client.wait_for_type("response", since=mark)
    assert frame == {
        "type": "response",
        "command": "host_tool_result",
        "success": False,
        "error": "Unknown command: host_tool_result",
    }


async def test_s36_host_never_answers_and_closing_stdin_exits_with_zero(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("c1", "echo_host", {"message": "x"})))
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    try:
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("go?")
        await client.wait_for_type("host_tool_call", since=start)
        # no timeout exists: the run is still waiting for the host
        assert (await client.get_state())["isStreaming"] is True
        assert not [f for f in client.frames[start:] if f["type"] in ("tool_execution_end", "agent_end")]
    finally:
        code = await client.close()
    assert code == 0
