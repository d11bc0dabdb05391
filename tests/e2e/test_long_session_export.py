"""``export_html`` of a long session runs beside the event loop, in the real process."""

from __future__ import annotations

import asyncio
import json

from conftest import Workspace
from e2e.helpers import spawn_on_session, write_linear_session
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

PARAGRAPH = "Some *markdown* with `code`, a [link](https://example.com) and a list:\n\n- one\n- two\n"


async def test_a_control_frame_sent_after_a_long_export_is_answered_before_the_export_ends(
    workspace: Workspace,
) -> None:
    session = workspace.sess / "long.jsonl"
    write_linear_session(session, workspace.proj, 3000, text=lambda i: f"{i} {PARAGRAPH}")
    output = workspace.proj / "out" / "page.html"
    process = await spawn_on_session(session, workspace.proj, workspace.env)
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
