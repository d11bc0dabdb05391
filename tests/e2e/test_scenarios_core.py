"""Scenarios S01–S14, S17, S19, S22–S27 (scenarios.md) against the real `xcsh --mode rpc` process."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from conftest import BASE_ARGS, Workspace, roles, user_texts
from e2e.helpers import assert_run, kinds, text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Every scenario here runs on two wires: OpenAI Chat Completions and Anthropic Messages.
pytestmark = pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)

MODEL_KEYS = {
    "id",
    "name",
    "api",
    "provider",
    "baseUrl",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
}


def spawn(ws: Workspace, *extra: str, args: list[str] | None = None) -> Any:
    return RpcClient.spawn(args=[*(args if args is not None else BASE_ARGS), *extra], cwd=ws.proj, env=ws.env)


async def test_s01_ready_frame_comes_first_and_initial_state_has_every_field(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
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
    async with spawn(workspace) as client:
        response = await client.request({"id": "x-1", "type": "set_steering_mode", "mode": "all"})
        assert response == {"id": "x-1", "type": "response", "command": "set_steering_mode", "success": True}
        mark = client.mark()
        client.send_raw({"type": "set_steering_mode", "mode": "one-at-a-time"})
        frame = await client.wait_for_type("response", since=mark)
    assert frame == {"type": "response", "command": "set_steering_mode", "success": True}


async def test_s03_unknown_commands_are_answered_without_id(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
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
    async with spawn(workspace) as client:
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
    result = subprocess.run(
        [sys.executable, "-m", "xcsh", "--mode", "rpc", *BASE_ARGS, "@notes.txt"],
        cwd=workspace.proj,
        env=workspace.env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert b"@file arguments are not supported in RPC mode" in result.stderr
    assert result.stdout == b""


async def test_s07_simple_prompt_streams_the_standard_run(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("Hello there."))
    async with spawn(workspace) as client:
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
    async with spawn(workspace) as client:
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
    async with spawn(workspace) as client:
        response = await client.request({"id": "t", "type": "get_last_assistant_text"})
    assert response["data"] in ({}, {"text": None})
    assert response["command"] == "get_last_assistant_text" and response["success"] is True


async def test_s10_prompt_images_follow_the_text_in_the_user_message(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("A red pixel."))
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("describe?", images=[image])
    user = next(f for f in frames if f["type"] == "message_start")["message"]
    assert user["content"] == [{"type": "text", "text": "describe?"}, image]


async def test_s11_prompt_while_busy_is_refused_and_nothing_is_queued(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.hold("Work"))
    async with spawn(workspace) as client:
        mark = client.mark()
        await client.prompt("long task?")
        await client.wait_for(
            lambda f: f.get("assistantMessageEvent", {}).get("type") == "text_delta", since=mark
        )
        mark2 = client.mark()
        client.send_raw({"id": "p2", "type": "prompt", "message": "another?"})
        await client.wait_for(lambda f: f.get("id") == "p2" and f.get("success") is False, since=mark2)
        await client.wait_for(lambda f: f.get("id") == "p2" and f.get("success") is True, since=mark2)
        p2 = [f for f in client.frames[mark2:] if f.get("id") == "p2"]
        state = await client.get_state()
        await client.abort()
    assert len(p2) == 2
    error = next(f for f in p2 if not f["success"])
    assert error["command"] == "prompt" and error["error"] == (
        "Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion."
    )
    assert state["queuedMessageCount"] == 0


async def test_s12_follow_up_queued_while_streaming_runs_in_the_same_run(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    gate = script.Gate()
    first = script.text("Part one done.")
    first.gate = gate
    fake_llm.script(first, script.text("Risks: none."))
    async with spawn(workspace) as client:
        mark = client.mark()
        await client.prompt("Summarize this repo?")
        await client.wait_for(
            lambda f: f.get("assistantMessageEvent", {}).get("type") == "text_delta", since=mark
        )
        response = await client.request(
            {"id": "p2", "type": "prompt", "message": "Also include risks", "streamingBehavior": "followUp"}
        )
        state = await client.get_state()
        gate.release()
        frames = await client.wait_for_idle(since=mark)
        after = await client.get_state()
    assert response == {"id": "p2", "type": "response", "command": "prompt", "success": True}
    assert len([f for f in frames if f.get("id") == "p2"]) == 1
    assert state["isStreaming"] is True and state["queuedMessageCount"] == 1
    events = [f for f in frames if f["type"] != "response"]
    assert kinds(events).count("agent_start") == 1 and kinds(events).count("agent_end") == 1
    agent_end = next(f for f in events if f["type"] == "agent_end")
    assert [m["role"] for m in agent_end["messages"]] == ["user", "assistant", "user", "assistant"]
    assert text_of(agent_end["messages"][2]) == "Also include risks"
    assert roles(fake_llm.requests[1].json) == ["user", "assistant", "user"]
    assert after["queuedMessageCount"] == 0


async def test_s13_steer_while_idle_is_delivered_with_the_next_prompt(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("ok"))
    async with spawn(workspace) as client:
        await client.steer("be brief")
        state = await client.get_state()
        frames = await client.prompt_and_wait("explain?")
    assert state["queuedMessageCount"] == 1 and state["isStreaming"] is False
    users = [f["message"] for f in frames if f["type"] == "message_start" and f["message"]["role"] == "user"]
    assert [text_of(m) for m in users] == ["explain?", "be brief"]
    assert len(next(f for f in frames if f["type"] == "agent_end")["messages"]) == 3
    assert len(fake_llm.requests) == 1
    sent = "\n".join(user_texts(fake_llm.requests[0].json))
    assert sent.index("explain?") < sent.index("be brief")


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_s14_follow_up_modes_deliver_one_or_all_per_turn(
    workspace: Workspace, fake_llm: FakeLLM, mode: str
) -> None:
    gate = script.Gate()
    first = script.text("one")
    first.gate = gate
    replies = (
        [first, script.text("two"), script.text("three")]
        if mode == "one-at-a-time"
        else [first, script.text("two")]
    )
    fake_llm.script(*replies)
    async with spawn(workspace) as client:
        if mode == "all":
            await client.set_follow_up_mode("all")
        mark = client.mark()
        await client.prompt("first?")
        await client.wait_for(
            lambda f: f.get("assistantMessageEvent", {}).get("type") == "text_delta", since=mark
        )
        await client.follow_up("A")
        await client.follow_up("B")
        gate.release()
        frames = await client.wait_for_idle(since=mark)
    events = [f for f in frames if f["type"] != "response"]
    users = [
        text_of(f["message"])
        for f in events
        if f["type"] == "message_start" and f["message"]["role"] == "user"
    ]
    assert users == ["first?", "A", "B"]
    assert kinds(events).count("agent_start") == 1
    assert len(fake_llm.requests) == len(replies)
    if mode == "all":
        turn2 = events[[i for i, f in enumerate(events) if f["type"] == "turn_start"][1] :]
        assert [f["message"]["role"] for f in turn2[1:5]] == ["user", "user", "user", "user"]


async def test_s17_abort_during_streaming_keeps_the_partial_answer(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.hold("Partial ans"))
    async with spawn(workspace) as client:
        mark = client.mark()
        await client.prompt("long?")
        await client.wait_for(
            lambda f: f.get("assistantMessageEvent", {}).get("type") == "text_delta", since=mark
        )
        response = await client.request({"id": "ab", "type": "abort"})
        frames = client.frames[mark:]
        state = await client.get_state()
        mark2 = client.mark()
        idle_abort = await client.request({"id": "ab2", "type": "abort"})
        quiet = [f for f in client.frames[mark2:] if f["type"] != "response"]
        messages = await client.get_messages()
        last = await client.get_last_assistant_text()
    assert response == {"id": "ab", "type": "response", "command": "abort", "success": True}
    index = frames.index(response)
    tail = [f["type"] for f in frames[:index] if f["type"] != "message_update"][-3:]
    assert tail == ["message_end", "turn_end", "agent_end"]
    end = [f for f in frames if f["type"] == "message_end"][-1]["message"]
    assert end["stopReason"] == "aborted" and end["errorMessage"] == "Request was aborted"
    assert end["content"] == [{"type": "text", "text": "Partial ans"}]
    updates = [f["assistantMessageEvent"]["type"] for f in frames if f["type"] == "message_update"]
    assert "text_end" not in updates and "error" not in updates
    turn_end = next(f for f in frames if f["type"] == "turn_end")
    assert turn_end["message"]["stopReason"] == "aborted" and turn_end["toolResults"] == []
    assert state["isStreaming"] is False
    assert idle_abort["success"] is True and quiet == []
    assert messages[-1]["stopReason"] == "aborted"
    assert last == "Partial ans"


async def test_s19_abort_and_prompt_replaces_the_running_task(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.hold("old"), script.text("new answer"))
    async with spawn(workspace) as client:
        mark = client.mark()
        await client.prompt("old task?")
        await client.wait_for(
            lambda f: f.get("assistantMessageEvent", {}).get("type") == "text_delta", since=mark
        )
        mark2 = client.mark()
        response = await client.request({"id": "ap", "type": "abort_and_prompt", "message": "new task?"})
        frames = await client.wait_for_idle(since=mark2)
    assert response == {"id": "ap", "type": "response", "command": "abort_and_prompt", "success": True}
    index = frames.index(response)
    before = [f for f in frames[:index] if f["type"] != "message_update"]
    assert [f["type"] for f in before] == ["message_end", "turn_end", "agent_end"]
    assert before[0]["message"]["stopReason"] == "aborted"
    after = [f for f in frames[index + 1 :] if f["type"] != "response"]
    assert_run(after, "new task?", "new answer", workspace.api)


async def test_s22_new_session_resets_state_without_events(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("Hello there."))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("Say hello?")
        before = await client.get_state()
        mark = client.mark()
        response = await client.request({"id": "n", "type": "new_session"})
        quiet = [f for f in client.frames[mark:] if f["type"] != "response"]
        state = await client.get_state()
    assert response == {
        "id": "n",
        "type": "response",
        "command": "new_session",
        "success": True,
        "data": {"cancelled": False},
    }
    assert quiet == []
    assert (state["messageCount"], state["queuedMessageCount"], state["todoPhases"]) == (0, 0, [])
    assert state["sessionId"] != before["sessionId"]


async def test_s23_session_names_are_sanitised_and_empty_names_refused(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        empty = await client.request({"id": "e", "type": "set_session_name", "name": "   "})
        control = await client.request({"id": "c", "type": "set_session_name", "name": "\u0007\t"})
        ok = await client.request({"id": "ok", "type": "set_session_name", "name": "  My\tName\u0007 x "})
        state = await client.get_state()
    assert empty == {
        "id": "e",
        "type": "response",
        "command": "set_session_name",
        "success": False,
        "error": "Session name cannot be empty",
    }
    assert control["success"] is False and control["error"] == "Session name cannot be empty"
    assert ok == {"id": "ok", "type": "response", "command": "set_session_name", "success": True}
    assert state["sessionName"] == "My Name x"


async def test_s24_models_can_be_listed_set_and_cycled(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        models = await client.get_available_models()
        missing = await client.request(
            {"id": "m1", "type": "set_model", "provider": "fake", "modelId": "nope"}
        )
        chosen = await client.set_model("fake", "fake-reasoner")
        first = await client.cycle_model()
        second = await client.cycle_model()
    assert [(m["provider"], m["id"]) for m in models] == [("fake", "fake-model"), ("fake", "fake-reasoner")]
    assert models[1]["reasoning"] is True
    assert models[1]["thinking"] == {"minLevel": "minimal", "maxLevel": "high", "mode": "effort"}
    assert all(set(m) >= MODEL_KEYS for m in models)
    assert missing == {
        "id": "m1",
        "type": "response",
        "command": "set_model",
        "success": False,
        "error": "Model not found: fake/nope",
    }
    assert chosen["id"] == "fake-reasoner" and chosen["reasoning"] is True and set(chosen) >= MODEL_KEYS
    assert first is not None and first["model"]["id"] == "fake-model" and first["isScoped"] is False
    assert second is not None and second["model"]["id"] == "fake-reasoner" and second["isScoped"] is False


async def test_s24_cycle_model_with_a_single_model_returns_null(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.agent / "models.yml").write_text(
        f"providers:\n  fake:\n    baseUrl: {fake_llm.base_url}/v1\n    apiKey: k\n    api: openai-completions\n"
        "    models:\n      - id: fake-model\n"
    )
    async with spawn(workspace) as client:
        response = await client.request({"id": "c", "type": "cycle_model"})
    assert response["success"] is True and response["data"] is None


async def test_s25_thinking_level_on_a_non_reasoning_model_stays_off(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        cycled = await client.request({"id": "c", "type": "cycle_thinking_level"})
        high = await client.request({"id": "h", "type": "set_thinking_level", "level": "high"})
        after_high = (await client.get_state())["thinkingLevel"]
        off = await client.request({"id": "o", "type": "set_thinking_level", "level": "off"})
        after_off = (await client.get_state())["thinkingLevel"]
    assert cycled["data"] is None and cycled["success"] is True
    assert high == {"id": "h", "type": "response", "command": "set_thinking_level", "success": True}
    assert after_high == "off" and off["success"] is True and after_off == "off"


async def test_s26_thinking_level_on_a_reasoning_model_clamps_and_cycles(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    args = ["--model", "fake/fake-reasoner", "--no-tools", "--no-session"]
    fake_llm.script(script.text("thought"))
    async with spawn(workspace, args=args) as client:
        initial = (await client.get_state())["thinkingLevel"]
        cycles = [(await client.cycle_thinking_level()) for _ in range(3)]
        await client.set_thinking_level("xhigh")
        clamped = (await client.get_state())["thinkingLevel"]
        bogus = await client.request({"id": "b", "type": "set_thinking_level", "level": "bogus"})
        kept = (await client.get_state())["thinkingLevel"]
        wrapped = await client.cycle_thinking_level()
        await client.set_thinking_level("medium")
        await client.prompt_and_wait("think?")
    assert initial == "high"
    assert cycles == [{"level": "off"}, {"level": "minimal"}, {"level": "low"}]
    assert clamped == "high"
    assert bogus["success"] is False and bogus["id"] == "b"
    assert bogus["error"].startswith("Invalid thinking level: bogus. ")
    assert kept == "high" and wrapped == {"level": "off"}
    body = fake_llm.requests[0].json
    if workspace.api == "openai-completions":
        assert body["reasoning_effort"] == "medium"
    else:
        # medium asks for 8192 budget tokens; it is capped to fit under the model's 4096 max output
        assert (
            body["thinking"]["type"] == "enabled"
            and 0 < body["thinking"]["budget_tokens"] < body["max_tokens"]
        )


async def test_s26_thinking_flag_sets_the_initial_level(workspace: Workspace) -> None:
    args = ["--model", "fake/fake-reasoner", "--thinking", "low", "--no-tools", "--no-session"]
    async with spawn(workspace, args=args) as client:
        assert (await client.get_state())["thinkingLevel"] == "low"


async def test_s27_queue_mode_setters_and_auto_compaction_toggle(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        await client.set_steering_mode("all")
        await client.set_follow_up_mode("all")
        await client.set_interrupt_mode("immediate")
        await client.set_auto_compaction(False)
        await client.set_auto_retry(False)
        state = await client.get_state()
        await client.set_auto_compaction(True)
        again = await client.get_state()
    assert (state["steeringMode"], state["followUpMode"], state["interruptMode"]) == (
        "all",
        "all",
        "immediate",
    )
    assert state["autoCompactionEnabled"] is False and again["autoCompactionEnabled"] is True
    assert not any("retry" in key.lower() for key in state)


async def test_wrong_field_types_are_parse_errors_and_the_process_keeps_serving(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        mark = client.mark()
        client.send_raw({"id": "w", "type": "set_model", "provider": 5, "modelId": None})
        frame = await client.wait_for_type("response", since=mark)
        alive = await client.get_state()
    assert frame["command"] == "parse" and frame["error"].startswith("Failed to parse command: ")
    assert "id" not in frame and alive["isStreaming"] is False
