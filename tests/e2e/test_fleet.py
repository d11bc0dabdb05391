"""Many xcsh processes on one agent dir: settings changes never undo each other."""

from __future__ import annotations

import yaml

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient


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
