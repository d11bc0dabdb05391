"""A project in a folder xcsh calls another user's (WSL's 0777 /mnt/c, a share, a checkout owned
by the host's uid in a container) gets its context back once the user trusts it, and the start-up
warning says exactly how (docs/security.md, "Folders other users control"). Spawns ``xcsh --mode rpc``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient


async def _start_up(ws: Workspace, cwd: Path, *extra: str) -> tuple[dict[str, object], list[str], str]:
    client = await RpcClient.start(
        args=["--model", "fake/fake-model", "--no-session", *extra],
        cwd=cwd,
        env=ws.env,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        state = await asyncio.wait_for(client.get_state(), 60)
        names = [c["name"] for c in await asyncio.wait_for(client.get_commands(), 60)]
    finally:
        await client.close()
        assert client.process.stderr is not None
        stderr = (await asyncio.wait_for(client.process.stderr.read(), 30)).decode()
    return dict(state), names, stderr


async def test_a_world_writable_project_is_read_after_trust_is_granted_and_again_until_its_code_changes(
    workspace: Workspace, tmp_path: Path
) -> None:
    project = tmp_path / "mnt-c-project"
    (project / ".git").mkdir(parents=True)
    (project / ".xcsh" / "commands").mkdir(parents=True)
    (project / "AGENTS.md").write_text("PROJECT-CONTEXT\n")
    (project / ".xcsh" / "commands" / "deploy.md").write_text("Deploy it\n")
    (project / ".xcsh" / "config.yml").write_text("steeringMode: all\n")
    project.chmod(0o777)
    try:
        state, names, stderr = await _start_up(workspace, project)
        assert "PROJECT-CONTEXT" not in str(state["systemPrompt"]) and "deploy" not in names
        assert state["steeringMode"] != "all"
        remedy = "run xcsh there once with --trust (it also lets the project's .xcsh/extensions and"
        assert remedy in stderr and f"trust.projects in {workspace.agent / 'config.yml'}" in stderr

        state, names, stderr = await _start_up(workspace, project, "--trust")
        assert "PROJECT-CONTEXT" in str(state["systemPrompt"]) and "deploy" in names
        assert state["steeringMode"] == "all" and "other users control" not in stderr

        state, names, _ = await _start_up(workspace, project)  # the trust was recorded
        assert "PROJECT-CONTEXT" in str(state["systemPrompt"]) and state["steeringMode"] == "all"

        (project / ".xcsh" / "config.yml").write_text("steeringMode: all\nbash: {}\n")  # anyone could
        state, names, stderr = await _start_up(workspace, project)
        assert "PROJECT-CONTEXT" not in str(state["systemPrompt"]) and "deploy" not in names
        assert "--trust" in stderr
    finally:
        project.chmod(0o755)


async def test_a_trust_that_cannot_be_recorded_is_warned_about_and_holds_for_this_run(
    workspace: Workspace, tmp_path: Path
) -> None:
    """An agent dir mounted read-only (a container, a sandbox) cannot take the record of a
    ``--trust``: start-up goes on, trusted for this run, and says the trust was not kept."""
    project = tmp_path / "project"
    (project / ".xcsh" / "commands").mkdir(parents=True)
    (project / "AGENTS.md").write_text("PROJECT-CONTEXT\n")
    (project / ".xcsh" / "commands" / "deploy.md").write_text("Deploy it\n")
    (project / ".xcsh" / "config.yml").write_text("steeringMode: all\n")
    project.chmod(0o777)
    # the store's lock cannot be opened, as on a read-only mount (which root, too, cannot write)
    (workspace.agent / "trust.json.lock").mkdir()
    try:
        state, names, stderr = await _start_up(workspace, project, "--trust")
        assert "PROJECT-CONTEXT" in str(state["systemPrompt"]) and "deploy" in names
        assert state["steeringMode"] == "all"
        assert f"could not record the trust of {project}" in stderr and "for this run only" in stderr
        assert not (workspace.agent / "trust.json").exists()
    finally:
        project.chmod(0o755)
