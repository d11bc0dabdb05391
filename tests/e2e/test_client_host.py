"""What a host author relies on in the typed client: start-up failures, timeouts, history, UI and events."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient, RpcStartupError
from xcsh.rpc.sync_client import SyncRpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

UI_EXT = Path(__file__).resolve().parent / "extensions" / "ui_test_ext.py"


async def test_an_agent_that_exits_at_start_up_raises_at_once_with_its_status_and_stderr(
    workspace: Workspace,
) -> None:
    async with asyncio.timeout(60):  # bounds the test; the client's own start timeout is far longer
        with pytest.raises(RpcStartupError) as failure:
            await RpcClient.start(
                args=["--model", "nowhere/none", "--no-session"],
                cwd=workspace.proj,
                env=workspace.env,
                timeout=600,
            )
    assert failure.value.returncode == 1
    assert "nowhere/none" in failure.value.stderr_tail
    assert "status 1" in str(failure.value) and "nowhere/none" in str(failure.value)


def test_the_sync_client_raises_the_start_up_failure_too(workspace: Workspace) -> None:
    with pytest.raises(RpcStartupError):
        SyncRpcClient(args=["--model", "nowhere/none"], cwd=workspace.proj, env=workspace.env, timeout=600)


async def test_a_run_longer_than_the_command_timeout_is_waited_for(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    gate = script.Gate()
    fake_llm.script(script.hold("slow", gate))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=0.5) as client:
        mark = client.mark()
        run = asyncio.ensure_future(client.prompt_and_wait("take your time?"))
        await client.wait_for_type("message_update", since=mark, timeout=30)
        # a command that itself takes longer than the 0.5 s command timeout passes while the run goes on
        result = await client.bash("sleep 1; echo done", timeout=30)
        assert not run.done()
        gate.release()
        async with asyncio.timeout(30):
            frames = await run
    assert result["output"].strip() == "done"
    assert frames[-1]["type"] == "agent_end"


async def test_a_run_timeout_bounds_the_wait_and_the_agent_keeps_working(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    gate = script.Gate()
    fake_llm.script(script.hold("slow", gate))
    async with RpcClient.spawn(
        args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, run_timeout=0.2
    ) as client:
        with pytest.raises(TimeoutError):
            await client.prompt_and_wait("long?")
        state = await client.get_state()
        gate.release()
        await client.wait_for_idle(timeout=30)
    assert state["isStreaming"] is True


async def test_the_frame_history_is_bounded_but_prompt_and_wait_returns_every_event(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a fairly long answer", chunks=["a ", "fairly ", "long ", "answer"]))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, history=4) as client:
        events = await client.prompt_and_wait("hi?")
        retained = list(client.frames)
        total = len(client.frames)
    assert len(retained) == 4 and total > 4
    assert len(events) > 4 and events[0]["type"] == "agent_start" and events[-1]["type"] == "agent_end"


async def test_a_ui_handler_answers_extension_dialogs(workspace: Workspace) -> None:
    asked: list[dict[str, Any]] = []

    async def answer(request: dict[str, Any]) -> dict[str, Any] | None:
        asked.append(request)
        return {"confirmed": True} if request["method"] == "confirm" else None

    args = [*BASE_ARGS, "-e", str(UI_EXT)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        client.on_ui_request(answer)
        mark = client.mark()
        await client.prompt("/ui-confirm")
        notice = await client.wait_for(lambda f: f.get("method") == "notify", since=mark)
    assert [r["method"] for r in asked] == ["confirm", "notify"]
    assert notice["message"] == "confirm=true"


def test_the_sync_client_streams_events_and_answers_host_tools(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("c1", "echo_host", {"text": "hey"})), script.text("echoed"))
    tool = {"name": "echo_host", "description": "Echo", "parameters": {"type": "object", "properties": {}}}
    with SyncRpcClient(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        client.on_host_tool("echo_host", lambda args, update: f"echo {args['text']}")
        assert client.set_host_tools([tool]) == ["echo_host"]  # type: ignore[list-item]
        seen: list[str] = []
        events = client.events(since=client.mark())
        client.prompt("use the tool?")
        for frame in events:
            seen.append(frame["type"])
            if frame["type"] == "agent_end":
                break
        events.close()
        messages = client.get_messages()
    assert "tool_execution_end" in seen
    result = next(m for m in messages if m["role"] == "toolResult")
    assert result["content"] == [{"type": "text", "text": "echo hey"}]


async def test_every_registered_command_handler_has_a_wire_type(workspace: Workspace) -> None:
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        await client.get_state()
        tail = client.stderr_tail
    assert "without a wire type" not in tail
