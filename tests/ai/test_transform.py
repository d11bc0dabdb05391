"""transform_messages: the conversation as another (or the same) provider must receive it."""

from __future__ import annotations

import copy
from functools import partial
from typing import Any, cast

from ai.providers_helpers import assistant_message, user
from xcsh.ai.transform import INTERRUPTED_TOOL_TEXT, transform_messages
from xcsh.ai.types import Message, Model

TARGET = cast(
    Model,
    {
        "id": "target-model",
        "name": "Target",
        "api": "openai-completions",
        "provider": "target",
        "baseUrl": "http://127.0.0.1:1/v1",
        "reasoning": True,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 4096,
    },
)


assistant = partial(assistant_message, api="openai-completions", provider="target", model="target-model")


def call(call_id: str, name: str = "read", **extra: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": {"path": "a"}, **extra}


def result(call_id: str, name: str = "read", text: str = "out") -> Message:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }


def roles(messages: list[Message]) -> list[str]:
    return [m["role"] for m in messages]


def test_matched_calls_and_results_pass_through_unchanged() -> None:
    messages = [
        user("go"),
        assistant([call("c1")]),
        result("c1"),
        assistant([{"type": "text", "text": "done"}]),
    ]
    assert transform_messages(messages, TARGET) == messages


def test_orphaned_tool_call_gets_a_synthetic_error_result_before_the_next_user_message() -> None:
    messages = [user("go"), assistant([call("c1", "bash")]), user("never mind")]
    out = transform_messages(messages, TARGET)
    assert roles(out) == ["user", "assistant", "toolResult", "user"]
    synthetic = out[2]
    assert synthetic["role"] == "toolResult"
    assert synthetic["toolCallId"] == "c1"
    assert synthetic["toolName"] == "bash"
    assert synthetic["isError"] is True
    assert synthetic["content"] == [{"type": "text", "text": INTERRUPTED_TOOL_TEXT}]


def test_orphaned_tool_call_at_the_end_of_the_conversation_is_closed_too() -> None:
    out = transform_messages([user("go"), assistant([call("c1"), call("c2")]), result("c1")], TARGET)
    assert roles(out) == ["user", "assistant", "toolResult", "toolResult"]
    assert [m["toolCallId"] for m in out[2:]] == ["c1", "c2"]
    assert out[3]["isError"] is True


def test_result_without_its_call_is_dropped() -> None:
    out = transform_messages(
        [user("go"), result("ghost"), assistant([{"type": "text", "text": "hi"}])], TARGET
    )
    assert roles(out) == ["user", "assistant"]


def test_errored_and_aborted_assistant_messages_are_dropped_with_their_results() -> None:
    messages = [
        user("go"),
        assistant([{"type": "text", "text": "partial"}, call("c1")], stop="error"),
        result("c1"),
        assistant([{"type": "text", "text": "half"}], stop="aborted"),
        user("again"),
        assistant([{"type": "text", "text": "fine"}]),
    ]
    out = transform_messages(messages, TARGET)
    assert roles(out) == ["user", "user", "assistant"]
    assert out[2]["content"] == [{"type": "text", "text": "fine"}]


def test_thinking_from_another_model_becomes_plain_text() -> None:
    thought = {"type": "thinking", "thinking": "Consider X.", "thinkingSignature": "sig"}
    text = {"type": "text", "text": "Answer.", "textSignature": "tsig"}
    out = transform_messages([user("q"), assistant([thought, text], provider="other", model="m2")], TARGET)
    assert out[1]["content"] == [{"type": "text", "text": "Consider X."}, {"type": "text", "text": "Answer."}]


def test_thinking_from_the_same_model_keeps_its_signature() -> None:
    thought = {"type": "thinking", "thinking": "Consider X.", "thinkingSignature": "sig"}
    redacted = {"type": "redactedThinking", "data": "opaque"}
    out = transform_messages(
        [user("q"), assistant([thought, redacted, {"type": "text", "text": "A"}])], TARGET
    )
    assert out[1]["content"] == [thought, redacted, {"type": "text", "text": "A"}]


def test_empty_thinking_and_foreign_redacted_thinking_are_dropped() -> None:
    content = [
        {"type": "thinking", "thinking": "   "},
        {"type": "redactedThinking", "data": "opaque"},
        {"type": "text", "text": "A"},
    ]
    same = transform_messages([user("q"), assistant(content)], TARGET)
    assert same[1]["content"] == [
        {"type": "redactedThinking", "data": "opaque"},
        {"type": "text", "text": "A"},
    ]
    other = transform_messages([user("q"), assistant(content, provider="other")], TARGET)
    assert other[1]["content"] == [{"type": "text", "text": "A"}]


def test_foreign_tool_calls_lose_provider_signatures_and_partial_json() -> None:
    foreign = call("c1", thoughtSignature="gsig", partialJson='{"path": "a"}')
    out = transform_messages([user("q"), assistant([foreign], provider="google"), result("c1")], TARGET)
    assert out[1]["content"] == [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}]


def test_tool_call_ids_are_normalised_consistently_for_calls_and_results() -> None:
    seen: list[str] = []

    def normalize(call_id: str) -> str:
        seen.append(call_id)
        return "n_" + call_id.replace("|", "_")

    messages = [
        user("go"),
        assistant([call("a|1"), call("b|2")], provider="other"),
        result("a|1"),
        result("b|2"),
        assistant([call("a|1")], provider="other"),
    ]
    out = transform_messages(messages, TARGET, normalize)
    assert [b["id"] for b in out[1]["content"]] == ["n_a_1", "n_b_2"]
    assert [m["toolCallId"] for m in out[2:4]] == ["n_a_1", "n_b_2"]
    assert out[4]["content"][0]["id"] == "n_a_1"
    assert out[5]["toolCallId"] == "n_a_1"  # the synthetic result, same mapped id
    assert sorted(set(seen)) == ["a|1", "b|2"] and len(seen) == 2  # each id normalised once


def test_input_messages_are_not_modified() -> None:
    messages = [
        user("go"),
        assistant([{"type": "thinking", "thinking": "t"}, call("x|1", partialJson="{}")], provider="other"),
        result("x|1"),
    ]
    before = copy.deepcopy(messages)
    transform_messages(messages, TARGET, lambda i: i.replace("|", "_"))
    assert messages == before
