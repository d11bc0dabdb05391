"""Session-bound tools behind the RPC process: the python kernel, task subagents and inspect_image."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from conftest import Workspace, fake_models_yml
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _tool_texts(fake_llm: FakeLLM, request: int) -> list[str]:
    return [m["content"] for m in fake_llm.requests[request].json["messages"] if m["role"] == "tool"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


async def test_python_keeps_state_between_calls_survives_an_abort_and_dies_with_the_process(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(("p1", "python", {"cells": [{"code": "import os\nx = 21\nprint(os.getpid())"}]})),
        script.tool_calls(
            ("p2", "python", {"cells": [{"code": "x * 2", "title": "double"}, {"code": "print('second')"}]})
        ),
        script.tool_calls(
            (
                "p3",
                "python",
                {"cells": [{"code": "import time\nprint('sleeping', flush=True)\ntime.sleep(60)"}]},
            )
        ),
        script.tool_calls(("p4", "python", {"cells": [{"code": "x"}]})),
        script.text("done"),
    )
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "python"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        mark = client.mark()
        await client.prompt("compute")
        await client.wait_for(
            lambda f: (
                f.get("type") == "tool_execution_update" and "sleeping" in json.dumps(f.get("partialResult"))
            ),
            since=mark,
            timeout=60,
        )
        await client.abort()
        await client.wait_for_idle(since=mark)
        await client.prompt_and_wait("and x?")
        kernel_pid = int(_tool_texts(fake_llm, 1)[-1])
        assert _alive(kernel_pid)
    assert _tool_texts(fake_llm, 2)[-1] == "[1/2] double\n42\n\n[2/2]\nsecond"
    aborted = _tool_texts(fake_llm, 3)[-1]
    assert "abort" in aborted.lower()
    assert _tool_texts(fake_llm, 4)[-1] == "21"  # the interrupted kernel kept its state
    assert not _alive(kernel_pid)


def _task_call(tasks: list[dict[str, str]]) -> tuple[str, str, dict[str, Any]]:
    return ("t1", "task", {"agent": "task", "context": "Project: demo.", "tasks": tasks})


async def test_task_runs_two_subagents_with_their_own_context_and_stores_their_sessions(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    tasks = [
        {"id": "Alpha", "description": "first", "assignment": "Say alpha."},
        {"id": "Beta", "description": "second", "assignment": "Say beta."},
    ]
    call_id, name, call = _task_call(tasks)
    schema = {"properties": {"word": {"type": "string"}}}
    fake_llm.script(
        script.tool_calls((call_id, name, {**call, "schema": json.dumps(schema)})),
        script.text("child answer"),
        script.text("child answer"),
        script.text("both done"),
    )
    args = ["--model", "fake/fake-model", "--session-dir", str(workspace.sess)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        frames = await client.prompt_and_wait("delegate please")
        session_file = Path((await client.get_state())["sessionFile"])
        stats = await client.get_session_stats()
    # two parent answers and two child answers, one input token each: the children's usage counts
    assert stats["tokens"]["input"] == 4
    summary = _tool_texts(fake_llm, 3)[-1]
    assert summary.startswith("<task-summary>\n<header>2/2 succeeded")
    assert summary.count("<status>completed</status>") == 2 and summary.count("child answer") == 2
    children = [r.json for r in fake_llm.requests[1:3]]
    for request in children:
        assert "task" in {t["function"]["name"] for t in request["tools"]}  # depth 1 < maxRecursionDepth 2
        texts = json.dumps(request["messages"])
        assert "delegate please" not in texts and "Project: demo." in texts
        assert "subagent" in request["messages"][0]["content"]
    assert sorted("Say alpha." in json.dumps(r["messages"]) for r in children) == [False, True]
    updates = [f for f in frames if f["type"] == "tool_execution_update"]
    assert any(p["status"] == "running" for f in updates for p in f["partialResult"]["details"]["progress"])
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    stored = {Path(r["sessionFile"]).name for r in end["result"]["details"]["results"]}
    assert stored == {"Alpha.jsonl", "Beta.jsonl"}
    folder = session_file.with_suffix("")
    assert sorted(p.name for p in folder.iterdir()) == ["Alpha.jsonl", "Beta.jsonl"]
    lines = [json.loads(line) for line in (folder / "Alpha.jsonl").read_text().splitlines()]
    assert lines[0]["type"] == "session" and any(
        e.get("message", {}).get("role") == "assistant" for e in lines
    )
    # session-format §3: a sub-agent session records what it started with, before its messages
    assert [e["type"] for e in lines[1:4]] == ["model_change", "session_init", "message"]
    init = lines[2]
    sent = next(r for r in children if "Say alpha." in json.dumps(r["messages"]))
    assert init["parentId"] == lines[1]["id"] and lines[3]["parentId"] == init["id"]
    assert init["systemPrompt"] == sent["messages"][0]["content"]
    assert init["task"] == sent["messages"][1]["content"] and "Say alpha." in init["task"]
    assert init["tools"] == [t["function"]["name"] for t in sent["tools"]]
    assert init["outputSchema"] == schema


async def test_task_respects_the_concurrency_and_recursion_limits(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("task:\n  maxConcurrency: 1\n  maxRecursionDepth: 1\n")
    tasks = [
        {"id": "One", "description": "1", "assignment": "First."},
        {"id": "Two", "description": "2", "assignment": "Second."},
    ]
    fake_llm.script(
        script.tool_calls(_task_call(tasks)), script.text("a"), script.text("b"), script.text("ok")
    )
    args = ["--model", "fake/fake-model", "--no-session", "--mode", "json", "-p", "go"]
    done = run_xcsh(workspace, *args)
    assert done.returncode == 0, done.stderr
    frames = [json.loads(line) for line in done.stdout.decode().splitlines() if line]
    updates = [
        f["partialResult"]["details"]["progress"] for f in frames if f["type"] == "tool_execution_update"
    ]
    assert max(sum(p["status"] == "running" for p in progress) for progress in updates) == 1
    assert "First." in json.dumps(fake_llm.requests[1].json["messages"])  # one at a time, in order
    assert "Second." in json.dumps(fake_llm.requests[2].json["messages"])
    assert "task" in {t["function"]["name"] for t in fake_llm.requests[0].json["tools"]}
    for child in fake_llm.requests[1:3]:
        assert "task" not in {t["function"]["name"] for t in child.json["tools"]}
    assert "2/2 succeeded" in _tool_texts(fake_llm, 3)[-1]


async def test_aborting_the_parent_mid_task_cancels_the_running_subagent_and_keeps_the_finished_one(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    tasks = [
        {"id": "Quick", "description": "q", "assignment": "Answer now."},
        {"id": "Slow", "description": "s", "assignment": "Take your time."},
    ]
    # whichever child asks first answers at once; the other is held mid-answer until aborted
    fake_llm.script(
        script.tool_calls(_task_call(tasks)),
        script.text("finished part"),
        script.hold("still work"),
        script.text("noted"),
    )
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "task,read"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        mark = client.mark()
        await client.prompt("split it")

        def one_done_one_running(frame: dict[str, Any]) -> bool:
            if frame.get("type") != "tool_execution_update":
                return False
            statuses = sorted(p["status"] for p in frame["partialResult"]["details"]["progress"])
            return statuses == ["completed", "running"]

        await client.wait_for(one_done_one_running, since=mark, timeout=30)
        fake_llm.wait_for_requests(3)
        await client.abort()
        frames = await client.wait_for_idle(since=mark)
        state = await client.get_state()
        await client.prompt_and_wait("what happened?")
    assert state["isStreaming"] is False
    end = next(f for f in client.frames[mark:] if f["type"] == "tool_execution_end")
    results = {r["status"]: r for r in end["result"]["details"]["results"]}
    assert set(results) == {"completed", "cancelled"}
    assert results["completed"]["output"] == "finished part"
    summary = _tool_texts(fake_llm, 3)[-1]
    assert "1/2 succeeded (1 cancelled)" in summary and "finished part" in summary
    assert "<status>cancelled</status>" in summary
    # no orphan: after the abort the only request was the parent's next prompt
    assert len(fake_llm.requests) == 4
    assert any(f["type"] == "agent_end" for f in frames)


async def test_inspect_image_asks_a_vision_model_and_returns_its_answer(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    extra = "      - id: fake-vision\n        input: [text, image]\n        contextWindow: 128000\n        maxTokens: 4096\n"
    (workspace.agent / "models.yml").write_text(fake_models_yml(fake_llm.base_url, extra_models=extra))
    (workspace.proj / "shot.png").write_bytes(PNG_1PX)
    call = ("i1", "inspect_image", {"path": "shot.png", "question": "What colour is it?"})
    fake_llm.script(script.tool_calls(call), script.text("A single red pixel."), script.text("It is red."))
    args = ["--model", "fake/fake-vision", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        names = [t["name"] for t in (await client.get_state())["dumpTools"]]
        frames = await client.prompt_and_wait("look at shot.png")
    assert "inspect_image" in names
    vision = fake_llm.requests[1].json
    assert "tools" not in vision or not vision["tools"]
    parts = vision["messages"][-1]["content"]
    assert any(p.get("type") == "image_url" for p in parts) and any(
        p.get("text") == "What colour is it?" for p in parts
    )
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    assert end["isError"] is False and end["result"]["details"]["model"] == "fake/fake-vision"
    assert "A single red pixel." in json.dumps(fake_llm.requests[2].json["messages"])


async def test_a_subagents_tool_calls_go_through_the_parents_approvals(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    tasks = [{"id": "Writer", "description": "w", "assignment": "Create note.txt."}]
    fake_llm.script(
        script.tool_calls(_task_call(tasks)),
        script.tool_calls(("w1", "write", {"path": "note.txt", "content": "x\n"})),
        script.text("could not write"),
        script.text("ok"),
    )
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "task,write", "--approve", "write"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        mark = client.mark()
        await client.prompt("delegate the note")
        ask = await client.wait_for(
            lambda f: f.get("type") == "extension_ui_request" and f.get("method") == "confirm", since=mark
        )
        assert ask["title"] == "Allow write to note.txt?"
        client.send_raw({"type": "extension_ui_response", "id": ask["id"], "confirmed": False})
        await client.wait_for_idle(since=mark)
    assert not (workspace.proj / "note.txt").exists()
    child_saw = _tool_texts(fake_llm, 2)[-1]
    assert child_saw == "The user denied this write call; it was not run."
    assert "could not write" in _tool_texts(fake_llm, 3)[-1]


async def test_a_discovered_project_agent_runs_with_its_own_prompt_and_tools(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    folder = workspace.proj / ".xcsh" / "agents"
    folder.mkdir(parents=True)
    (folder / "scout.md").write_text(
        "---\nname: scout\ndescription: Looks around\ntools: read, find\n---\nYou only look.\n"
    )
    call = (
        "t1",
        "task",
        {"agent": "scout", "tasks": [{"id": "Look", "description": "l", "assignment": "Look."}]},
    )
    fake_llm.script(script.tool_calls(call), script.text("seen"), script.text("ok"))
    args = ["--model", "fake/fake-model", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        state = await client.get_state()
        await client.prompt_and_wait("scout it")
    task_tool = next(t for t in state["dumpTools"] if t["name"] == "task")
    assert "scout: Looks around" in task_tool["parameters"]["properties"]["agent"]["description"]
    child = fake_llm.requests[1].json
    assert {t["function"]["name"] for t in child["tools"]} == {"read", "find"}
    assert "You only look." in child["messages"][0]["content"]
    assert "<status>completed</status>" in _tool_texts(fake_llm, 2)[-1]
