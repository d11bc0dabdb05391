"""``xcsh --mode acp`` driven end to end by the official ACP SDK's client side."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from conftest import Workspace, tool_results

acp = pytest.importorskip("acp")

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block  # noqa: E402
from acp.schema import (  # noqa: E402
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from xcsh.testing import script  # noqa: E402
from xcsh.testing.fake_llm import FakeLLM  # noqa: E402


class Editor:
    """The client side: records updates and answers permission requests from a list of choices."""

    def __init__(self, choices: list[str] | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[Any] = []
        self.choices = list(choices or [])
        self.asked = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, [o.option_id for o in options]))
        self.asked.set()
        if not self.choices:
            await asyncio.Event().wait()  # never answers (cancelled by the agent)
        choice = self.choices.pop(0)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice))

    def text(self) -> str:
        return "".join(
            u.content.text
            for _, u in self.updates
            if isinstance(u, AgentMessageChunk) and u.content.type == "text"
        )


@contextlib.asynccontextmanager
async def acp_agent(ws: Workspace, editor: Editor, *args: str) -> AsyncIterator[Any]:
    argv = ["-m", "xcsh", "--mode", "acp", "--model", "fake/fake-model", *args]
    # an empty home: the user's own commands and skills stay out of the listings
    env = {**ws.env, "HOME": str(ws.agent.parent / "home")}
    async with spawn_agent_process(editor, sys.executable, *argv, env=env, cwd=ws.proj) as (
        conn,
        _process,
    ):
        async with asyncio.timeout(30):
            yield conn


async def test_a_prompt_streams_the_answer_and_ends_the_turn(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("Hello from xcsh."))
    (workspace.proj / ".xcsh" / "prompts").mkdir(parents=True)
    (workspace.proj / ".xcsh" / "prompts" / "explain.md").write_text("Explain the code.\n")
    editor = Editor()
    async with acp_agent(workspace, editor, "--no-tools") as conn:
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities.load_session is True
        assert init.agent_info.name == "xcsh"
        session = await conn.new_session(cwd=str(workspace.proj), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi?")])
    assert response.stop_reason == "end_turn"
    assert editor.text() == "Hello from xcsh."
    announced = [u for _, u in editor.updates if isinstance(u, AvailableCommandsUpdate)]
    # the project's template is announced beside the bundled /init
    commands = {c.name: c.description for c in announced[0].available_commands}
    assert "init" in commands
    assert commands["explain"] == "Explain the code."
    assert len([u for _, u in editor.updates if isinstance(u, AgentMessageChunk)]) >= 2
    assert {sid for sid, _ in editor.updates} == {session.session_id}


async def test_tool_calls_report_status_and_approvals_become_permission_requests(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(("c1", "bash", {"command": "echo ran > ran.txt"})),
        script.tool_calls(("c2", "write", {"path": "no.txt", "content": "x"})),
        script.text("done"),
    )
    editor = Editor(choices=["allow", "deny"])
    async with acp_agent(workspace, editor, "--tools", "bash,write", "--approve", "bash,write") as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace.proj), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("go?")])
    assert response.stop_reason == "end_turn"
    assert [(call.tool_call_id, ids) for call, ids in editor.permissions] == [
        ("c1", ["allow", "deny"]),
        ("c2", ["allow", "deny"]),
    ]
    assert editor.permissions[0][0].title == "Allow bash?"
    starts = [u for _, u in editor.updates if isinstance(u, ToolCallStart)]
    assert [(s.tool_call_id, s.kind, s.status) for s in starts] == [
        ("c1", "execute", "in_progress"),
        ("c2", "edit", "in_progress"),
    ]
    ends = {
        u.tool_call_id: u.status for _, u in editor.updates if isinstance(u, ToolCallProgress) and u.status
    }
    assert ends == {"c1": "completed", "c2": "failed"}
    assert (workspace.proj / "ran.txt").read_text() == "ran\n"
    assert not (workspace.proj / "no.txt").exists()
    assert tool_results(fake_llm.requests[2].json)["c2"] == "The user denied this write call; it was not run."


async def test_cancel_ends_the_turn_as_cancelled_and_withdraws_the_pending_permission(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("c1", "bash", {"command": "touch never.txt"})))
    editor = Editor(choices=[])
    async with acp_agent(workspace, editor, "--tools", "bash", "--approve", "bash") as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace.proj), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go?")]))
        await editor.asked.wait()
        await conn.cancel(session_id=session.session_id)
        response = await turn
    assert response.stop_reason == "cancelled"
    assert not (workspace.proj / "never.txt").exists()


async def _stored_session(workspace: Workspace, fake_llm: FakeLLM) -> tuple[str, tuple[str, ...]]:
    """A session stored by one ACP process (a prompt "first?" answered "First answer."; the fake
    LLM's next answer is "Second answer."): its id and the arguments that find it again."""
    fake_llm.script(script.text("First answer."), script.text("Second answer."))
    args = ("--no-tools", "--session-dir", str(workspace.sess))
    async with acp_agent(workspace, Editor(), *args) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace.proj), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("first?")])
    return session.session_id, args


async def test_a_stored_session_is_loaded_and_replayed(workspace: Workspace, fake_llm: FakeLLM) -> None:
    session_id, args = await _stored_session(workspace, fake_llm)
    editor = Editor()
    async with acp_agent(workspace, editor, *args) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(workspace.proj), session_id=session_id, mcp_servers=[])
        replayed = list(editor.updates)
        response = await conn.prompt(session_id=session_id, prompt=[text_block("second?")])
        with pytest.raises(RequestError):
            await conn.prompt(session_id="no-such-session", prompt=[text_block("x")])
    assert [type(u) for _, u in replayed] == [UserMessageChunk, AgentMessageChunk]
    assert replayed[0][1].content.text == "first?" and replayed[1][1].content.text == "First answer."
    assert response.stop_reason == "end_turn"
    assert [m["role"] for m in fake_llm.requests[1].json["messages"] if m["role"] != "system"] == [
        "user",
        "assistant",
        "user",
    ]


async def test_a_session_loaded_by_an_id_prefix_is_used_by_that_prefix(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    session_id, args = await _stored_session(workspace, fake_llm)
    prefix = session_id[:8]
    editor = Editor()
    async with acp_agent(workspace, editor, *args) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(workspace.proj), session_id=prefix, mcp_servers=[])
        response = await conn.prompt(session_id=prefix, prompt=[text_block("second?")])
    assert response.stop_reason == "end_turn"
    assert {sid for sid, _ in editor.updates} == {prefix}
    assert editor.text() == "First answer.Second answer."
    assert [m["role"] for m in fake_llm.requests[1].json["messages"] if m["role"] != "system"] == [
        "user",
        "assistant",
        "user",
    ]
    assert len(list(workspace.sess.glob("*.jsonl"))) == 1


async def test_session_ids_are_never_paths_and_cwd_must_be_an_existing_absolute_directory(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    args = ("--no-tools", "--session-dir", str(workspace.sess))
    async with acp_agent(workspace, Editor(), *args) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        for session_id in ("zz.jsonl", "../x.jsonl", "sub/zz", "a\\b"):
            with pytest.raises(RequestError) as refused:
                await conn.load_session(cwd=str(workspace.proj), session_id=session_id, mcp_servers=[])
            assert refused.value.code == -32602, session_id
        for cwd in ("sub/dir", str(workspace.proj / "missing"), str(workspace.proj / "file.txt")):
            (workspace.proj / "file.txt").write_text("x")
            with pytest.raises(RequestError) as refused:
                await conn.new_session(cwd=cwd, mcp_servers=[])
            assert refused.value.code == -32602, cwd
            with pytest.raises(RequestError):
                await conn.load_session(cwd=cwd, session_id="abc", mcp_servers=[])
    made = sorted(p.name for p in workspace.agent.parent.rglob("*.jsonl"))
    assert made == []
