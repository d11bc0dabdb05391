"""The todo reminder text (agent-behaviour §8.3)."""

from __future__ import annotations

from xcsh.coding.todos.reminders import reminder_text


def test_reminder_text_lists_open_tasks_by_phase() -> None:
    groups = [
        ("Work", [{"id": "task-1", "content": "Do X", "status": "pending"}]),
        ("Ship", [{"id": "task-3", "content": "Tag", "status": "in_progress"}, {"content": "Push"}]),
    ]
    assert reminder_text(groups, 2, 3) == (
        "<system-reminder>\n"
        "You stopped with 3 incomplete todo item(s):\n"
        "- Work\n"
        "  - Do X\n"
        "- Ship\n"
        "  - Tag\n"
        "  - Push\n"
        "\n"
        "Please continue working on these tasks or mark them complete if finished.\n"
        "(Reminder 2/3)\n"
        "</system-reminder>"
    )
