"""The session file after a pruning rewrite (in the background) and the appends that follow it,
in the real process: every entry once, in order, and the bytes of encoding each entry again.

The store-level tests (tests/coding/sessions/test_session_rewrite_background.py) hold a rewrite
at a known point to show that appends and callers never wait for it; here the real process
prunes after a run and goes on answering and appending while it rewrites.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Workspace
from e2e.helpers import text_of
from xcsh.coding.sessions.entries import serialize_entry
from xcsh.coding.sessions.store import SessionStore
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

OUTPUT_CHARS = 45_000  # about 11 250 estimated tokens per bash output


def _bash(call_id: str, fill: str) -> tuple[str, str, dict[str, Any]]:
    return (call_id, "bash", {"command": f"printf '%*s' {OUTPUT_CHARS} '' | tr ' ' {fill}"})


async def test_after_a_pruning_rewrite_the_file_holds_every_entry_once_in_order_as_encoded_again(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(_bash("b1", "a"), _bash("b2", "b")),
        script.tool_calls(_bash("b3", "c"), _bash("b4", "d"), _bash("b5", "e"), _bash("b6", "f")),
        script.text("done"),
        script.text("next answer"),
        script.text("last answer"),
    )
    args = ["--model", "fake/fake-model", "--tools", "bash", "--session-dir", str(workspace.sess)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("look around?", timeout=30)  # pruned after this run
        state = await client.get_state()  # sent at agent_end, while the file is being rewritten
        await client.set_session_name("renamed")  # a second rewrite
        listed = await client.list_sessions()  # the new name at once, rewritten yet or not
        await client.prompt_and_wait("next?", timeout=30)  # appends behind them
        await client.prompt_and_wait("last?", timeout=30)
        messages = await client.get_messages()

    path = Path(state["sessionFile"])
    assert [(s["path"], s.get("name")) for s in listed if s["current"]] == [(str(path), "renamed")]
    live = {m["toolCallId"]: m for m in messages if m["role"] == "toolResult"}
    assert {k for k, m in live.items() if "prunedAt" in m} == {"b1", "b2"}

    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["title"] == "renamed"
    stored = [e["message"] for e in lines[1:] if e["type"] == "message"]
    assert stored == messages  # every message once, in order, pruned ones pruned
    assert [text_of(m) for m in stored if m["role"] == "user"] == ["look around?", "next?", "last?"]

    with SessionStore.open(path, cwd_for_new=workspace.proj) as reopened:
        objects = [reopened.header, *reopened.entries]
        assert path.read_bytes() == b"".join((serialize_entry(o) + "\n").encode("utf-8") for o in objects)
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []
