"""Scenarios S01–S10 (scenarios.md) against the real `xcsh --mode rpc` process: framing, the ready frame, simple runs."""

from __future__ import annotations

import pytest

from conftest import BASE_ARGS, Workspace, roles, user_texts
from e2e.helpers import MODEL_KEYS, assert_run, run_xcsh, spawn_client
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Every scenario here runs on two wires: OpenAI Chat Completions and Anthropic Messages.
pytestmark = pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)


async def test_s01_ready_frame_comes_first_and_initial_state_has_every_field(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        assert client.frames[0]["type"] == "ready" and isinstance(client.frames[0]["version"], str)
        state = await client.get_state()
    model = state["model"]
    assert set(model) >= MODEL_KEYS
    assert (model["id"], model["provider"], model["api"]) == ("fake-model", "fake", workspace.api)
    assert model["input"] == ["text"] and model["contextWindow"] == 128000 and model["maxTokens"] == 4096
    assert model["cost"] == {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    expected = {
        "isStreaming": False,
        "isCompacting": False,
        "steeringMode": "one-at-a-time",
        "followUpMode": "one-at-a-time",
        "interruptMode": "wait",
        "autoCompactionEnabled": True,
        "messageCount": 0,
        "queuedMessageCount": 0,
        "todoPhases": [],
        "dumpTools": [],
        "thinkingLevel": "off",
    }
    assert {k: state[k] for k in expected} == expected
    assert isinstance(state["sessionId"], str) and state["sessionId"]
    assert "sessionFile" not in state and "sessionName" not in state
    assert isinstance(state["systemPrompt"], str)


async def test_s02_responses_echo_the_id_and_omit_it_when_absent(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        response = await client.request({"id": "x-1", "type": "set_steering_mode", "mode": "all"})
        assert response == {"id": "x-1", "type": "response", "command": "set_steering_mode", "success": True}
        mark = client.mark()
        client.send_raw({"type": "set_steering_mode", "mode": "one-at-a-time"})
        frame = await client.wait_for_type("response", since=mark)
    assert frame == {"type": "response", "command": "set_steering_mode", "success": True}


async def test_s03_unknown_commands_are_answered_without_id(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        mark = client.mark()
        client.send_raw({"id": "u1", "type": "frobnicate"})
        client.send_raw({"id": "u2", "foo": 1})
        first = await client.wait_for_type("response", since=mark)
        second = await client.wait_for_type("response", since=client.frames.index(first) + 1)
    assert first == {
        "type": "response",
        "command": "frobnicate",
        "success": False,
        "error": "Unknown command: frobnicate",
    }
    assert second == {"type": "response", "success": False, "error": "Unknown command: undefined"}


async def test_s04_malformed_json_gets_a_parse_error_and_blank_lines_are_ignored(
    workspace: Workspace,
) -> None:
    async with spawn_client(workspace) as client:
        mark = client.mark()
        client.send_raw(b'{"id":"bad", "type": "get_state"\n\n   \n')
        await client.wait_for_type("response", since=mark)
        response = await client.request({"id": "ok", "type": "get_state"})
        frames = [f for f in client.frames[mark:] if f["type"] == "response"]
    assert frames[0]["command"] == "parse" and frames[0]["success"] is False
    assert frames[0]["error"].startswith("Failed to parse command: ") and "id" not in frames[0]
    assert len(frames) == 2 and response["id"] == "ok" and response["success"] is True


async def test_s05_stdin_eof_exits_with_status_zero(workspace: Workspace) -> None:
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    response = await client.request({"id": "a", "type": "get_state"})
    assert response["success"] is True
    assert await client.close() == 0


def test_s06_file_arguments_are_rejected_before_any_output(workspace: Workspace) -> None:
    result = run_xcsh(workspace, "--mode", "rpc", *BASE_ARGS, "@notes.txt")
    assert result.returncode == 1
    assert b"@file arguments are not supported in RPC mode" in result.stderr
    assert result.stdout == b""


async def test_s07_simple_prompt_streams_the_standard_run(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("Hello there."))
    async with spawn_client(workspace) as client:
        mark = client.mark()
        ack = await client.request({"id": "p1", "type": "prompt", "message": "Say hello?"})
        assert ack == {"id": "p1", "type": "response", "command": "prompt", "success": True}
        frames = await client.wait_for_idle(since=mark)
    events = [f for f in frames if f["type"] != "response"]
    assert_run(events, "Say hello?", "Hello there.", workspace.api)
    user = events[2]["message"]
    assert user["attribution"] == "user" and isinstance(user["timestamp"], int)
    final = [f for f in events if f["type"] == "message_end"][-1]["message"]
    assert {"input", "output", "cacheRead", "cacheWrite", "totalTokens"} <= set(final["usage"])
    assert "total" in final["usage"]["cost"]
    assert len(events[-1]["messages"]) == 2
    assert len(fake_llm.requests) == 1
    assert roles(fake_llm.requests[0].json)[-1] == "user"
    assert user_texts(fake_llm.requests[0].json)[-1] == "Say hello?"


async def test_s08_getters_after_a_run(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("Hello there."))
    async with spawn_client(workspace) as client:
        await client.prompt_and_wait("Say hello?")
        messages = await client.get_messages()
        last = await client.get_last_assistant_text()
        stats = await client.get_session_stats()
        state = await client.get_state()
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"] == [{"type": "text", "text": "Hello there."}]
    assert last == "Hello there."
    assert {
        k: stats[k]
        for k in ("userMessages", "assistantMessages", "toolCalls", "toolResults", "totalMessages")
    } == {
        "userMessages": 1,
        "assistantMessages": 1,
        "toolCalls": 0,
        "toolResults": 0,
        "totalMessages": 2,
    }
    tokens = stats["tokens"]
    assert tokens["total"] == tokens["input"] + tokens["output"] + tokens["cacheRead"] + tokens["cacheWrite"]
    assert stats["premiumRequests"] == 0 and stats["cost"] == 0 and "sessionFile" not in stats
    assert state["messageCount"] == 2 and state["isStreaming"] is False


async def test_s09_last_assistant_text_is_empty_data_before_any_answer(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        response = await client.request({"id": "t", "type": "get_last_assistant_text"})
    assert response["data"] in ({}, {"text": None})
    assert response["command"] == "get_last_assistant_text" and response["success"] is True


async def test_s10_prompt_images_follow_the_text_in_the_user_message(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("A red pixel."))
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    async with spawn_client(workspace) as client:
        frames = await client.prompt_and_wait("describe?", images=[image])
    user = next(f for f in frames if f["type"] == "message_start")["message"]
    assert user["content"] == [{"type": "text", "text": "describe?"}, image]


async def test_wrong_field_types_are_parse_errors_and_the_process_keeps_serving(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        mark = client.mark()
        client.send_raw({"id": "w", "type": "set_model", "provider": 5, "modelId": None})
        frame = await client.wait_for_type("response", since=mark)
        alive = await client.get_state()
    assert frame["command"] == "parse" and frame["error"].startswith("Failed to parse command: ")
    assert "id" not in frame and alive["isStreaming"] is False
