"""Session listings across projects see only project folders' sessions, never a session's artifacts.

A session's sub-folder holds its artifacts (session-format §1), among them the sessions of
its sub-agents: ``list_sessions`` with scope ``all`` and the global ``--session`` prefix
search must not take those for sessions of their own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from conftest import BASE_ARGS, Workspace
from e2e.helpers import write_linear_session
from xcsh.coding.paths import sessions_root
from xcsh.rpc.client import RpcClient


def stored_sessions(ws: Workspace) -> tuple[Path, Path]:
    """A parent session in another project's folder and a sub-agent session among its artifacts."""
    folder = sessions_root(ws.env) / "-elsewhere-"
    folder.mkdir(parents=True)
    parent = folder / "2026-01-01T00-00-00-000Z_parentaaaa.jsonl"
    write_linear_session(parent, ws.proj.parent / "elsewhere", 2, lambda i: f"parent {i}")
    artifacts = folder / parent.stem
    artifacts.mkdir()
    child = artifacts / "Zchild.jsonl"
    write_linear_session(child, ws.proj.parent / "elsewhere", 2, lambda i: f"<assignment> child {i}")
    return parent, child


async def test_list_sessions_scope_all_lists_no_sub_agent_session_and_the_cache_keeps_none(
    workspace: Workspace,
) -> None:
    parent, child = stored_sessions(workspace)
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        listed = await client.call({"type": "list_sessions", "scope": "all"})
    assert [s["path"] for s in listed["sessions"]] == [str(parent)]
    cache = (workspace.agent / "cache" / "session-info.msgpack").read_bytes()
    assert str(parent).encode() in cache and str(child).encode() not in cache
    assert msgspec.msgpack.decode(cache)  # still a readable cache


def test_a_global_session_prefix_does_not_match_a_sub_agent_session(workspace: Workspace) -> None:
    stored_sessions(workspace)
    workspace.config("retry:\n  enabled: false\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "xcsh",
            "--model",
            "fake/fake-model",
            "--no-tools",
            "--session",
            "zchild",
            "-p",
            "hi",
        ],
        cwd=workspace.proj,
        env=workspace.env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert b'No session found matching "zchild"' in result.stderr, result.stderr[-2000:]
