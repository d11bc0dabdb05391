"""A host that sends `prompt` the moment it reads `agent_end` is never refused (rpc-protocol §5.1 decision).

After the host's run ends the agent may continue by itself (a todo reminder, a retry
back-off, the continue after a threshold compaction). The prompt still runs: a
continuation already streaming takes it as a follow-up, one not started yet is dropped.
"""

from __future__ import annotations

from typing import Any

from conftest import BASE_ARGS, Workspace, user_texts
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Gate

Frame = dict[str, Any]


async def _prompt_on_agent_end(
    client: RpcClient, first: str, second: str, *, then_release: Gate | None = None
) -> tuple[list[Frame], Frame]:
    """Send ``first``; the moment its ``agent_end`` is read, send ``second``; return frames until idle.

    ``then_release`` is opened once ``second`` is acknowledged (a held reply that must not end before).
    """
    start = client.mark()
    await client.prompt(first)
    end = await client.wait_for_type("agent_end", since=start)
    ack = await client.request({"id": "second", "type": "prompt", "message": second})
    if then_release is not None:
        then_release.release()
    await client.wait_for_idle(since=client.frames.index(end) + 1)
    return client.frames[start:], ack


def _errors(frames: list[Frame]) -> list[Frame]:
    return [f for f in frames if f["type"] == "response" and f.get("success") is False]


def _ran(fake_llm: FakeLLM, text: str) -> bool:
    return any(text in user_texts(r.json) for r in fake_llm.requests)


async def test_a_prompt_sent_at_agent_end_during_a_todo_reminder_runs_without_an_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the reminder's continuation starts at once, so the prompt joins it as a follow-up;
    # the open task then earns the remaining reminders (three in all)
    fake_llm.script(
        script.text("first answer"),
        script.text("reminded"),
        script.text("second answer"),
        script.text("reminded again"),
        script.text("reminded a third time"),
    )
    phases = [{"id": "p", "name": "Work", "tasks": [{"id": "t", "content": "Do X", "status": "pending"}]}]
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        await client.set_todos(phases)
        frames, ack = await _prompt_on_agent_end(client, "first?", "second?")
        state = await client.get_state()
    assert ack["success"] is True
    assert _errors(frames) == []
    assert any(f["type"] == "todo_reminder" for f in frames)
    assert _ran(fake_llm, "second?")
    assert state["isStreaming"] is False


async def test_a_prompt_sent_at_agent_end_during_a_retry_wait_replaces_the_retry(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("retry:\n  baseDelayMs: 60000\n")
    fake_llm.script(script.http_error(503, "overloaded_error: Overloaded"), script.text("second answer"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        frames, ack = await _prompt_on_agent_end(client, "first?", "second?")
        messages = await client.get_messages()
    assert ack["success"] is True
    assert _errors(frames) == []
    retry_end = next(f for f in frames if f["type"] == "auto_retry_end")
    assert retry_end == {
        "type": "auto_retry_end",
        "success": False,
        "attempt": 1,
        "finalError": "Retry cancelled",
    }
    # the failed reply left the context, so the two user messages are merged into one
    assert len(fake_llm.requests) == 2 and user_texts(fake_llm.requests[1].json)[-1].endswith("second?")
    assert messages[-1]["role"] == "assistant" and messages[-1]["content"][0]["text"] == "second answer"


async def test_a_prompt_sent_at_agent_end_during_a_threshold_compaction_runs_instead_of_the_continue(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the compaction's first summary is held until the prompt is in: with a fast loopback the
    # whole compaction could otherwise end, and the continue start, before the host's prompt
    summarising = Gate()
    fake_llm.script(
        script.text("big answer", usage=(120000, 10)),
        script.hold("PREFIX-SUMMARY", summarising),
        script.text("SHORT"),
        script.text("second answer"),
    )
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        frames, ack = await _prompt_on_agent_end(client, "work?", "second?", then_release=summarising)
        messages = await client.get_messages()
    assert ack["success"] is True
    assert _errors(frames) == []
    types = [f["type"] for f in frames]
    assert "auto_compaction_end" in types
    assert user_texts(fake_llm.requests[3].json)[-1].endswith("second?")
    roles = [m["role"] for m in messages]
    assert "developer" not in roles  # the automatic "Continue" gave way to the host's prompt
    assert roles[-2:] == ["user", "assistant"] and messages[-1]["content"][0]["text"] == "second answer"


async def test_a_prompt_accepted_during_a_threshold_compaction_then_aborted_is_answered_with_a_late_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the prompt waits for the compaction to end; the abort ends the compaction first, so the
    # prompt never runs: the host that was told success must hear so (review 3 D1: it vanished)
    summarising = Gate()
    fake_llm.script(
        script.text("big answer", usage=(120000, 10)),
        script.hold("PREFIX-SUMMARY", summarising),
    )
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        await client.prompt("work?")
        await client.wait_for_type("auto_compaction_start", since=start)
        ack = await client.request({"id": "second", "type": "prompt", "message": "second?"})
        await client.abort()
        late = await client.wait_for(
            lambda f: f.get("id") == "second" and f.get("success") is False, since=start, timeout=15
        )
        state = await client.get_state()
    assert ack["success"] is True
    assert late == {
        "id": "second",
        "type": "response",
        "command": "prompt",
        "success": False,
        "error": "Prompt aborted before its run started",
    }
    assert not _ran(fake_llm, "second?")
    assert state["isStreaming"] is False
