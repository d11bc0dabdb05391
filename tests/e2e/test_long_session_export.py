"""``export_html`` of a long session runs beside the event loop, in the real process."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from conftest import Workspace
from xcsh.coding.sessions.entries import new_header, serialize_entry
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

PARAGRAPH = "Some *markdown* with `code`, a [link](https://example.com) and a list:\n\n- one\n- two\n"


def _session(path: Path, cwd: Path, messages: int) -> None:
    lines = [serialize_entry(new_header(str(cwd)))]
    parent = None
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        message = {"role": role, "content": [{"type": "text", "text": f"{i} {PARAGRAPH}"}], "timestamp": i}
        if role == "assistant":
            message.update({"api": "openai-completions", "provider": "fake", "model": "fake-model"})
            message["stopReason"] = "stop"
        entry = {
            "type": "message",
            "id": f"{i:08x}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
        }
        entry["message"] = message
        lines.append(serialize_entry(entry))
        parent = entry["id"]
    path.write_text("\n".join(lines) + "\n")


async def test_a_control_frame_sent_after_a_long_export_is_answered_before_the_export_ends(
    workspace: Workspace,
) -> None:
    session = workspace.sess / "long.jsonl"
    _session(session, workspace.proj, 3000)
    output = workspace.proj / "out" / "page.html"
    argv = [sys.executable, "-m", "xcsh", "--mode", "rpc", "--model", "fake/fake-model", "--no-tools"]
    process = await asyncio.create_subprocess_exec(
        *argv,
        "--session",
        str(session),
        cwd=workspace.proj,
        env=workspace.env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=1 << 24,
    )
    assert process.stdin is not None and process.stdout is not None
    answered: list[str] = []
    try:
        process.stdin.write(b'{"id":"g","type":"get_state"}\n')
        while "g" not in answered:  # started, the session read
            line = await asyncio.wait_for(process.stdout.readline(), 60)
            assert line, "the process closed stdout"
            if json.loads(line).get("type") == "response":
                answered.append(json.loads(line)["id"])
        export = {"id": "x", "type": "export_html", "outputPath": str(output)}
        process.stdin.write(json.dumps(export).encode() + b"\n" + b'{"id":"a","type":"abort"}\n')
        while "x" not in answered:
            line = await asyncio.wait_for(process.stdout.readline(), 60)
            assert line, "the process closed stdout"
            frame = json.loads(line)
            if frame.get("type") == "response":
                assert frame["success"], frame
                answered.append(frame["id"])
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 30)
    # the abort (a control frame, docs: rpc-protocol §2.4, this project's decision) was taken
    # while the export was rendering: the export no longer holds the event loop
    assert answered == ["g", "a", "x"]
    page = output.read_text(encoding="utf-8")
    assert page.count('<article class="entry') == 3000 and page.endswith("</html>\n")


async def test_an_export_that_cannot_be_written_answers_the_error_and_the_process_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("hi"))
    (workspace.proj / "blocker").write_text("a file where a folder should be")
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("hello?")
        failed = await client.request({"id": "x", "type": "export_html", "outputPath": "blocker/page.html"})
        state = await client.get_state()
    blocker = workspace.proj / "blocker"
    assert failed == {
        "type": "response",
        "command": "parse",
        "success": False,
        "error": f"Failed to parse command: [Errno 17] File exists: '{blocker}'",
    }
    assert state["sessionFile"] and blocker.read_text() == "a file where a folder should be"
    assert sorted(p.name for p in workspace.proj.iterdir()) == ["blocker"]
