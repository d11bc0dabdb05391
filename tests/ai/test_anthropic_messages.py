"""The anthropic-messages provider, end to end through the official SDK against the fake server."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from ai import providers_helpers
from ai.providers_helpers import (
    PNG,
    assistant_message,
    kinds,
    model_from,
    run_stream,
    sent_body,
    tool_result,
    user,
)
from xcsh.ai.errors import is_retryable
from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Context, Model, ThinkingLevel
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import (
    Garbage,
    Reply,
    garbage,
    http_error,
    text,
    tool_calls,
)
from xcsh.testing.wires.sse import event

fake = providers_helpers.fake
assistant = partial(assistant_message, api="anthropic-messages", provider="anthropic", model="claude-fake-1")


def make_model(fake: FakeLLM, **overrides: Any) -> Model:
    fields = {
        "id": "claude-fake-1",
        "name": "Claude Fake",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "baseUrl": fake.base_url,
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75},
        "contextWindow": 200000,
        "maxTokens": 64000,
    }
    return model_from(fields, **overrides)


def raw_sse(*frames: tuple[str, dict[str, Any]]) -> Garbage:
    """A 200 stream made of exactly these SSE events."""
    return Garbage(payload=b"".join(event(name, body) for name, body in frames))


MESSAGE_START = (
    "message_start",
    {
        "type": "message_start",
        "message": {
            "id": "msg_raw",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake-1",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    },
)
TEXT_START = (
    "content_block_start",
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
)
TEXT_DELTA = (
    "content_block_delta",
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
)


# ---- streaming -------------------------------------------------------------------------
async def test_text_reply_streams_text_events_and_ends_with_stop(fake: FakeLLM) -> None:
    fake.script(text("Hello there"))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert "".join(e["delta"] for e in events if e["type"] == "text_delta") == "Hello there"
    assert message["content"] == [{"type": "text", "text": "Hello there"}]
    assert message["stopReason"] == "stop"
    assert message["responseId"] == "msg_fake_01"
    assert (message["api"], message["provider"], message["model"]) == (
        "anthropic-messages",
        "anthropic",
        "claude-fake-1",
    )
    assert fake.requests[0].path == "/v1/messages"
    fake.assert_complete()


async def test_thinking_is_streamed_before_text_and_keeps_its_signature(fake: FakeLLM) -> None:
    fake.script(Reply(thinking=["Let me ", "think."], thinking_signature="sig-abc", text=["Done."]))
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
    assert message["content"] == [
        {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "sig-abc"},
        {"type": "text", "text": "Done."},
    ]
    assert [e["contentIndex"] for e in events if e["type"] == "text_start"] == [1]


async def test_tool_call_arguments_stream_as_fragments_and_parse_at_the_end(fake: FakeLLM) -> None:
    fake.script(tool_calls(("toolu_01", "read", {"path": "src/a.py", "limit": 10}), text_before="Reading."))
    events, message = await run_stream(make_model(fake), {"messages": [user("read it")]})
    deltas = [e["delta"] for e in events if e["type"] == "toolcall_delta"]
    assert len(deltas) >= 2
    assert "".join(deltas) == '{"path": "src/a.py", "limit": 10}'
    end = next(e for e in events if e["type"] == "toolcall_end")
    assert end["contentIndex"] == 1
    assert end["toolCall"] == {
        "type": "toolCall",
        "id": "toolu_01",
        "name": "read",
        "arguments": {"path": "src/a.py", "limit": 10},
    }
    assert message["content"][1] == end["toolCall"]
    assert message["stopReason"] == "toolUse"


async def test_usage_and_cost_come_from_the_final_message_delta(fake: FakeLLM) -> None:
    fake.script(Reply(text=["ok"], prompt_tokens=1200, completion_tokens=300))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    usage = message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (1200, 300, 0, 0)
    assert usage["totalTokens"] == 1500
    assert usage["cost"]["input"] == pytest.approx(1200 * 3.0 / 1e6)
    assert usage["cost"]["output"] == pytest.approx(300 * 15.0 / 1e6)
    assert usage["cost"]["total"] == pytest.approx(0.0036 + 0.0045)


async def test_cache_reads_and_writes_are_reported_apart_from_uncached_input(fake: FakeLLM) -> None:
    fake.script(
        Reply(
            text=["ok"], prompt_tokens=1000, cached_tokens=600, cache_write_tokens=300, completion_tokens=20
        )
    )
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    usage = message["usage"]
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"], usage["output"]) == (100, 600, 300, 20)
    assert usage["totalTokens"] == 1020
    assert usage["cost"]["cacheRead"] == pytest.approx(600 * 0.3 / 1e6)
    assert usage["cost"]["cacheWrite"] == pytest.approx(300 * 3.75 / 1e6)
    assert usage["cost"]["total"] == pytest.approx(0.0003 + 0.0003 + 0.00018 + 0.001125)


@pytest.mark.parametrize(
    ("raw_stop", "expected"), [("max_tokens", "length"), ("stop_sequence", "stop"), ("end_turn", "stop")]
)
async def test_stop_reasons_map_to_ours(fake: FakeLLM, raw_stop: str, expected: str) -> None:
    fake.script(Reply(text=["ok"], stop=raw_stop))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == expected


async def test_refusal_stop_reason_ends_as_error_naming_it(fake: FakeLLM) -> None:
    fake.script(Reply(text=["I can't"], stop="refusal"))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "Provider stop_reason: refusal"
    assert kinds(events)[-1] == "error"


# ---- failures --------------------------------------------------------------------------
async def test_http_529_ends_as_retryable_error_with_status_and_vendor_message(fake: FakeLLM) -> None:
    fake.script(http_error(529, "Overloaded"))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert kinds(events) == ["error"]
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("529 ")
    assert "overloaded_error: Overloaded" in message["errorMessage"]
    assert is_retryable(message["errorMessage"])


async def test_stream_that_ends_without_message_stop_is_a_connection_error(fake: FakeLLM) -> None:
    fake.script(raw_sse(MESSAGE_START, TEXT_START, TEXT_DELTA))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert (
        message["errorMessage"]
        == "Connection error: anthropic ended the stream before the answer was complete"
    )
    assert is_retryable(message["errorMessage"])


async def test_error_event_mid_stream_ends_with_its_message(fake: FakeLLM) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    fake.script(raw_sse(MESSAGE_START, TEXT_START, TEXT_DELTA, ("error", error)))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "overloaded_error: Overloaded"
    assert is_retryable(message["errorMessage"])
    assert message["content"] == [{"type": "text", "text": "Hel"}]
    assert kinds(events)[-1] == "error"


async def test_garbage_event_data_ends_as_malformed_response_error(fake: FakeLLM) -> None:
    fake.script(Garbage(payload=b"event: message_start\ndata: {this is not json\n\n"))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith(
        "Malformed response from anthropic (Anthropic Messages stream): invalid JSON: "
    )


async def test_stream_without_any_anthropic_event_ends_as_error_before_message_start(fake: FakeLLM) -> None:
    fake.script(garbage())  # data lines without an event name are not Anthropic events
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "Connection error: anthropic ended the stream without sending an answer"


# ---- request body ----------------------------------------------------------------------
async def test_request_has_cached_system_prompt_tools_and_default_max_tokens(fake: FakeLLM) -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    context: Context = {
        "systemPrompt": "You are a coding agent.",
        "messages": [user("hi")],
        "tools": [{"name": "read", "description": "Read a file", "parameters": schema}],
    }
    body = await sent_body(fake, make_model(fake, reasoning=False), context)
    assert body["model"] == "claude-fake-1"
    assert body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"] == [{"name": "read", "description": "Read a file", "input_schema": schema}]
    assert body["max_tokens"] == 32000
    assert "thinking" not in body
    assert "tool_choice" not in body
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
    ]


async def test_only_the_last_user_message_carries_a_cache_breakpoint(fake: FakeLLM) -> None:
    context: Context = {
        "messages": [user("first"), assistant([{"type": "text", "text": "reply"}]), user("second")]
    }
    body = await sent_body(fake, make_model(fake), context)
    first, reply, last = body["messages"]
    assert first == {"role": "user", "content": [{"type": "text", "text": "first"}]}
    assert reply == {"role": "assistant", "content": [{"type": "text", "text": "reply"}]}
    assert last["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_budget_thinking_sends_the_level_budget_and_raises_max_tokens(fake: FakeLLM) -> None:
    options = StreamOptions(api_key="k", reasoning="medium", temperature=0.2)
    body = await sent_body(fake, make_model(fake), {"messages": [user("hi")]}, options)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 32000 + 8192
    assert "temperature" not in body  # the API only accepts the default with thinking on


async def test_budget_thinking_uses_custom_budgets_and_fits_small_models(fake: FakeLLM) -> None:
    options = StreamOptions(api_key="k", reasoning="high", thinking_budgets={"high": 6000}, max_tokens=1000)
    body = await sent_body(fake, make_model(fake), {"messages": [user("hi")]}, options)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 6000}
    assert body["max_tokens"] == 7000
    small = make_model(fake, maxTokens=4096)
    body = await sent_body(
        fake, small, {"messages": [user("hi")]}, StreamOptions(api_key="k", reasoning="xhigh")
    )
    assert body["max_tokens"] == 4096
    assert body["thinking"]["budget_tokens"] == 4096 - 1024


@pytest.mark.parametrize(("level", "effort"), [("minimal", "low"), ("medium", "medium"), ("xhigh", "max")])
async def test_adaptive_thinking_sends_effort_instead_of_a_budget(
    fake: FakeLLM, level: ThinkingLevel, effort: str
) -> None:
    model = make_model(
        fake, thinking={"minLevel": "minimal", "maxLevel": "xhigh", "mode": "anthropic-adaptive"}
    )
    options = StreamOptions(api_key="k", reasoning=level)
    body = await sent_body(fake, model, {"messages": [user("hi")]}, options)
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": effort}
    assert body["max_tokens"] == 32000


async def test_thinking_is_off_for_level_off_and_for_non_reasoning_models(fake: FakeLLM) -> None:
    body = await sent_body(
        fake, make_model(fake), {"messages": [user("hi")]}, StreamOptions(api_key="k", reasoning="off")
    )
    assert "thinking" not in body
    plain = make_model(fake, reasoning=False)
    body = await sent_body(
        fake, plain, {"messages": [user("hi")]}, StreamOptions(api_key="k", reasoning="high")
    )
    assert "thinking" not in body


async def test_forced_tool_choice_names_the_tool_and_disables_thinking(fake: FakeLLM) -> None:
    context: Context = {
        "messages": [user("plan")],
        "tools": [{"name": "todo_write", "description": "Todos", "parameters": {"type": "object"}}],
    }
    options = StreamOptions(api_key="k", reasoning="high", tool_choice="todo_write")
    body = await sent_body(fake, make_model(fake), context, options)
    assert body["tool_choice"] == {"type": "tool", "name": "todo_write"}
    assert "thinking" not in body
    options = StreamOptions(api_key="k", tool_choice="required")
    assert (await sent_body(fake, make_model(fake), context, options))["tool_choice"] == {"type": "any"}
    options = StreamOptions(api_key="k", tool_choice="auto")
    assert (await sent_body(fake, make_model(fake), context, options))["tool_choice"] == {"type": "auto"}


async def test_consecutive_tool_results_merge_into_one_user_message(fake: FakeLLM) -> None:
    calls = [
        {"type": "toolCall", "id": "call|1/abc", "name": "read", "arguments": {"path": "a"}},
        {"type": "toolCall", "id": "toolu_2", "name": "screenshot", "arguments": {}},
    ]
    context: Context = {
        "messages": [
            user("go"),
            assistant(calls),
            tool_result("call|1/abc", [{"type": "text", "text": "no such file"}], is_error=True),
            tool_result(
                "toolu_2",
                [{"type": "text", "text": "shot"}, {"type": "image", "data": PNG, "mimeType": "image/png"}],
                name="screenshot",
            ),
        ]
    }
    body = await sent_body(fake, make_model(fake), context)
    assert len(body["messages"]) == 3
    call_msg, results = body["messages"][1], body["messages"][2]
    assert call_msg == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "call_1_abc", "name": "read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_2", "name": "screenshot", "input": {}},
        ],
    }
    assert results["role"] == "user"
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1_abc", "content": "no such file", "is_error": True},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": [
                {"type": "text", "text": "shot"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            ],
            "is_error": False,
            "cache_control": {"type": "ephemeral"},
        },
    ]


async def test_long_tool_call_ids_are_shortened_consistently(fake: FakeLLM) -> None:
    long_id = "fc_" + "x" * 80 + "|item"
    context: Context = {
        "messages": [
            user("go"),
            assistant([{"type": "toolCall", "id": long_id, "name": "read", "arguments": {}}]),
            tool_result(long_id, [{"type": "text", "text": "ok"}]),
        ]
    }
    body = await sent_body(fake, make_model(fake), context)
    use_id = body["messages"][1]["content"][0]["id"]
    assert body["messages"][2]["content"][0]["tool_use_id"] == use_id
    assert len(use_id) <= 64
    assert all(c.isalnum() or c in "_-" for c in use_id)


async def test_user_images_become_base64_blocks_and_developer_messages_become_user(fake: FakeLLM) -> None:
    context: Context = {
        "messages": [
            user(
                [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                ]
            ),
            assistant([{"type": "text", "text": "a pixel"}]),
            {"role": "developer", "content": "Remember the todo list.", "timestamp": 4},
        ]
    }
    body = await sent_body(fake, make_model(fake), context)
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Remember the todo list.", "cache_control": {"type": "ephemeral"}}
        ],
    }


async def test_images_are_dropped_for_text_only_models(fake: FakeLLM) -> None:
    content = [{"type": "text", "text": "look"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]
    body = await sent_body(fake, make_model(fake, input=["text"]), {"messages": [user(content)]})
    assert [b["type"] for b in body["messages"][0]["content"]] == ["text"]


async def test_thinking_signature_from_a_response_is_replayed_in_the_next_request(fake: FakeLLM) -> None:
    model = make_model(fake)
    fake.script(Reply(thinking=["step one"], thinking_signature="sig-round-trip", text=["answer"]))
    _, first = await run_stream(model, {"messages": [user("q1")]})
    body = await sent_body(fake, model, {"messages": [user("q1"), first, user("q2")]})
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "step one", "signature": "sig-round-trip"},
            {"type": "text", "text": "answer"},
        ],
    }


async def test_redacted_and_unsigned_thinking_from_the_same_model_are_replayed_safely(fake: FakeLLM) -> None:
    reply = assistant(
        [
            {"type": "redactedThinking", "data": "opaque-blob"},
            {"type": "thinking", "thinking": "unsigned thought"},
            {"type": "text", "text": "answer"},
        ]
    )
    body = await sent_body(fake, make_model(fake), {"messages": [user("q"), reply, user("next")]})
    assert body["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "opaque-blob"},
        {"type": "text", "text": "unsigned thought"},
        {"type": "text", "text": "answer"},
    ]


async def test_thinking_made_by_another_provider_is_replayed_as_text(fake: FakeLLM) -> None:
    reply = assistant(
        [
            {"type": "thinking", "thinking": "openai reasoning", "thinkingSignature": "reasoning_content"},
            {"type": "text", "text": "answer"},
        ],
        provider="openai",
        model="gpt-fake",
    )
    body = await sent_body(fake, make_model(fake), {"messages": [user("q"), reply, user("next")]})
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "openai reasoning"},
        {"type": "text", "text": "answer"},
    ]
