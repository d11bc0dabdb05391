"""The todo_write tool: ops, ids, in-progress normalisation, error reporting and result shape."""

from __future__ import annotations

from typing import Any

from xcsh.agent.validation import ArgumentValidationError, validate_arguments
from xcsh.coding.todos.state import TodoStore
from xcsh.coding.todos.tool import PARAMETERS, apply_ops, create_todo_write_tool, summarize


def _phase(pid: str, name: str, *tasks: tuple[str, str, str]) -> dict[str, Any]:
    return {"id": pid, "name": name, "tasks": [{"id": i, "content": c, "status": s} for i, c, s in tasks]}


def test_replace_rebuilds_with_fresh_ids_and_pending_default() -> None:
    old = [_phase("phase-7", "Old", ("task-40", "x", "pending"))]
    phases, errors = apply_ops(
        old,
        [
            {
                "op": "replace",
                "phases": [
                    {
                        "name": "A",
                        "tasks": [{"content": "a1", "notes": "n"}, {"content": "a2", "details": "d"}],
                    },
                    {"name": "B"},
                ],
            }
        ],
    )
    assert errors == []
    assert phases == [
        {
            "id": "phase-1",
            "name": "A",
            "tasks": [
                {"id": "task-1", "content": "a1", "status": "in_progress", "notes": "n"},
                {"id": "task-2", "content": "a2", "status": "pending", "details": "d"},
            ],
        },
        {"id": "phase-2", "name": "B", "tasks": []},
    ]


def test_new_ids_continue_after_the_highest_existing_numbers() -> None:
    old = [_phase("phase-3", "P", ("task-9", "x", "in_progress"), ("custom", "y", "pending"))]
    phases, errors = apply_ops(
        old,
        [
            {"op": "add_phase", "name": "Q", "tasks": [{"content": "q1", "status": "completed"}]},
            {"op": "add_task", "phase": "phase-3", "content": "z", "notes": "zn"},
        ],
    )
    assert errors == []
    assert [p["id"] for p in phases] == ["phase-3", "phase-4"]
    assert phases[1]["tasks"] == [{"id": "task-10", "content": "q1", "status": "completed"}]
    assert phases[0]["tasks"][-1] == {"id": "task-11", "content": "z", "status": "pending", "notes": "zn"}


def test_per_op_errors_are_collected_and_later_ops_still_apply() -> None:
    old = [_phase("phase-1", "P", ("task-1", "x", "in_progress"))]
    phases, errors = apply_ops(
        old,
        [
            {"op": "add_task", "phase": "phase-9", "content": "nope"},
            {"op": "update", "id": "task-5", "status": "completed"},
            {"op": "remove_task", "id": "task-6"},
            {"op": "update", "id": "task-1", "status": "completed", "content": "renamed"},
        ],
    )
    assert errors == ['Phase "phase-9" not found', 'Task "task-5" not found', 'Task "task-6" not found']
    assert phases[0]["tasks"] == [{"id": "task-1", "content": "renamed", "status": "completed"}]
    assert summarize(phases, errors).startswith(
        'Errors: Phase "phase-9" not found; Task "task-5" not found; Task "task-6" not found'
    )


def test_unknown_task_on_an_empty_list_gets_the_empty_hints() -> None:
    _, errors = apply_ops([], [{"op": "update", "id": "task-1"}, {"op": "remove_task", "id": "task-1"}])
    assert errors == [
        'Task "task-1" not found (todo list is empty — was it replaced or not yet created?)',
        'Task "task-1" not found (todo list is empty)',
    ]


def test_only_the_first_in_progress_task_keeps_that_status() -> None:
    old = [
        _phase("phase-1", "P", ("task-1", "a", "completed"), ("task-2", "b", "in_progress")),
        _phase("phase-2", "Q", ("task-3", "c", "in_progress"), ("task-4", "d", "pending")),
    ]
    phases, _ = apply_ops(old, [])
    statuses = [t["status"] for p in phases for t in p["tasks"]]
    assert statuses == ["completed", "in_progress", "pending", "pending"]


def test_remove_task_deletes_it_and_promotes_the_next_pending_task() -> None:
    old = [_phase("phase-1", "P", ("task-1", "a", "in_progress"), ("task-2", "b", "pending"))]
    phases, errors = apply_ops(old, [{"op": "remove_task", "id": "task-1"}])
    assert errors == []
    assert phases[0]["tasks"] == [{"id": "task-2", "content": "b", "status": "in_progress"}]


def test_apply_ops_leaves_the_input_phases_unchanged() -> None:
    old = [_phase("phase-1", "P", ("task-1", "a", "pending"))]
    apply_ops(old, [{"op": "update", "id": "task-1", "status": "completed"}])
    assert old == [_phase("phase-1", "P", ("task-1", "a", "pending"))]


def test_summary_lists_open_tasks_progress_and_checklist() -> None:
    phases = [
        _phase("phase-1", "Plan", ("task-1", "Read code", "completed")),
        _phase("phase-2", "Build", ("task-2", "Write it", "in_progress"), ("task-3", "Test it", "pending")),
    ]
    phases[1]["tasks"][0]["details"] = "src/app.py\nline two"
    text = summarize(phases, [])
    assert "Open tasks (2):" in text
    assert "task-2 [in_progress] Write it — Build" in text and "      src/app.py\n      line two" in text
    assert 'Current phase 2 of 2: "Build" (0/2 done)' in text
    assert (
        "  [x] task-1 Read code" in text
        and "  [>] task-2 Write it" in text
        and "  [ ] task-3 Test it" in text
    )
    assert summarize([], []) == "Todo list is now empty."
    assert summarize([], ["boom"]) == "Errors: boom"


def test_schema_accepts_each_op_and_rejects_unknown_ones() -> None:
    ok = {
        "ops": [
            {"op": "replace", "phases": [{"name": "A", "tasks": [{"content": "x", "status": "pending"}]}]},
            {"op": "add_phase", "name": "B"},
            {"op": "add_task", "phase": "phase-1", "content": "y"},
            {"op": "update", "id": "task-1", "status": "abandoned"},
            {"op": "remove_task", "id": "task-1"},
        ]
    }
    assert validate_arguments("todo_write", ok, PARAMETERS) == ok
    for bad in ({"ops": [{"op": "explode"}]}, {"ops": [{"op": "update", "id": "t", "status": "done"}]}, {}):
        try:
            validate_arguments("todo_write", bad, PARAMETERS)
        except ArgumentValidationError as exc:
            assert str(exc).startswith('Validation failed for tool "todo_write":')
        else:
            raise AssertionError(f"accepted {bad}")


async def test_the_tool_updates_the_store_and_reports_phases_and_storage() -> None:
    store = TodoStore(clear_delay_s=lambda: -1, on_auto_clear=lambda: None)
    tool = create_todo_write_tool(store, lambda: "memory")
    assert (tool.name, tool.concurrency) == ("todo_write", "exclusive")
    ops = [{"op": "replace", "phases": [{"name": "A", "tasks": [{"content": "x", "details": "deep"}]}]}]
    result = await tool.execute("call-1", {"ops": ops}, None, lambda partial: None)
    expected_task = {"id": "task-1", "content": "x", "status": "in_progress"}
    assert result["details"] == {
        "phases": [{"id": "phase-1", "name": "A", "tasks": [{**expected_task, "details": "deep"}]}],
        "storage": "memory",
    }
    assert store.phases == [{"id": "phase-1", "name": "A", "tasks": [expected_task]}]
    second = await tool.execute(
        "call-2",
        {"ops": [{"op": "add_task", "phase": "phase-1", "content": "y"}]},
        None,
        lambda partial: None,
    )
    assert [t["id"] for t in second["details"]["phases"][0]["tasks"]] == ["task-1", "task-2"]
