"""What extensions hand back is normalised at the boundary, and their own CancelledError is a failure.

Small extension files written per test, run by the real ``xcsh --mode rpc`` (and print mode)
against the fake LLM.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Workspace, tool_results
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]
ARGS = ["--model", "fake/fake-model", "--no-tools"]

ECHO_TOOL = """
import asyncio
from pathlib import Path

def setup(xcsh):
    def echo(args, call):
        return "echo:" + args.get("text", "")
    xcsh.register_tool("echo", "Echo.", {"type": "object", "properties": {"text": {"type": "string"}}}, echo)
"""


def extension(ws: Workspace, body: str) -> Path:
    path = ws.proj / "ext.py"
    path.write_text(ECHO_TOOL + body)
    return path


def spawn(ws: Workspace, ext: Path) -> Any:
    ws.config("retry:\n  enabled: false\n")
    return RpcClient.spawn(args=[*ARGS, "-e", str(ext)], cwd=ws.proj, env=ws.env)


def of_type(frames: list[Frame], kind: str) -> list[Frame]:
    return [f for f in frames if f["type"] == kind]


def session_messages(path: str) -> list[Frame]:
    entries = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return [e["message"] for e in entries if e["type"] == "message"]


def assert_every_call_answered(path: str) -> None:
    messages = session_messages(path)
    calls = [
        b["id"] for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"
    ]
    answered = [m["toolCallId"] for m in messages if m["role"] == "toolResult"]
    assert calls and calls == answered


ECHO_THEN_TEXT = (script.tool_calls(("c1", "echo", {"text": "hi"})), script.text("done"))


async def test_a_bare_string_tool_result_reply_becomes_one_text_block_and_later_prompts_still_work(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ext = extension(
        workspace,
        """
    def on_result(event, ctx):
        return {"content": "REPLACED"}
    xcsh.on("tool_result", on_result)
""",
    )
    fake_llm.script(*ECHO_THEN_TEXT, script.text("again"))
    async with spawn(workspace, ext) as client:
        frames = await client.prompt_and_wait("go")
        end = of_type(frames, "tool_execution_end")[0]
        assert end["result"]["content"] == [{"type": "text", "text": "REPLACED"}]
        again = await client.prompt_and_wait("second")
        assert of_type(again, "message_end")[-1]["message"]["stopReason"] == "stop"
        session_file = (await client.get_state())["sessionFile"]
    assert tool_results(fake_llm.requests[2].json) == {"c1": "REPLACED"}
    assert_every_call_answered(session_file)


async def test_a_malformed_tool_result_reply_is_reported_and_ignored_and_odd_details_become_plain_json(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ext = extension(
        workspace,
        """
    def details(event, ctx):
        return {"details": {"path": Path("/x"), "tags": {"a"}}}
    def bad_content(event, ctx):
        return {"content": [42], "details": {"lost": True}}
    xcsh.on("tool_result", details)
    xcsh.on("tool_result", bad_content)
""",
    )
    fake_llm.script(*ECHO_THEN_TEXT)
    async with spawn(workspace, ext) as client:
        frames = await client.prompt_and_wait("go")
        session_file = (await client.get_state())["sessionFile"]
    errors = of_type(client.frames, "extension_error")
    assert [(e["extensionPath"], e["event"]) for e in errors] == [(str(ext), "tool_result")]
    assert "content block" in errors[0]["error"]
    end = of_type(frames, "tool_execution_end")[0]
    assert end["result"] == {
        "content": [{"type": "text", "text": "echo:hi"}],
        "details": {"path": "/x", "tags": ["a"]},
    }
    assert (
        of_type(frames, "agent_end") and of_type(frames, "message_end")[-1]["message"]["stopReason"] == "stop"
    )
    assert_every_call_answered(session_file)


async def test_send_message_turns_string_items_into_text_blocks_and_refuses_malformed_content(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ext = extension(
        workspace,
        """
    def note(args, ctx):
        xcsh.send_message("note", ["just a string", {"type": "text", "text": "block"}])
    def bad(args, ctx):
        xcsh.send_message("note", [{"type": "text"}])
    xcsh.register_command("note", note)
    xcsh.register_command("bad", bad)
""",
    )
    fake_llm.script(script.text("one"))
    async with spawn(workspace, ext) as client:
        await client.prompt("/note")
        await client.prompt("/bad")
        frames = await client.prompt_and_wait("after")
        session_file = (await client.get_state())["sessionFile"]
    errors = of_type(client.frames, "extension_error")
    assert [(e["extensionPath"], e["event"]) for e in errors] == [("command:bad", "command")]
    assert of_type(frames, "message_end")[-1]["message"]["content"] == [{"type": "text", "text": "one"}]
    entries = [json.loads(line) for line in Path(session_file).read_text().splitlines()]
    customs = [e for e in entries if e["type"] == "custom_message" and e["customType"] == "note"]
    assert [e["content"] for e in customs] == [
        [{"type": "text", "text": "just a string"}, {"type": "text", "text": "block"}]
    ]


SELF_CANCELLING_TOOL = """
    async def cancelled(args, call):
        inner = asyncio.ensure_future(asyncio.sleep(5))
        inner.cancel()
        await inner  # an awaited task of the extension's own was cancelled
    xcsh.register_tool("cancelled", "Cancelled.", {"type": "object", "properties": {}}, cancelled)
"""


async def test_a_cancelled_error_from_an_extension_tool_is_an_error_result_and_the_run_ends(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ext = extension(workspace, SELF_CANCELLING_TOOL)
    fake_llm.script(script.tool_calls(("c1", "cancelled", {})), script.text("done"), script.text("again"))
    async with spawn(workspace, ext) as client:
        frames = await client.prompt_and_wait("go", timeout=30)
        end = of_type(frames, "tool_execution_end")[0]
        assert end["isError"] is True and "CancelledError" in end["result"]["content"][0]["text"]
        assert frames[-1]["type"] == "agent_end"
        again = await client.prompt_and_wait("second", timeout=30)
        assert of_type(again, "message_end")[-1]["message"]["content"] == [{"type": "text", "text": "again"}]
        session_file = (await client.get_state())["sessionFile"]
    assert_every_call_answered(session_file)


async def test_a_cancelled_error_from_an_event_handler_is_reported_and_blocks_the_call(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ext = extension(
        workspace,
        """
    def on_call(event, ctx):
        raise asyncio.CancelledError()
    async def on_turn(event, ctx):
        raise asyncio.CancelledError()
    xcsh.on("tool_call", on_call)
    xcsh.on("turn_start", on_turn)
""",
    )
    fake_llm.script(*ECHO_THEN_TEXT)
    async with spawn(workspace, ext) as client:
        frames = await client.prompt_and_wait("go", timeout=30)
        end = of_type(frames, "tool_execution_end")[0]
        assert end["isError"] is True and end["result"]["content"][0]["text"].endswith(
            "failed: CancelledError"
        )
        assert frames[-1]["type"] == "agent_end"
        session_file = (await client.get_state())["sessionFile"]
    events = sorted({e["event"] for e in of_type(client.frames, "extension_error")})
    assert events == ["tool_call", "turn_start"]
    assert_every_call_answered(session_file)


def test_print_mode_finishes_when_an_extension_tool_raises_cancelled_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ext = extension(workspace, SELF_CANCELLING_TOOL)
    workspace.config("retry:\n  enabled: false\n")
    fake_llm.script(script.tool_calls(("c1", "cancelled", {})), script.text("done"))
    result = run_xcsh(workspace, *ARGS, "--no-session", "-e", str(ext), "-p", "go")
    assert (result.returncode, result.stdout) == (0, b"done\n"), result.stderr[-2000:]
    assert b"Traceback" not in result.stderr
