"""convert_to_llm: custom roles, tool-call/result pairing repair and user-text merging (agent-behaviour §1.2)."""

from __future__ import annotations

from typing import Any

from xcsh.coding.messages import INTERRUPTED_TOOL_TEXT, convert_to_llm

Msg = dict[str, Any]


def user(text: str) -> Msg:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(*call_ids: str, stop: str = "toolUse") -> Msg:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": c, "name": "t", "arguments": {}} for c in call_ids],
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": {},
        "stopReason": stop,
        "timestamp": 2,
    }


def result(call_id: str) -> Msg:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "t",
        "content": [{"type": "text", "text": f"r-{call_id}"}],
        "isError": False,
        "timestamp": 3,
    }


def shape(messages: list[Any]) -> list[str]:
    out = []
    for m in messages:
        if m["role"] == "toolResult":
            text = m["content"][0]["text"]
            out.append(
                f"result:{m['toolCallId']}" + (":interrupted" if text == INTERRUPTED_TOOL_TEXT else "")
            )
        elif m["role"] == "user":
            out.append("user:" + "|".join(b["text"] for b in m["content"] if b["type"] == "text"))
        else:
            out.append(m["role"])
    return out


def test_results_keep_their_completion_order_after_the_assistant() -> None:
    converted = convert_to_llm([user("go"), assistant("a", "b", "c"), result("c"), result("a"), result("b")])
    assert shape(converted) == ["user:go", "assistant", "result:c", "result:a", "result:b"]


def test_a_message_wedged_between_a_call_and_its_results_moves_after_the_results() -> None:
    converted = convert_to_llm([user("go"), assistant("a", "b"), result("b"), user("steer"), result("a")])
    assert shape(converted) == ["user:go", "assistant", "result:b", "result:a", "user:steer"]


def test_a_missing_result_becomes_an_interrupted_error_result() -> None:
    converted = convert_to_llm([user("go"), assistant("a", "b"), result("a"), user("later")])
    assert shape(converted) == ["user:go", "assistant", "result:a", "result:b:interrupted", "user:later"]
    synthetic = converted[3]
    assert synthetic["isError"] is True and synthetic["toolName"] == "t"


def test_consecutive_text_only_user_side_messages_are_merged_but_images_stay_apart() -> None:
    image = {
        "role": "user",
        "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "timestamp": 4,
    }
    custom = {"role": "custom", "customType": "note", "content": "note", "display": False, "timestamp": 5}
    converted = convert_to_llm([user("a"), custom, image, user("b"), user("c")])
    assert [m["role"] for m in converted] == ["user", "user", "user"]
    assert shape(converted)[0] == "user:a\n\nnote"
    assert converted[1]["content"][0]["type"] == "image"
    assert shape(converted)[2] == "user:b\n\nc"


def test_bash_runs_excluded_from_context_are_not_sent() -> None:
    bash = {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "cancelled": False}
    excluded = {**bash, "command": "secret", "excludeFromContext": True}
    converted = convert_to_llm([bash, excluded, user("q")])
    assert shape(converted) == ["user:Ran `ls`\n(no output)\n\nq"]
