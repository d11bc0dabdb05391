"""Tool-output pruning: the pure plan, the savings maths, and the atomic rewrite of the session file."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from xcsh.coding.compaction.prune import (
    PrunedOutput,
    PruneSettings,
    plan_pruning,
    prune_tool_outputs,
    pruned_message,
    pruned_notice,
    pruning_saving,
    savings_since,
)
from xcsh.coding.sessions.store import SessionStore

DEFAULTS = PruneSettings()


def result(call_id: str, tokens: int, tool: str = "bash", **extra: Any) -> dict[str, Any]:
    """A tool result whose text is estimated at exactly ``tokens`` tokens."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool,
        "content": [{"type": "text", "text": "x" * (tokens * 4)}],
        "details": {"kept": call_id},
        "isError": False,
        "timestamp": 100,
        **extra,
    }


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(text: str = "", *, ts: int = 2, calls: tuple[str, ...] = ()) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": c, "name": "bash", "arguments": {}} for c in calls]
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": ts,
    }


def test_the_newest_forty_thousand_tokens_are_protected_including_the_result_crossing_the_limit() -> None:
    messages = [user("go"), result("a", 25_000), result("b", 25_000), result("c", 25_000)]
    plan = plan_pruning(messages, DEFAULTS)
    # c (0 seen) and b (25 000 seen, still under 40 000) are protected; a is pruned
    assert plan.outputs == (PrunedOutput(1, 25_000),)
    assert plan.tokens_saved == 25_000 - 9  # the notice itself costs ceil(33 / 4) tokens


def test_results_inside_the_protected_window_are_never_pruned() -> None:
    messages = [result("a", 10_000), result("b", 10_000), result("c", 10_000), result("d", 9_999)]
    assert plan_pruning(messages, PruneSettings(minimum_savings=0)).outputs == ()


def test_read_and_skill_results_are_never_pruned_but_count_towards_the_protection() -> None:
    messages = [
        result("r", 30_000, tool="read"),
        result("s", 30_000, tool="skill"),
        result("old", 30_000),
        result("newest", 45_000, tool="read"),
    ]
    plan = plan_pruning(messages, DEFAULTS)
    assert [o.index for o in plan.outputs] == [2]


def test_pruning_happens_only_when_it_saves_at_least_the_minimum() -> None:
    protected = result("new", 40_000)
    at_minimum = [result("old", 20_009), protected]  # saves exactly 20 000
    below = [result("old", 20_008), protected]  # saves 19 999
    assert pruning_saving(20_009) == 20_000
    assert plan_pruning(at_minimum, DEFAULTS).outputs == (PrunedOutput(0, 20_009),)
    assert plan_pruning(below, DEFAULTS).outputs == ()


def test_several_small_candidates_are_pruned_together_when_their_sum_is_enough() -> None:
    messages = [result(f"old{i}", 5_000) for i in range(5)] + [result("new", 40_000)]
    plan = plan_pruning(messages, DEFAULTS)
    assert [o.index for o in plan.outputs] == [0, 1, 2, 3, 4]
    assert plan.tokens_saved == 5 * (5_000 - 8)


def test_results_pruned_earlier_count_as_protected_and_are_not_pruned_again() -> None:
    earlier = pruned_message(result("p", 30_000), 30_000, 50)
    messages = [result("old", 25_000), earlier, result("new", 39_995)]
    # the pruned result still counts (its notice's 9 tokens), which takes "old" past the protection
    plan = plan_pruning(messages, DEFAULTS)
    assert plan.outputs == (PrunedOutput(0, 25_000),)
    assert plan_pruning([earlier, result("new", 40_000)], PruneSettings(minimum_savings=0)).outputs == ()


def test_other_messages_neither_count_nor_get_pruned() -> None:
    huge_user = user("u" * 400_000)
    messages = [result("old", 30_000), huge_user, assistant("a" * 400_000), result("new", 39_000)]
    # only tool results count: "new" alone leaves "old" inside the protected window
    assert plan_pruning(messages, DEFAULTS).outputs == ()


def test_images_count_towards_a_result_and_it_is_pruned_to_text_only() -> None:
    with_image = result("img", 20_000)
    with_image["content"].append({"type": "image", "data": "AAAA", "mimeType": "image/png"})
    plan = plan_pruning([with_image, result("new", 40_000)], DEFAULTS)
    assert plan.outputs == (PrunedOutput(0, 21_200),)  # + 4 800 characters for the image
    pruned = pruned_message(with_image, 21_200, 7)
    assert pruned["content"] == [{"type": "text", "text": "[Output truncated - 21200 tokens]"}]


def test_the_limits_come_from_the_settings() -> None:
    messages = [result("old", 30), result("new", 20)]
    assert plan_pruning(messages, DEFAULTS).outputs == ()
    small = PruneSettings(protect_tokens=10, minimum_savings=5)
    assert plan_pruning(messages, small).outputs == (PrunedOutput(0, 30),)
    assert plan_pruning(messages, PruneSettings(protect_tokens=10, minimum_savings=30)).outputs == ()


def test_a_pruned_message_is_a_copy_with_only_content_and_pruned_at_changed() -> None:
    original = result("a", 100, isError=True)
    before = copy.deepcopy(original)
    pruned = pruned_message(original, 100, 1234)
    assert original == before
    assert pruned == {
        **before,
        "content": [{"type": "text", "text": pruned_notice(100)}],
        "prunedAt": 1234,
    }
    assert pruned_notice(100) == "[Output truncated - 100 tokens]"


def test_savings_since_count_only_results_pruned_after_the_reply_was_created() -> None:
    reply = assistant("done", ts=1_000)
    after = pruned_message(result("a", 30_000), 30_000, 1_000)
    before = pruned_message(result("b", 20_000), 20_000, 999)
    later = pruned_message(result("c", 10_000), 10_000, 5_000)
    messages = [user("go"), after, before, reply, later]
    assert savings_since(messages, reply) == pruning_saving(30_000)
    assert savings_since([user("go"), result("x", 50_000), reply], reply) == 0
    # the reply last (after a run): the same sums, from the context's facts
    odd = {**result("d", 5_000), "prunedAt": 2_000}  # pruned, but its content is no notice
    assert savings_since([user("go"), after, before, odd, reply], reply) == pruning_saving(30_000)
    assert savings_since([user("go"), after, later, reply], reply) == pruning_saving(30_000) + pruning_saving(
        10_000
    )


# ---------------------------------------------------------------------------- the session file


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def stored_session(tmp_path: Path) -> SessionStore:
    """user → assistant(2 calls) → two big bash results → assistant, written to a real file."""
    store = SessionStore.create(tmp_path / "sessions", tmp_path)
    store.append_message(user("go"))
    store.append_message(assistant(calls=("old", "new"), ts=10))
    store.append_message(result("old", 300, timestamp=11))
    store.append_message(result("new", 200, timestamp=12))
    store.append_message(assistant("done", ts=13))
    return store


SMALL = PruneSettings(protect_tokens=100, minimum_savings=100)


def test_pruning_rewrites_the_session_file_atomically_and_it_reopens_pruned(tmp_path: Path) -> None:
    store = stored_session(tmp_path)
    path = store.path
    assert path is not None and store.is_flushed
    messages = store.build_context().messages
    lines_before = read_lines(path)
    inode_before = os.stat(path).st_ino

    plan = prune_tool_outputs(messages, store, SMALL, pruned_at=4242)
    store.flush()  # the file is rewritten in the background

    assert plan.outputs == (PrunedOutput(2, 300),)
    notice = [{"type": "text", "text": "[Output truncated - 300 tokens]"}]
    assert messages[2] == {**result("old", 300, timestamp=11), "content": notice, "prunedAt": 4242}
    assert messages[3]["content"] == result("new", 200)["content"]
    # a new file was renamed over the old one (no in-place edit), leaving no temporary files
    assert os.stat(path).st_ino != inode_before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".lock"]
    lines = read_lines(path)
    assert len(lines) == len(lines_before)
    changed = [i for i, (a, b) in enumerate(zip(lines_before, lines, strict=True)) if a != b]
    assert changed == [3]  # header + user + assistant, then the pruned result's entry
    assert lines[3] == {**lines_before[3], "message": messages[2]}
    assert store.get_entry(lines[3]["id"]) == lines[3]

    store.append_message(user("next"))  # appending still works after the rewrite
    store.close()
    with SessionStore.open(path, cwd_for_new=tmp_path) as reopened:
        context = reopened.build_context().messages
    assert context[2] == messages[2]
    assert context[3] == messages[3]
    assert context[-1]["content"] == user("next")["content"]


def test_a_context_restored_from_copies_finds_its_entries_by_tool_call_id(tmp_path: Path) -> None:
    store = stored_session(tmp_path)
    messages = copy.deepcopy(store.build_context().messages)
    prune_tool_outputs(messages, store, SMALL, pruned_at=7)
    store.flush()
    assert store.path is not None
    stored = [line["message"] for line in read_lines(store.path) if line.get("type") == "message"]
    assert stored[2]["prunedAt"] == 7 and stored[2]["content"] == messages[2]["content"]
    store.close()


def test_nothing_is_rewritten_when_pruning_would_not_pay_off(tmp_path: Path) -> None:
    store = stored_session(tmp_path)
    assert store.path is not None
    inode = os.stat(store.path).st_ino
    messages = store.build_context().messages
    plan = prune_tool_outputs(messages, store, PruneSettings(protect_tokens=100, minimum_savings=1_000))
    store.flush()
    assert plan.outputs == ()
    assert os.stat(store.path).st_ino == inode
    assert "prunedAt" not in messages[2]
    store.close()


def test_an_in_memory_session_is_pruned_in_memory_only(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    for message in (user("go"), assistant(calls=("old", "new")), result("old", 300), result("new", 200)):
        store.append_message(message)
    messages = store.build_context().messages
    prune_tool_outputs(messages, store, SMALL, pruned_at=1)
    entry = store.branch_path(store.leaf_id)[2]
    assert entry["message"] is messages[2] and entry["message"]["prunedAt"] == 1
    assert list(tmp_path.iterdir()) == []
