"""Scenarios S37–S41 (extension UI sub-protocol) and the extension lifecycle, against the real process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

UI_EXT = Path(__file__).resolve().parent / "extensions" / "ui_test_ext.py"
Frame = dict[str, Any]


def spawn(ws: Workspace, *extra: str, env: dict[str, str] | None = None) -> Any:
    return RpcClient.spawn(
        args=[*BASE_ARGS, "-e", str(UI_EXT), *extra], cwd=ws.proj, env=env if env is not None else ws.env
    )


def ui_request(method: str) -> Any:
    return lambda f: f.get("type") == "extension_ui_request" and f.get("method") == method


def ui_frames(client: RpcClient, since: int) -> list[Frame]:
    return [f for f in client.frames[since:] if f["type"] == "extension_ui_request"]


async def settle(client: RpcClient) -> int:
    """A get_state round trip: every frame caused by earlier input has been written by then."""
    await client.get_state()
    return client.mark()


async def test_s37_confirm_round_trip_consumes_the_prompt_without_a_run(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        start = client.mark()
        await client.prompt("/ui-confirm")
        request = await client.wait_for(ui_request("confirm"), since=start)
        assert request == {
            "type": "extension_ui_request",
            "id": request["id"],
            "method": "confirm",
            "title": "Confirm",
            "message": "Continue?",
            "timeout": 30000,
        }
        client.send_raw({"type": "extension_ui_response", "id": request["id"], "confirmed": True})
        notify = await client.wait_for(ui_request("notify"), since=start)
        assert notify == {
            "type": "extension_ui_request",
            "id": notify["id"],
            "method": "notify",
            "message": "confirm=true",
        }
        assert notify["id"] and notify["id"] != request["id"]
        await settle(client)
        assert not [f for f in client.frames[start:] if f["type"] == "agent_start"]


async def confirm_answer(ws: Workspace, answer: Frame) -> str:
    async with spawn(ws) as client:
        start = client.mark()
        await client.prompt("/ui-confirm")
        request = await client.wait_for(ui_request("confirm"), since=start)
        client.send_raw({"type": "extension_ui_response", "id": request["id"], **answer})
        notify = await client.wait_for(ui_request("notify"), since=start)
        return str(notify["message"])


async def test_s37_cancelled_or_value_answers_to_confirm_resolve_to_false(workspace: Workspace) -> None:
    assert await confirm_answer(workspace, {"cancelled": True}) == "confirm=false"
    assert await confirm_answer(workspace, {"value": "yes"}) == "confirm=false"
    assert await confirm_answer(workspace, {"confirmed": False}) == "confirm=false"


async def test_s38_dialog_timeout_resolves_to_default_and_late_answer_is_ignored(
    workspace: Workspace,
) -> None:
    async with spawn(workspace) as client:
        start = client.mark()
        await client.prompt("/ui-input")
        request = await client.wait_for(ui_request("input"), since=start)
        assert {k: v for k, v in request.items() if k != "id"} == {
            "type": "extension_ui_request",
            "method": "input",
            "title": "Branch name",
            "placeholder": "feature/...",
            "timeout": 300,
        }
        notify = await client.wait_for(ui_request("notify"), since=start)
        assert (notify["message"], notify["notifyType"]) == ("input=none", "warning")
        # nothing but the extension's own notify appeared when the timeout fired
        after_prompt = [f for f in client.frames[start:] if f["type"] != "response"]
        assert [f["method"] for f in after_prompt] == ["input", "notify"]
        mark = client.mark()
        client.send_raw({"type": "extension_ui_response", "id": request["id"], "value": "too late"})
        await client.get_state()
        assert [f for f in client.frames[mark:] if f["type"] != "response"] == []


async def test_s38_answered_input_yields_the_value(workspace: Workspace) -> None:
    # same dialog without a timeout, so the answer cannot race the 300 ms timer
    async with spawn(workspace) as client:
        start = client.mark()
        await client.prompt("/ui-input-wait")
        request = await client.wait_for(ui_request("input"), since=start)
        assert "timeout" not in request
        client.send_raw({"type": "extension_ui_response", "id": request["id"], "value": "feature/rpc-host"})
        notify = await client.wait_for(ui_request("notify"), since=start)
    assert notify["message"] == "input=feature/rpc-host"


async def test_s39_select_without_timeout_ignores_unknown_response_ids(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        start = client.mark()
        await client.prompt("/ui-select")
        request = await client.wait_for(ui_request("select"), since=start)
        assert {k: v for k, v in request.items() if k != "id"} == {
            "type": "extension_ui_request",
            "method": "select",
            "title": "Pick",
            "options": ["a", "b"],
        }
        mark = client.mark()
        client.send_raw({"type": "extension_ui_response", "id": "not-a-request", "value": "a"})
        await client.get_state()
        assert [f for f in client.frames[mark:] if f["type"] != "response"] == []
        client.send_raw({"type": "extension_ui_response", "id": request["id"], "value": "b"})
        notify = await client.wait_for(ui_request("notify"), since=mark)
        assert notify["message"] == "select=b"
        # a second answer to the same id is ignored too
        mark = client.mark()
        client.send_raw({"type": "extension_ui_response", "id": request["id"], "value": "a"})
        await client.get_state()
        assert [f for f in client.frames[mark:] if f["type"] != "response"] == []


async def misc_frames(ws: Workspace, env: dict[str, str]) -> list[Frame]:
    async with spawn(ws, env=env) as client:
        start = client.mark()
        await client.prompt("/ui-misc")
        await client.wait_for(ui_request("set_editor_text"), since=start)
        await settle(client)
        return ui_frames(client, start)


async def test_s40_fire_and_forget_methods_and_no_title_by_default(workspace: Workspace) -> None:
    frames = await misc_frames(workspace, workspace.env)
    assert [{k: v for k, v in f.items() if k != "id"} for f in frames] == [
        {"type": "extension_ui_request", "method": "setStatus", "statusKey": "k", "statusText": "busy"},
        {"type": "extension_ui_request", "method": "setStatus", "statusKey": "k"},
        {
            "type": "extension_ui_request",
            "method": "setWidget",
            "widgetKey": "w",
            "widgetLines": ["l1", "l2"],
            "widgetPlacement": "belowEditor",
        },
        {"type": "extension_ui_request", "method": "set_editor_text", "text": "draft"},
    ]
    ids = [f["id"] for f in frames]
    assert all(isinstance(i, str) and i for i in ids) and len(set(ids)) == len(ids)


async def test_s40_pi_rpc_emit_title_on_re_enables_set_title(workspace: Workspace) -> None:
    frames = await misc_frames(workspace, {**workspace.env, "PI_RPC_EMIT_TITLE": " On "})
    assert [f["method"] for f in frames] == [
        "setStatus",
        "setStatus",
        "setWidget",
        "set_editor_text",
        "setTitle",
    ]
    assert {k: v for k, v in frames[-1].items() if k != "id"} == {
        "type": "extension_ui_request",
        "method": "setTitle",
        "title": "T",
    }


async def test_s41_failing_command_reports_extension_error_and_process_carries_on(
    workspace: Workspace,
) -> None:
    async with spawn(workspace) as client:
        start = client.mark()
        await client.prompt("/ui-throw")
        error = await client.wait_for(lambda f: f["type"] == "extension_error", since=start)
        assert error == {
            "type": "extension_error",
            "extensionPath": "command:ui-throw",
            "event": "command",
            "error": "boom",
        }
        state = await client.get_state()
        assert state["isStreaming"] is False


async def test_extension_command_cannot_be_queued_with_steer(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        response = await client.request({"type": "steer", "message": "/ui-misc"})
    assert response["success"] is False and response["command"] == "parse"
    assert response["error"] == (
        'Failed to parse command: Extension command "/ui-misc" cannot be queued. '
        "Use prompt() or execute the command when not streaming."
    )


async def test_extension_that_fails_to_load_is_reported_after_ready_and_skipped(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    broken = workspace.proj / ".xcsh" / "extensions" / "broken.py"
    broken.parent.mkdir(parents=True)
    broken.write_text("raise ValueError('cannot load me')\n")
    fake_llm.script(script.text("fine"))
    async with spawn(workspace, "--trust") as client:  # project extensions need trust (docs/security.md)
        error = await client.wait_for(lambda f: f["type"] == "extension_error")
        assert error == {
            "type": "extension_error",
            "extensionPath": str(broken.resolve()),
            "event": "load",
            "error": "cannot load me",
        }
        assert client.frames[0]["type"] == "ready"
        frames = await client.prompt_and_wait("hi")
    assert frames[-1]["type"] == "agent_end"


async def test_no_extensions_flag_skips_discovery_but_keeps_explicit_ones(workspace: Workspace) -> None:
    broken = workspace.proj / ".xcsh" / "extensions" / "broken.py"
    broken.parent.mkdir(parents=True)
    broken.write_text("raise ValueError('cannot load me')\n")
    async with spawn(workspace, "--no-extensions") as client:
        start = client.mark()
        await client.prompt("/ui-throw")
        error = await client.wait_for(lambda f: f["type"] == "extension_error", since=start)
        assert error["extensionPath"] == "command:ui-throw"
        assert not [f for f in client.frames if f.get("event") == "load"]


LIFECYCLE_EXT = Path(__file__).resolve().parent / "extensions" / "lifecycle_ext.py"


async def test_session_start_is_delivered_after_ready(workspace: Workspace) -> None:
    args = [*BASE_ARGS, "-e", str(LIFECYCLE_EXT)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        notify = await client.wait_for(ui_request("notify"))
        assert notify["message"] == "session started"
        assert client.frames[0]["type"] == "ready" and client.frames.index(notify) > 0


async def test_extension_shutdown_happens_after_the_next_response_with_session_shutdown(
    workspace: Workspace,
) -> None:
    args = [*BASE_ARGS, "-e", str(LIFECYCLE_EXT)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        await client.prompt("/quit")
        await client.wait_for(lambda f: f.get("message") == "quitting", since=start)
        mark = client.mark()
        state = await client.get_state()
        assert state["isStreaming"] is False
        goodbye = await client.wait_for(lambda f: f.get("message") == "goodbye", since=mark)
        assert client.frames.index(goodbye) > mark
        async with asyncio.timeout(5):
            code = await client.process.wait()
    assert code == 0
