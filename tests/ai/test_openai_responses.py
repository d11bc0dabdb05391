"""The openai-responses provider, end to end through the official SDK against the fake server."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from ai import providers_helpers
from ai.providers_helpers import (
    PNG,
    TOOLS,
    assistant_message,
    kinds,
    model_from,
    options,
    run_stream,
    sent_body,
    tool_result,
    user,
)
from xcsh.ai.types import Context, Message, Model, ThinkingLevel
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Garbage, Reply, garbage, text, tool_calls
from xcsh.testing.wires.sse import event

fake = providers_helpers.fake
assistant = partial(assistant_message, api="openai-responses", provider="openai", model="gpt-fake-5")


def make_model(fake: FakeLLM, **overrides: Any) -> Model:
    fields = {
        "id": "gpt-fake-5",
        "name": "GPT Fake",
        "api": "openai-responses",
        "provider": "openai",
        "baseUrl": f"{fake.base_url}/v1",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 1.25, "output": 10.0, "cacheRead": 0.125, "cacheWrite": 0.0},
        "contextWindow": 400000,
        "maxTokens": 128000,
    }
    return model_from(fields, **overrides)


def raw_sse(*frames: dict[str, Any]) -> Garbage:
    """A 200 stream made of exactly these Responses events (numbered in order)."""
    payload = b"".join(
        event(frame["type"], {**frame, "sequence_number": number}) for number, frame in enumerate(frames)
    )
    return Garbage(payload=payload)


CREATED = {
    "type": "response.created",
    "response": {"id": "resp_raw", "object": "response", "status": "in_progress", "output": []},
}
MESSAGE_ADDED = {
    "type": "response.output_item.added",
    "output_index": 0,
    "item": {"id": "msg_raw", "type": "message", "status": "in_progress", "role": "assistant", "content": []},
}
TEXT_DELTA = {
    "type": "response.output_text.delta",
    "item_id": "msg_raw",
    "output_index": 0,
    "content_index": 0,
    "delta": "Hel",
}


# ---- streaming -------------------------------------------------------------------------
async def test_text_reply_streams_text_events_and_ends_with_stop(fake: FakeLLM) -> None:
    fake.script(text("Hello there"))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert "".join(e["delta"] for e in events if e["type"] == "text_delta") == "Hello there"
    assert message["content"] == [{"type": "text", "text": "Hello there", "textSignature": "msg_fake_01"}]
    assert message["stopReason"] == "stop"
    assert message["responseId"] == "resp_fake_01"
    assert fake.requests[0].path == "/v1/responses"
    assert fake.requests[0].json["stream"] is True
    fake.assert_complete()


async def test_reasoning_summary_streams_as_thinking_and_keeps_the_reasoning_item(fake: FakeLLM) -> None:
    fake.script(Reply(thinking=["Let me ", "think."], thinking_signature="enc-123", text=["Done."]))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert kinds(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    thinking = message["content"][0]
    assert thinking["type"] == "thinking"
    assert thinking["thinking"] == "Let me think."
    item = json.loads(thinking["thinkingSignature"])
    assert item["type"] == "reasoning"
    assert item["id"] == "rs_fake_01"
    assert item["encrypted_content"] == "enc-123"
    assert message["content"][1] == {"type": "text", "text": "Done.", "textSignature": "msg_fake_01"}


async def test_function_call_arguments_stream_into_a_tool_call_with_call_and_item_id(fake: FakeLLM) -> None:
    fake.script(tool_calls(("call_01", "read", {"path": "src/a.py", "limit": 10}), text_before="Reading."))
    events, message = await run_stream(make_model(fake), {"messages": [user("read it")]})
    deltas = [e["delta"] for e in events if e["type"] == "toolcall_delta"]
    assert len(deltas) == 2
    assert "".join(deltas) == '{"path": "src/a.py", "limit": 10}'
    end = next(e for e in events if e["type"] == "toolcall_end")
    assert end["contentIndex"] == 1
    assert end["toolCall"] == {
        "type": "toolCall",
        "id": "call_01|fc_call_01",
        "name": "read",
        "arguments": {"path": "src/a.py", "limit": 10},
    }
    assert message["content"][1] == end["toolCall"]
    assert message["stopReason"] == "toolUse"


async def test_usage_excludes_cached_input_and_is_priced_per_category(fake: FakeLLM) -> None:
    fake.script(Reply(text=["ok"], prompt_tokens=1000, cached_tokens=400, completion_tokens=200))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    usage = message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (600, 200, 400, 0)
    assert usage["totalTokens"] == 1200
    assert usage["cost"]["input"] == pytest.approx(600 * 1.25 / 1e6)
    assert usage["cost"]["output"] == pytest.approx(200 * 10.0 / 1e6)
    assert usage["cost"]["cacheRead"] == pytest.approx(400 * 0.125 / 1e6)
    assert usage["cost"]["total"] == pytest.approx((600 * 1.25 + 200 * 10.0 + 400 * 0.125) / 1e6)


async def test_incomplete_response_for_max_output_tokens_ends_with_length(fake: FakeLLM) -> None:
    fake.script(text("Truncat", stop="length"))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "length"
    assert message["content"][0]["type"] == "text"


async def test_incomplete_response_for_content_filter_ends_as_error_naming_it(fake: FakeLLM) -> None:
    fake.script(text("Hm", stop="content_filter"))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "Provider finish_reason: content_filter"


async def test_failed_response_ends_as_error_with_its_message(fake: FakeLLM) -> None:
    fake.script(text("Hm", stop="failed"))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "server_error: The model failed to generate a response."
    assert events[-1]["type"] == "error"


# ---- failures --------------------------------------------------------------------------


async def test_garbage_event_data_ends_as_malformed_response_error(fake: FakeLLM) -> None:
    fake.script(garbage())
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert "invalid JSON" in message.get("errorMessage", "")
    assert events[-1]["type"] == "error"


async def test_stream_that_ends_without_response_completed_is_a_connection_error(fake: FakeLLM) -> None:
    fake.script(raw_sse(CREATED, MESSAGE_ADDED, TEXT_DELTA))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert "Connection error" in message.get("errorMessage", "")
    assert message["content"] == [{"type": "text", "text": "Hel"}]


async def test_error_event_mid_stream_ends_with_its_code_and_message(fake: FakeLLM) -> None:
    error = {"type": "error", "code": "server_error", "message": "Something broke", "param": None}
    fake.script(raw_sse(CREATED, MESSAGE_ADDED, TEXT_DELTA, error))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "server_error: Something broke"
    assert events[-1]["type"] == "error"


async def test_reasoning_summary_parts_are_separated_by_a_blank_line(fake: FakeLLM) -> None:
    item = {"id": "rs_raw", "type": "reasoning", "summary": []}
    ref = {"item_id": "rs_raw", "output_index": 0}
    part = {"type": "summary_text", "text": ""}
    done_item = {
        **item,
        "summary": [{"type": "summary_text", "text": "One."}, {"type": "summary_text", "text": "Two."}],
    }
    completed = {
        "type": "response.completed",
        "response": {"id": "resp_raw", "object": "response", "status": "completed", "output": [done_item]},
    }
    fake.script(
        raw_sse(
            CREATED,
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.reasoning_summary_part.added", **ref, "summary_index": 0, "part": part},
            {"type": "response.reasoning_summary_text.delta", **ref, "summary_index": 0, "delta": "One."},
            {"type": "response.reasoning_summary_part.added", **ref, "summary_index": 1, "part": part},
            {"type": "response.reasoning_summary_text.delta", **ref, "summary_index": 1, "delta": "Two."},
            {"type": "response.output_item.done", "output_index": 0, "item": done_item},
            completed,
        )
    )
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "stop"
    assert message["content"][0]["type"] == "thinking"
    assert message["content"][0]["thinking"] == "One.\n\nTwo."


# ---- request body ----------------------------------------------------------------------
async def test_request_has_instructions_tools_store_false_and_default_max_output_tokens(
    fake: FakeLLM,
) -> None:
    context: Context = {"systemPrompt": "You are helpful.", "messages": [user("hi")], "tools": TOOLS}
    body = await sent_body(fake, make_model(fake), context, options(tool_choice="read", session_id="sess-1"))
    assert body["model"] == "gpt-fake-5"
    assert body["instructions"] == "You are helpful."
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read",
            "description": "Read a file",
            "parameters": TOOLS[0]["parameters"],
            "strict": False,
        }
    ]
    assert body["tool_choice"] == {"type": "function", "name": "read"}
    assert body["max_output_tokens"] == 32000
    assert body["store"] is False
    assert body["prompt_cache_key"] == "sess-1"
    assert body["include"] == ["reasoning.encrypted_content"]


@pytest.mark.parametrize("level", ["minimal", "low", "medium", "high", "xhigh"])
async def test_reasoning_effort_is_sent_for_each_level_including_xhigh(
    fake: FakeLLM, level: ThinkingLevel
) -> None:
    body = await sent_body(fake, make_model(fake), {"messages": [user("hi")]}, options(reasoning=level))
    assert body["reasoning"] == {"effort": level, "summary": "auto"}


async def test_no_reasoning_parameter_when_off_or_for_non_reasoning_models(fake: FakeLLM) -> None:
    off = await sent_body(fake, make_model(fake), {"messages": [user("hi")]}, options(reasoning="off"))
    assert "reasoning" not in off
    plain = await sent_body(
        fake, make_model(fake, reasoning=False), {"messages": [user("hi")]}, options(reasoning="high")
    )
    assert "reasoning" not in plain
    assert "include" not in plain


async def test_tool_calls_and_results_become_function_call_items(fake: FakeLLM) -> None:
    call = {"type": "toolCall", "id": "call_01|fc_call_01", "name": "read", "arguments": {"path": "a.py"}}
    context: Context = {
        "messages": [
            user("read a.py"),
            assistant([{"type": "text", "text": "Reading.", "textSignature": "msg_prev"}, call]),
            tool_result("call_01|fc_call_01", [{"type": "text", "text": "print(1)"}]),
            tool_result("unknown", [{"type": "text", "text": "orphan"}]),
        ],
        "tools": TOOLS,
    }
    body = await sent_body(fake, make_model(fake), context)
    assert body["input"][1]["type"] == "message"
    assert body["input"][1]["role"] == "assistant"
    assert body["input"][1]["content"] == [{"type": "output_text", "text": "Reading.", "annotations": []}]
    # without a replayed reasoning item the item ids would be rejected, so only call_id travels
    assert body["input"][2] == {
        "type": "function_call",
        "call_id": "call_01",
        "name": "read",
        "arguments": '{"path": "a.py"}',
    }
    assert body["input"][3] == {"type": "function_call_output", "call_id": "call_01", "output": "print(1)"}
    assert len(body["input"]) == 4


async def test_tool_result_images_follow_as_a_user_message(fake: FakeLLM) -> None:
    call = {"type": "toolCall", "id": "call_01", "name": "read", "arguments": {"path": "a.png"}}
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    context: Context = {"messages": [user("look"), assistant([call]), tool_result("call_01", [image])]}
    body = await sent_body(fake, make_model(fake), context)
    assert body["input"][2] == {
        "type": "function_call_output",
        "call_id": "call_01",
        "output": "(see attached image)",
    }
    assert body["input"][3]["role"] == "user"
    assert body["input"][3]["content"][1] == {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:image/png;base64,{PNG}",
    }


async def test_reasoning_from_a_response_is_replayed_with_item_ids_in_the_next_request(fake: FakeLLM) -> None:
    model = make_model(fake)
    fake.script(
        Reply(
            thinking=["Plan."],
            thinking_signature="enc-9",
            tool_calls=tool_calls(("call_7", "read", {})).tool_calls,
        )
    )
    _, first = await run_stream(model, {"messages": [user("go")]}, options(reasoning="high"))
    assert first["stopReason"] == "toolUse"
    context: Context = {
        "messages": [user("go"), first, tool_result("call_7|fc_call_7", [{"type": "text", "text": "done"}])]
    }
    body = await sent_body(fake, model, context, options(reasoning="high"))
    reasoning, call, output = body["input"][1:4]
    assert reasoning["type"] == "reasoning"
    assert reasoning["id"] == "rs_fake_01"
    assert reasoning["encrypted_content"] == "enc-9"
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Plan."}]
    assert call == {
        "type": "function_call",
        "call_id": "call_7",
        "name": "read",
        "arguments": "{}",
        "id": "fc_call_7",
    }
    assert output == {"type": "function_call_output", "call_id": "call_7", "output": "done"}


async def test_reasoning_of_another_model_is_not_replayed(fake: FakeLLM) -> None:
    reasoning = json.dumps({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"})
    history = assistant(
        [
            {"type": "thinking", "thinking": "Old plan.", "thinkingSignature": reasoning},
            {"type": "text", "text": "Hi"},
        ],
        model="gpt-other",
    )
    body = await sent_body(fake, make_model(fake), {"messages": [user("a"), history, user("b")]})
    assert [item.get("type", "message") for item in body["input"]] == [
        "message",
        "message",
        "message",
        "message",
    ]
    assert body["input"][1]["content"][0]["text"] == "Old plan."
    assert all(item.get("type") != "reasoning" for item in body["input"])


async def test_anthropic_thinking_is_replayed_as_assistant_text(fake: FakeLLM) -> None:
    history = assistant(
        [
            {"type": "thinking", "thinking": "Claude pondered.", "thinkingSignature": "sig-anthropic"},
            {"type": "text", "text": "Answer."},
        ],
        provider="anthropic",
        model="claude-fake-1",
        api="anthropic-messages",
    )
    body = await sent_body(fake, make_model(fake), {"messages": [user("q"), history, user("more")]})
    texts = [part["text"] for item in body["input"][1:3] for part in item["content"]]
    assert texts == ["Claude pondered.", "Answer."]
    assert all(item["role"] == "assistant" for item in body["input"][1:3])
    assert "sig-anthropic" not in json.dumps(body)


async def test_developer_messages_keep_their_role_and_user_images_are_input_images(fake: FakeLLM) -> None:
    messages: list[Message] = [
        user(
            [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ]
        ),
        {"role": "developer", "content": "Remember the todo list.", "timestamp": 2},
    ]
    body = await sent_body(fake, make_model(fake), {"messages": messages})
    assert body["input"][0]["content"] == [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"},
    ]
    assert body["input"][1] == {
        "role": "developer",
        "content": [{"type": "input_text", "text": "Remember the todo list."}],
    }
    text_only = await sent_body(fake, make_model(fake, input=["text"]), {"messages": messages[:1]})
    assert text_only["input"][0]["content"] == [{"type": "input_text", "text": "What is this?"}]


async def test_encrypted_reasoning_with_an_empty_summary_is_replayed_with_the_call_it_led_to(
    fake: FakeLLM,
) -> None:
    """OpenAI often sends no summary; the encrypted reasoning still has to go back (review 2 D4)."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-ENCRYPTED"}
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": ""}
    done_call = {**call, "arguments": '{"path": "a"}'}
    completed = {
        "type": "response.completed",
        "response": {"id": "resp_raw", "object": "response", "status": "completed", "output": []},
    }
    fake.script(
        raw_sse(
            CREATED,
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**reasoning, "encrypted_content": None},
            },
            {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
            {"type": "response.output_item.added", "output_index": 1, "item": call},
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_1",
                "output_index": 1,
                "delta": '{"path": "a"}',
            },
            {"type": "response.output_item.done", "output_index": 1, "item": done_call},
            completed,
        )
    )
    model = make_model(fake)
    _, first = await run_stream(model, {"messages": [user("go")], "tools": TOOLS}, options(reasoning="high"))
    assert first["stopReason"] == "toolUse"
    context: Context = {
        "messages": [user("go"), first, tool_result("call_1|fc_1", [{"type": "text", "text": "ok"}])],
        "tools": TOOLS,
    }
    body = await sent_body(fake, model, context, options(reasoning="high"))
    replayed, sent_call = body["input"][1:3]
    assert replayed == reasoning
    assert sent_call["id"] == "fc_1"
    assert sent_call["call_id"] == "call_1"
