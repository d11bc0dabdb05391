"""Wire details of rpc-protocol.md checked in review, against the real process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Workspace
from xcsh.rpc.client import RpcClient

PLAIN = ["--no-tools", "--no-session"]


def spawn(ws: Workspace, *args: str) -> Any:
    return RpcClient.spawn(args=[*args, *PLAIN], cwd=ws.proj, env=ws.env)


def extension(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return path


async def test_scoped_cycle_applies_each_models_own_level_and_omits_an_unset_one(
    workspace: Workspace,
) -> None:
    """§5.3: scoped cycling applies the scoped model's level; an unset level is omitted, not "off"."""
    scope = "fake-reasoner:low,fake-model"
    async with spawn(workspace, "--model", "fake/fake-model", "--models", scope) as client:
        to_low = await client.request({"id": "c1", "type": "cycle_model"})
        to_plain = await client.request({"id": "c2", "type": "cycle_model"})
    assert to_low["data"] == {**to_low["data"], "thinkingLevel": "low", "isScoped": True}
    assert to_low["data"]["model"]["id"] == "fake-reasoner"
    assert to_plain["data"]["model"]["id"] == "fake-model" and to_plain["data"]["isScoped"] is True
    assert "thinkingLevel" not in to_plain["data"]
