"""The typed client: the synchronous wrapper and event iteration."""

from __future__ import annotations

import asyncio

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient, RpcError
from xcsh.rpc.sync_client import SyncRpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def test_sync_client_runs_a_prompt_and_reads_state(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("sync works"))
    with SyncRpcClient(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        frames = client.prompt_and_wait("hi?")
        assert frames[-1]["type"] == "agent_end"
        assert client.get_last_assistant_text() == "sync works"
        assert client.get_state()["messageCount"] == 2


async def test_events_iterator_yields_frames_as_they_arrive(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("streamed"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        seen: list[str] = []

        async def collect() -> None:
            async for frame in client.events():
                seen.append(frame["type"])
                if frame["type"] == "agent_end":
                    return

        collector = asyncio.ensure_future(collect())
        await client.prompt("go?")
        async with asyncio.timeout(10):
            await collector
    assert seen[0] == "agent_start" and seen[-1] == "agent_end" and "message_update" in seen


async def test_failed_commands_raise_rpc_error_with_the_response(workspace: Workspace) -> None:
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        try:
            await client.set_model("fake", "missing")
        except RpcError as exc:
            assert exc.response["error"] == "Model not found: fake/missing"
        else:
            raise AssertionError("set_model should have failed")
        try:
            await client.compact()
        except RpcError as exc:
            assert exc.response["command"] == "parse"
        else:
            raise AssertionError("compact on an empty session should have failed")
