"""Finding sessions reads headers as leniently as opening them (review 1 of the eighth session, D5).

session-format §2: blank and unparseable lines are skipped, the first parsed object is the
header. A session file whose first line is blank, or whose header line is longer than 4 KiB
(a long ``set_session_name``), is found by ``--session <id prefix>``, ``--continue`` and
``list_sessions``, as it is by ``--session <path>``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Workspace
from e2e.helpers import write_linear_session
from xcsh.rpc.client import RpcClient

LONG_TITLE = "a pasted prompt " * 400  # 6 400 characters: the header line passes 4 KiB


def _session(ws: Workspace, shape: str) -> tuple[Path, str]:
    path = ws.sess / "2026-01-01T00-00-00-000Z_lookup.jsonl"
    write_linear_session(path, ws.proj, 2, lambda i: f"m{i}")
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    if shape == "blank first line":
        path.write_text("\n" + "".join(lines))
    elif shape == "garbage first line":
        path.write_text("not json\n" + "".join(lines))
    else:
        header["title"] = LONG_TITLE.strip()
        path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return path, str(header["id"])


@pytest.mark.parametrize("shape", ["blank first line", "garbage first line", "header over 4 KiB"])
async def test_a_session_with_a_leading_blank_line_or_a_long_header_is_found_by_id_continue_and_listing(
    workspace: Workspace, shape: str
) -> None:
    path, session_id = _session(workspace, shape)
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    async with RpcClient.spawn(
        args=[*args, "--session", session_id[:10]], cwd=workspace.proj, env=workspace.env
    ) as client:
        by_id = await client.get_state()
        listed = [s["path"] for s in (await client.call({"type": "list_sessions"}))["sessions"]]
    async with RpcClient.spawn(args=[*args, "--continue"], cwd=workspace.proj, env=workspace.env) as client:
        continued = await client.get_state()
    assert by_id["sessionFile"] == str(path) and by_id["messageCount"] == 2
    assert listed == [str(path)]
    assert continued["sessionFile"] == str(path) and continued["messageCount"] == 2
