"""Agent semantics under the wire (agent-behaviour §1, §4; session-format §3, §4), checked against the real process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Workspace, user_texts
from e2e.agent_harness import Frame, entries, spawn
from e2e.helpers import text_of
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# ---- §4: queues ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_steering_queued_while_idle_is_delivered_one_per_turn_or_all_at_once(
    workspace: Workspace, fake_llm: FakeLLM, mode: str
) -> None:
    """One-at-a-time: the oldest at the run's start, the next after the first turn; all: both at once."""
    replies = [script.text("r1"), script.text("r2")] if mode == "one-at-a-time" else [script.text("r1")]
    fake_llm.script(*replies)
    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        await client.set_steering_mode(mode)
        await client.steer("A")
        await client.steer("B")
        queued = (await client.get_state())["queuedMessageCount"]
        frames = await client.prompt_and_wait("go?")
        after = (await client.get_state())["queuedMessageCount"]
    turns: list[list[str]] = []
    for f in frames:
        if f["type"] == "turn_start":
            turns.append([])
        elif f["type"] == "message_end":
            turns[-1].append(text_of(f["message"]))
    if mode == "one-at-a-time":
        assert turns == [["go?", "A", "r1"], ["B", "r2"]]
    else:
        assert turns == [["go?", "A", "B", "r1"]]
    assert (queued, after) == (2, 0)


async def test_abort_keeps_queued_follow_ups_for_the_next_run(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """§4.4: a follow-up queued during an aborted run is delivered at the end of the next run."""
    fake_llm.script(script.hold("thinking…"), script.text("second"), script.text("after follow-up"))
    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        start = client.mark()
        await client.prompt("first?")
        await client.wait_for(lambda f: f.get("type") == "message_update", since=start)
        await client.follow_up("later")
        await client.abort()
        queued = (await client.get_state())["queuedMessageCount"]
        frames = await client.prompt_and_wait("again?")
    users = [
        text_of(f["message"])
        for f in frames
        if f["type"] == "message_start" and f["message"]["role"] == "user"
    ]
    assert queued == 1 and users == ["again?", "later"]
    assert [text_of(m) for m in next(f for f in frames if f["type"] == "agent_end")["messages"]] == [
        "again?",
        "second",
        "later",
        "after follow-up",
    ]


# ---- session-format §3: thinking_level_change entries only on effective changes ------------------------


async def test_switching_models_clamps_an_explicit_level_and_records_each_effective_change(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """model_change at start (no role) and per set_model (role default); thinking_level_change only on effective changes."""
    fake_llm.script(script.text("hi"))
    args = ["--model", "fake/fake-reasoner", "--no-tools", "--session-dir", str(workspace.sess)]
    async with spawn(workspace, *args) as client:
        initial = (await client.get_state())["thinkingLevel"]
        await client.set_thinking_level("low")
        await client.set_thinking_level("low")
        await client.set_model("fake", "fake-model")
        on_plain = (await client.get_state())["thinkingLevel"]
        await client.set_model("fake", "fake-reasoner")
        back = (await client.get_state())["thinkingLevel"]
        await client.prompt_and_wait("hello?")
        session_file = (await client.get_state())["sessionFile"]
    assert (initial, on_plain, back) == ("high", "off", "off")
    recorded = entries(session_file)
    levels = [e["thinkingLevel"] for e in recorded if e["type"] == "thinking_level_change"]
    assert levels == ["high", "low", None]
    models = [(e["model"], e.get("role")) for e in recorded if e["type"] == "model_change"]
    assert models == [
        ("fake/fake-reasoner", None),
        ("fake/fake-model", "default"),
        ("fake/fake-reasoner", "default"),
    ]


# ---- session-format §4: a write failure is latched and logged, it does not break the run --------------------


async def test_a_session_file_that_cannot_be_written_does_not_interrupt_the_run(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """The answer is still streamed and ended (message_end, agent_end) and nothing is retried."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    fake_llm.script(script.text("hi there"))
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(blocker / "sessions")]
    async with spawn(workspace, *args) as client:
        frames = await client.prompt_and_wait("hello?")
        messages = await client.get_messages()
    assert not [f for f in frames if f["type"].startswith("auto_retry")]
    ends = [f["message"] for f in frames if f["type"] == "message_end"]
    assert [(m["role"], text_of(m)) for m in ends] == [("user", "hello?"), ("assistant", "hi there")]
    agent_end = next(f for f in frames if f["type"] == "agent_end")
    assert [m["role"] for m in agent_end["messages"]] == ["user", "assistant"]
    assert [(m["role"], m.get("stopReason")) for m in messages] == [("user", None), ("assistant", "stop")]


# ---- §1: the live context holds finished messages ---------------------------------------------------------


async def test_a_response_still_streaming_is_not_yet_part_of_the_live_context(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """Messages join the context at their message_end: mid-stream get_messages/messageCount exclude the partial."""
    gate = script.Gate()
    fake_llm.script(script.hold("partial", gate))
    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        start = client.mark()
        await client.prompt("hello?")
        await client.wait_for(lambda f: f.get("type") == "message_update", since=start)
        during = await client.get_messages()
        count = (await client.get_state())["messageCount"]
        gate.release()
        await client.wait_for_idle(since=start)
        after = await client.get_messages()
    assert [m["role"] for m in during] == ["user"] and count == 1
    assert [(m["role"], text_of(m)) for m in after] == [("user", "hello?"), ("assistant", "partial")]


# ---- §1.2: every role of a reference session reaches the model ------------------------------------------------


def _reference_session(path: Path, cwd: Path, *messages: Frame) -> None:
    """A session file as the reference writes it: header, model/level entries, then messages."""
    lines: list[Frame] = [
        {
            "type": "session",
            "version": 3,
            "id": "0a1b2c3d4e5f6789",
            "timestamp": "2026-07-02T10:00:00.000Z",
            "cwd": str(cwd),
        },
        {
            "type": "model_change",
            "id": "e0",
            "parentId": None,
            "timestamp": "2026-07-02T10:00:00.010Z",
            "model": "fake/fake-model",
        },
    ]
    for index, message in enumerate(messages, start=1):
        lines.append(
            {
                "type": "message",
                "id": f"e{index}",
                "parentId": f"e{index - 1}",
                "timestamp": "2026-07-02T10:00:05.000Z",
                "message": message,
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


async def test_a_python_execution_from_a_reference_session_is_shown_to_the_model(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """pythonExecution → a user text message (agent-behaviour §1.2), like bashExecution."""
    ok = {
        "role": "pythonExecution",
        "code": "print(1)",
        "output": "1",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 1783000005000,
    }
    failed = {**ok, "code": "1/0", "output": "ZeroDivisionError", "exitCode": 1}
    hidden = {**ok, "code": "secret()", "excludeFromContext": True}
    session = workspace.sess / "ref.jsonl"
    _reference_session(session, workspace.proj, ok, failed, hidden)
    fake_llm.script(script.text("seen"))
    async with spawn(
        workspace, "--model", "fake/fake-model", "--no-tools", "--session", str(session)
    ) as client:
        await client.prompt_and_wait("what ran?")
    sent = user_texts(fake_llm.requests[0].json)
    joined = "\n".join(sent)
    assert "Ran Python:\n```python\nprint(1)\n```\nOutput:\n```\n1\n```" in joined
    assert (
        "Ran Python:\n```python\n1/0\n```\nOutput:\n```\nZeroDivisionError\n```\n\nExecution failed with code 1"
        in joined
    )
    assert "secret()" not in joined and joined.endswith("what ran?")
