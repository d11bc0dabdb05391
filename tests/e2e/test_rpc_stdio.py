"""stdin read on the event loop, and get_state answered at once: every change is in the next answer."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_every_state_change_shows_in_the_very_next_get_state(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """get_state is answered without queueing and its large parts are encoded once: never stale."""
    gate = script.Gate()
    fake_llm.script(script.hold("busy", gate), script.text("queued answer"))
    async with RpcClient.spawn(
        args=["--model", "fake/fake-model", "--tools", "read"], cwd=workspace.proj, env=workspace.env
    ) as client:
        seen = [await client.get_state()]

        async def state() -> None:
            seen.append(await client.get_state())

        await client.set_model("fake", "fake-reasoner")
        await state()
        await client.set_thinking_level("high")
        await state()
        await client.set_steering_mode("all")
        await state()
        await client.set_follow_up_mode("all")
        await state()
        await client.set_interrupt_mode("immediate")
        await state()
        await client.set_auto_compaction(False)
        await state()
        await client.set_session_name("renamed")
        await state()
        await client.set_host_tools([{"name": "deploy", "description": "Deploy", "parameters": {}}])
        await state()
        mark = client.mark()
        await client.prompt("work")
        await client.wait_for_type("message_update", since=mark)
        await state()
        await client.follow_up("later")
        await state()
        gate.release()
        await client.wait_for_idle(since=mark)
        await state()
        await client.new_session()
        await state()
    first, model, thinking, steering, follow, interrupt, compaction, name, tools = seen[:9]
    streaming, queued, idle, fresh = seen[9:]
    assert first["model"]["id"] == "fake-model" and model["model"]["id"] == "fake-reasoner"
    assert thinking["thinkingLevel"] == "high"
    assert (first["steeringMode"], steering["steeringMode"]) == ("one-at-a-time", "all")
    assert (first["followUpMode"], follow["followUpMode"]) == ("one-at-a-time", "all")
    assert (first["interruptMode"], interrupt["interruptMode"]) == ("wait", "immediate")
    assert (first["autoCompactionEnabled"], compaction["autoCompactionEnabled"]) == (True, False)
    assert "sessionName" not in first and name["sessionName"] == "renamed"
    assert [t["name"] for t in name["dumpTools"]] == ["read"]
    assert [t["name"] for t in tools["dumpTools"]] == ["read", "deploy"]
    assert streaming["isStreaming"] is True and streaming["messageCount"] == 1
    assert queued["queuedMessageCount"] == 1
    assert idle["isStreaming"] is False and idle["queuedMessageCount"] == 0 and idle["messageCount"] == 4
    assert fresh["messageCount"] == 0 and fresh["sessionId"] != idle["sessionId"]


async def test_compaction_todos_bash_locale_tools_and_switches_show_in_the_next_get_state(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """The get_state answer is cached between changes: each of these changes is in the next answer."""
    gate = script.Gate()
    fake_llm.script(
        script.text("big answer", usage=(120000, 10)),
        script.hold("HISTORY-SUMMARY", gate),  # the bash run before the prompt is history
        script.text("PREFIX-SUMMARY"),
        script.text("SHORT"),
        script.text("continuing"),
    )
    async with RpcClient.spawn(
        args=["--model", "fake/fake-model", "--tools", "read,bash"], cwd=workspace.proj, env=workspace.env
    ) as client:
        first = await client.get_state()
        assert await client.get_state() == first
        await client.set_todos([{"id": "p1", "name": "Plan", "tasks": []}])
        todos = await client.get_state()
        await client.bash("true")
        bash = await client.get_state()
        await client.set_locale("de")
        locale = await client.get_state()
        await client.set_active_tools(["read"])
        tools = await client.get_state()
        mark = client.mark()
        await client.prompt("work?")
        await client.wait_for_type("auto_compaction_start", since=mark)
        compacting = await client.get_state()
        gate.release()
        await client.wait_for_idle(since=mark)
        compacted = await client.get_state()
        await client.new_session()
        fresh = await client.get_state()
        await client.switch_session(first["sessionFile"])
        back = await client.get_state()
    assert first["todoPhases"] == [] and todos["todoPhases"] == [{"id": "p1", "name": "Plan", "tasks": []}]
    assert (todos["messageCount"], bash["messageCount"]) == (0, 1)
    assert locale["systemPrompt"] != bash["systemPrompt"]
    assert [t["name"] for t in locale["dumpTools"]] == ["read", "bash"]
    assert [t["name"] for t in tools["dumpTools"]] == ["read"]
    assert compacting["isCompacting"] is True and tools["isCompacting"] is False
    assert compacted["isCompacting"] is False and compacted["isStreaming"] is False
    assert compacted["messageCount"] == 4  # summary, kept answer, continuation prompt, answer
    assert fresh["messageCount"] == 0 and fresh["sessionFile"] != first["sessionFile"]
    assert back["sessionId"] == first["sessionId"] and back["messageCount"] == compacted["messageCount"]


async def test_a_prompt_behind_a_running_command_waits_its_turn_and_one_alone_is_answered_before_its_run(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """A prompt is answered in the turn that reads it only when nothing is queued: order is kept."""
    fake_llm.script(script.text("first answer"), script.text("second answer"))
    fifo = tmp_path / "release"
    os.mkfifo(fifo)
    async with RpcClient.spawn(
        args=["--model", "fake/fake-model", "--no-tools", "--no-session"],
        cwd=workspace.proj,
        env=workspace.env,
    ) as client:
        mark = client.mark()
        client.send_raw({"id": "b", "type": "bash", "command": f"read line < {fifo}"})
        client.send_raw({"id": "p1", "type": "prompt", "message": "first"})
        client.send_raw({"id": "s", "type": "get_state"})  # queued behind both
        await asyncio.to_thread(fifo.write_text, "go\n")  # bash's read ends
        probe = await client.wait_for(lambda f: f.get("id") == "s", since=mark)
        await client.wait_for_idle(since=mark)
        alone = client.mark()
        await client.request({"id": "p2", "type": "prompt", "message": "second"})
        await client.wait_for_idle(since=alone)
        frames = client.frames[mark:]
    order = [f.get("id") for f in frames if f["type"] == "response"]
    assert order[:3] == ["b", "p1", "s"] and probe["success"] is True
    after = [f["type"] if f["type"] != "response" else f.get("id") for f in client.frames[alone:]]
    assert after.index("p2") < after.index("agent_start")


async def test_commands_from_a_regular_file_are_all_answered(workspace: Workspace, tmp_path: Path) -> None:
    """A stdin the event loop cannot watch (a regular file) is read by a thread instead."""
    commands = tmp_path / "commands.jsonl"
    lines = [json.dumps({"id": f"s{i}", "type": "get_state"}) for i in range(3)]
    commands.write_text("\n".join([*lines, '{"type": "nope"}', "not json"]) + "\n")
    with commands.open("rb") as stdin:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "xcsh",
            "--mode",
            "rpc",
            "--model",
            "fake/fake-model",
            "--no-session",
            cwd=workspace.proj,
            env=workspace.env,
            stdin=stdin,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 22,
        )
        assert process.stdout is not None
        async with asyncio.timeout(30):
            frames = [json.loads(line) async for line in process.stdout]
            code = await process.wait()
    assert [f["type"] for f in frames] == [
        "ready",
        "response",
        "response",
        "response",
        "response",
        "response",
    ]
    assert [f.get("id") for f in frames[1:4]] == ["s0", "s1", "s2"]
    assert frames[4]["error"] == "Unknown command: nope"
    assert frames[5]["command"] == "parse" and frames[5]["success"] is False
    assert code == 0
