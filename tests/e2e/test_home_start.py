"""Started in the home directory, xcsh works elsewhere (docs/decisions.md, "Started in the home
directory"): in ``~/tmp`` when it is the user's own, else in xcsh's private ``tmp`` folder (next
to the agent dir, or inside an agent dir ``PI_CODING_AGENT_DIR`` moved), never in a shared
``/tmp``; ``--continue``/``--resume`` still go on with a session made in the home directory."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

ARGS = ["--model", "fake/fake-model", "--no-tools"]


def _home(workspace: Workspace) -> Path:
    home = workspace.proj.parent / "home"
    home.mkdir(exist_ok=True)
    workspace.env["HOME"] = str(home)
    return home


async def _run(
    workspace: Workspace, cwd: Path, *extra: str, prompt: str | None = None
) -> tuple[dict[str, Any], str]:
    """``get_state`` of an xcsh started in ``cwd`` (after ``prompt``, if any), and its stderr."""
    client = await RpcClient.start(
        args=[*ARGS, *extra], cwd=cwd, env=workspace.env, stderr=asyncio.subprocess.PIPE
    )
    try:
        if prompt is not None:
            await client.prompt_and_wait(prompt, timeout=60)
        state = await asyncio.wait_for(client.get_state(), 60)
    finally:
        await client.close()
    assert client.process.stderr is not None
    return state, (await asyncio.wait_for(client.process.stderr.read(), 30)).decode()


def _cwd(state: dict[str, Any]) -> str:
    [line] = [
        line for line in str(state["systemPrompt"]).splitlines() if "Current working directory:" in line
    ]
    return line.split("Current working directory:", 1)[1].strip()


async def test_started_in_home_xcsh_works_in_a_private_folder_never_the_shared_tmp(
    workspace: Workspace,
) -> None:
    home = _home(workspace)
    # the default agent dir (~/.xcsh/agent): the private folder is ~/.xcsh/tmp
    del workspace.env["PI_CODING_AGENT_DIR"]
    shutil.copytree(workspace.agent, home / ".xcsh" / "agent")
    state, stderr = await _run(workspace, home, "--no-session")
    private = home / ".xcsh" / "tmp"
    assert _cwd(state) == str(private)
    assert private.stat().st_mode & 0o777 == 0o700
    assert f"working in {private}" in stderr


async def test_with_the_agent_dir_moved_the_private_folder_is_inside_it_not_in_home(
    workspace: Workspace,
) -> None:
    home = _home(workspace)
    state, stderr = await _run(workspace, home, "--no-session")
    private = workspace.agent / "tmp"
    assert _cwd(state) == str(private) and f"working in {private}" in stderr
    assert private.stat().st_mode & 0o777 == 0o700
    assert not (home / ".xcsh").exists()


async def test_continue_and_resume_in_home_go_on_with_a_session_made_in_home_until_a_newer_one_exists(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    home = _home(workspace)
    fake_llm.script(script.text("made in home"), script.text("made in tmp"))
    # a session made in the home directory (before xcsh moved out of it, or with --allow-home)
    made, _ = await _run(workspace, home, "--allow-home", prompt="first")
    at_home = Path(made["sessionFile"])
    assert _cwd(made) == str(home)
    old = at_home.stat().st_mtime - 60
    os.utime(at_home, (old, old))

    state, stderr = await _run(workspace, home, "--continue")
    assert state["sessionFile"] == str(at_home) and _cwd(state) == str(home)
    assert state["messageCount"] > 0 and "staying there to go on with a session made there" in stderr
    state, _ = await _run(workspace, home, "--resume", made["sessionId"])
    assert state["sessionFile"] == str(at_home) and _cwd(state) == str(home)

    # a newer session in the private folder is the one to continue, there
    newer, _ = await _run(workspace, home, prompt="second")
    private = workspace.agent / "tmp"
    assert _cwd(newer) == str(private) and newer["sessionFile"] != str(at_home)
    state, stderr = await _run(workspace, home, "--continue")
    assert state["sessionFile"] == newer["sessionFile"] and _cwd(state) == str(private)
    assert f"working in {private}" in stderr
