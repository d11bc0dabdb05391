"""The RPC UI bridge (xcsh.modes.rpc.extension_ui): request frames and the §8.4 resolution rules."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from xcsh.ai.abort import AbortController
from xcsh.modes.rpc.extension_ui import UiBridge, titles_enabled

T = TypeVar("T")
Frame = dict[str, Any]


class Host:
    """Collects written frames and lets a test answer the latest request."""

    def __init__(self, *, emit_titles: bool = False) -> None:
        self.frames: list[Frame] = []
        self.written = asyncio.Event()
        self.bridge = UiBridge(self.write, emit_titles=emit_titles)

    def write(self, frame: Frame) -> None:
        self.frames.append(frame)
        self.written.set()

    async def wait_frames(self, count: int) -> None:
        async with asyncio.timeout(5):
            while len(self.frames) < count:
                self.written.clear()
                await self.written.wait()

    async def request(self) -> Frame:
        """The next frame written from now on."""
        await self.wait_frames(len(self.frames) + 1)
        return self.frames[-1]

    def answer(self, **fields: Any) -> None:
        self.bridge.handle_response({"type": "extension_ui_response", "id": self.frames[-1]["id"], **fields})


async def answered(host: Host, dialog: Awaitable[T], **fields: Any) -> T:
    task = asyncio.ensure_future(dialog)
    await host.request()
    host.answer(**fields)
    async with asyncio.timeout(5):
        return await task


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"confirmed": True}, True),
        ({"confirmed": False}, False),
        ({"cancelled": True}, False),
        ({"value": "yes"}, False),
        ({}, False),
        ({"confirmed": "true"}, False),
    ],
)
async def test_confirm_resolution_follows_the_spec_table(fields: Frame, expected: bool) -> None:
    host = Host()
    assert await answered(host, host.bridge.confirm("T", "M"), **fields) is expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"value": "b"}, "b"),
        ({"cancelled": True}, None),
        ({"confirmed": True}, None),
        ({}, None),
        ({"value": 3}, None),
    ],
)
async def test_select_and_input_resolution_follows_the_spec_table(
    fields: Frame, expected: str | None
) -> None:
    host = Host()
    assert await answered(host, host.bridge.select("Pick", ["a", "b"]), **fields) == expected
    assert await answered(host, host.bridge.input("Name"), **fields) == expected
    assert await answered(host, host.bridge.editor("Edit"), **fields) == expected


async def test_request_frames_omit_absent_fields() -> None:
    host = Host()
    await answered(host, host.bridge.select("Pick", ["a"], timeout_ms=500), value="a")
    await answered(host, host.bridge.input("Name", "ph"), value="x")
    await answered(host, host.bridge.editor("Edit", "pre", prompt_style=True), value="x")
    await answered(host, host.bridge.editor("Edit"), value="x")
    shown = [{k: v for k, v in f.items() if k != "id"} for f in host.frames]
    assert shown == [
        {
            "type": "extension_ui_request",
            "method": "select",
            "title": "Pick",
            "options": ["a"],
            "timeout": 500,
        },
        {"type": "extension_ui_request", "method": "input", "title": "Name", "placeholder": "ph"},
        {
            "type": "extension_ui_request",
            "method": "editor",
            "title": "Edit",
            "prefill": "pre",
            "promptStyle": True,
        },
        {"type": "extension_ui_request", "method": "editor", "title": "Edit"},
    ]
    assert len({f["id"] for f in host.frames}) == 4


async def test_timeout_resolves_to_the_default_without_a_frame_and_forgets_the_request() -> None:
    host = Host()
    timed_out: list[str] = []
    async with asyncio.timeout(5):
        value = await host.bridge.confirm(
            "T", "M", timeout_ms=1, on_timeout=lambda: timed_out.append("confirm")
        )
    assert value is False and timed_out == ["confirm"]
    assert [f["method"] for f in host.frames] == ["confirm"]
    assert host.bridge.pending_count == 0
    host.answer(confirmed=True)  # late: ignored
    assert len(host.frames) == 1


async def test_cancelled_with_timed_out_runs_the_timeout_callback() -> None:
    host = Host()
    calls: list[int] = []
    value = await answered(
        host, host.bridge.input("T", on_timeout=lambda: calls.append(1)), cancelled=True, timedOut=True
    )
    assert value is None and calls == [1]
    await answered(host, host.bridge.input("T", on_timeout=lambda: calls.append(2)), cancelled=True)
    assert calls == [1]


async def test_unknown_and_repeated_response_ids_are_ignored() -> None:
    host = Host()
    task = asyncio.ensure_future(host.bridge.select("Pick", ["a", "b"]))
    request = await host.request()
    host.bridge.handle_response({"type": "extension_ui_response", "id": "not-a-request", "value": "a"})
    host.bridge.handle_response({"type": "extension_ui_response", "value": "a"})
    assert not task.done() and host.bridge.pending_count == 1
    host.answer(value="b")
    host.bridge.handle_response({"type": "extension_ui_response", "id": request["id"], "value": "a"})
    async with asyncio.timeout(5):
        assert await task == "b"
    assert len(host.frames) == 1


async def test_abort_resolves_dialogs_to_defaults_and_only_editor_sends_cancel() -> None:
    host = Host()
    controller = AbortController()
    confirm = asyncio.ensure_future(host.bridge.confirm("T", "M", signal=controller.signal))
    editor = asyncio.ensure_future(host.bridge.editor("E", signal=controller.signal))
    await host.wait_frames(2)
    controller.abort()
    async with asyncio.timeout(5):
        assert await confirm is False
        assert await editor is None
    editor_id = host.frames[1]["id"]
    assert [f["method"] for f in host.frames] == ["confirm", "editor", "cancel"]
    assert host.frames[2]["targetId"] == editor_id and host.frames[2]["id"] not in (
        editor_id,
        host.frames[0]["id"],
    )


async def test_an_already_aborted_signal_returns_the_default_without_any_frame() -> None:
    host = Host()
    controller = AbortController()
    controller.abort()
    assert await host.bridge.select("P", ["a"], signal=controller.signal) is None
    assert await host.bridge.editor("E", signal=controller.signal) is None
    assert host.frames == []


def test_fire_and_forget_frames_and_title_suppression() -> None:
    quiet, loud = Host(), Host(emit_titles=True)
    for host in (quiet, loud):
        ui = host.bridge
        ui.notify("hi")
        ui.notify("careful", "warning")
        ui.set_status("k", "busy")
        ui.set_status("k")
        ui.set_widget("w", ["l1"], placement="aboveEditor")
        ui.set_widget("w")
        ui.set_editor_text("draft")
        ui.set_title("T")
        assert ui.get_editor_text() == "" and ui.has_ui is True
    shown = [{k: v for k, v in f.items() if k not in ("id", "type")} for f in quiet.frames]
    assert shown == [
        {"method": "notify", "message": "hi"},
        {"method": "notify", "message": "careful", "notifyType": "warning"},
        {"method": "setStatus", "statusKey": "k", "statusText": "busy"},
        {"method": "setStatus", "statusKey": "k"},
        {"method": "setWidget", "widgetKey": "w", "widgetLines": ["l1"], "widgetPlacement": "aboveEditor"},
        {"method": "setWidget", "widgetKey": "w"},
        {"method": "set_editor_text", "text": "draft"},
    ]
    assert loud.frames[-1]["method"] == "setTitle" and loud.frames[-1]["title"] == "T"


@pytest.mark.parametrize(
    ("value", "enabled"),
    [
        ("1", True),
        ("true", True),
        (" On ", True),
        ("YES", True),
        ("0", False),
        ("", False),
        ("enabled", False),
    ],
)
def test_pi_rpc_emit_title_is_trimmed_and_case_insensitive(value: str, enabled: bool) -> None:
    assert titles_enabled({"PI_RPC_EMIT_TITLE": value}) is enabled
    assert titles_enabled({}) is False
