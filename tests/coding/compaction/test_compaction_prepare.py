"""Cut point and compaction preparation over real session entries (pure functions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from xcsh.coding.compaction.prepare import (
    AlreadyCompactedError,
    NothingToCompactError,
    find_cut_point,
    prepare_compaction,
)
from xcsh.coding.sessions.store import SessionStore


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(
    text: str = "", *, calls: list[tuple[str, str, dict[str, Any]]] = (), prompt: int = 1, stop: str = "stop"
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": {"input": prompt, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": prompt + 1},
        "stopReason": "toolUse" if calls else stop,
        "timestamp": 2,
    }


def tool_result(call_id: str, text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }


def new_store(tmp_path: Path) -> SessionStore:
    store = SessionStore.in_memory(tmp_path)
    store.append_model_change("fake/fake-model")
    store.append_thinking_level_change(None)
    return store


def branch(store: SessionStore) -> list[dict[str, Any]]:
    return store.branch_path(store.leaf_id)


def test_a_single_short_exchange_has_nothing_to_compact(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    store.append_message(user("hello?"))
    store.append_message(assistant("hi"))
    with pytest.raises(NothingToCompactError, match=r"^Nothing to compact \(session too small\)$"):
        prepare_compaction(branch(store), keep_recent_tokens=20_000)


def test_a_branch_ending_in_a_compaction_is_already_compacted(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    first = store.append_message(user("q" * 40))
    store.append_message(assistant("a"))
    store.append_compaction("S", first["id"], 2)
    with pytest.raises(AlreadyCompactedError, match=r"^Already compacted$"):
        prepare_compaction(branch(store), keep_recent_tokens=10)


def test_cut_keeps_the_newest_messages_up_to_the_budget_at_a_user_message(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    store.append_message(user("question one?"))
    store.append_message(assistant("first answer"))
    kept = store.append_message(user("y" * 40))
    store.append_message(assistant("ok"))
    prep = prepare_compaction(branch(store), keep_recent_tokens=10)
    assert prep.first_kept_entry_id == kept["id"]
    assert not prep.is_split_turn and prep.turn_prefix_messages == []
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant"]
    assert [m["role"] for m in prep.recent_messages] == ["user", "assistant"]
    assert prep.tokens_before == 2 and prep.previous_summary is None


def test_a_cut_inside_a_turn_summarises_the_turn_prefix_separately(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    store.append_message(user("work?"))
    answer = store.append_message(assistant("big answer", prompt=120_000))
    prep = prepare_compaction(branch(store), keep_recent_tokens=20_000)
    # 120 000 reported prompt tokens against ~5 estimated shrink the budget to one token
    assert prep.keep_recent_tokens == 1
    assert prep.first_kept_entry_id == answer["id"] and prep.is_split_turn
    assert prep.messages_to_summarize == []
    assert [m["role"] for m in prep.turn_prefix_messages] == ["user"]
    assert prep.tokens_before == 120_001


def test_the_cut_never_separates_a_tool_result_from_its_call(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    store.append_message(user("read it"))
    call = store.append_message(assistant(calls=[("c1", "read", {"path": "a.txt"})]))
    store.append_message(tool_result("c1", "x" * 400))
    store.append_message(assistant("done"))
    path = branch(store)
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=50)
    # the budget is reached at the tool result; the kept region starts at the next valid point after it
    assert path[cut.first_kept_index]["message"]["role"] == "assistant"
    assert path[cut.first_kept_index]["message"]["content"][0]["text"] == "done"
    prep = prepare_compaction(path, keep_recent_tokens=104)
    assert prep.first_kept_entry_id == call["id"] and prep.is_split_turn
    assert [m["role"] for m in prep.recent_messages] == ["assistant", "toolResult", "assistant"]


def test_non_message_entries_before_the_cut_are_kept_with_it(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    store.append_message(user("u" * 40))
    store.append_message(assistant("a" * 40))
    change = store.append_model_change("fake/other")
    store.append_message(user("v" * 40))
    store.append_message(assistant("b" * 4))
    prep = prepare_compaction(branch(store), keep_recent_tokens=11)
    assert prep.first_kept_entry_id == change["id"]
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant"]


def test_a_budget_never_reached_keeps_everything_and_so_has_nothing_to_summarise(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    store.append_message(user("a"))
    store.append_message(assistant("b"))
    path = branch(store)
    cut = find_cut_point(path, 0, len(path), keep_recent_tokens=1000)
    assert cut.first_kept_index == 0  # moved back over model and thinking-level changes
    with pytest.raises(NothingToCompactError):
        prepare_compaction(path, keep_recent_tokens=1000)


def test_iterative_compaction_starts_at_the_previous_kept_entry_and_carries_the_summary(
    tmp_path: Path,
) -> None:
    store = new_store(tmp_path)
    store.append_message(user("one" * 10))
    store.append_message(assistant("r1" * 10))
    kept = store.append_message(user("two" * 10))
    store.append_message(assistant("r2" * 10))
    store.append_compaction(
        "FIRST", kept["id"], 2, details={"readFiles": ["old.txt"], "modifiedFiles": ["changed.txt"]}
    )
    store.append_message(user("three" * 10))
    store.append_message(assistant("r3" * 10, calls=[("c9", "write", {"path": "new.txt", "content": "x"})]))
    store.append_message(tool_result("c9", "ok"))
    last = store.append_message(user("four" * 10))
    store.append_message(assistant("r4"))
    prep = prepare_compaction(branch(store), keep_recent_tokens=10)
    assert prep.first_kept_entry_id == last["id"]
    summarised = [m["role"] for m in prep.messages_to_summarize]
    # the messages the first compaction kept are folded in now, not dropped
    assert summarised == ["user", "assistant", "user", "assistant", "toolResult"]
    assert prep.messages_to_summarize[0]["content"][0]["text"] == "two" * 10
    assert prep.previous_summary == "FIRST"
    assert prep.file_ops.file_lists() == (["old.txt"], ["changed.txt", "new.txt"])


def test_edit_calls_count_every_edited_path_as_modified(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    store.append_message(user("fix"))
    edits = {
        "edits": [
            {"path": "a.py", "old_text": "x", "new_text": "y"},
            {"path": "b.py", "old_text": "1", "new_text": "2"},
        ]
    }
    store.append_message(assistant(calls=[("c1", "read", {"path": "a.py"}), ("c2", "edit", edits)]))
    store.append_message(tool_result("c1", "x"))
    store.append_message(tool_result("c2", "ok"))
    store.append_message(user("z" * 80))
    store.append_message(assistant("done"))
    prep = prepare_compaction(branch(store), keep_recent_tokens=20)
    assert prep.file_ops.file_lists() == ([], ["a.py", "b.py"])
