"""Scenarios S49–S51 (auto-retry) against the real `xcsh --mode rpc` process."""

from __future__ import annotations

from typing import Any

from conftest import BASE_ARGS, Workspace
from e2e.helpers import kinds, text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def spawn(ws: Workspace) -> Any:
    return RpcClient.spawn(args=BASE_ARGS, cwd=ws.proj, env=ws.env)


async def test_s49_retry_then_success_announces_both_ends_and_drops_the_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("retry:\n  baseDelayMs: 50\n")
    gate = script.Gate()
    fake_llm.script(script.http_error(400, "overloaded_error: Overloaded"), script.hold("fine", gate))
    async with spawn(workspace) as client:
        start = client.mark()
        await client.prompt("hi?")
        retry = await client.wait_for_type("auto_retry_start", since=start)
        await client.wait_for_type("message_update", since=client.frames.index(retry))
        busy = await client.get_state()  # the continuation run is held open
        gate.release()
        frames = [f for f in await client.wait_for_idle(since=start) if f["type"] != "response"]
        messages = await client.get_messages()
    assert busy["isStreaming"] is True
    types = kinds(frames)
    error_end = [f for f in frames if f["type"] == "message_end"][1]["message"]
    assert error_end["stopReason"] == "error" and "verloaded" in error_end["errorMessage"]
    first_end = types.index("agent_end")
    assert types[: first_end + 1] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert frames[first_end + 1] == {
        "type": "auto_retry_start",
        "attempt": 1,
        "maxAttempts": 3,
        "delayMs": 50,
        "errorMessage": error_end["errorMessage"],
    }
    rest = types[first_end + 2 :]
    assert rest == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "auto_retry_end",
        "turn_end",
        "agent_end",
    ]
    retry_end = next(f for f in frames if f["type"] == "auto_retry_end")
    assert retry_end == {"type": "auto_retry_end", "success": True, "attempt": 1}
    assert [(m["role"], text_of(m)) for m in messages] == [("user", "hi?"), ("assistant", "fine")]


async def test_s50_retry_exhaustion_ends_with_a_failed_retry_end(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("retry:\n  baseDelayMs: 50\n")
    fake_llm.script(*[script.http_error(400, "503 service unavailable") for _ in range(4)])
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("hi?")
        state = await client.get_state()
        messages = await client.get_messages()
    starts = [(f["attempt"], f["delayMs"]) for f in frames if f["type"] == "auto_retry_start"]
    assert starts == [(1, 50), (2, 100), (3, 200)]
    types = kinds(frames)
    assert types.count("agent_start") == 4 and types.count("agent_end") == 4
    last_error = [f for f in frames if f["type"] == "message_end"][-1]["message"]["errorMessage"]
    assert "503 service unavailable" in last_error
    assert types[-2:] == ["agent_end", "auto_retry_end"]
    assert frames[-1] == {"type": "auto_retry_end", "success": False, "attempt": 3, "finalError": last_error}
    assert state["isStreaming"] is False
    assert [m["role"] for m in messages] == ["user", "assistant"]  # only the last failure stays live
    assert len(fake_llm.requests) == 4


async def test_s51_abort_retry_cancels_the_back_off(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.config("retry:\n  baseDelayMs: 5000\n")
    fake_llm.script(script.http_error(400, "rate limit exceeded"))
    async with spawn(workspace) as client:
        start = client.mark()
        await client.prompt("hi?")
        retry_start = await client.wait_for_type("auto_retry_start", since=start)
        mark = client.mark()
        response = await client.request({"id": "x", "type": "abort_retry"})
        retry_end = await client.wait_for_type("auto_retry_end", since=mark)
        state = await client.get_state()
    assert (retry_start["attempt"], retry_start["delayMs"]) == (1, 5000)
    assert response == {"id": "x", "type": "response", "command": "abort_retry", "success": True}
    assert retry_end == {
        "type": "auto_retry_end",
        "success": False,
        "attempt": 1,
        "finalError": "Retry cancelled",
    }
    assert state["isStreaming"] is False
    assert len(fake_llm.requests) == 1  # no further model request (fake_llm also fails on extra requests)


async def test_s51_disabled_retry_makes_exactly_one_request(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.config("retry:\n  baseDelayMs: 5000\n")
    fake_llm.script(script.http_error(400, "rate limit exceeded"))
    async with spawn(workspace) as client:
        await client.set_auto_retry(False)
        frames = await client.prompt_and_wait("hi?")
        messages = await client.get_messages()
    assert kinds(frames).count("agent_end") == 1
    assert not [f for f in frames if f["type"].startswith("auto_retry")]
    assert messages[-1]["role"] == "assistant" and messages[-1]["stopReason"] == "error"
    assert len(fake_llm.requests) == 1


async def test_non_retryable_errors_fail_at_once_with_the_provider_message(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.http_error(401, "Incorrect API key provided", error_type="authentication_error"))
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("hi?")
    assert not [f for f in frames if f["type"].startswith("auto_retry")]
    error = [f for f in frames if f["type"] == "message_end"][-1]["message"]
    assert error["stopReason"] == "error" and "Incorrect API key provided" in error["errorMessage"]
    assert len(fake_llm.requests) == 1
