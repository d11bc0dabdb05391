"""A hostile repository tree cannot hang, flood or reach outside itself at start-up: symlink
loops, YAML alias bombs, FIFOs and links leaving the project (docs/security.md, docs/context.md).
Each test spawns the real ``xcsh --mode rpc`` on a temporary tree."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient

ARGS = ["--model", "fake/fake-model", "--no-session"]


def _alias_bomb(levels: int) -> str:
    """A YAML document of a few hundred bytes whose aliases expand to 10**levels nodes."""
    lines = ["l0: &l0 {" + ", ".join(f"k{i}: 1" for i in range(10)) + "}"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} {{" + ", ".join(f"k{i}: *l{level - 1}" for i in range(10)) + "}")
    return "\n".join(lines) + "\n"


async def _start(ws: Workspace, *extra: str, cwd: Path | None = None) -> RpcClient:
    return await RpcClient.start(
        args=[*ARGS, *extra], cwd=cwd or ws.proj, env=ws.env, stderr=asyncio.subprocess.PIPE
    )


async def _stderr_after_close(client: RpcClient) -> str:
    await client.close()
    assert client.process.stderr is not None
    return (await asyncio.wait_for(client.process.stderr.read(), 30)).decode()


async def test_symlink_loops_under_prompts_do_not_hang_start_up_and_templates_still_load(
    workspace: Workspace,
) -> None:
    prompts = workspace.proj / ".xcsh" / "prompts"
    (prompts / "sub").mkdir(parents=True)
    (prompts / "hello.md").write_text("Say hello\n")
    (prompts / "sub" / "deep.md").write_text("Go deep\n")
    for name in "abc":  # each link points back at prompts/: an exponential walk without a guard
        os.symlink(".", prompts / name)
    os.symlink("..", prompts / "sub" / "up")
    client = await _start(workspace)
    try:
        names = sorted(c["name"] for c in await asyncio.wait_for(client.get_commands(), 60))
    finally:
        await client.close()
    assert "hello" in names and "deep" in names
    assert names.count("hello") == 1


async def test_an_alias_bomb_in_the_project_config_is_refused_naming_the_file_and_xcsh_starts(
    workspace: Workspace,
) -> None:
    config = workspace.proj / ".xcsh" / "config.yml"
    config.parent.mkdir(parents=True)
    config.write_text("steeringMode: all\n" + _alias_bomb(9))
    client = await _start(workspace)
    try:
        state = await asyncio.wait_for(client.get_state(), 60)
    finally:
        stderr = await _stderr_after_close(client)
    assert state["steeringMode"] != "all"  # the refused file's settings are not applied
    assert str(config) in stderr and "alias bomb" in stderr


async def test_an_alias_bomb_in_a_commands_front_matter_is_refused_and_the_command_still_loads(
    workspace: Workspace,
) -> None:
    command = workspace.proj / ".xcsh" / "commands" / "boom.md"
    command.parent.mkdir(parents=True)
    command.write_text("---\n" + _alias_bomb(9) + "---\nThe body\n")
    client = await _start(workspace)
    try:
        commands = await asyncio.wait_for(client.get_commands(), 60)
    finally:
        await client.close()
    assert "boom" in [c["name"] for c in commands]
