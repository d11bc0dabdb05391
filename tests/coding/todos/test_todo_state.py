"""The todo store: set_todos normalisation, restore from entries, auto-clear timers on an injected clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from xcsh.coding.todos.state import (
    TodoStore,
    copy_phases,
    latest_todo_phases,
    open_tasks_by_phase,
    without_done,
)


class FakeTimers:
    """An injected clock: records scheduled callbacks; the test fires them."""

    class Handle:
        def __init__(self, delay: float, callback: Callable[[], None]) -> None:
            self.delay = delay
            self.callback = callback
            self.cancelled = False

        def cancel(self) -> None:
            self.cancelled = True

    def __init__(self) -> None:
        self.handles: list[FakeTimers.Handle] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> FakeTimers.Handle:
        handle = FakeTimers.Handle(delay, callback)
        self.handles.append(handle)
        return handle

    def live(self) -> list[FakeTimers.Handle]:
        return [h for h in self.handles if not h.cancelled]

    def fire_all(self) -> None:
        for handle in self.live():
            handle.cancelled = True
            handle.callback()


def _store(delay: float = 60) -> tuple[TodoStore, FakeTimers, list[str]]:
    timers = FakeTimers()
    events: list[str] = []
    store = TodoStore(
        clear_delay_s=lambda: delay, on_auto_clear=lambda: events.append("clear"), call_later=timers
    )
    return store, timers, events


def _phases(*statuses: str) -> list[dict[str, Any]]:
    tasks = [{"id": f"task-{i}", "content": f"t{i}", "status": s} for i, s in enumerate(statuses, 1)]
    return [{"id": "phase-1", "name": "P", "tasks": tasks}]


def test_copy_keeps_only_protocol_fields_without_validating_values() -> None:
    raw = [
        {
            "name": "N",
            "id": 5,
            "extra": True,
            "tasks": [{"status": "weird", "id": "t", "details": "d", "notes": "n", "x": 1}, {"content": "c"}],
        }
    ]
    assert copy_phases(raw) == [
        {"id": 5, "name": "N", "tasks": [{"id": "t", "status": "weird", "notes": "n"}, {"content": "c"}]}
    ]


@pytest.mark.parametrize("bad", [["x"], [{"id": "p", "name": "n"}], [{"tasks": "no"}], [{"tasks": [3]}]])
def test_copy_rejects_phases_that_are_not_structured(bad: list[Any]) -> None:
    with pytest.raises(TypeError):
        copy_phases(bad)


def test_finished_tasks_are_removed_when_their_timer_fires() -> None:
    store, timers, events = _store(delay=2.5)
    store.set(_phases("completed", "pending", "abandoned"))
    assert [h.delay for h in timers.live()] == [2.5, 2.5]
    timers.fire_all()
    assert events == ["clear", "clear"]
    assert store.phases == [
        {"id": "phase-1", "name": "P", "tasks": [{"id": "task-2", "content": "t2", "status": "pending"}]}
    ]


def test_empty_phases_are_dropped_after_the_last_task_clears() -> None:
    store, timers, events = _store(delay=0)
    store.set(_phases("completed"))
    assert [h.delay for h in timers.live()] == [0]
    timers.fire_all()
    assert store.phases == [] and events == ["clear"]


def test_a_task_reopened_before_its_timer_fires_stays() -> None:
    store, timers, events = _store()
    store.set(_phases("completed"))
    first = timers.live()[0]
    store.set(_phases("in_progress"))
    assert first.cancelled and timers.live() == []
    first.callback()  # a late firing finds nothing to do
    assert events == [] and store.phases[0]["tasks"][0]["status"] == "in_progress"


def test_setting_the_same_finished_task_again_keeps_one_timer() -> None:
    store, timers, _ = _store()
    store.set(_phases("completed", "pending"))
    store.set(_phases("completed", "completed"))
    assert len(timers.live()) == 2 and len(timers.handles) == 2


def test_negative_delay_never_clears_and_clear_cancels_everything() -> None:
    store, timers, _ = _store(delay=-1)
    store.set(_phases("completed"))
    assert timers.handles == []
    store2, timers2, _ = _store()
    store2.set(_phases("completed"))
    store2.clear()
    assert store2.phases == [] and timers2.live() == []


def test_the_store_is_its_own_todo_provider_returning_copies() -> None:
    store, _, _ = _store()
    store.set(_phases("pending"))
    snapshot = store()
    snapshot[0]["tasks"].clear()
    assert store()[0]["tasks"] and not store.is_empty


def _todo_entry(phases: Any, *, is_error: bool = False, tool: str = "todo_write") -> dict[str, Any]:
    message = {"role": "toolResult", "toolName": tool, "isError": is_error, "details": {"phases": phases}}
    return {"type": "message", "id": "e", "message": message}


def test_latest_successful_todo_write_result_wins() -> None:
    entries = [
        _todo_entry(_phases("pending")),
        _todo_entry(_phases("completed", "in_progress")),
        _todo_entry(_phases("abandoned"), is_error=True),
        _todo_entry(_phases("abandoned"), tool="other"),
        {"type": "model_change", "id": "m"},
    ]
    restored = latest_todo_phases(entries)
    assert [t["status"] for t in restored[0]["tasks"]] == ["completed", "in_progress"]
    assert without_done(restored) == [
        {"id": "phase-1", "name": "P", "tasks": [{"id": "task-2", "content": "t2", "status": "in_progress"}]}
    ]
    assert without_done(_phases("completed")) == []
    assert latest_todo_phases([]) == []


def test_open_tasks_are_grouped_by_phase() -> None:
    phases = [*_phases("pending", "completed"), {"id": "phase-2", "name": "Q", "tasks": []}]
    assert open_tasks_by_phase(phases) == [("P", [{"id": "task-1", "content": "t1", "status": "pending"}])]
