"""Messages and agent events are declared once (xcsh.agent.types) and the wire package uses those classes."""

from __future__ import annotations

import typing
from typing import Any, get_args

from xcsh.agent import types as agent_types
from xcsh.coding.bash.session import BashRunResult
from xcsh.coding.bash.wire import bash_execution_message
from xcsh.coding.messages import custom_message, developer_message, user_message
from xcsh.coding.sessions.context import build_session_context
from xcsh.rpc import frames, results
from xcsh.rpc.schema import FrameChecker

# agent-behaviour §1.2: every role a message of the live context can have
SPEC_ROLES = {
    "user", "developer", "assistant", "toolResult", "bashExecution", "pythonExecution",
    "custom", "hookMessage", "branchSummary", "compactionSummary", "fileMention",
}  # fmt: skip


def _roles(message_type: Any) -> set[str]:
    hints = typing.get_type_hints(message_type)
    return set(get_args(hints["role"]))


def test_the_agent_message_union_has_one_typed_shape_per_spec_role() -> None:
    members = get_args(agent_types.AgentMessage)
    roles = [role for member in members for role in _roles(member)]
    assert sorted(roles) == sorted(SPEC_ROLES)  # each role in exactly one member


def test_the_wire_package_uses_the_agents_message_and_event_classes() -> None:
    assert results.AgentMessage is agent_types.AgentMessage
    for kind, event in {
        "agent_start": agent_types.AgentStartEvent,
        "agent_end": agent_types.AgentEndEvent,
        "turn_start": agent_types.TurnStartEvent,
        "turn_end": agent_types.TurnEndEvent,
        "message_start": agent_types.MessageStartEvent,
        "message_end": agent_types.MessageEndEvent,
        "tool_execution_start": agent_types.ToolExecutionStartEvent,
        "tool_execution_update": agent_types.ToolExecutionUpdateEvent,
        "tool_execution_end": agent_types.ToolExecutionEndEvent,
    }.items():
        assert frames.EVENTS[kind] is event, kind


def test_messages_the_coding_layer_builds_match_the_published_schema() -> None:
    run = BashRunResult(
        output="x" * 10 + "\n", exit_code=2, cancelled=False, timed_out=False, truncated=True, total_lines=3, total_bytes=90,
        output_lines=1, output_bytes=11, full_output_path=None, cwd_changed=False, new_cwd=None,
    )  # fmt: skip
    entries: list[dict[str, Any]] = [
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "custom_message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:01.000Z",
         "customType": "note", "content": "remember", "display": True, "attribution": "agent"},
        {"type": "branch_summary", "id": "c", "parentId": "b", "timestamp": "2026-01-01T00:00:02.000Z",
         "fromId": "root", "summary": "went elsewhere"},
        {"type": "compaction", "id": "d", "parentId": "c", "timestamp": "2026-01-01T00:00:03.000Z",
         "summary": "S", "shortSummary": "s", "firstKeptEntryId": "b", "tokensBefore": 12},
    ]  # fmt: skip
    rebuilt = build_session_context(entries, "d").messages
    built = [
        user_message("hello"),
        developer_message("continue"),
        custom_message("reminder", "text", display=False, details={"k": 1}),
        bash_execution_message("echo x", run, timestamp_ms=5),
        *rebuilt,
    ]
    assert {m["role"] for m in rebuilt} == {"compactionSummary", "custom", "branchSummary"}
    checker = FrameChecker()
    frame = {"type": "agent_end", "messages": built}
    assert checker.violations(frame) == []
    # the schema is strict about the shape: a custom message without its customType is off it
    broken = {**built[2]}
    del broken["customType"]
    assert checker.violations({"type": "message_end", "message": broken}) != []
