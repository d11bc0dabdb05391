"""Host-tool calls against the real process: round trips (S33, S34), parallel calls, validation and intent (S20, S21)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from conftest import Workspace, tool_defs, tool_results
from e2e.helpers import kinds, of_call, text_of
from e2e.host_tools import ECHO, HEX16, Frame, no_host_responses, spawn, text_result
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Host-tool scenarios run on both the OpenAI Chat Completions and the Anthropic Messages wire.
pytestmark = pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)


# ---- S33, S34: round trips ---------------------------------------------------------------------


async def test_s33_host_tool_round_trip_with_progress(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.tool_calls(("call_1", "echo_host", {"message": "hello"})), script.text("finished"))
    async with spawn(workspace) as client:
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("use the tool?")
        call = await client.wait_for_type("host_tool_call", since=start)
        host_id = call["id"]
        assert HEX16.fullmatch(host_id)
        assert call == {
            "type": "host_tool_call",
            "id": host_id,
            "toolCallId": "call_1",
            "toolName": "echo_host",
            "arguments": {"message": "hello"},
        }
        await client.wait_for(of_call("tool_execution_start", "call_1"), since=start)
        mark = client.mark()
        client.send_raw({"type": "host_tool_update", "id": host_id, "partialResult": text_result("working")})
        update = await client.wait_for_type("tool_execution_update", since=mark)
        assert update == {
            "type": "tool_execution_update",
            "toolCallId": "call_1",
            "toolName": "echo_host",
            "args": {"message": "hello"},
            "partialResult": {"content": [{"type": "text", "text": "working"}]},
        }
        result_mark = client.mark()
        client.send_raw(
            {"type": "host_tool_result", "id": host_id, "result": text_result("done", details={"k": 1})}
        )
        frames = await client.wait_for_idle(since=start)
    after = [f for f in client.frames[result_mark:] if f["type"] != "response"]
    assert kinds(after)[:5] == [
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "turn_start",
    ]
    assert after[0] == {
        "type": "tool_execution_end",
        "toolCallId": "call_1",
        "toolName": "echo_host",
        "result": {"content": [{"type": "text", "text": "done"}], "details": {"k": 1}},
        "isError": False,
        "isWarning": False,
    }
    tool_message = after[1]["message"]
    assert {
        k: tool_message[k] for k in ("role", "toolCallId", "toolName", "content", "details", "isError")
    } == {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "echo_host",
        "content": [{"type": "text", "text": "done"}],
        "details": {"k": 1},
        "isError": False,
    }
    assert [r["toolCallId"] for r in after[3]["toolResults"]] == ["call_1"]
    assert no_host_responses(frames)
    ends = [f for f in frames if f["type"] == "message_end" and f["message"]["role"] == "assistant"]
    assert ends[0]["message"]["stopReason"] == "toolUse" and text_of(ends[-1]["message"]) == "finished"
    assert tool_results(fake_llm.requests[1].json) == {"call_1": "done"}


async def test_s34_host_error_results_keep_only_their_text(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(
        script.tool_calls(("c1", "echo_host", {"message": "x"})),
        script.text("saw error"),
        script.tool_calls(("c2", "echo_host", {"message": "y"})),
        script.text("saw empty error"),
    )
    failing = {
        "content": [
            {"type": "text", "text": "line1"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "text", "text": "line2 "},
        ],
        "details": {"x": 1},
    }
    async with spawn(workspace) as client:
        await client.set_host_tools([ECHO])
        ends: list[Frame] = []
        for prompt, result in (("first?", failing), ("second?", {"content": []})):
            start = client.mark()
            await client.prompt(prompt)
            call = await client.wait_for_type("host_tool_call", since=start)
            client.send_raw({"type": "host_tool_result", "id": call["id"], "isError": True, "result": result})
            await client.wait_for_idle(since=start)
            ends.append(await client.wait_for_type("tool_execution_end", since=start))
    assert [e["isError"] for e in ends] == [True, True]
    assert ends[0]["result"] == {"content": [{"type": "text", "text": "line1\nline2"}], "details": {}}
    assert ends[1]["result"] == {
        "content": [{"type": "text", "text": "Host tool execution failed"}],
        "details": {},
    }


# ---- parallel calls answered out of order ---------------------------------------------------------


async def test_three_parallel_host_calls_answered_out_of_order_with_progress(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    names = ("alpha", "beta", "gamma")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    fake_llm.script(
        script.tool_calls(*[(f"c{i}", name, {"n": i}) for i, name in enumerate(names, 1)]),
        script.text("all done"),
    )
    release = {name: asyncio.Event() for name in names}

    def handler(name: str) -> Any:
        async def run(args: dict[str, Any], update: Any) -> str:
            update(text_result(f"{name} started"))
            await release[name].wait()
            update(text_result(f"{name} finishing"))
            return f"{name} result {args['n']}"

        return run

    async with spawn(workspace) as client:
        for name in names:
            client.on_host_tool(name, handler(name))
        await client.set_host_tools(
            [{"name": name, "description": f"the {name} tool", "parameters": schema} for name in names]
        )
        start = client.mark()
        await client.prompt("run all three?")
        # all three are in flight at once, each has reported progress
        for call_id in ("c1", "c2", "c3"):
            await client.wait_for(of_call("tool_execution_update", call_id), since=start)
        assert not [f for f in client.frames[start:] if f["type"] == "tool_execution_end"]
        for name, call_id in (("gamma", "c3"), ("alpha", "c1"), ("beta", "c2")):
            release[name].set()
            await client.wait_for(of_call("tool_execution_end", call_id), since=start)
        frames = await client.wait_for_idle(since=start)
    calls = [f for f in frames if f["type"] == "host_tool_call"]
    assert [c["arguments"] for c in calls] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert len({c["id"] for c in calls}) == 3
    updates = [
        (f["toolCallId"], text_of(f["partialResult"])) for f in frames if f["type"] == "tool_execution_update"
    ]
    for i, name in enumerate(names, 1):
        assert [u for u in updates if u[0] == f"c{i}"] == [
            (f"c{i}", f"{name} started"),
            (f"c{i}", f"{name} finishing"),
        ]
    ends = [f for f in frames if f["type"] == "tool_execution_end"]
    assert [(e["toolCallId"], e["isError"], text_of(e["result"])) for e in ends] == [
        ("c3", False, "gamma result 3"),
        ("c1", False, "alpha result 1"),
        ("c2", False, "beta result 2"),
    ]
    turn_end = next(f for f in frames if f["type"] == "turn_end")
    assert [r["toolCallId"] for r in turn_end["toolResults"]] == ["c3", "c1", "c2"]
    tool_messages = tool_results(fake_llm.requests[1].json)
    assert tool_messages == {"c1": "alpha result 1", "c2": "beta result 2", "c3": "gamma result 3"}
    assert no_host_responses(frames)


# ---- S20, S21: validation and intent ----------------------------------------------------------------


async def test_s20_unknown_tools_and_invalid_arguments_never_reach_the_host(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("c1", "nonexistent", {}), ("c2", "echo_host", {})), script.text("ok"))
    async with spawn(workspace) as client:
        await client.set_host_tools([ECHO])
        frames = await client.prompt_and_wait("go?")
    assert not [f for f in frames if f["type"] == "host_tool_call"]
    ends = {f["toolCallId"]: f for f in frames if f["type"] == "tool_execution_end"}
    assert ends["c1"]["isError"] is True and text_of(ends["c1"]["result"]) == "Tool nonexistent not found"
    assert ends["c2"]["isError"] is True
    assert text_of(ends["c2"]["result"]).startswith('Validation failed for tool "echo_host":')
    starts = [f["toolCallId"] for f in frames if f["type"] == "tool_execution_start"]
    assert sorted(starts) == ["c1", "c2"]
    assert text_of([f for f in frames if f["type"] == "message_end"][-1]["message"]) == "ok"


async def test_s21_intent_is_stripped_from_host_arguments_and_surfaced(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(("c1", "echo_host", {"_i": "  echo it ", "message": "hi"})), script.text("ok")
    )

    async def echo(args: dict[str, Any], update: Any) -> str:
        return str(args["message"])

    async with spawn(workspace) as client:
        client.on_host_tool("echo_host", echo)
        await client.set_host_tools([ECHO])
        frames = await client.prompt_and_wait("go?")
    start = next(f for f in frames if f["type"] == "tool_execution_start")
    assert start == {
        "type": "tool_execution_start",
        "toolCallId": "c1",
        "toolName": "echo_host",
        "args": {"message": "hi"},
        "intent": "echo it",
    }
    call = next(f for f in frames if f["type"] == "host_tool_call")
    assert call["arguments"] == {"message": "hi"}
    schema = tool_defs(fake_llm.requests[0].json)[0]["parameters"]
    assert next(iter(schema["properties"])) == "_i" and schema["properties"]["_i"]["type"] == "string"
    assert schema["required"][0] == "_i" and "message" in schema["required"]
