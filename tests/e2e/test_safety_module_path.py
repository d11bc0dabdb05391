"""A repository's `msgspec.py` or `json.py` never shadows a module of xcsh: the client spawns
`python -P -m xcsh`, and a plain `python -m xcsh` drops the working directory from `sys.path`
before importing anything but the package itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import Workspace
from xcsh.rpc.client import RpcClient

ARGS = ["--model", "fake/fake-model", "--no-tools", "--no-session"]


@pytest.mark.parametrize("command", [None, [sys.executable, "-m", "xcsh"]], ids=["client-default", "plain-m"])
async def test_modules_in_the_working_directory_never_shadow_xcshs_imports(
    workspace: Workspace, tmp_path: Path, command: list[str] | None
) -> None:
    marker = tmp_path / "shadowed"
    for name in ("msgspec", "json", "yaml", "httpx2", "asyncio_shadow"):
        (workspace.proj / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n")
    async with RpcClient.spawn(args=ARGS, cwd=workspace.proj, env=workspace.env, command=command) as client:
        state = await client.get_state()
    assert state["model"]["id"] == "fake-model"
    assert not marker.exists(), marker.read_text()
