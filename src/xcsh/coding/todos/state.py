"""The session's todo state: phases of tasks, held in memory, with timed removal of finished tasks.

Wire shapes (``TodoPhase``, ``TodoItem``) keep the protocol's field names. The store
keeps only ``id``/``name`` per phase and ``id``/``content``/``status``/``notes`` per task
(agent-behaviour §8.1): ``details`` lives only in ``todo_write`` results.
"""

# No ``from __future__ import annotations`` here: a TypedDict turns each string annotation into a
# compiled ForwardRef, which made this module's classes several times as slow to create at start-up
# (docs/performance.md, "Fifth session: start-up").

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal, NotRequired, Protocol, TypedDict

logger = logging.getLogger(__name__)

TodoStatus = Literal["pending", "in_progress", "completed", "abandoned"]
TODO_STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed", "abandoned")
DONE_STATUSES = frozenset({"completed", "abandoned"})
OPEN_STATUSES = frozenset({"pending", "in_progress"})


class TodoItem(TypedDict):
    id: str
    content: str
    status: TodoStatus
    notes: NotRequired[str]
    details: NotRequired[str]


class TodoPhase(TypedDict):
    id: str
    name: str
    tasks: list[TodoItem]


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


CallLater = Callable[[float, Callable[[], None]], TimerHandle]


def _loop_call_later(delay: float, callback: Callable[[], None]) -> TimerHandle:
    loop = asyncio.get_running_loop()
    if delay <= 0:
        return loop.call_soon(callback)
    return loop.call_later(delay, callback)


def _pick(source: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """The listed keys that are present in ``source``, in ``keys`` order."""
    return {key: source[key] for key in keys if key in source}


def copy_phases(phases: Sequence[Any]) -> list[dict[str, Any]]:
    """The session's structural copy (``set_todos`` normalisation, rpc-protocol §5.2).

    Keeps ``id``/``name``/``tasks`` per phase and ``id``/``content``/``status``/``notes``
    per task, dropping every other key; no value is validated. A phase that is not an
    object, or whose ``tasks`` is not a list, raises :class:`TypeError`.
    """
    out: list[dict[str, Any]] = []
    for index, phase in enumerate(phases):
        if not isinstance(phase, dict):
            raise TypeError(f"phases[{index}] must be an object")
        tasks = phase.get("tasks")
        if not isinstance(tasks, list):
            raise TypeError(f"phases[{index}].tasks must be an array")
        copied = _pick(phase, ("id", "name"))
        copied_tasks = []
        for task_index, task in enumerate(tasks):
            if not isinstance(task, dict):
                raise TypeError(f"phases[{index}].tasks[{task_index}] must be an object")
            item = _pick(task, ("id", "content", "status"))
            if task.get("notes") is not None:
                item["notes"] = task["notes"]
            copied_tasks.append(item)
        copied["tasks"] = copied_tasks
        out.append(copied)
    return out


def open_tasks_by_phase(phases: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """``(phase name, pending/in-progress tasks)`` for every phase that has some."""
    out = []
    for phase in phases:
        tasks = [t for t in phase.get("tasks", []) if t.get("status") in OPEN_STATUSES]
        if tasks:
            out.append((str(phase.get("name", "")), tasks))
    return out


def without_done(phases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``phases`` minus completed/abandoned tasks, minus phases left empty."""
    out = []
    for phase in phases:
        tasks = [t for t in phase.get("tasks", []) if t.get("status") not in DONE_STATUSES]
        if tasks:
            out.append({**phase, "tasks": tasks})
    return out


def latest_todo_phases(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Phases of the last successful ``todo_write`` result among session ``entries`` (or [])."""
    for entry in reversed(entries):
        if entry.get("type") != "message":
            continue
        message = entry.get("message") or {}
        if message.get("role") != "toolResult" or message.get("toolName") != "todo_write":
            continue
        if message.get("isError"):
            continue
        details = message.get("details")
        phases = details.get("phases") if isinstance(details, dict) else None
        if not isinstance(phases, list):
            continue
        try:
            return copy_phases(phases)
        except TypeError:
            logger.warning("ignoring malformed todo phases in session entry %s", entry.get("id"))
            return []
    return []


class TodoStore:
    """The current phases of one session, plus the auto-clear timers (agent-behaviour §8.5).

    Calling the store returns a copy of the phases. ``version`` grows with every change of
    the phases (they are changed only here).
    ``clear_delay_s()`` is read on every change: negative means never, 0 the next loop tick.
    ``on_auto_clear`` is called once per task removed by a timer.
    """

    def __init__(
        self,
        *,
        clear_delay_s: Callable[[], float],
        on_auto_clear: Callable[[], None],
        call_later: CallLater = _loop_call_later,
    ) -> None:
        self._phases: list[dict[str, Any]] = []
        self._clear_delay_s = clear_delay_s
        self._on_auto_clear = on_auto_clear
        self._call_later = call_later
        self._timers: dict[str, TimerHandle] = {}
        self.version = 0

    def __call__(self) -> list[dict[str, Any]]:
        return self.phases

    @property
    def phases(self) -> list[dict[str, Any]]:
        return copy_phases(self._phases)

    @property
    def is_empty(self) -> bool:
        return not self._phases

    def set(self, phases: Sequence[Any]) -> list[dict[str, Any]]:
        """Replace the phases with their structural copy; (re)schedule timers; return the copy."""
        self._phases = copy_phases(phases)
        self.version += 1
        self._schedule()
        return self.phases

    def clear(self) -> None:
        """Forget every phase and cancel every timer."""
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        self._phases = []
        self.version += 1

    def _schedule(self) -> None:
        done = {
            str(task.get("id"))
            for phase in self._phases
            for task in phase["tasks"]
            if task.get("status") in DONE_STATUSES
        }
        for task_id in [t for t in self._timers if t not in done]:
            self._timers.pop(task_id).cancel()
        delay = self._clear_delay_s()
        if delay < 0:
            return
        for task_id in done:
            if task_id not in self._timers:
                self._timers[task_id] = self._call_later(delay, self._expiry(task_id))

    def _expiry(self, task_id: str) -> Callable[[], None]:
        return lambda: self._expire(task_id)

    def _expire(self, task_id: str) -> None:
        self._timers.pop(task_id, None)
        for phase in self._phases:
            for index, task in enumerate(phase["tasks"]):
                if str(task.get("id")) == task_id and task.get("status") in DONE_STATUSES:
                    del phase["tasks"][index]
                    self._phases = [p for p in self._phases if p["tasks"]]
                    self.version += 1
                    self._on_auto_clear()
                    return
