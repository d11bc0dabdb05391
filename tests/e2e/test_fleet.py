"""Many xcsh processes on one agent dir (docs/fleet.md): sessions and settings never clash."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_two_processes_changing_different_settings_both_keep_their_change(
    workspace: Workspace,
) -> None:
    workspace.config("retry:\n  baseDelayMs: 10\n")
    env, cwd = workspace.env, workspace.proj
    async with (
        RpcClient.spawn(args=BASE_ARGS, cwd=cwd, env=env) as first,
        RpcClient.spawn(args=BASE_ARGS, cwd=cwd, env=env) as second,
    ):
        # both processes have read config.yml before either changes it
        await first.get_state()
        await second.get_state()
        await first.set_steering_mode("all")
        await second.set_auto_retry(False)
        await first.set_interrupt_mode("immediate")
        await second.set_follow_up_mode("all")
    stored = yaml.safe_load((workspace.agent / "config.yml").read_text())
    assert stored == {
        "retry": {"baseDelayMs": 10, "enabled": False},
        "steeringMode": "all",
        "interruptMode": "immediate",
        "followUpMode": "all",
    }
    async with RpcClient.spawn(args=BASE_ARGS, cwd=cwd, env=env) as third:
        state = await third.get_state()
    assert (state["steeringMode"], state["followUpMode"], state["interruptMode"]) == (
        "all",
        "all",
        "immediate",
    )


SETTERS = [
    ("set_steering_mode", {"mode": "all"}, ("steeringMode",), "all"),
    ("set_follow_up_mode", {"mode": "all"}, ("followUpMode",), "all"),
    ("set_interrupt_mode", {"mode": "immediate"}, ("interruptMode",), "immediate"),
    ("set_auto_retry", {"enabled": False}, ("retry", "enabled"), False),
    ("set_auto_compaction", {"enabled": False}, ("compaction", "enabled"), False),
]


async def test_eight_concurrent_processes_on_one_agent_dir_keep_every_session_and_setting(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    n = 8
    fake_llm.script(*[script.text("ok") for _ in range(n)])
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]

    async def one(index: int) -> str:
        async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
            frames = await client.prompt_and_wait(f"task {index}?")
            assert frames[-1]["type"] == "agent_end"
            if index < len(SETTERS):
                command, fields, _, _ = SETTERS[index]
                response = await client.request({"type": command, **fields})
                assert response["success"] is True, response
            return str((await client.get_state())["sessionFile"])

    files = await asyncio.gather(*(one(i) for i in range(n)))
    assert len(set(files)) == n
    prompts = set()
    for file in map(Path, files):
        assert file.stat().st_mode & 0o777 == 0o600
        lines = [json.loads(line) for line in file.read_text().splitlines()]
        messages = [e["message"] for e in lines if e["type"] == "message"]
        assert [m["role"] for m in messages] == ["user", "assistant"]
        prompts.add(messages[0]["content"][0]["text"])
    assert prompts == {f"task {i}?" for i in range(n)}
    assert not list(workspace.sess.glob("*.lock"))  # every process released its session lock
    stored = yaml.safe_load((workspace.agent / "config.yml").read_text())
    for _, _, path, value in SETTERS:
        node = stored
        for part in path:
            node = node[part]
        assert node == value, path
