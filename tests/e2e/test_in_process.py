"""The in-process API (``xcsh.open_session``, docs/in-process.md): same commands and events, no subprocess."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

import xcsh
from conftest import Workspace, tool_results
from e2e.helpers import assert_run
from xcsh.coding.factory import StartupError
from xcsh.rpc.client import RpcError
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "in_process.py"


def open_session(ws: Workspace, *args: str) -> AbstractAsyncContextManager[xcsh.Session]:
    return xcsh.open_session(
        cwd=ws.proj,
        args=["--model", "fake/fake-model", "--no-session", *args],
        agent_dir=ws.agent,
        env=ws.env,
    )


async def test_a_prompt_in_process_gives_the_same_frames_as_the_wire(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("Hello there."))
    async with open_session(workspace, "--no-tools") as session:
        assert session.frames[0]["type"] == "ready"
        mark = session.mark()
        response = await session.request({"id": "p1", "type": "prompt", "message": "Say hello?"})
        frames = await session.wait_for_idle(since=mark)
        state = await session.get_state()
        assert session.core.store.session_id == state["sessionId"]
    assert response == {"id": "p1", "type": "response", "command": "prompt", "success": True}
    events = [f for f in frames if f["type"] != "response"]
    assert_run(events, "Say hello?", "Hello there.")
    assert state["messageCount"] == 2 and state["isStreaming"] is False


async def test_errors_host_tools_and_new_commands_behave_as_over_the_wire(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("c1", "echo_host", {"message": "hi"})), script.text("done"))
    tool = {
        "name": "echo_host",
        "description": "Echo",
        "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
    }
    async with open_session(workspace, "--no-tools", "--protocol-fixes") as session:
        unknown = await session.request({"id": "u1", "type": "frobnicate"})
        with pytest.raises(RpcError, match="Unknown tool"):
            await session.set_active_tools(["teleport"])
        await session.set_host_tools([tool])

        async def echo(arguments: dict[str, str], update: object) -> str:
            return "echo: " + arguments["message"]

        session.on_host_tool("echo_host", echo)
        mark = session.mark()
        await session.request({"id": "p1", "type": "prompt", "message": "go?"})
        settled = await session.wait_for(lambda f: f.get("type") == "settled", since=mark)
    assert unknown["id"] == "u1" and unknown["success"] is False
    assert settled == {"type": "settled", "id": "p1", "command": "prompt", "outcome": "completed"}
    assert tool_results(fake_llm.requests[1].json) == {"c1": "echo: hi"}


async def test_start_up_errors_raise_and_unknown_flags_are_refused(workspace: Workspace) -> None:
    with pytest.raises(StartupError):
        async with xcsh.open_session(
            cwd=workspace.proj, args=["--model", "nope/missing"], agent_dir=workspace.agent, env=workspace.env
        ):
            pass
    with pytest.raises(ValueError, match="--frobnicate"):
        async with xcsh.open_session(cwd=workspace.proj, args=["--frobnicate"], env=workspace.env):
            pass


async def test_a_start_up_error_leaves_no_unretrieved_task_exception(workspace: Workspace) -> None:
    loop = asyncio.get_running_loop()
    reports: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reports.append(context))
    try:
        with pytest.raises(StartupError, match="nope/missing"):
            async with xcsh.open_session(
                cwd=workspace.proj,
                args=["--model", "nope/missing"],
                agent_dir=workspace.agent,
                env=workspace.env,
            ):
                pass
        for _ in range(3):  # let the finished tasks go and be collected
            await asyncio.sleep(0)
        gc.collect()
    finally:
        loop.set_exception_handler(previous)
    assert [r.get("message") for r in reports] == []


def test_the_in_process_example_runs(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.tool_calls(("c1", "project_clock", {})), script.text("It is on 2027-03-01."))
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--model", "fake/fake-model"],
        capture_output=True,
        text=True,
        env=workspace.env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "[tool project_clock]" in done.stdout
    assert "answer: It is on 2027-03-01." in done.stdout
    assert "active tools: project_clock" in done.stdout
    assert tool_results(fake_llm.requests[1].json) == {"c1": "The release is on 2027-03-01."}
