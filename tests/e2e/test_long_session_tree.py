"""``get_tree`` on a session longer than Python's recursion limit is answered, by the real process."""

from __future__ import annotations

import asyncio

from conftest import Workspace
from e2e.helpers import spawn_on_session, write_linear_session
from xcsh.rpc.client import RpcClient, _loads


async def test_get_tree_of_a_3000_entry_linear_session_is_answered_with_one_node_per_entry(
    workspace: Workspace,
) -> None:
    session = workspace.sess / "long.jsonl"
    write_linear_session(session, workspace.proj, 3000, text=lambda i: f"m{i}")
    process = await spawn_on_session(session, workspace.proj, workspace.env)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b'{"id":"t1","type":"get_tree"}\n')
        answer = b""
        while not answer.startswith(b'{"id":"t1"'):
            answer = await asyncio.wait_for(process.stdout.readline(), 60)
            assert answer, "the process closed stdout without answering get_tree"
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 30)
    assert answer.startswith(
        b'{"id":"t1","type":"response","command":"get_tree","success":true,"data":{"tree":['
    )
    assert answer.count(b'"children":[') == 3000
    assert answer.endswith(
        b'"leafId":"00000bb7","path":[' + b",".join(b'"%08x"' % i for i in range(3000)) + b"]}}\n"
    )
    # the project's client reads the line too, deeper than a recursive parser follows
    assert _loads(answer.decode())["data"]["leafId"] == "00000bb7"


async def test_the_clients_get_tree_of_a_3000_entry_session_gives_the_whole_tree(
    workspace: Workspace,
) -> None:
    session = workspace.sess / "long.jsonl"
    write_linear_session(session, workspace.proj, 3000, text=lambda i: f"m{i}")
    args = ["--model", "fake/fake-model", "--no-tools", "--session", str(session)]
    client = await RpcClient.start(args=args, cwd=workspace.proj, env=workspace.env, timeout=60)
    try:
        tree = await client.get_tree()
    finally:
        await client.close()
    node, depth = tree["tree"][-1], 0
    while node["children"]:
        node, depth = node["children"][-1], depth + 1
    assert node["id"] == tree["leafId"] == "00000bb7"
    assert tree["path"][-1] == "00000bb7" and depth >= 2999
