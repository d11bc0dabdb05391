"""The Agent's loop boundary: an unexpected failure still ends the run cleanly (in-process, fake LLM)."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import fake_model
from xcsh.agent.agent import Agent
from xcsh.agent.types import AgentEvent
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


async def test_a_run_broken_by_a_failing_listener_ends_with_its_failure_message_in_the_context(
    fake_llm: FakeLLM,
) -> None:
    """Like the reference: agent_end carries the failure message, which also joins the live context."""
    fake_llm.script(script.text("hi"))
    agent = Agent(model=fake_model(fake_llm), get_api_key=lambda provider: "test-key")
    events: list[AgentEvent] = []

    def listener(event: AgentEvent) -> None:
        events.append(event)
        if event["type"] == "message_end" and event["message"]["role"] == "assistant":
            raise RuntimeError("listener broke")

    agent.subscribe(listener)
    async with asyncio.timeout(30):  # the first call of a run imports the SDK (slow when loaded)
        added = await agent.prompt([user("hello")])
    assert events[-1]["type"] == "agent_end" and not agent.is_running
    failure = events[-1]["messages"][0]
    assert (failure["stopReason"], failure["errorMessage"]) == ("error", "listener broke")
    assert added == [failure]
    assert [(m["role"], m.get("stopReason")) for m in agent.messages] == [
        ("user", None),
        ("assistant", "stop"),
        ("assistant", "error"),
    ]
    assert agent.messages[-1] == failure


def test_a_closed_commit_gate_refuses_claims_also_of_the_calls_made_inside_its_call() -> None:
    from xcsh.agent.commit_gate import CommitGate

    outer = CommitGate()
    inner = CommitGate(outer)  # a subagent's tool call inside the task call
    assert outer.close() is True  # nothing had been claimed
    assert (inner.closed, inner.claim()) == (True, False)
    claimed = CommitGate()
    assert claimed.claim() is True
    assert claimed.close() is False  # a change was under way when it was abandoned
    assert claimed.claim() is False


def test_a_gate_closed_because_its_call_ended_refuses_its_own_claims_but_not_those_of_calls_started_inside_it_later() -> (
    None
):
    """Such a call comes from work the ended call only scheduled (an extension's background job
    starting a run), not from the call itself (review 6 W1); abandonment still reaches it."""
    from xcsh.agent.commit_gate import CommitGate

    ended = CommitGate()
    assert ended.close(finished=True) is True
    later = CommitGate(ended)
    assert (ended.closed, ended.claim()) == (True, False)  # a thread the call left behind
    assert (later.closed, later.claim()) == (False, True)
    abandoned = CommitGate()
    abandoned.close()
    inner = CommitGate(CommitGate(abandoned))  # a call inside a call inside the abandoned one
    assert (inner.closed, inner.claim()) == (True, False)


async def test_work_run_outside_commit_gates_sees_no_gate_also_in_the_tasks_it_starts() -> None:
    from xcsh.agent.commit_gate import (
        current_commit_gate,
        enter_commit_gate,
        leave_commit_gate,
        outside_commit_gates,
    )

    gate, token = enter_commit_gate()
    try:
        with outside_commit_gates():
            assert current_commit_gate() is None
            seen = asyncio.ensure_future(_gate_seen())
        assert current_commit_gate() is gate
        async with asyncio.timeout(5):
            assert await seen is None
    finally:
        leave_commit_gate(token)


async def _gate_seen() -> object:
    from xcsh.agent.commit_gate import current_commit_gate

    return current_commit_gate()
