"""The shipped example extensions (examples/extensions) driven through the real process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Workspace
from e2e.helpers import run_xcsh, text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
Frame = dict[str, Any]


def spawn(ws: Workspace, extension: str) -> Any:
    args = ["--model", "fake/fake-model", "--tools", "bash", "--no-session", "-e", str(EXAMPLES / extension)]
    return RpcClient.spawn(args=args, cwd=ws.proj, env=ws.env)


def victim(ws: Workspace) -> Path:
    target = ws.proj / "victim"
    target.mkdir()
    (target / "keep.txt").write_text("precious")
    return target


async def run_guarded_rm(ws: Workspace, fake_llm: FakeLLM, answer: bool) -> tuple[Frame, list[Frame]]:
    target = victim(ws)
    command = f"rm -rf {target}"
    fake_llm.script(script.tool_calls(("c1", "bash", {"command": command})), script.text("done"))
    async with spawn(ws, "guard_rm.py") as client:
        start = client.mark()
        await client.prompt("clean up the victim directory")
        request = await client.wait_for(
            lambda f: f["type"] == "extension_ui_request" and f["method"] == "confirm", since=start
        )
        assert request["title"] == "Dangerous command" and command in request["message"]
        client.send_raw({"type": "extension_ui_response", "id": request["id"], "confirmed": answer})
        frames = await client.wait_for_idle(since=start)
    return request, frames


async def test_guard_blocks_rm_rf_when_the_host_declines(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _, frames = await run_guarded_rm(workspace, fake_llm, False)
    assert (workspace.proj / "victim" / "keep.txt").read_text() == "precious"
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert text_of(end["result"]) == f"Blocked by the user: rm -rf {workspace.proj / 'victim'}"
    tool_result = next(m for m in fake_llm.requests[1].json["messages"] if m["role"] == "tool")
    assert "Blocked by the user" in str(tool_result["content"])


async def test_guard_lets_rm_rf_run_when_the_host_confirms(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _, frames = await run_guarded_rm(workspace, fake_llm, True)
    assert not (workspace.proj / "victim").exists()
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    assert end["isError"] is False


async def test_guard_ignores_harmless_bash_commands(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.tool_calls(("c1", "bash", {"command": "echo hello"})), script.text("done"))
    async with spawn(workspace, "guard_rm.py") as client:
        frames = await client.prompt_and_wait("say hello")
    assert not [f for f in frames if f["type"] == "extension_ui_request"]
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    assert end["isError"] is False and "hello" in text_of(end["result"])


async def test_status_line_reports_turns_and_last_tool(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.tool_calls(("c1", "bash", {"command": "echo hi"})), script.text("ok"))
    async with spawn(workspace, "status_line.py") as client:
        start = client.mark()
        await client.prompt("run something")
        await client.wait_for(
            lambda f: f["type"] == "extension_ui_request" and f.get("statusText") == "idle after 2 turns",
            since=start,
        )
        ui = [f for f in client.frames[start:] if f["type"] == "extension_ui_request"]
        mark = client.mark()
        await client.prompt("/status-reset")
        await client.wait_for(
            lambda f: f["type"] == "extension_ui_request" and f["method"] == "setWidget", since=mark
        )
        reset = [f for f in client.frames[mark:] if f["type"] == "extension_ui_request"]
    shown = [(f["method"], f.get("statusText"), f.get("widgetLines")) for f in ui]
    assert shown == [
        ("setStatus", "turn 1", None),
        ("setWidget", None, ["turns: 1", "last tool: bash"]),
        ("setStatus", "turn 2", None),
        ("setStatus", "idle after 2 turns", None),
    ]
    assert ui[1]["widgetPlacement"] == "belowEditor" and ui[1]["widgetKey"] == "status-line"
    assert [{k: v for k, v in f.items() if k != "id"} for f in reset] == [
        {"type": "extension_ui_request", "method": "setStatus", "statusKey": "status-line"},
        {"type": "extension_ui_request", "method": "setWidget", "widgetKey": "status-line"},
    ]


def test_guard_blocks_in_print_mode_where_confirm_answers_false(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    target = victim(workspace)
    fake_llm.script(
        script.tool_calls(("c1", "bash", {"command": f"rm -rf {target}"})), script.text("gave up")
    )
    args = [
        "--model",
        "fake/fake-model",
        "--tools",
        "bash",
        "--no-session",
        "-e",
        str(EXAMPLES / "guard_rm.py"),
    ]
    result = run_xcsh(workspace, *args, "-p", "clean up")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"gave up\n"
    assert (target / "keep.txt").exists()
    tool_result = next(m for m in fake_llm.requests[1].json["messages"] if m["role"] == "tool")
    assert "Blocked by the user" in str(tool_result["content"])
