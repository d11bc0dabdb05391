"""Tool approvals (docs/approvals.md) through the extension UI confirm flow, against the real process."""

from __future__ import annotations

from typing import Any

from conftest import Workspace, tool_results
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]


def spawn(ws: Workspace, *args: str) -> Any:
    return RpcClient.spawn(
        args=["--model", "fake/fake-model", "--no-session", "--tools", "bash,write", *args],
        cwd=ws.proj,
        env=ws.env,
    )


def is_confirm(frame: Frame) -> bool:
    return frame.get("type") == "extension_ui_request" and frame.get("method") == "confirm"


def end_of(frames: list[Frame], call_id: str) -> Frame:
    return next(f for f in frames if f["type"] == "tool_execution_end" and f["toolCallId"] == call_id)


async def test_host_allows_a_bash_call_and_denies_a_write_which_never_touches_the_disk(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(("c1", "bash", {"command": "echo ran > ran.txt"})),
        script.tool_calls(("c2", "write", {"path": "secret.txt", "content": "hello\nworld\n"})),
        script.text("done"),
    )
    async with spawn(workspace, "--approve", "bash,write") as client:
        mark = client.mark()
        await client.prompt("go?")
        ask_bash = await client.wait_for(is_confirm, since=mark)
        assert ask_bash["title"] == "Allow bash?" and ask_bash["message"] == "$ echo ran > ran.txt"
        assert isinstance(ask_bash["timeout"], int) and ask_bash["timeout"] > 0
        client.send_raw({"type": "extension_ui_response", "id": ask_bash["id"], "confirmed": True})
        ask_write = await client.wait_for(lambda f: is_confirm(f) and f["id"] != ask_bash["id"], since=mark)
        assert ask_write["title"] == "Allow write to secret.txt?"
        assert "+hello" in ask_write["message"] and "+world" in ask_write["message"]
        client.send_raw({"type": "extension_ui_response", "id": ask_write["id"], "confirmed": False})
        frames = await client.wait_for_idle(since=mark)
    assert (workspace.proj / "ran.txt").read_text() == "ran\n"
    assert not (workspace.proj / "secret.txt").exists()
    assert end_of(frames, "c1")["isError"] is False
    denied = end_of(frames, "c2")
    assert denied["isError"] is True
    assert denied["result"]["content"] == [
        {"type": "text", "text": "The user denied this write call; it was not run."}
    ]
    seen = tool_results(fake_llm.requests[2].json)
    assert seen["c2"] == "The user denied this write call; it was not run."


async def test_unanswered_approval_times_out_and_denies(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.config("approvals:\n  timeoutSeconds: 0.2\n")
    fake_llm.script(script.tool_calls(("c1", "bash", {"command": "touch late.txt"})), script.text("ok"))
    async with spawn(workspace, "--approve", "bash") as client:
        frames = await client.prompt_and_wait("go?")
    assert any(is_confirm(f) for f in frames)
    text = end_of(frames, "c1")["result"]["content"][0]["text"]
    assert text == "No approval for this bash call within 0.2s; it was denied and not run."
    assert not (workspace.proj / "late.txt").exists()


async def test_abort_cancels_a_pending_approval(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.tool_calls(("c1", "bash", {"command": "touch never.txt"})))
    async with spawn(workspace, "--approve", "*") as client:
        mark = client.mark()
        await client.prompt("go?")
        await client.wait_for(is_confirm, since=mark)
        await client.abort()
        frames = await client.wait_for_idle(since=mark)
        state = await client.get_state()
    assert "aborted while waiting for approval" in end_of(frames, "c1")["result"]["content"][0]["text"]
    assert state["isStreaming"] is False
    assert not (workspace.proj / "never.txt").exists()


async def test_allowed_prefixes_and_paths_run_without_asking(workspace: Workspace, fake_llm: FakeLLM) -> None:
    # allowCommands apply only in a project the user named trusted (review 5 N2)
    workspace.config(
        f'trust:\n  projects: ["{workspace.proj}"]\n'
        'approvals:\n  tools: [bash, write]\n  allowCommands: ["echo"]\n  allowPaths: ["notes/"]\n'
    )
    fake_llm.script(
        script.tool_calls(
            ("c1", "bash", {"command": "echo hi"}), ("c2", "write", {"path": "notes/a.md", "content": "x"})
        ),
        script.text("ok"),
    )
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("go?")
    assert not any(is_confirm(f) for f in frames)
    assert end_of(frames, "c1")["isError"] is False and end_of(frames, "c2")["isError"] is False
    assert (workspace.proj / "notes" / "a.md").read_text() == "x"


async def test_a_host_without_the_approval_flag_sees_no_confirm_requests(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("c1", "bash", {"command": "echo free"})), script.text("ok"))
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("go?")
    assert not any(f["type"] == "extension_ui_request" for f in frames)
    assert end_of(frames, "c1")["isError"] is False
