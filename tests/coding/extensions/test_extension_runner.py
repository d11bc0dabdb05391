"""Extensions in-process: loading, events, tool interception, commands, vetoes, messages, shutdown."""

from __future__ import annotations

import asyncio
import logging
import textwrap
from pathlib import Path
from typing import Any

import pytest

from coding.session_helpers import workspace_session
from conftest import Workspace
from xcsh.coding.extensions import HeadlessUI
from xcsh.coding.extensions.feature import runner_for
from xcsh.coding.extensions.runner import ExtensionError, ExtensionRunner
from xcsh.coding.session import AgentSession
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


class RecordingUI(HeadlessUI):
    """The UI seam, recording notifications (dialogs keep their headless defaults)."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def notify(self, message: str, type: Any = None) -> None:
        self.notes.append(message)


def extension(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def make_session(ws: Workspace, *paths: Path, tools: str | None = None) -> AgentSession:
    return workspace_session(
        ws, tools=tools, no_tools=tools is None, extensions=[str(p) for p in paths], no_extensions=True
    )


def attach(session: AgentSession) -> tuple[ExtensionRunner, RecordingUI, list[ExtensionError]]:
    runner = runner_for(session)
    assert runner is not None
    ui = RecordingUI()
    errors: list[ExtensionError] = []
    runner.ui = ui
    runner.on_error = errors.append
    return runner, ui, errors


async def run_prompt(session: AgentSession, text: str) -> None:
    task = session.start_prompt(text)
    assert task is not None
    async with asyncio.timeout(5):
        await task


EVENTS = """
    def setup(xcsh):
        def note(event, ctx):
            ctx.ui.notify(event["type"])
        for name in ("session_start", "agent_start", "turn_start", "turn_end", "agent_end"):
            xcsh.on(name, note)

        @xcsh.on("message_end")
        async def role(event, ctx):
            ctx.ui.notify("end:" + event["message"]["role"])
"""


async def test_session_and_agent_events_reach_handlers_in_order(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    session = make_session(workspace, extension(tmp_path, "events", EVENTS))
    runner, ui, errors = attach(session)
    fake_llm.script(script.text("hello"))
    await run_prompt(session, "hi")
    async with asyncio.timeout(5):
        await runner.drain()
    assert ui.notes == [
        "session_start",
        "agent_start",
        "turn_start",
        "end:user",
        "end:assistant",
        "turn_end",
        "agent_end",
    ]
    assert errors == []


async def test_a_failing_handler_is_reported_and_the_others_still_run(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    path = extension(
        tmp_path,
        "failing",
        """
        def setup(xcsh):
            def boom(event, ctx):
                raise ValueError("turn went wrong")
            xcsh.on("turn_end", boom)
            xcsh.on("turn_end", lambda event, ctx: ctx.ui.notify("second handler"))
        """,
    )
    session = make_session(workspace, path)
    runner, ui, errors = attach(session)
    fake_llm.script(script.text("ok"))
    await run_prompt(session, "hi")
    async with asyncio.timeout(5):
        await runner.drain()
    assert errors == [ExtensionError(str(path.resolve()), "turn_end", "turn went wrong")]
    assert errors[0].frame() == {
        "type": "extension_error",
        "extensionPath": str(path.resolve()),
        "event": "turn_end",
        "error": "turn went wrong",
    }
    assert ui.notes == ["second handler"]
    assert session.messages[-1]["stopReason"] == "stop"


TOOLS = """
    def setup(xcsh):
        async def shout(args, call):
            call.update("working")
            return args["text"].upper()
        xcsh.register_tool(
            "shout",
            "Upper-case a text.",
            {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            shout,
        )

        def guard(event, ctx):
            if event["input"].get("text") == "forbidden":
                return {"block": True, "reason": "not that word"}
        xcsh.on("tool_call", guard)

        def rewrite(event, ctx):
            if event["toolName"] == "shout" and event["content"][0]["text"] == "SECRET":
                return {"content": [{"type": "text", "text": "[redacted]"}]}
        xcsh.on("tool_result", rewrite)
"""


def tool_results(session: AgentSession) -> list[tuple[str, bool]]:
    return [(m["content"][0]["text"], m["isError"]) for m in session.messages if m["role"] == "toolResult"]


async def test_extension_tool_runs_and_tool_hooks_block_or_replace_results(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    session = make_session(workspace, extension(tmp_path, "tools", TOOLS))
    attach(session)
    assert "shout" in session.active_tool_names
    assert any(t.name == "shout" for t in session.active_tools())
    fake_llm.script(
        script.tool_calls(
            ("c1", "shout", {"text": "hello"}),
            ("c2", "shout", {"text": "forbidden"}),
            ("c3", "shout", {"text": "secret"}),
        ),
        script.text("done"),
    )
    updates: list[Any] = []
    session.subscribe(lambda e: updates.append(e) if e["type"] == "tool_execution_update" else None)
    await run_prompt(session, "go")
    assert sorted(tool_results(session)) == [("HELLO", False), ("[redacted]", False), ("not that word", True)]
    assert {u["partialResult"]["content"][0]["text"] for u in updates} == {"working"}
    tools_sent = [t["function"]["name"] for t in fake_llm.requests[0].json["tools"]]
    assert tools_sent == ["shout"]


async def test_a_failing_tool_call_handler_blocks_the_call(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    path = extension(
        tmp_path,
        "crashy",
        """
        def setup(xcsh):
            def crash(event, ctx):
                raise RuntimeError("guard crashed")
            xcsh.on("tool_call", crash)
        """,
    )
    session = make_session(workspace, path, tools="ls")
    _, _, errors = attach(session)
    fake_llm.script(script.tool_calls(("c1", "ls", {})), script.text("done"))
    await run_prompt(session, "list")
    assert tool_results(session) == [(f"Extension {path.resolve()} failed: guard crashed", True)]
    assert [(e.event, e.error) for e in errors] == [("tool_call", "guard crashed")]


COMMANDS = """
    def setup(xcsh):
        async def hello(args, ctx):
            ctx.ui.notify("hello " + args)
        xcsh.register_command("hello", hello, "greet")

        def broken(args, ctx):
            raise KeyError("missing")
        xcsh.register_command("/broken", broken)
"""


async def test_commands_consume_prompts_and_report_failures_as_command_errors(
    workspace: Workspace, tmp_path: Path
) -> None:
    session = make_session(workspace, extension(tmp_path, "commands", COMMANDS))
    _, ui, errors = attach(session)
    for text in ("/hello  big world ", "/broken now"):
        task = session.start_prompt(text)
        assert task is not None
        async with asyncio.timeout(5):
            await task
    assert ui.notes == ["hello big world"]
    assert errors == [ExtensionError("command:broken", "command", "'missing'")]
    assert session.find_command("/hellothere") is None and session.find_command("hello") is None
    assert session.messages == []


async def test_before_switch_handler_can_cancel_a_new_session(workspace: Workspace, tmp_path: Path) -> None:
    path = extension(
        tmp_path,
        "veto",
        """
        def setup(xcsh):
            seen = []
            def veto(event, ctx):
                seen.append(event)
                ctx.ui.notify(repr(event))
                return {"cancel": len(seen) == 1}
            xcsh.on("session_before_switch", veto)
            xcsh.on("session_switch", lambda event, ctx: ctx.ui.notify("switched " + event["reason"]))
        """,
    )
    session = make_session(workspace, path)
    runner, ui, _ = attach(session)
    first_id = session.store.session_id
    assert await session.new_session(None) is False  # cancelled
    assert session.store.session_id == first_id
    assert await session.new_session(None) is True
    assert session.store.session_id != first_id
    async with asyncio.timeout(5):
        await runner.drain()
    assert ui.notes == [
        "{'type': 'session_before_switch', 'reason': 'new'}",
        "{'type': 'session_before_switch', 'reason': 'new'}",
        "switched new",
    ]


async def test_load_failures_are_reported_on_start_and_skipped(workspace: Workspace, tmp_path: Path) -> None:
    session = make_session(workspace)
    runner = ExtensionRunner(session)
    errors: list[ExtensionError] = []
    runner.on_error = errors.append
    good = extension(
        tmp_path, "good", "def setup(xcsh):\n    xcsh.register_command('ok', lambda a, c: None)\n"
    )
    paths = [
        tmp_path / "missing.py",
        extension(tmp_path, "nosetup", "X = 1\n"),
        extension(tmp_path, "asyncsetup", "async def setup(xcsh):\n    pass\n"),
        extension(tmp_path, "raises", "def setup(xcsh):\n    raise RuntimeError('setup failed')\n"),
        extension(
            tmp_path,
            "clash",
            """
            def setup(xcsh):
                xcsh.register_command("clash-cmd", lambda a, c: None)
                xcsh.register_tool("read", "dup", {"type": "object"}, lambda a, c: "")
            """,
        ),
        good,
    ]
    runner.load(paths)
    assert errors == []  # nothing is reported before start()
    runner.start()
    assert [(e.extension_path, e.event) for e in errors] == [(str(p), "load") for p in paths[:-1]]
    assert errors[0].error == f"Extension not found: {paths[0]}"
    assert errors[1].error.endswith("does not define setup(xcsh)")
    assert errors[3].error == "setup failed"
    assert errors[4].error == 'Tool "read" conflicts with an existing tool'
    assert [e.path for e in runner.extensions] == [str(good)]
    assert list(runner.commands) == ["ok"]


async def test_package_extensions_and_discovery_directories_are_loaded(
    workspace: Workspace, tmp_path: Path
) -> None:
    package = workspace.proj / ".xcsh" / "extensions" / "pkg"
    package.mkdir(parents=True)
    (package / "helper.py").write_text("GREETING = 'from package'\n")
    (package / "__init__.py").write_text(
        "from .helper import GREETING\n\n"
        "def setup(xcsh):\n"
        "    xcsh.register_command('pkg', lambda a, ctx: ctx.ui.notify(GREETING))\n"
    )
    (workspace.agent / "extensions").mkdir()
    (workspace.agent / "extensions" / "user.py").write_text(
        "def setup(xcsh):\n    xcsh.register_command('user', lambda a, ctx: None)\n"
    )
    (workspace.agent / "extensions" / "_private.py").write_text("raise SystemExit('never imported')\n")
    session = workspace_session(workspace, trust=True)  # project extensions load only when trusted
    runner, ui, errors = attach(session)
    assert list(runner.commands) == ["pkg", "user"]
    task = session.start_prompt("/pkg")
    assert task is not None
    async with asyncio.timeout(5):
        await task
    assert ui.notes == ["from package"] and errors == []


def next_event(session: AgentSession, kind: str) -> asyncio.Future[dict[str, Any]]:
    """A future resolved by the next session event of type ``kind``."""
    future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def listener(event: dict[str, Any]) -> None:
        if event["type"] == kind and not future.done():
            future.set_result(event)

    session.subscribe(listener)
    return future


async def test_send_message_appends_when_idle_and_can_trigger_a_turn(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    path = extension(
        tmp_path,
        "sender",
        """
        def setup(xcsh):
            xcsh.register_command("note", lambda a, c: xcsh.send_message("note", a, display=False))
            xcsh.register_command("ask", lambda a, c: xcsh.send_message("ask", a, trigger_turn=True))
        """,
    )
    session = make_session(workspace, path)
    attach(session)
    fake_llm.script(script.text("answer"))
    ended = next_event(session, "agent_end")
    for text in ("/note remember this", "/ask what now"):
        task = session.start_prompt(text)
        assert task is not None
        async with asyncio.timeout(5):
            await task
    async with asyncio.timeout(5):
        await ended
    assert [(m["role"], m.get("customType")) for m in session.messages] == [
        ("custom", "note"),
        ("custom", "ask"),
        ("assistant", None),
    ]
    assert session.messages[0]["display"] is False and session.messages[0]["content"] == "remember this"
    assert [e["type"] for e in session.store.entries][-3:] == ["custom_message", "custom_message", "message"]


async def test_send_user_message_starts_a_run_and_reports_busy_as_an_action_error(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    path = extension(
        tmp_path,
        "user_sender",
        """
        def setup(xcsh):
            xcsh.register_command("user", lambda a, c: xcsh.send_user_message(a))
        """,
    )
    session = make_session(workspace, path)
    runner, _, _ = attach(session)
    actions: list[tuple[str, str]] = []
    runner.on_action_error = lambda command, message: actions.append((command, message))
    fake_llm.script(script.hold("thinking"))
    streaming = next_event(session, "message_update")
    async with asyncio.timeout(5):
        for text in ("/user first", "/user second"):
            task = session.start_prompt(text)
            assert task is not None
            await task
        await streaming
        await session.abort()
    assert session.messages[0]["content"] == [{"type": "text", "text": "first"}]
    assert actions == [
        (
            "extension_send_user",
            "Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion.",
        )
    ]


async def test_session_shutdown_runs_at_exit_for_plain_and_non_suspending_async_handlers(
    workspace: Workspace, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = extension(
        tmp_path,
        "bye",
        """
        import asyncio

        def setup(xcsh):
            xcsh.on("session_shutdown", lambda e, ctx: ctx.ui.notify("plain"))

            async def quick(e, ctx):
                ctx.ui.notify("async")
            xcsh.on("session_shutdown", quick)

            async def slow(e, ctx):
                await asyncio.sleep(10)
                ctx.ui.notify("never")
            xcsh.on("session_shutdown", slow)
        """,
    )
    session = make_session(workspace, path)
    _, ui, errors = attach(session)
    with caplog.at_level(logging.WARNING):
        session.shutdown()
    assert ui.notes == ["plain", "async"] and errors == []
    assert "did not finish before exit" in caplog.text


async def test_headless_ui_resolves_dialogs_to_defaults() -> None:
    ui = HeadlessUI()
    assert ui.has_ui is False
    assert await ui.select("t", ["a"]) is None
    assert await ui.confirm("t", "m") is False
    assert await ui.input("t") is None
    assert await ui.editor("t", "x") is None
    assert ui.get_editor_text() == ""
