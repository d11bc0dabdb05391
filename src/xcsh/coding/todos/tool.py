"""The ``todo_write`` tool: the model edits the phased todo list with a list of ops (agent-behaviour §8.2).

Per-op failures do not fail the tool; they are listed in the result text. The result's
``details`` carry the full phases (with task ``details``) and where todos are stored;
that tool result is how todos survive a reload.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xcsh.agent.tool import AgentTool
from xcsh.ai.abort import AbortSignal
from xcsh.ai.patterns import LazyPattern
from xcsh.coding.todos.state import DONE_STATUSES, OPEN_STATUSES, TODO_STATUSES, TodoStore

if TYPE_CHECKING:
    from xcsh.agent.types import AgentToolResult, ToolUpdate

TOOL_NAME = "todo_write"

DESCRIPTION = """Maintain a phased todo list for the current request and keep it up to date.

Use it for work with several steps: plan the phases and tasks first, then update task
statuses as you go so the user can follow your progress. Each call takes a list of ops,
applied in order:
- replace: drop the current list and build a new one from `phases` (ids restart at phase-1 / task-1);
- add_phase: append a phase (`name`, optional `tasks`);
- add_task: append a pending task to phase `phase` (a phase id such as "phase-2");
- update: change a task's `status`, `content`, `notes` or `details` by task id (e.g. "task-3");
- remove_task: delete a task by id.

Statuses: pending, in_progress, completed, abandoned. Keep exactly one task in_progress;
when none is, the first pending task becomes in_progress. Keep `content` short and put
file paths and specifics in `details`."""

_STATUS_SCHEMA: dict[str, Any] = {"type": "string", "enum": list(TODO_STATUSES), "description": "Task status"}
_NOTES_SCHEMA: dict[str, Any] = {"type": "string", "description": "Extra context or notes"}
_DETAILS_SCHEMA: dict[str, Any] = {
    "type": "string",
    "description": "Implementation details: files, steps, specifics",
}
_INPUT_TASK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "string", "description": "Short task label"},
        "status": _STATUS_SCHEMA,
        "notes": _NOTES_SCHEMA,
        "details": _DETAILS_SCHEMA,
    },
    "required": ["content"],
}
_INPUT_PHASE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Phase name"},
        "tasks": {"type": "array", "items": _INPUT_TASK},
    },
    "required": ["name"],
}


def _op(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"op": {"type": "string", "const": name}, **properties},
        "required": ["op", *required],
    }


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ops": {
            "type": "array",
            "items": {
                "anyOf": [
                    _op("replace", {"phases": {"type": "array", "items": _INPUT_PHASE}}, ["phases"]),
                    _op(
                        "add_phase",
                        {"name": {"type": "string"}, "tasks": {"type": "array", "items": _INPUT_TASK}},
                        ["name"],
                    ),
                    _op(
                        "add_task",
                        {
                            "phase": {"type": "string", "description": "Phase id, e.g. phase-1"},
                            "content": {"type": "string"},
                            "notes": _NOTES_SCHEMA,
                            "details": _DETAILS_SCHEMA,
                        },
                        ["phase", "content"],
                    ),
                    _op(
                        "update",
                        {
                            "id": {"type": "string", "description": "Task id, e.g. task-3"},
                            "status": _STATUS_SCHEMA,
                            "content": {"type": "string"},
                            "notes": _NOTES_SCHEMA,
                            "details": _DETAILS_SCHEMA,
                        },
                        ["id"],
                    ),
                    _op("remove_task", {"id": {"type": "string"}}, ["id"]),
                ]
            },
        }
    },
    "required": ["ops"],
}

_PHASE_ID = LazyPattern(r"phase-(\d+)")
_TASK_ID = LazyPattern(r"task-(\d+)")


class TodoList:
    """A mutable working copy of the phases with id counters continuing after the highest ids."""

    def __init__(self, phases: list[dict[str, Any]]) -> None:
        self.phases = phases
        self.next_phase = 1 + max((_number(_PHASE_ID, p.get("id")) for p in phases), default=0)
        self.next_task = 1 + max(
            (_number(_TASK_ID, t.get("id")) for p in phases for t in p["tasks"]), default=0
        )

    def new_phase(self, name: str, tasks: list[dict[str, Any]] | None) -> dict[str, Any]:
        self.next_phase += 1
        created = [self.new_task(task, task.get("status") or "pending") for task in tasks or []]
        phase: dict[str, Any] = {"id": f"phase-{self.next_phase - 1}", "name": name, "tasks": created}
        self.phases.append(phase)
        return phase

    def new_task(self, spec: dict[str, Any], status: str) -> dict[str, Any]:
        task: dict[str, Any] = {
            "id": f"task-{self.next_task}",
            "content": spec.get("content", ""),
            "status": status,
        }
        self.next_task += 1
        for key in ("notes", "details"):
            if spec.get(key) is not None:
                task[key] = spec[key]
        return task

    def find_task(self, task_id: str) -> dict[str, Any] | None:
        return next((t for p in self.phases for t in p["tasks"] if t.get("id") == task_id), None)

    @property
    def task_count(self) -> int:
        return sum(len(p["tasks"]) for p in self.phases)


def _number(pattern: LazyPattern, value: Any) -> int:
    match = pattern.fullmatch(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else 0


def apply_ops(
    phases: list[dict[str, Any]], ops: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Apply ``ops`` in order to a copy of ``phases``; return the new phases and per-op errors."""
    todo = TodoList([{**p, "tasks": [dict(t) for t in p["tasks"]]} for p in phases])
    errors: list[str] = []
    for op in ops:
        kind = op.get("op")
        if kind == "replace":
            todo = TodoList([])
            for phase in op.get("phases") or []:
                todo.new_phase(phase.get("name", ""), phase.get("tasks"))
        elif kind == "add_phase":
            todo.new_phase(op.get("name", ""), op.get("tasks"))
        elif kind == "add_task":
            target = next((p for p in todo.phases if p.get("id") == op.get("phase")), None)
            if target is None:
                errors.append(f'Phase "{op.get("phase")}" not found')
                continue
            target["tasks"].append(todo.new_task(op, "pending"))
        elif kind == "update":
            task = todo.find_task(str(op.get("id")))
            if task is None:
                hint = (
                    " (todo list is empty — was it replaced or not yet created?)"
                    if not todo.task_count
                    else ""
                )
                errors.append(f'Task "{op.get("id")}" not found{hint}')
                continue
            for key in ("status", "content", "notes", "details"):
                if op.get(key) is not None:
                    task[key] = op[key]
        elif kind == "remove_task" and not _remove(todo, str(op.get("id"))):
            hint = " (todo list is empty)" if not todo.task_count else ""
            errors.append(f'Task "{op.get("id")}" not found{hint}')
    normalize_in_progress(todo.phases)
    return todo.phases, errors


def _remove(todo: TodoList, task_id: str) -> bool:
    for phase in todo.phases:
        for index, task in enumerate(phase["tasks"]):
            if task.get("id") == task_id:
                del phase["tasks"][index]
                return True
    return False


def normalize_in_progress(phases: list[dict[str, Any]]) -> None:
    """At most one ``in_progress`` task (the first); if none, the first ``pending`` one becomes it."""
    tasks = [t for p in phases for t in p["tasks"]]
    active = [t for t in tasks if t.get("status") == "in_progress"]
    for task in active[1:]:
        task["status"] = "pending"
    if active:
        return
    first_pending = next((t for t in tasks if t.get("status") == "pending"), None)
    if first_pending is not None:
        first_pending["status"] = "in_progress"


_MARKS = {"completed": "[x]", "in_progress": "[>]", "abandoned": "[-]", "pending": "[ ]"}


def summarize(phases: list[dict[str, Any]], errors: list[str]) -> str:
    """The result text the model reads: errors, open tasks, current phase progress, checklist."""
    lines = [f"Errors: {'; '.join(errors)}"] if errors else []
    tasks = [t for p in phases for t in p["tasks"]]
    if not tasks:
        return "\n".join(lines) if lines else "Todo list is now empty."
    open_tasks = [(p, t) for p in phases for t in p["tasks"] if t.get("status") in OPEN_STATUSES]
    if open_tasks:
        lines.append(f"Open tasks ({len(open_tasks)}):")
        for phase, task in open_tasks:
            lines.append(f"  {task['id']} [{task['status']}] {task['content']} — {phase['name']}")
            if task.get("status") == "in_progress" and task.get("details"):
                lines.extend(f"      {line}" for line in str(task["details"]).splitlines())
    else:
        lines.append("Open tasks: none.")
    current = next(
        (i for i, p in enumerate(phases) if any(t.get("status") in OPEN_STATUSES for t in p["tasks"])),
        len(phases) - 1,
    )
    phase = phases[current]
    done = sum(1 for t in phase["tasks"] if t.get("status") in DONE_STATUSES)
    lines.append(
        f'Current phase {current + 1} of {len(phases)}: "{phase["name"]}" ({done}/{len(phase["tasks"])} done)'
    )
    for phase in phases:
        lines.append(f"{phase['id']} {phase['name']}")
        lines.extend(
            f"  {_MARKS.get(str(t.get('status')), '[ ]')} {t['id']} {t['content']}" for t in phase["tasks"]
        )
    return "\n".join(lines)


def create_todo_write_tool(store: TodoStore, storage: Callable[[], str]) -> AgentTool:
    """The ``todo_write`` tool bound to ``store``; ``storage()`` names where todos persist.

    ``storage`` returns ``"session"`` when the session is written to a file, else ``"memory"``.
    """

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        phases, errors = apply_ops(store.phases, list(args.get("ops") or []))
        store.set(phases)
        return {
            "content": [{"type": "text", "text": summarize(phases, errors)}],
            "details": {"phases": phases, "storage": storage()},
        }

    return AgentTool(
        name=TOOL_NAME,
        label="Todo Write",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        execute=execute,
        concurrency="exclusive",
    )
