"""build_session_context, session_stats (and its wire shape) and last_assistant_text as pure functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xcsh.coding.sessions.context import (
    SessionStats,
    TokenTotals,
    build_session_context,
    last_assistant_text,
    session_stats,
)
from xcsh.coding.sessions.store import SessionStore
from xcsh.modes.rpc.shapes import stats_payload


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def usage(inp: int, out: int, cost: float, premium: int | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "input": inp,
        "output": out,
        "cacheRead": 1,
        "cacheWrite": 2,
        "totalTokens": inp + out + 3,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }
    if premium is not None:
        result["premiumRequests"] = premium
    return result


def assistant(text: str, *, model: str = "m1", tool_calls: int = 0, stop: str = "stop") -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {}} for i in range(tool_calls)
    ]
    return {
        "role": "assistant",
        "content": content,
        "provider": "prov",
        "model": model,
        "usage": usage(10, 5, 0.5, premium=1),
        "stopReason": stop,
        "timestamp": 2,
    }


def test_empty_or_none_leaf_gives_an_empty_context() -> None:
    assert build_session_context([], "x").messages == []
    ctx = build_session_context(
        [{"type": "message", "id": "a", "parentId": None, "message": user("q")}], None
    )
    assert ctx.messages == [] and ctx.thinking_level is None and ctx.models == {}


def test_context_follows_the_branch_and_collects_settings(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_model_change("prov/start")
    store.append_model_change("prov/small", role="smol")
    store.append_thinking_level_change("high")
    store.append_service_tier_change("priority")
    q1 = store.append_message(user("q1"))
    store.append_message(assistant("a1", model="m9"))
    store.append_message(user("abandoned"))
    store.set_leaf(q1["id"])
    store.append_ttsr_injection(["rule-a"])
    store.append_mode_change("plan", {"file": "p.md"})
    store.append_custom("ext-state", {"k": 1})
    store.append_message(user("q2"))

    ctx = store.build_context()
    assert [m["content"][0]["text"] for m in ctx.messages] == ["q1", "q2"]
    assert ctx.models == {"default": "prov/start", "smol": "prov/small"}
    assert ctx.thinking_level == "high"
    assert ctx.service_tier == "priority"
    assert ctx.injected_rules == {"rule-a"}
    assert ctx.mode == "plan" and ctx.mode_data == {"file": "p.md"}


def test_assistant_message_sets_the_default_model_and_null_level_reads_off(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_model_change("prov/start")
    store.append_thinking_level_change(None)
    store.append_message(assistant("a", model="m9"))
    ctx = store.build_context()
    assert ctx.models == {"default": "prov/m9"}
    assert ctx.thinking_level == "off"


def test_compaction_puts_summary_first_then_kept_then_later_entries(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_message(user("old1"))
    store.append_message(assistant("old2"))
    kept = store.append_message(user("kept1"))
    store.append_message(assistant("kept2"))
    compaction = store.append_compaction("the summary", kept["id"], 1234, short_summary="short")
    store.append_message(user("new1"))

    ctx = store.build_context()
    summary = ctx.messages[0]
    assert summary["role"] == "compactionSummary"
    assert summary["summary"] == "the summary" and summary["shortSummary"] == "short"
    assert summary["tokensBefore"] == 1234 and summary["timestamp"] > 0
    texts = [m["content"][0]["text"] for m in ctx.messages[1:]]
    assert texts == ["kept1", "kept2", "new1"]
    assert ctx.compaction is not None and ctx.compaction["id"] == compaction["id"]


def test_latest_compaction_wins(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    first = store.append_message(user("a"))
    store.append_compaction("one", first["id"], 1)
    second = store.append_message(user("b"))
    store.append_compaction("two", second["id"], 2)
    ctx = store.build_context()
    assert ctx.messages[0]["summary"] == "two"
    assert [m.get("content") for m in ctx.messages[1:]] == [[{"type": "text", "text": "b"}]]


def test_remote_compaction_history_skips_kept_entries() -> None:
    entries = [
        {"type": "message", "id": "a", "parentId": None, "timestamp": "t", "message": user("kept")},
        {
            "type": "compaction",
            "id": "c",
            "parentId": "a",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "summary": "s",
            "firstKeptEntryId": "a",
            "tokensBefore": 1,
            "preserveData": {
                "openaiRemoteCompaction": {"provider": "openai", "replacementHistory": [{"x": 1}]}
            },
        },
    ]
    ctx = build_session_context(entries, "c")
    assert len(ctx.messages) == 1
    assert ctx.messages[0]["providerPayload"] == {
        "type": "openaiResponsesHistory",
        "provider": "openai",
        "items": [{"x": 1}],
    }


def test_custom_messages_and_branch_summaries_become_messages() -> None:
    entries = [
        {
            "type": "custom_message",
            "id": "a",
            "parentId": None,
            "timestamp": "2026-07-02T10:00:05.000Z",
            "customType": "todo",
            "content": "hi",
            "display": False,
            "details": {"d": 1},
            "attribution": "agent",
        },
        {
            "type": "branch_summary",
            "id": "b",
            "parentId": "a",
            "timestamp": "2026-07-02T10:00:06.000Z",
            "fromId": "root",
            "summary": "went elsewhere",
        },
        {
            "type": "branch_summary",
            "id": "c",
            "parentId": "b",
            "timestamp": "t",
            "fromId": "b",
            "summary": "",
        },
        {"type": "something_new", "id": "d", "parentId": "c", "timestamp": "t"},
    ]
    ctx = build_session_context(entries, "d")
    assert ctx.messages == [
        {
            "role": "custom",
            "customType": "todo",
            "content": "hi",
            "display": False,
            "details": {"d": 1},
            "attribution": "agent",
            "timestamp": 1_782_986_405_000,
        },
        {
            "role": "branchSummary",
            "summary": "went elsewhere",
            "fromId": "root",
            "timestamp": 1_782_986_406_000,
        },
    ]


def test_unknown_leaf_falls_back_to_the_last_entry() -> None:
    entries = [{"type": "message", "id": "a", "parentId": None, "timestamp": "t", "message": user("q")}]
    assert len(build_session_context(entries, "missing").messages) == 1


def test_stats_count_the_live_context_and_sum_usage() -> None:
    task_usage = usage(100, 50, 1.25)
    messages = [
        user("q"),
        assistant("a", tool_calls=2),
        {
            "role": "toolResult",
            "toolName": "read",
            "toolCallId": "c0",
            "content": [],
            "isError": False,
            "timestamp": 3,
        },
        {
            "role": "toolResult",
            "toolName": "task",
            "toolCallId": "c1",
            "content": [],
            "isError": False,
            "details": {"usage": task_usage},
            "timestamp": 3,
        },
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "cancelled": False,
            "truncated": False,
            "timestamp": 4,
        },
        assistant("", stop="aborted"),
    ]
    stats = session_stats(messages, session_id="sid", session_file="/s/f.jsonl")
    assert stats == SessionStats(
        session_id="sid",
        session_file="/s/f.jsonl",
        user_messages=1,
        assistant_messages=2,
        tool_calls=2,
        tool_results=2,
        total_messages=6,
        tokens=TokenTotals(input=120, output=60, cache_read=3, cache_write=6),
        cost=2.25,
        premium_requests=2,
    )
    assert stats.tokens.total == 189
    assert stats_payload(stats) == {
        "sessionFile": "/s/f.jsonl",
        "sessionId": "sid",
        "userMessages": 1,
        "assistantMessages": 2,
        "toolCalls": 2,
        "toolResults": 2,
        "totalMessages": 6,
        "tokens": {"input": 120, "output": 60, "cacheRead": 3, "cacheWrite": 6, "total": 189},
        "cost": 2.25,
        "premiumRequests": 2,
    }
    assert "sessionFile" not in stats_payload(session_stats([], session_id="sid", session_file=None))


def test_last_assistant_text_skips_empty_aborted_messages() -> None:
    done = assistant("  first ")
    done["content"].append({"type": "text", "text": "part two "})
    aborted = assistant("", stop="aborted")
    assert last_assistant_text([user("q"), done, aborted]) == "first part two"
    assert last_assistant_text([user("q")]) is None
    tool_only = assistant("", tool_calls=1)
    assert last_assistant_text([done, tool_only]) is None
