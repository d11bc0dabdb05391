"""The openai-completions provider, end to end through the official SDK against the fake server."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import pytest

from ai import providers_helpers
from ai.providers_helpers import assistant_message, kinds, model_from, run_stream, sent_body, user
from xcsh.ai.abort import AbortController
from xcsh.ai.errors import is_retryable
from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Context, Message, Model
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Reply, garbage, http_error, text, thinking, tool_calls

fake = providers_helpers.fake
assistant = partial(assistant_message, api="openai-completions", provider="fake", model="fake-model")


def make_model(fake: FakeLLM, **overrides: Any) -> Model:
    fields = {
        "id": "fake-model",
        "name": "Fake",
        "api": "openai-completions",
        "provider": "fake",
        "baseUrl": f"{fake.base_url}/v1",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 2.0, "output": 8.0, "cacheRead": 0.5, "cacheWrite": 0.0},
        "contextWindow": 128000,
        "maxTokens": 16384,
    }
    return model_from(fields, **overrides)


def tool_result(call_id: str, output: str, *, name: str = "read") -> Message:
    return providers_helpers.tool_result(call_id, [{"type": "text", "text": output}], name=name)


# ---- streaming -------------------------------------------------------------------------
async def test_text_reply_streams_text_events_and_ends_with_stop(fake: FakeLLM) -> None:
    fake.script(text("Hello there"))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert "".join(e["delta"] for e in events if e["type"] == "text_delta") == "Hello there"
    assert message["content"] == [{"type": "text", "text": "Hello there"}]
    assert message["stopReason"] == "stop"
    assert message["responseId"] == "chatcmpl-fake"
    assert (message["api"], message["provider"], message["model"]) == (
        "openai-completions",
        "fake",
        "fake-model",
    )
    request = fake.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.json["stream"] is True
    assert request.json["stream_options"] == {"include_usage": True}
    fake.assert_complete()


async def test_reasoning_content_streams_as_a_thinking_block_before_the_text(fake: FakeLLM) -> None:
    fake.script(thinking("Let me think.", "Done."))
    events, message = await run_stream(make_model(fake, reasoning=True), {"messages": [user("hi")]})
    assert kinds(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert message["content"] == [
        {"type": "thinking", "thinking": "Let me think."},
        {"type": "text", "text": "Done."},
    ]
    thinking_end = next(e for e in events if e["type"] == "thinking_end")
    assert thinking_end["content"] == "Let me think."


async def test_tool_call_arguments_stream_as_fragments_and_parse_at_the_end(fake: FakeLLM) -> None:
    fake.script(tool_calls(("call_01", "read", {"path": "src/a.py", "limit": 10}), text_before="Reading."))
    events, message = await run_stream(make_model(fake), {"messages": [user("read it")]})
    deltas = [e["delta"] for e in events if e["type"] == "toolcall_delta"]
    assert len(deltas) == 2
    assert "".join(deltas) == '{"path": "src/a.py", "limit": 10}'
    end = next(e for e in events if e["type"] == "toolcall_end")
    assert end["contentIndex"] == 1
    assert end["toolCall"] == {
        "type": "toolCall",
        "id": "call_01",
        "name": "read",
        "arguments": {"path": "src/a.py", "limit": 10},
    }
    assert message["content"] == [{"type": "text", "text": "Reading."}, end["toolCall"]]
    assert message["stopReason"] == "toolUse"


async def test_two_tool_calls_become_two_blocks_in_order(fake: FakeLLM) -> None:
    fake.script(tool_calls(("call_a", "read", {"path": "a"}), ("call_b", "ls", {"path": "."})))
    events, message = await run_stream(make_model(fake), {"messages": [user("go")]})
    calls = [b for b in message["content"] if b["type"] == "toolCall"]
    assert [(c["id"], c["name"], c["arguments"]) for c in calls] == [
        ("call_a", "read", {"path": "a"}),
        ("call_b", "ls", {"path": "."}),
    ]
    assert kinds(events).count("toolcall_end") == 2


async def test_partial_tool_arguments_are_parsed_while_streaming(fake: FakeLLM) -> None:
    fake.script(tool_calls(("call_01", "write", {"path": "notes.txt", "content": "x" * 40})))
    events, _ = await run_stream(make_model(fake), {"messages": [user("write")]})
    first_delta = next(e for e in events if e["type"] == "toolcall_delta")
    partial_call = first_delta["partial"]["content"][0]
    assert partial_call["type"] == "toolCall"
    assert partial_call["arguments"].get("path") == "notes.txt"


async def test_usage_splits_cached_prompt_tokens_and_prices_each_category(fake: FakeLLM) -> None:
    fake.script(Reply(text=["ok"], prompt_tokens=1000, cached_tokens=400, completion_tokens=250))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    usage = message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (600, 250, 400, 0)
    assert usage["totalTokens"] == 1250
    assert usage["cost"]["input"] == pytest.approx(600 * 2.0 / 1e6)
    assert usage["cost"]["output"] == pytest.approx(250 * 8.0 / 1e6)
    assert usage["cost"]["cacheRead"] == pytest.approx(400 * 0.5 / 1e6)
    assert usage["cost"]["total"] == pytest.approx(0.0012 + 0.002 + 0.0002)


@pytest.mark.parametrize(
    ("finish_reason", "expected"),
    [("stop", "stop"), ("end", "stop"), ("length", "length"), ("tool_calls", "toolUse")],
)
async def test_finish_reasons_map_to_stop_reasons(fake: FakeLLM, finish_reason: str, expected: str) -> None:
    fake.script(Reply(text=["ok"], stop=finish_reason))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == expected
    assert kinds(events)[-1] == "done"


async def test_function_call_finish_reason_with_a_tool_call_is_tool_use(fake: FakeLLM) -> None:
    reply = tool_calls(("call_01", "read", {"path": "a"}))
    reply.stop = "function_call"
    fake.script(reply)
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "toolUse"


@pytest.mark.parametrize("finish_reason", ["content_filter", "weird_new_reason"])
async def test_unknown_finish_reason_ends_as_error_naming_it(fake: FakeLLM, finish_reason: str) -> None:
    fake.script(Reply(text=["I can't"], stop=finish_reason))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == f"Provider finish_reason: {finish_reason}"
    assert kinds(events)[-1] == "error"
    assert message["content"] == [{"type": "text", "text": "I can't"}]


# ---- failures --------------------------------------------------------------------------


async def test_http_400_context_overflow_is_not_retryable(fake: FakeLLM) -> None:
    fake.script(http_error(400, "This model's maximum context length is 128000 tokens."))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert "maximum context length is 128000 tokens" in message["errorMessage"]
    assert not is_retryable(message["errorMessage"])


async def test_garbage_sse_data_ends_as_malformed_response_error(fake: FakeLLM) -> None:
    fake.script(garbage())
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith(
        "Malformed response from fake (OpenAI chat completions stream): invalid JSON: "
    )
    assert kinds(events)[-1] == "error"


async def test_an_error_event_inside_the_stream_ends_as_an_error_with_its_message(fake: FakeLLM) -> None:
    fake.script(garbage(b'data: {"error": {"message": "overloaded, try later"}}\n\n'))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert "overloaded, try later" in message["errorMessage"]
    assert kinds(events)[-1] == "error"


async def test_chunk_fields_absent_from_the_stream_read_as_none(fake: FakeLLM) -> None:
    """Chunks are read as views of their JSON: a minimal server's chunks still stream."""
    body = (
        b'data: {"choices": [{"delta": {"content": "plain"}}]}\n\n'
        b'data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    fake.script(garbage(body))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "stop"
    assert message["content"] == [{"type": "text", "text": "plain"}]
    assert "text_delta" in kinds(events)


async def test_abort_before_the_call_sends_no_request(fake: FakeLLM) -> None:
    controller = AbortController()
    controller.abort()
    events, message = await run_stream(
        make_model(fake), {"messages": [user("hi")]}, StreamOptions(api_key="k", signal=controller.signal)
    )
    assert message["stopReason"] == "aborted"
    assert kinds(events) == ["error"]
    assert fake.requests == []


# ---- request body ----------------------------------------------------------------------
async def test_request_carries_system_prompt_tools_tool_choice_and_default_max_tokens(fake: FakeLLM) -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    context: Context = {
        "systemPrompt": "You are a coding agent.",
        "messages": [user("hi")],
        "tools": [{"name": "read", "description": "Read a file", "parameters": schema}],
    }
    body = await sent_body(fake, make_model(fake), context, StreamOptions(api_key="k", tool_choice="read"))
    assert body["model"] == "fake-model"
    assert body["messages"] == [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"] == [
        {"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": schema}}
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "read"}}
    assert body["max_tokens"] == 16384
    assert "max_completion_tokens" not in body
    assert "reasoning_effort" not in body
    assert "store" not in body


async def test_max_tokens_default_is_capped_at_32000(fake: FakeLLM) -> None:
    body = await sent_body(fake, make_model(fake, maxTokens=128000), {"messages": [user("hi")]})
    assert body["max_tokens"] == 32000


async def test_conversation_history_becomes_chat_messages_with_tool_results(fake: FakeLLM) -> None:
    call = {"type": "toolCall", "id": "call_01", "name": "read", "arguments": {"path": "a.py"}}
    context: Context = {
        "messages": [
            user("read a.py"),
            assistant([{"type": "text", "text": "Reading."}, call]),
            tool_result("call_01", "print('hi')"),
            user("thanks"),
        ]
    }
    body = await sent_body(fake, make_model(fake), context)
    assert body["messages"] == [
        {"role": "user", "content": "read a.py"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {
                    "id": "call_01",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_01", "content": "print('hi')"},
        {"role": "user", "content": "thanks"},
    ]


async def test_max_tokens_field_can_be_switched_by_compat(fake: FakeLLM) -> None:
    model = make_model(fake, compat={"maxTokensField": "max_completion_tokens"})
    body = await sent_body(
        fake, model, {"messages": [user("hi")]}, StreamOptions(api_key="k", max_tokens=900)
    )
    assert body["max_completion_tokens"] == 900
    assert "max_tokens" not in body


async def test_openai_provider_uses_developer_role_max_completion_tokens_and_store_false(
    fake: FakeLLM,
) -> None:
    model = make_model(fake, provider="openai", id="gpt-5.4-mini", reasoning=True)
    context: Context = {"systemPrompt": "Be brief.", "messages": [user("hi")]}
    body = await sent_body(fake, model, context, StreamOptions(api_key="k", reasoning="high"))
    assert body["messages"][0] == {"role": "developer", "content": "Be brief."}
    assert body["max_completion_tokens"] == 16384
    assert "max_tokens" not in body
    assert body["store"] is False
    assert body["reasoning_effort"] == "high"


async def test_reasoning_effort_is_sent_for_a_reasoning_model_with_a_level(fake: FakeLLM) -> None:
    model = make_model(fake, reasoning=True)
    body = await sent_body(
        fake, model, {"messages": [user("hi")]}, StreamOptions(api_key="k", reasoning="low")
    )
    assert body["reasoning_effort"] == "low"
    assert body["messages"][0]["role"] == "user"  # no developer role without the compat flag


@pytest.mark.parametrize(("reasoning", "level"), [(True, "off"), (True, None), (False, "high")])
async def test_no_reasoning_parameter_when_off_unset_or_not_a_reasoning_model(
    fake: FakeLLM, reasoning: bool, level: Any
) -> None:
    model = make_model(fake, reasoning=reasoning)
    body = await sent_body(
        fake, model, {"messages": [user("hi")]}, StreamOptions(api_key="k", reasoning=level)
    )
    assert "reasoning_effort" not in body
    assert "reasoning" not in body


async def test_reasoning_effort_map_translates_levels(fake: FakeLLM) -> None:
    model = make_model(fake, reasoning=True, compat={"reasoningEffortMap": {"minimal": "low"}})
    options = StreamOptions(api_key="k", reasoning="minimal")
    body = await sent_body(fake, model, {"messages": [user("hi")]}, options)
    assert body["reasoning_effort"] == "low"


async def test_server_without_reasoning_effort_support_gets_no_effort(fake: FakeLLM) -> None:
    model = make_model(fake, reasoning=True, provider="xai")
    body = await sent_body(
        fake, model, {"messages": [user("hi")]}, StreamOptions(api_key="k", reasoning="high")
    )
    assert "reasoning_effort" not in body


@pytest.mark.parametrize(("level", "effort"), [("medium", "medium"), ("xhigh", "high")])
async def test_openrouter_gets_a_reasoning_object_instead_of_reasoning_effort(
    fake: FakeLLM, level: Any, effort: str
) -> None:
    model = make_model(fake, reasoning=True, provider="openrouter", id="openai/gpt-5.4")
    body = await sent_body(
        fake, model, {"messages": [user("hi")]}, StreamOptions(api_key="k", reasoning=level)
    )
    assert body["reasoning"] == {"effort": effort}
    assert "reasoning_effort" not in body


async def test_mistral_tool_call_ids_are_nine_alphanumerics_in_calls_and_results(fake: FakeLLM) -> None:
    long_id = "toolu_01ABCdef|with/odd:chars-and-a-long-tail"
    call = {"type": "toolCall", "id": long_id, "name": "read", "arguments": {"path": "a"}}
    context: Context = {
        "messages": [
            user("read"),
            assistant([call], provider="anthropic", model="claude-x"),
            tool_result(long_id, "content"),
        ]
    }
    body = await sent_body(fake, make_model(fake, provider="mistral"), context)
    sent_call_id = body["messages"][1]["tool_calls"][0]["id"]
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", sent_call_id)
    assert body["messages"][2] == {"role": "tool", "tool_call_id": sent_call_id, "content": "content"}


async def test_default_tool_call_ids_are_sanitised_and_kept_consistent(fake: FakeLLM) -> None:
    odd_id = "call|with spaces/and:colons"
    call = {"type": "toolCall", "id": odd_id, "name": "read", "arguments": {}}
    context: Context = {"messages": [user("go"), assistant([call]), tool_result(odd_id, "out")]}
    body = await sent_body(fake, make_model(fake), context)
    sent_call_id = body["messages"][1]["tool_calls"][0]["id"]
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", sent_call_id)
    assert body["messages"][2]["tool_call_id"] == sent_call_id


async def test_tool_choice_is_not_sent_when_the_server_does_not_support_it(fake: FakeLLM) -> None:
    context: Context = {
        "messages": [user("hi")],
        "tools": [{"name": "read", "description": "Read", "parameters": {"type": "object"}}],
    }
    model = make_model(fake, compat={"supportsToolChoice": False})
    body = await sent_body(fake, model, context, StreamOptions(api_key="k", tool_choice="read"))
    assert "tool_choice" not in body


async def test_images_are_sent_only_to_models_that_accept_them(fake: FakeLLM) -> None:
    png = "iVBORw0KGgo="
    content = [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "data": png, "mimeType": "image/png"},
    ]
    body = await sent_body(fake, make_model(fake, input=["text", "image"]), {"messages": [user(content)]})
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
    ]
    body = await sent_body(fake, make_model(fake), {"messages": [user(content)]})
    assert body["messages"][0]["content"] == "what is this?"
