"""Scenarios S52–S55 (sessions on disk) and resume flags, against the real process."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from conftest import Workspace
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _args(ws: Workspace, *extra: str) -> list[str]:
    return ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(ws.sess), *extra]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def spawn(ws: Workspace, *extra: str) -> Any:
    return RpcClient.spawn(args=_args(ws, *extra), cwd=ws.proj, env=ws.env)


async def test_s52_session_file_is_created_lazily_with_header_and_chained_entries(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("hi"))
    async with spawn(workspace) as client:
        state = await client.get_state()
        path = Path(state["sessionFile"])
        assert path.parent == workspace.sess
        assert path.name.endswith(f"_{state['sessionId']}.jsonl")
        assert not path.exists()
        await client.set_session_name("Named")
        assert not path.exists()
        await client.prompt_and_wait("hello?")
        assert path.exists()
    lines = _lines(path)
    header = lines[0]
    assert {k: header[k] for k in ("type", "version", "id", "cwd", "title", "titleSource")} == {
        "type": "session",
        "version": 3,
        "id": state["sessionId"],
        "cwd": str(workspace.proj),
        "title": "Named",
        "titleSource": "user",
    }
    entries = lines[1:]
    assert [e["type"] for e in entries] == ["model_change", "thinking_level_change", "message", "message"]
    assert (
        entries[0]["model"] == "fake/fake-model"
        and "role" not in entries[0]
        and entries[0]["parentId"] is None
    )
    assert entries[1]["thinkingLevel"] is None
    assert [e["message"]["role"] for e in entries[2:]] == ["user", "assistant"]
    for previous, entry in itertools.pairwise(entries):
        assert entry["parentId"] == previous["id"]
    assert len({e["id"] for e in entries}) == len(entries)


async def test_s53_export_html_refuses_in_memory_sessions(workspace: Workspace) -> None:
    args = ["--model", "fake/fake-model", "--no-tools", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        response = await client.request({"id": "x", "type": "export_html"})
    assert response == {
        "type": "response",
        "command": "parse",
        "success": False,
        "error": "Failed to parse command: Cannot export in-memory session to HTML",
    }


async def test_s53_export_html_writes_to_the_given_or_default_path(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("hi"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("hello?")
        given = await client.request({"id": "x", "type": "export_html", "outputPath": "out/session.html"})
        default = await client.request({"id": "y", "type": "export_html"})
        state = await client.get_state()
    assert given["data"] == {"path": "out/session.html"}
    exported = workspace.proj / "out" / "session.html"
    assert exported.exists() and exported.read_text().lstrip().lower().startswith("<!doctype html")
    basename = Path(state["sessionFile"]).name.removesuffix(".jsonl")
    assert default["data"] == {"path": f"xcsh-session-{basename}.html"}
    assert (workspace.proj / f"xcsh-session-{basename}.html").exists()


async def test_s54_branch_creates_a_new_file_with_the_path_before_the_message(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"), script.text("a2"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("q1?")
        await client.prompt_and_wait("q2?")
        first_file = Path((await client.get_state())["sessionFile"])
        before = first_file.read_text()
        branch_messages = await client.get_branch_messages()
        assert [m["text"] for m in branch_messages] == ["q1?", "q2?"]
        e1, e2 = (m["entryId"] for m in branch_messages)
        response = await client.request({"id": "b", "type": "branch", "entryId": e2})
        state = await client.get_state()
        second_file = Path(state["sessionFile"])
        after_branch = await client.get_branch_messages()
        assistant_id = next(
            e["id"] for e in _lines(first_file)[1:] if e.get("message", {}).get("role") == "assistant"
        )
        bad = await client.request({"id": "bad", "type": "branch", "entryId": assistant_id})
        root = await client.request({"id": "b2", "type": "branch", "entryId": e1})
        final_state = await client.get_state()
    assert response == {
        "id": "b",
        "type": "response",
        "command": "branch",
        "success": True,
        "data": {"text": "q2?", "cancelled": False},
    }
    assert second_file != first_file and state["messageCount"] == 2
    assert second_file.exists()
    copied = _lines(second_file)
    assert copied[0]["parentSession"] == str(first_file)
    original = _lines(first_file)[1:]
    assert copied[1:] == original[:4]
    assert first_file.read_text() == before
    assert [m["entryId"] for m in after_branch] == [e1]
    assert bad["error"] == "Failed to parse command: Invalid entry ID for branching" and "id" not in bad
    assert root["data"] == {"text": "q1?", "cancelled": False} and final_state["messageCount"] == 0


async def test_s55_switch_session_loads_another_file_or_creates_a_fresh_one(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"), script.text("a2"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("q1?")
        file_a = (await client.get_state())["sessionFile"]
        await client.new_session()
        await client.prompt_and_wait("q2?")
        file_b = (await client.get_state())["sessionFile"]
        mark = client.mark()
        switched = await client.request({"id": "s", "type": "switch_session", "sessionPath": file_a})
        state = await client.get_state()
        messages = await client.get_messages()
        fresh = str(workspace.sess / "fresh.jsonl")
        switched2 = await client.switch_session(fresh)
        state2 = await client.get_state()
        quiet = [f for f in client.frames[mark:] if f["type"] != "response"]
        await client.new_session(parent_session=file_a)
        child = (await client.get_state())["sessionFile"]
    assert switched["data"] == {"cancelled": False}
    assert state["sessionFile"] == file_a and state["messageCount"] == 2
    assert [(m["role"], m["content"][0]["text"]) for m in messages] == [("user", "q1?"), ("assistant", "a1")]
    assert switched2 == {"cancelled": False}
    assert state2["messageCount"] == 0 and state2["sessionFile"].endswith("fresh.jsonl")
    assert _lines(Path(fresh))[0]["type"] == "session"
    assert quiet == []
    assert "parentSession" not in _lines(Path(file_b))[0]
    assert child != file_a


async def test_switch_to_an_unreadable_path_is_an_error_and_keeps_the_current_session(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"))
    blocked = workspace.sess / "blocked"
    blocked.mkdir()
    async with spawn(workspace) as client:
        await client.prompt_and_wait("q1?")
        before = await client.get_state()
        response = await client.request({"id": "s", "type": "switch_session", "sessionPath": str(blocked)})
        after = await client.get_state()
    assert response["success"] is False
    assert after["sessionFile"] == before["sessionFile"] and after["messageCount"] == 2


async def test_continue_and_session_flags_resume_the_conversation(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"), script.text("a2"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("q1?")
        first = await client.get_state()
    async with spawn(workspace, "--continue") as client:
        resumed = await client.get_state()
        await client.prompt_and_wait("q2?")
    assert resumed["sessionFile"] == first["sessionFile"] and resumed["messageCount"] == 2
    sent = fake_llm.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    async with spawn(workspace, "--session", first["sessionId"][:8]) as client:
        by_id = await client.get_state()
    assert by_id["sessionFile"] == first["sessionFile"] and by_id["messageCount"] == 4


async def test_fork_copies_history_into_a_new_session(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("a1"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("q1?")
        original = await client.get_state()
    async with spawn(workspace, "--fork", original["sessionFile"]) as client:
        forked = await client.get_state()
        messages = await client.get_messages()
    assert forked["sessionFile"] != original["sessionFile"] and forked["messageCount"] == 2
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert _lines(Path(forked["sessionFile"]))[0]["parentSession"] == original["sessionId"]


async def test_a_second_process_on_the_same_session_file_is_refused(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("q1?")
        path = (await client.get_state())["sessionFile"]
        result = run_xcsh(workspace, "--mode", "rpc", *_args(workspace, "--session", path))
        still_alive = await client.get_state()
    assert result.returncode == 1 and result.stdout == b""
    assert b"Traceback" not in result.stderr and result.stderr.strip()
    assert still_alive["messageCount"] == 2


async def test_switch_session_to_a_symlink_of_the_open_file_reopens_it_and_a_second_process_is_refused(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"), script.text("a2"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("q1?")
        path = Path((await client.get_state())["sessionFile"])
        alias = path.with_name("alias.jsonl")
        alias.symlink_to(path.name)
        switched = await client.request({"id": "s", "type": "switch_session", "sessionPath": str(alias)})
        state = await client.get_state()
        second = run_xcsh(workspace, "--mode", "rpc", *_args(workspace, "--session", str(path)))
        await client.prompt_and_wait("q2?")
    assert switched["success"] is True and state["messageCount"] == 2
    assert second.returncode == 1 and b"already open for writing" in second.stderr
    assert [e["message"]["content"][0]["text"] for e in _lines(path)[1:] if e["type"] == "message"] == [
        "q1?",
        "a1",
        "q2?",
        "a2",
    ]
