"""Host tools against the real process: scenarios S15, S16, S18, S20, S21, S31–S36 and parallel calls."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from conftest import BASE_ARGS, Workspace, tool_defs, tool_results
from e2e.helpers import kinds, text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Host-tool scenarios run on both the OpenAI Chat Completions and the Anthropic Messages wire.
pytestmark = pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)

Frame = dict[str, Any]

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
    "additionalProperties": False,
}
ECHO = {"name": "echo_host", "label": "Echo Host", "description": "Echo a value", "parameters": ECHO_SCHEMA}
HEX16 = re.compile(r"[0-9a-f]{16}")


def spawn(ws: Workspace, *extra: str) -> Any:
    return RpcClient.spawn(args=[*BASE_ARGS, *extra], cwd=ws.proj, env=ws.env)


def text_result(text: str, **extra: Any) -> Frame:
    return {"content": [{"type": "text", "text": text}], **extra}


def of_call(kind: str, call_id: str) -> Any:
    return lambda f: f.get("type") == kind and f.get("toolCallId") == call_id


def no_host_responses(frames: list[Frame]) -> bool:
    """No response frame was written for host_tool_update / host_tool_result lines."""
    return not [
        f
        for f in frames
        if f["type"] == "response" and f.get("command") in ("host_tool_result", "host_tool_update", "parse")
    ]


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


# ---- S15, S16: steering while host tools run -----------------------------------------------------


async def _two_calls_then_steer(client: RpcClient) -> tuple[int, dict[str, str]]:
    await client.set_host_tools([ECHO])
    start = client.mark()
    await client.prompt("go?")
    calls = {}
    for call_id in ("c1", "c2"):
        calls[call_id] = (await client.wait_for(of_call("host_tool_call", call_id), since=start))["id"]
    await client.steer("stop after this")
    return start, calls


def _two_host_calls(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        script.tool_calls(("c1", "echo_host", {"message": "a"}), ("c2", "echo_host", {"message": "b"})),
        script.text("done"),
    )


async def test_s15_steering_in_wait_mode_lets_every_host_tool_finish(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _two_host_calls(fake_llm)
    async with spawn(workspace) as client:
        start, calls = await _two_calls_then_steer(client)
        client.send_raw({"type": "host_tool_result", "id": calls["c1"], "result": text_result("ra")})
        await client.wait_for(of_call("tool_execution_end", "c1"), since=start)
        client.send_raw({"type": "host_tool_result", "id": calls["c2"], "result": text_result("rb")})
        frames = await client.wait_for_idle(since=start)
    frames = [f for f in frames if f["type"] not in ("response", "message_update")]
    assert not [f for f in frames if f["type"] == "host_tool_cancel"]
    ends = [f for f in frames if f["type"] == "tool_execution_end"]
    assert [(e["toolCallId"], e["isError"], text_of(e["result"])) for e in ends] == [
        ("c1", False, "ra"),
        ("c2", False, "rb"),
    ]
    turn_end = next(i for i, f in enumerate(frames) if f["type"] == "turn_end")
    assert [r["toolCallId"] for r in frames[turn_end]["toolResults"]] == ["c1", "c2"]
    nxt = frames[turn_end + 1 : turn_end + 4]
    assert kinds(nxt) == ["turn_start", "message_start", "message_end"]
    assert nxt[1]["message"]["role"] == "user" and text_of(nxt[1]["message"]) == "stop after this"
    assert kinds(frames)[-3:] == ["message_end", "turn_end", "agent_end"]
    assert text_of(frames[-3]["message"]) == "done"


async def test_s16_steering_in_immediate_mode_cancels_the_running_host_tool(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _two_host_calls(fake_llm)
    async with spawn(workspace) as client:
        await client.set_interrupt_mode("immediate")
        start, calls = await _two_calls_then_steer(client)
        result_mark = client.mark()
        client.send_raw({"type": "host_tool_result", "id": calls["c1"], "result": text_result("ra")})
        await client.wait_for_idle(since=start)
        late_mark = client.mark()
        client.send_raw({"type": "host_tool_result", "id": calls["c2"], "result": text_result("late")})
        await client.get_state()
        assert [f["type"] for f in client.frames[late_mark:]] == ["response"]
    frames = [f for f in client.frames[result_mark:] if f["type"] not in ("response", "message_update")]
    assert kinds(frames)[:10] == [
        "tool_execution_end",
        "message_start",
        "message_end",
        "host_tool_cancel",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "turn_start",
        "message_start",
    ]
    assert frames[0]["toolCallId"] == "c1" and frames[0]["isError"] is False
    assert frames[0]["result"] == {"content": [{"type": "text", "text": "ra"}]}
    cancel = frames[3]
    assert set(cancel) == {"type", "id", "targetId"} and cancel["targetId"] == calls["c2"]
    assert HEX16.fullmatch(cancel["id"]) and cancel["id"] not in calls.values()
    skipped = {"content": [{"type": "text", "text": "Skipped due to queued user message."}], "details": {}}
    assert frames[4]["toolCallId"] == "c2" and frames[4]["isError"] is True and frames[4]["result"] == skipped
    assert frames[6]["message"]["isError"] is True and frames[6]["message"]["content"] == skipped["content"]
    assert [r["toolCallId"] for r in frames[7]["toolResults"]] == ["c1", "c2"]
    assert text_of(frames[9]["message"]) == "stop after this"
    assert kinds(frames)[-1] == "agent_end"


# ---- S18 and abort with several host calls pending -------------------------------------------------


async def test_s18_abort_during_a_host_tool_call_cancels_it(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.tool_calls(("c1", "echo_host", {"message": "x"})))
    async with spawn(workspace) as client:
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("go?")
        call = await client.wait_for_type("host_tool_call", since=start)
        abort_mark = client.mark()
        response = await client.request({"id": "ab", "type": "abort"})
        assert response == {"id": "ab", "type": "response", "command": "abort", "success": True}
        assert (await client.get_state())["isStreaming"] is False
    frames = [f for f in client.frames[abort_mark:] if f["type"] != "message_update"]
    assert frames[0] == {"type": "host_tool_cancel", "id": frames[0]["id"], "targetId": call["id"]}
    assert frames[1] == {
        "type": "tool_execution_end",
        "toolCallId": "c1",
        "toolName": "echo_host",
        "result": {"content": [{"type": "text", "text": 'Host tool "echo_host" was aborted'}], "details": {}},
        "isError": True,
        "isWarning": False,
    }
    abort_at = next(i for i, f in enumerate(frames) if f.get("id") == "ab")
    sequence = kinds(frames[: abort_at + 1])
    assert sequence[2:5] == ["message_start", "message_end", "turn_end"]
    # the second, empty aborted turn is reference behaviour derived from code reading only
    assert sequence[5:] in (
        ["agent_end", "response"],
        ["turn_start", "message_start", "message_end", "turn_end", "agent_end", "response"],
    )
    if sequence[5] == "turn_start":
        aborted = frames[7]["message"]
        assert aborted["content"] == [] and aborted["stopReason"] == "aborted"
        assert aborted["errorMessage"] == "Request was aborted"
    assert len(fake_llm.requests) == 1


async def test_abort_while_the_host_never_answers_cancels_every_pending_call(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(
            ("c1", "echo_host", {"message": "a"}),
            ("c2", "echo_host", {"message": "b"}),
            ("c3", "echo_host", {"message": "c"}),
        )
    )
    async with spawn(workspace) as client:
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("go?")
        calls = {}
        for call_id in ("c1", "c2", "c3"):
            calls[(await client.wait_for(of_call("host_tool_call", call_id), since=start))["id"]] = call_id
        abort_mark = client.mark()
        await client.abort()
        cancels = [f for f in client.frames[abort_mark:] if f["type"] == "host_tool_cancel"]
        late_mark = client.mark()
        for host_id in calls:
            client.send_raw({"type": "host_tool_result", "id": host_id, "result": text_result("late")})
        state = await client.get_state()
        assert [f["type"] for f in client.frames[late_mark:]] == ["response"]
    assert sorted(c["targetId"] for c in cancels) == sorted(calls)
    assert len({c["id"] for c in cancels} | set(calls)) == 6
    after = client.frames[abort_mark:]
    ends = [f for f in after if f["type"] == "tool_execution_end"]
    assert sorted(e["toolCallId"] for e in ends) == ["c1", "c2", "c3"]
    assert {text_of(e["result"]) for e in ends} == {'Host tool "echo_host" was aborted'}
    assert all(e["isError"] for e in ends)
    last_cancel = max(i for i, f in enumerate(after) if f["type"] == "host_tool_cancel")
    assert kinds(after).index("agent_end") > last_cancel
    assert state["isStreaming"] is False and len(fake_llm.requests) == 1


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
