"""New sessions and branches stay in the process's own session folder after a switch
(review 1 of the eighth session, D2).

The real process in project one switches to a session of project two (picked, say, from
``list_sessions`` scope ``all``), then branches and starts a new session: both files go to
project one's folder with project one as their ``cwd``, so its ``list_sessions`` and
``--continue`` find them (they were written in project two's folder, where no one looked).
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Workspace
from e2e.helpers import write_linear_session
from xcsh.coding.paths import session_dir_for, sessions_root
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

ARGS = ["--model", "fake/fake-model", "--no-tools"]


def _header(path: Path) -> dict[str, object]:
    header: dict[str, object] = json.loads(path.read_text().splitlines()[0])
    return header


async def test_branch_and_new_session_after_switching_to_another_projects_session_stay_in_this_project(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("mine"))
    other_project = workspace.proj.parent / "proj2"
    other_project.mkdir()
    root = sessions_root(workspace.env)
    other_folder = session_dir_for(other_project, root)
    other_folder.mkdir(parents=True)
    other = other_folder / "2026-01-01T00-00-00-000Z_otherproj.jsonl"
    write_linear_session(other, other_project, 4, lambda i: f"m{i}")
    own_folder = session_dir_for(workspace.proj, root)
    async with RpcClient.spawn(args=ARGS, cwd=workspace.proj, env=workspace.env) as client:
        await client.switch_session(str(other))
        await client.call({"type": "branch", "entryId": "00000002"})
        branched = Path((await client.get_state())["sessionFile"])
        await client.new_session()
        await client.prompt_and_wait("new work in project one?")
        new = Path((await client.get_state())["sessionFile"])
        listed = {s["path"] for s in (await client.call({"type": "list_sessions"}))["sessions"]}
    assert branched.parent == own_folder and _header(branched)["cwd"] == str(workspace.proj)
    assert new.parent == own_folder and _header(new)["cwd"] == str(workspace.proj)
    assert {str(branched), str(new)} <= listed
    async with RpcClient.spawn(args=[*ARGS, "--continue"], cwd=workspace.proj, env=workspace.env) as client:
        continued = await client.get_state()
    assert continued["sessionFile"] == str(new) and continued["messageCount"] == 2
