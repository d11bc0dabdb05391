"""Todos against the real process: scenarios S28–S30, S57, the todo_write tool, restore and reset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import BASE_ARGS, Workspace
from e2e.helpers import assert_run, kinds, text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]

FORCED_TODO = {"type": "function", "function": {"name": "todo_write"}}


def spawn(ws: Workspace, *args: str) -> Any:
    return RpcClient.spawn(args=list(args or BASE_ARGS), cwd=ws.proj, env=ws.env)


def run_frames(frames: list[Frame]) -> list[list[Frame]]:
    """Split frames into runs (agent_start … agent_end), dropping everything outside runs."""
    runs: list[list[Frame]] = []
    current: list[Frame] | None = None
    for frame in frames:
        if frame["type"] == "agent_start":
            current = []
        if current is not None:
            current.append(frame)
        if frame["type"] == "agent_end" and current is not None:
            runs.append(current)
            current = None
    return runs


def last_request_text(fake_llm: FakeLLM, index: int) -> str:
    message = fake_llm.requests[index].json["messages"][-1]
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


# ---- S28, S30: set_todos ------------------------------------------------------------------------


async def test_s28_set_todos_keeps_only_the_protocol_fields(workspace: Workspace) -> None:
    phases = [
        {
            "id": "phase-1",
            "name": "Eval",
            "extra": 1,
            "tasks": [
                {
                    "id": "task-1",
                    "content": "Map tools",
                    "status": "in_progress",
                    "details": "secret",
                    "notes": "n1",
                },
                {"id": "task-2", "content": "Edit", "status": "in_progress"},
            ],
        }
    ]
    expected = [
        {
            "id": "phase-1",
            "name": "Eval",
            "tasks": [
                {"id": "task-1", "content": "Map tools", "status": "in_progress", "notes": "n1"},
                {"id": "task-2", "content": "Edit", "status": "in_progress"},
            ],
        }
    ]
    async with spawn(workspace) as client:
        response = await client.request({"id": "t", "type": "set_todos", "phases": phases})
        assert response == {
            "id": "t",
            "type": "response",
            "command": "set_todos",
            "success": True,
            "data": {"todoPhases": expected},
        }
        assert (await client.get_state())["todoPhases"] == expected
        bad = await client.request({"id": "bad", "type": "set_todos", "phases": "nope"})
        assert (await client.get_state())["todoPhases"] == expected
    assert bad["command"] == "parse" and bad["success"] is False and "id" not in bad
    assert bad["error"].startswith("Failed to parse command: ")


async def test_s30_finished_tasks_are_cleared_after_the_configured_delay(workspace: Workspace) -> None:
    workspace.config("tasks:\n  todoClearDelay: 0\n")
    phases = [
        {
            "id": "phase-1",
            "name": "P",
            "tasks": [
                {"id": "task-1", "content": "a", "status": "completed"},
                {"id": "task-2", "content": "b", "status": "pending"},
            ],
        }
    ]
    async with spawn(workspace) as client:
        mark = client.mark()
        data = await client.set_todos(phases)
        assert data == {"todoPhases": phases}
        clear = await client.wait_for_type("todo_auto_clear", since=mark)
        assert clear == {"type": "todo_auto_clear"}
        assert client.frames[mark]["type"] == "response"  # the event comes after the response
        state = await client.get_state()
    assert state["todoPhases"] == [
        {"id": "phase-1", "name": "P", "tasks": [{"id": "task-2", "content": "b", "status": "pending"}]}
    ]


async def test_s30_with_the_default_delay_finished_tasks_stay(workspace: Workspace) -> None:
    phases = [
        {"id": "phase-1", "name": "P", "tasks": [{"id": "task-1", "content": "a", "status": "completed"}]}
    ]
    async with spawn(workspace) as client:
        mark = client.mark()
        await client.set_todos(phases)
        state = await client.get_state()
    assert state["todoPhases"] == phases
    assert not [f for f in client.frames[mark:] if f["type"] == "todo_auto_clear"]


# ---- S29: reminders -------------------------------------------------------------------------------


async def test_s29_todo_reminders_drive_three_continuation_runs(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(*(script.text(f"ok {i}") for i in range(1, 5)))
    todo = {"id": "task-1", "content": "Do X", "status": "pending"}
    async with spawn(workspace) as client:
        await client.set_todos([{"id": "phase-1", "name": "Work", "tasks": [todo]}])
        frames = await client.prompt_and_wait("start?")
        messages = await client.get_messages()
    runs = run_frames(frames)
    assert len(runs) == 4
    assert_run(runs[0], "start?", "ok 1")
    reminders = [f for f in frames if f["type"] == "todo_reminder"]
    assert reminders == [
        {"type": "todo_reminder", "todos": [todo], "attempt": n, "maxAttempts": 3} for n in (1, 2, 3)
    ]
    for n, run in enumerate(runs[1:], 2):
        assert kinds(run) == [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end",
        ]
        messages_of_run = [f["message"] for f in run if f["type"] in ("message_start", "message_end")]
        assert messages_of_run[0]["role"] == "assistant" and text_of(messages_of_run[1]) == f"ok {n}"
    # each reminder event comes between the previous run's end and the next run's start
    order = [f["type"] for f in frames if f["type"] in ("agent_start", "agent_end", "todo_reminder")]
    assert order == ["agent_start", "agent_end"] + ["todo_reminder", "agent_start", "agent_end"] * 3
    for n in (1, 2, 3):
        text = last_request_text(fake_llm, n)
        assert text.startswith("<system-reminder>")
        assert "You stopped with 1 incomplete todo item(s):\n- Work\n  - Do X\n" in text
        assert f"(Reminder {n}/3)" in text
    developer = [m for m in messages if m["role"] == "developer"]
    assert [f"(Reminder {n}/3)" in text_of(m) for n, m in enumerate(developer, 1)] == [True] * 3


async def test_a_new_prompt_resets_the_reminder_budget(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.config("todo:\n  reminders.max: 1\n")  # ignored: RPC mode resets todo.* to defaults
    fake_llm.script(*(script.text(f"ok {i}") for i in range(1, 9)))
    todo = {"id": "task-1", "content": "Do X", "status": "in_progress"}
    async with spawn(workspace) as client:
        await client.set_todos([{"id": "phase-1", "name": "Work", "tasks": [todo]}])
        first = await client.prompt_and_wait("start?")
        second = await client.prompt_and_wait("again?")
    for frames in (first, second):
        attempts = [f["attempt"] for f in frames if f["type"] == "todo_reminder"]
        assert attempts == [1, 2, 3]


# ---- the todo_write tool --------------------------------------------------------------------------


def _plan_call(call_id: str = "t1") -> Any:
    ops = [
        {
            "op": "replace",
            "phases": [
                {
                    "name": "Build",
                    "tasks": [
                        {"content": "Write code", "details": "src/app.py"},
                        {"content": "Test it", "notes": "pytest"},
                    ],
                }
            ],
        }
    ]
    return script.tool_calls((call_id, "todo_write", {"ops": ops}))


async def test_the_model_plans_and_finishes_with_todo_write(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.config("tasks:\n  todoClearDelay: 0\n")
    finish = [
        {"op": "update", "id": "task-1", "status": "completed"},
        {"op": "update", "id": "task-2", "status": "completed"},
        {"op": "update", "id": "task-9", "status": "completed"},
    ]
    fake_llm.script(
        _plan_call(),
        script.text("planned"),
        script.tool_calls(("t2", "todo_write", {"ops": finish})),
        script.text("all done"),
    )
    async with spawn(workspace, "--model", "fake/fake-model", "--no-session") as client:
        frames = await client.prompt_and_wait("build it?")
        state = await client.get_state()
    ends = [f for f in frames if f["type"] == "tool_execution_end"]
    assert [e["isError"] for e in ends] == [False, False]
    planned = ends[0]["result"]["details"]
    assert planned == {
        "phases": [
            {
                "id": "phase-1",
                "name": "Build",
                "tasks": [
                    {
                        "id": "task-1",
                        "content": "Write code",
                        "status": "in_progress",
                        "details": "src/app.py",
                    },
                    {"id": "task-2", "content": "Test it", "status": "pending", "notes": "pytest"},
                ],
            }
        ],
        "storage": "memory",
    }
    assert 'Errors: Task "task-9" not found' in text_of(ends[1]["result"])
    reminders = [f for f in frames if f["type"] == "todo_reminder"]
    assert reminders == [
        {
            "type": "todo_reminder",
            "todos": [
                {"id": "task-1", "content": "Write code", "status": "in_progress"},
                {"id": "task-2", "content": "Test it", "status": "pending"},
            ],
            "attempt": 1,
            "maxAttempts": 3,
        }
    ]
    assert [f for f in client.frames if f["type"] == "todo_auto_clear"] == [{"type": "todo_auto_clear"}] * 2
    assert state["todoPhases"] == []
    assert "todo_write" in [t["name"] for t in state["dumpTools"]]
    tools = {t["function"]["name"]: t["function"] for t in fake_llm.requests[0].json["tools"]}
    assert tools["todo_write"]["parameters"]["required"] == ["_i", "ops"]


async def test_todos_are_restored_from_the_branch_on_switch_and_resume(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    done_first = [{"op": "update", "id": "task-1", "status": "completed"}]
    fake_llm.script(
        _plan_call(),
        script.tool_calls(("t2", "todo_write", {"ops": done_first})),
        script.text("stopping"),
        script.text("still stopping"),
        script.text("really stopping"),
        script.text("done"),
    )
    args = ["--model", "fake/fake-model", "--session-dir", str(workspace.sess)]
    remaining = [
        {
            "id": "phase-1",
            "name": "Build",
            "tasks": [{"id": "task-2", "content": "Test it", "status": "in_progress", "notes": "pytest"}],
        }
    ]
    async with spawn(workspace, *args) as client:
        frames = await client.prompt_and_wait("build it?")
        state = await client.get_state()
        path = state["sessionFile"]
        assert [f["attempt"] for f in frames if f["type"] == "todo_reminder"] == [1, 2, 3]
        assert state["todoPhases"][0]["tasks"][0]["status"] == "completed"
        ends = [f for f in frames if f["type"] == "tool_execution_end"]
        assert ends[-1]["result"]["details"]["storage"] == "session"
        await client.new_session()
        assert (await client.get_state())["todoPhases"] == []
        await client.set_todos([{"id": "phase-9", "name": "Other", "tasks": []}])
        await client.switch_session(path)
        assert (await client.get_state())["todoPhases"] == remaining
    async with spawn(workspace, *args[:2], "--session", path) as client:
        assert (await client.get_state())["todoPhases"] == remaining


async def test_a_failed_todo_write_queues_a_hidden_reminder_for_the_next_prompt(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(("t1", "todo_write", {"ops": "not a list"})),
        script.text("oops"),
        script.text("fixed"),
    )
    async with spawn(workspace, "--model", "fake/fake-model", "--no-session") as client:
        first = await client.prompt_and_wait("plan?")
        assert (await client.get_state())["queuedMessageCount"] == 1
        second = await client.prompt_and_wait("next?")
    end = next(f for f in first if f["type"] == "tool_execution_end")
    assert end["isError"] is True
    starts = [f["message"] for f in second if f["type"] == "message_start"]
    assert [m["role"] for m in starts[:2]] == ["user", "custom"]
    reminder = starts[1]
    assert reminder["customType"] == "todo-write-error-reminder" and reminder["display"] is False
    assert "todo_write" in reminder["content"] and "Validation failed" in reminder["content"]


# ---- tool selection --------------------------------------------------------------------------------


async def test_tools_lists_decide_whether_todo_write_exists(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("ok"))
    async with spawn(
        workspace, "--model", "fake/fake-model", "--no-session", "--tools", "read,todo_write"
    ) as client:
        assert [t["name"] for t in (await client.get_state())["dumpTools"]] == ["read", "todo_write"]
    async with spawn(workspace, "--model", "fake/fake-model", "--no-session", "--tools", "read") as client:
        assert [t["name"] for t in (await client.get_state())["dumpTools"]] == ["read"]
        frames = await client.prompt_and_wait("Implement the feature")
    assert not [f for f in frames if f["type"] == "message_start" and f["message"]["role"] == "custom"]
    assert "tool_choice" not in fake_llm.requests[0].json


async def test_todo_write_cannot_be_taken_by_a_host_tool_even_when_inactive(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        response = await client.request(
            {
                "type": "set_host_tools",
                "tools": [{"name": "todo_write", "description": "d", "parameters": {}}],
            }
        )
    assert (
        response["error"]
        == 'Failed to parse command: RPC host tool "todo_write" conflicts with an existing tool'
    )


# ---- S57: eager prelude ---------------------------------------------------------------------------------


async def test_s57_first_prompt_forces_todo_write(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("ok"), script.text("second"))
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    async with spawn(workspace, *args) as client:
        frames = await client.prompt_and_wait("Implement the feature")
        second = await client.prompt_and_wait("And the docs")
        messages = await client.get_messages()
        path = (await client.get_state())["sessionFile"]
    assert kinds(frames)[:6] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
    ]
    prelude = frames[2]["message"]
    assert prelude == frames[3]["message"]
    assert (prelude["role"], prelude["customType"], prelude["display"]) == (
        "custom",
        "eager-todo-prelude",
        False,
    )
    assert prelude["attribution"] == "agent" and "todo_write" in prelude["content"]
    assert frames[4]["message"]["role"] == "user" and text_of(frames[4]["message"]) == "Implement the feature"
    assert fake_llm.requests[0].json["tool_choice"] == FORCED_TODO
    assert "tools" not in fake_llm.requests[0].json  # --no-tools: forced choice names an inactive tool
    assert "tool_choice" not in fake_llm.requests[1].json
    assert not [f for f in second if f["type"] == "message_start" and f["message"]["role"] == "custom"]
    assert [m["role"] for m in messages] == ["custom", "user", "assistant", "user", "assistant"]
    entries = [json.loads(line) for line in Path(path).read_text().splitlines()]
    custom = [e for e in entries if e["type"] == "custom_message"]
    assert len(custom) == 1 and custom[0]["customType"] == "eager-todo-prelude"


async def test_s57_with_default_tools_the_forced_tool_is_sent(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("ok"))
    async with spawn(workspace, "--model", "fake/fake-model", "--no-session") as client:
        frames = await client.prompt_and_wait("Implement the feature")
    assert frames[2]["message"]["customType"] == "eager-todo-prelude"
    body = fake_llm.requests[0].json
    assert body["tool_choice"] == FORCED_TODO
    assert "todo_write" in [t["function"]["name"] for t in body["tools"]]


async def test_s57_no_prelude_for_questions_exclamations_or_existing_todos(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a"), script.text("b"), script.text("c"), script.text("d"))
    todo = [
        {"id": "phase-1", "name": "P", "tasks": [{"id": "task-1", "content": "x", "status": "completed"}]}
    ]
    seen: list[list[Frame]] = []
    for prompt, todos in (("What is this? ", None), ("Do it now!", None), ("Implement it", todo)):
        async with spawn(workspace) as client:
            if todos is not None:
                await client.set_todos(todos)
            seen.append(await client.prompt_and_wait(prompt))
    for frames in seen:
        assert frames[2]["message"]["role"] == "user"
    assert all("tool_choice" not in r.json for r in fake_llm.requests)
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("Implement it")
    assert frames[2]["message"]["role"] == "custom"
