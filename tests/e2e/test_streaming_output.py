"""Streaming output: a slow host loses nothing, and delta-mode updates rebuild to the reference frames."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from conftest import Workspace
from e2e.helpers import spawn_rpc
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

PLAIN = ["--model", "fake/fake-model", "--no-tools", "--no-session"]
VOLATILE = frozenset({"timestamp", "duration", "ttft"})


async def spawn_raw(workspace: Workspace, *args: str) -> asyncio.subprocess.Process:
    return await spawn_rpc(workspace.proj, workspace.env, *PLAIN, *args)


async def next_frame(process: asyncio.subprocess.Process) -> dict[str, Any]:
    assert process.stdout is not None
    line = await process.stdout.readline()
    assert line, "the agent closed stdout"
    frame: dict[str, Any] = json.loads(line)
    return frame


def send(process: asyncio.subprocess.Process, frame: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(frame).encode() + b"\n")


async def stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.kill()
        await process.wait()


async def test_a_host_that_stops_reading_during_a_long_answer_gets_every_frame_later(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """Backpressure: the agent waits on a full stdout; nothing is dropped and it does not die."""
    words = [f"w{i} " for i in range(1500)]
    fake_llm.script(script.Reply(text=words))
    process = await spawn_raw(workspace)
    try:
        async with asyncio.timeout(60):
            assert (await next_frame(process))["type"] == "ready"
            send(process, {"id": "p", "type": "prompt", "message": "a long answer"})
            # read nothing while the model's whole answer reaches the agent: its stdout fills up
            await asyncio.to_thread(fake_llm.wait_for_finished, 1, 30)
            frames = []
            while not frames or frames[-1]["type"] != "agent_end":
                frames.append(await next_frame(process))
            send(process, {"id": "s", "type": "get_state"})
            state = await next_frame(process)
    finally:
        await stop(process)
    deltas = [
        f["assistantMessageEvent"]["delta"]
        for f in frames
        if f["type"] == "message_update" and f["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert deltas == words
    end = next(f for f in frames if f["type"] == "message_end" and f["message"]["role"] == "assistant")
    assert end["message"]["content"][0]["text"] == "".join(words)
    assert sum(len(json.dumps(f)) for f in frames) > 1 << 20  # far more than a pipe holds
    assert state["id"] == "s" and state["success"] is True


def steady(value: Any) -> Any:
    """``value`` without the fields that differ between two runs (clock readings)."""
    if isinstance(value, dict):
        return {k: steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def answer() -> script.Reply:
    call = script.ToolCallSpec("call_1", "write", json.dumps({"path": "a.txt", "content": 'x "q"\n' * 30}), 7)
    return script.Reply(thinking=["let ", "me ", "think"], text=["Here ", "it ", "is."], tool_calls=[call])


async def updates_of(workspace: Workspace, fake_llm: FakeLLM, mode: str | None) -> list[dict[str, Any]]:
    fake_llm.script(answer(), script.text("done"))
    async with RpcClient.spawn(
        args=[*PLAIN, "--tools", "write"], cwd=workspace.proj, env=workspace.env, message_updates=mode
    ) as client:
        frames = await client.prompt_and_wait("go")
        state = await client.get_state()
    assert state["messageUpdates"] == (mode or "full")
    return [steady(f) for f in frames if f["type"] in ("message_start", "message_update", "message_end")]


async def test_delta_mode_updates_rebuild_to_the_frames_full_mode_sends(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    full = await updates_of(workspace, fake_llm, None)
    delta = await updates_of(workspace, fake_llm, "delta")
    kinds = {f["assistantMessageEvent"]["type"] for f in full if f["type"] == "message_update"}
    assert {"thinking_delta", "text_delta", "toolcall_delta", "toolcall_end"} <= kinds
    assert delta == full


async def test_delta_mode_sends_deltas_without_the_partial_message(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("", chunks=["one ", "two ", "three"]))
    process = await spawn_raw(workspace, "--message-updates", "delta")
    try:
        async with asyncio.timeout(30):
            assert (await next_frame(process))["type"] == "ready"
            send(process, {"id": "p", "type": "prompt", "message": "count"})
            frames = []
            while not frames or frames[-1]["type"] != "agent_end":
                frames.append(await next_frame(process))
    finally:
        await stop(process)
    updates = [f for f in frames if f["type"] == "message_update"]
    slim = [f for f in updates if f["assistantMessageEvent"]["type"] == "text_delta"]
    assert [f["assistantMessageEvent"]["delta"] for f in slim] == ["one ", "two ", "three"]
    assert all(set(f) == {"type", "assistantMessageEvent"} for f in slim)
    assert all("partial" not in f["assistantMessageEvent"] for f in slim)
    whole = [f for f in updates if f not in slim]
    assert whole and all(f["message"] == f["assistantMessageEvent"]["partial"] for f in whole)


async def test_get_state_shows_tool_and_prompt_changes_at_once(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """get_state encodes its large parts once, yet a change is visible in the very next answer."""
    tool = {
        "name": "deploy",
        "description": "Deploy the app",
        "parameters": {"type": "object", "properties": {}},
    }
    async with RpcClient.spawn(
        args=[*PLAIN, "--tools", "read"], cwd=workspace.proj, env=workspace.env
    ) as client:
        first = await client.get_state()
        again = await client.get_state()
        await client.set_host_tools([tool])
        after = await client.get_state()
        await client.set_host_tools([])
        last = await client.get_state()
    assert again == first
    assert [t["name"] for t in first["dumpTools"]] == ["read"]
    assert [t["name"] for t in after["dumpTools"]] == ["read", "deploy"]
    assert after["dumpTools"][1]["description"] == "Deploy the app"
    assert [t["name"] for t in last["dumpTools"]] == ["read"]
    assert last["systemPrompt"] == first["systemPrompt"]
    assert first["messageUpdates"] == "full"
