"""Small helpers shared by the end-to-end scenario tests."""

from __future__ import annotations

from typing import Any

Frame = dict[str, Any]

RUN_TYPES = (
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
)


def kinds(frames: list[Frame], *, skip_updates: bool = True) -> list[str]:
    """Frame types in order, optionally without message_update frames."""
    return [f["type"] for f in frames if not (skip_updates and f["type"] == "message_update")]


def text_of(message: Frame) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def assert_run(frames: list[Frame], user: str, reply: str, api: str = "openai-completions") -> None:
    """The standard RUN(u, r) sequence of scenarios.md §0.3 (message_update frames checked separately)."""
    assert kinds(frames) == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ], kinds(frames)
    starts = [f for f in frames if f["type"] == "message_start"]
    assert starts[0]["message"]["role"] == "user" and text_of(starts[0]["message"]) == user
    assert starts[1]["message"]["role"] == "assistant" and starts[1]["message"]["content"] == []
    updates = [f["assistantMessageEvent"] for f in frames if f["type"] == "message_update"]
    assert updates[0]["type"] == "text_start" and updates[0]["contentIndex"] == 0
    assert updates[-1] == {**updates[-1], "type": "text_end", "contentIndex": 0, "content": reply}
    deltas = [u["delta"] for u in updates if u["type"] == "text_delta"]
    assert len(deltas) >= 1 and "".join(deltas) == reply
    end = [f for f in frames if f["type"] == "message_end"][-1]["message"]
    assert end["role"] == "assistant" and end["stopReason"] == "stop"
    assert end["content"] == [{"type": "text", "text": reply}]
    assert (end["provider"], end["model"], end["api"]) == ("fake", "fake-model", api)
    turn_end = next(f for f in frames if f["type"] == "turn_end")
    assert turn_end["message"]["role"] == "assistant" and turn_end["toolResults"] == []
    agent_end = frames[-1]
    assert [m["role"] for m in agent_end["messages"]] == ["user", "assistant"]


def between(frames: list[Frame], start_type: str, end_type: str) -> list[Frame]:
    """Frames from the first ``start_type`` to the first following ``end_type`` (inclusive)."""
    start = next(i for i, f in enumerate(frames) if f["type"] == start_type)
    end = next(i for i in range(start, len(frames)) if frames[i]["type"] == end_type)
    return frames[start : end + 1]
