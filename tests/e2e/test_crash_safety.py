"""SIGKILL at random moments of a streamed run with tool calls never corrupts the session file."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from conftest import Workspace
from xcsh.coding.sessions.store import SessionStore
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _steps() -> list[Any]:
    long_text = [f"chunk {i} of a long answer. " for i in range(60)]
    return [
        script.tool_calls(
            ("w1", "write", {"path": "a.txt", "content": "alpha\n"}), ("r1", "read", {"path": "a.txt"})
        ),
        script.Reply(
            text=long_text,
            tool_calls=[script.ToolCallSpec("b1", "bash", json.dumps({"command": "echo one && echo two"}))],
        ),
        script.Reply(text=long_text),
    ]


async def test_sigkill_mid_run_leaves_a_parseable_file_with_every_reported_entry(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    rng = random.Random(20261129)
    for iteration in range(8):
        session_dir = workspace.sess / f"run{iteration}"
        fake_llm.reset()
        fake_llm.script(*_steps())
        args = ["--model", "fake/fake-model", "--tools", "read,write,bash", "--session-dir", str(session_dir)]
        client = await RpcClient.start(args=args, cwd=workspace.proj, env=workspace.env)
        session_file = Path((await client.get_state())["sessionFile"])
        kill_after = rng.randint(5, 140)
        mark = client.mark()
        await client.prompt("do the work?")
        seen = [0]

        def enough(frame: dict[str, Any], limit: int = kill_after, seen: list[int] = seen) -> bool:
            seen[0] += 1
            return seen[0] >= limit or frame.get("type") == "agent_end"

        await client.wait_for(enough, since=mark, timeout=30)
        client.process.kill()
        await client.process.wait()
        await client.close()
        reported = [f["message"] for f in client.frames[mark:] if f.get("type") == "message_end"]
        if not reported:
            continue  # killed before any message_end was written: nothing was acknowledged
        # every line parses, and every message a message_end reported is in it (the file
        # is created at the first persisted message, session-format §4 project decision)
        lines = session_file.read_bytes().split(b"\n")
        assert lines[-1] == b"", f"iteration {iteration}: torn tail after kill at frame {kill_after}"
        parsed = [json.loads(line) for line in lines[:-1]]
        stored = [e["message"] for e in parsed[1:] if e["type"] == "message"]
        stored_keys = {(m["role"], m.get("timestamp"), m.get("toolCallId")) for m in stored}
        for message in reported:
            assert (message["role"], message.get("timestamp"), message.get("toolCallId")) in stored_keys
        reopened = SessionStore.open(session_file, cwd_for_new=workspace.proj)
        try:
            assert len(reopened.entries) == len(parsed) - 1
        finally:
            reopened.close()
    fake_llm.reset()  # runs were killed on purpose before consuming their steps
