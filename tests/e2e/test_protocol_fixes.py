"""Opt-in protocol fixes (``--protocol-fixes``, docs/host-commands.md): ids on every error, settled frames."""

from __future__ import annotations

from typing import Any

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]


def spawn(ws: Workspace, *args: str) -> Any:
    return RpcClient.spawn(args=[*BASE_ARGS, *args], cwd=ws.proj, env=ws.env)


def settled(frames: list[Frame]) -> list[Frame]:
    return [f for f in frames if f["type"] == "settled"]


async def test_error_responses_keep_the_request_id_for_unknown_commands_and_handler_failures(
    workspace: Workspace,
) -> None:
    async with spawn(workspace, "--protocol-fixes") as client:
        unknown = await client.request({"id": "u1", "type": "frobnicate"})
        failed = await client.request({"id": "f1", "type": "set_active_tools", "toolNames": "read"})
        missing = await client.request({"id": "m1", "foo": 1})
    assert unknown == {
        "id": "u1",
        "type": "response",
        "command": "frobnicate",
        "success": False,
        "error": "Unknown command: frobnicate",
    }
    assert failed == {
        **failed,
        "id": "f1",
        "type": "response",
        "command": "set_active_tools",
        "success": False,
    }
    assert "toolNames" in failed["error"]
    assert missing == {
        "id": "m1",
        "type": "response",
        "success": False,
        "error": "Unknown command: undefined",
    }


async def test_without_the_flag_the_reference_behaviour_stays(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("ok"))
    async with spawn(workspace) as client:
        mark = client.mark()
        client.send_raw({"id": "f1", "type": "set_active_tools", "toolNames": "read"})
        failure = await client.wait_for_type("response", since=mark)
        frames = await client.prompt_and_wait("hi?")
    assert failure == {"type": "response", "command": "parse", "success": False, "error": failure["error"]}
    assert settled(frames) == []


async def test_a_prompt_and_a_follow_up_settle_after_the_run_chain_that_carried_them(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("Part one.", delay_ms=300), script.text("Part two."))
    async with spawn(workspace, "--protocol-fixes") as client:
        mark = client.mark()
        client.send_raw({"id": "p1", "type": "prompt", "message": "go?"})
        await client.wait_for_type("message_update", since=mark)
        await client.request({"id": "f1", "type": "follow_up", "message": "then this"})
        last = await client.wait_for(lambda f: f.get("type") == "settled" and f.get("id") == "f1", since=mark)
        frames = client.frames[mark:]
    ends = [i for i, f in enumerate(frames) if f["type"] == "agent_end"]
    marks = [i for i, f in enumerate(frames) if f["type"] == "settled"]
    assert len(ends) == 1 and all(i > ends[0] for i in marks)
    assert settled(frames) == [
        {"type": "settled", "id": "p1", "command": "prompt", "outcome": "completed"},
        {"type": "settled", "id": "f1", "command": "follow_up", "outcome": "completed"},
    ]
    assert last["outcome"] == "completed"


async def test_aborted_busy_and_cleared_outcomes(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.hold("Work"))
    async with spawn(workspace, "--protocol-fixes") as client:
        mark = client.mark()
        client.send_raw({"id": "p1", "type": "prompt", "message": "long?"})
        await client.wait_for_type("message_update", since=mark)
        client.send_raw({"id": "p2", "type": "prompt", "message": "another?"})
        await client.wait_for(lambda f: f.get("type") == "settled" and f.get("id") == "p2", since=mark)
        await client.request({"id": "s1", "type": "steer", "message": "steer me"})
        await client.request({"id": "c1", "type": "clear_queue"})
        await client.request({"id": "a1", "type": "abort"})
        await client.wait_for(lambda f: f.get("type") == "settled" and f.get("id") == "p1", since=mark)
        frames = client.frames[mark:]
    assert settled(frames) == [
        {
            "type": "settled",
            "id": "p2",
            "command": "prompt",
            "outcome": "error",
            "error": "Agent is already processing. Use steer() or followUp() to queue messages, "
            "or wait for completion.",
        },
        {"type": "settled", "id": "s1", "command": "steer", "outcome": "cleared"},
        {"type": "settled", "id": "p1", "command": "prompt", "outcome": "aborted"},
    ]


async def test_a_steer_sent_while_idle_settles_with_the_next_prompts_run(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("done"))
    async with spawn(workspace, "--protocol-fixes") as client:
        mark = client.mark()
        await client.request({"id": "s1", "type": "steer", "message": "remember X"})
        client.send_raw({"id": "p1", "type": "prompt", "message": "go?"})
        await client.wait_for(lambda f: f.get("type") == "settled" and f.get("id") == "s1", since=mark)
        frames = client.frames[mark:]
    assert [(f["id"], f["outcome"]) for f in settled(frames)] == [("p1", "completed"), ("s1", "completed")]
