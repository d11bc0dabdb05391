"""Scenarios S11–S14, S17, S19 (scenarios.md) against the real process: busy prompts, queues and abort."""

from __future__ import annotations

import pytest

from conftest import Workspace, roles, user_texts
from e2e.helpers import assert_run, kinds, spawn_client, text_of
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Every scenario here runs on two wires: OpenAI Chat Completions and Anthropic Messages.
pytestmark = pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)


async def test_s11_prompt_while_busy_is_refused_and_nothing_is_queued(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.hold("Work"))
    async with spawn_client(workspace) as client:
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
    async with spawn_client(workspace) as client:
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
    async with spawn_client(workspace) as client:
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
    async with spawn_client(workspace) as client:
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
    async with spawn_client(workspace) as client:
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
    async with spawn_client(workspace) as client:
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
