"""The google-generative-ai provider, end to end through the official SDK against the fake server."""

from __future__ import annotations

import asyncio
import base64
import json
import re
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
    tool_result,
    user,
)
from xcsh.ai.abort import AbortController
from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import stream
from xcsh.ai.types import Context, Message, Model, ThinkingLevel
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Garbage, Reply, garbage, hold, text, tool_calls
from xcsh.testing.wires.gemini import signature_b64

# the SDK sends bytes fields as URL-safe base64 (Google accepts either alphabet)
PNG_ON_WIRE = base64.urlsafe_b64encode(base64.b64decode(PNG)).decode()

fake = providers_helpers.fake
assistant = partial(assistant_message, api="google-generative-ai", provider="google", model="gemini-2.5-fake")


def make_model(fake: FakeLLM, **overrides: Any) -> Model:
    fields = {
        "id": "gemini-2.5-fake",
        "name": "Gemini Fake",
        "api": "google-generative-ai",
        "provider": "google",
        "baseUrl": f"{fake.base_url}/v1beta",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 1.25, "output": 10.0, "cacheRead": 0.31, "cacheWrite": 0.0},
        "contextWindow": 1048576,
        "maxTokens": 65536,
        "thinking": {"minLevel": "minimal", "maxLevel": "high", "mode": "budget"},
    }
    return model_from(fields, **overrides)


def camel(value: Any) -> Any:
    """Recorded JSON with every key in lowerCamelCase.

    The SDK writes some nested keys in proto snake_case (Google accepts both spellings),
    so assertions compare one spelling.
    """
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


async def sent_body(fake: FakeLLM, model: Model, context: Context, opts: StreamOptions | None = None) -> Any:
    """The JSON body the server recorded for one call answered with a short text (keys camelCased)."""
    return camel(await providers_helpers.sent_body(fake, model, context, opts))


# ---- streaming -------------------------------------------------------------------------
async def test_text_reply_streams_text_events_and_ends_with_stop(fake: FakeLLM) -> None:
    fake.script(text("Hello there"))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert "".join(e["delta"] for e in events if e["type"] == "text_delta") == "Hello there"
    assert message["content"] == [{"type": "text", "text": "Hello there"}]
    assert message["stopReason"] == "stop"
    assert message["responseId"] == "fake-gemini-response"
    assert fake.requests[0].path == "/v1beta/models/gemini-2.5-fake:streamGenerateContent?alt=sse"
    assert fake.requests[0].headers["x-goog-api-key"] == "test-key"
    fake.assert_complete()


async def test_thought_parts_stream_as_thinking_before_text(fake: FakeLLM) -> None:
    fake.script(Reply(thinking=["Let me ", "think."], text=["Done."]))
    events, message = await run_stream(
        make_model(fake), {"messages": [user("hi")]}, options(reasoning="high")
    )
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
        {"type": "thinking", "thinking": "Let me think."},
        {"type": "text", "text": "Done."},
    ]


async def test_whole_function_call_becomes_one_tool_call_with_generated_id_and_signature(
    fake: FakeLLM,
) -> None:
    fake.script(
        tool_calls(
            ("ignored", "read", {"path": "src/a.py"}),
            ("ignored", "read", {"path": "b.py"}),
            text_before="Hm.",
        )
    )
    events, message = await run_stream(make_model(fake), {"messages": [user("read it")]})
    assert kinds(events) == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    deltas = [e["delta"] for e in events if e["type"] == "toolcall_delta"]
    assert [json.loads(d) for d in deltas] == [{"path": "src/a.py"}, {"path": "b.py"}]
    first, second = message["content"][1], message["content"][2]
    assert first["type"] == "toolCall" and second["type"] == "toolCall"
    assert (first["name"], first["arguments"]) == ("read", {"path": "src/a.py"})
    assert first["id"] and second["id"] and first["id"] != second["id"]
    assert first.get("thoughtSignature") == signature_b64("sig-fake-thinking")
    assert "thoughtSignature" not in second
    assert message["stopReason"] == "toolUse"


async def test_usage_excludes_cached_input_and_is_priced_per_category(fake: FakeLLM) -> None:
    fake.script(Reply(text=["ok"], prompt_tokens=1000, cached_tokens=400, completion_tokens=200))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    usage = message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (600, 200, 400, 0)
    assert usage["totalTokens"] == 1200
    assert usage["cost"]["input"] == pytest.approx(600 * 1.25 / 1e6)
    assert usage["cost"]["output"] == pytest.approx(200 * 10.0 / 1e6)
    assert usage["cost"]["cacheRead"] == pytest.approx(400 * 0.31 / 1e6)
    assert usage["cost"]["total"] == pytest.approx((600 * 1.25 + 200 * 10.0 + 400 * 0.31) / 1e6)


async def test_max_tokens_finish_reason_ends_with_length(fake: FakeLLM) -> None:
    fake.script(text("Truncat", stop="length"))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "length"


async def test_safety_finish_reason_ends_as_error_naming_it(fake: FakeLLM) -> None:
    fake.script(text("Hm", stop="SAFETY"))
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "Provider finish_reason: SAFETY"
    assert events[-1]["type"] == "error"


# ---- failures --------------------------------------------------------------------------


async def test_garbage_event_data_ends_as_error(fake: FakeLLM) -> None:
    fake.script(garbage())
    events, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert "JSON" in message.get("errorMessage", "")
    assert events[-1]["type"] == "error"


async def test_stream_that_ends_without_a_finish_reason_is_a_connection_error(fake: FakeLLM) -> None:
    chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}, "index": 0}]}
    fake.script(Garbage(payload=b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"))
    _, message = await run_stream(make_model(fake), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert "Connection error" in message.get("errorMessage", "")
    assert message["content"] == [{"type": "text", "text": "Hel"}]
    assert len(fake.requests) == 1


async def test_abort_of_a_held_stream_does_not_wait_for_the_server(fake: FakeLLM) -> None:
    fake.script(hold("Waiting"))
    controller = AbortController()
    async with asyncio.timeout(5):
        s = stream(make_model(fake), {"messages": [user("hi")]}, options(signal=controller.signal))
        async for ev in s:
            if ev["type"] == "text_delta":
                controller.abort()
        message = await s.result()
    assert message["stopReason"] == "aborted"


# ---- request body ----------------------------------------------------------------------
async def test_request_has_system_instruction_tools_and_default_max_output_tokens(fake: FakeLLM) -> None:
    context: Context = {"systemPrompt": "You are helpful.", "messages": [user("hi")], "tools": TOOLS}
    body = await sent_body(fake, make_model(fake), context)
    assert body["systemInstruction"]["parts"] == [{"text": "You are helpful."}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {"name": "read", "description": "Read a file", "parametersJsonSchema": TOOLS[0]["parameters"]}
            ]
        }
    ]
    assert body["generationConfig"]["maxOutputTokens"] == 32000
    assert "thinkingConfig" not in body["generationConfig"]
    assert "toolConfig" not in body


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("read", {"mode": "ANY", "allowedFunctionNames": ["read"]}),
    ],
)
async def test_tool_choice_becomes_a_function_calling_config(
    fake: FakeLLM, choice: str, expected: dict[str, Any]
) -> None:
    context: Context = {"messages": [user("hi")], "tools": TOOLS}
    body = await sent_body(fake, make_model(fake), context, options(tool_choice=choice))
    assert body["toolConfig"] == {"functionCallingConfig": expected}


async def test_budget_mode_sends_the_configured_thinking_budget(fake: FakeLLM) -> None:
    body = await sent_body(fake, make_model(fake), {"messages": [user("hi")]}, options(reasoning="medium"))
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 8192}
    custom = options(reasoning="low", thinking_budgets={"low": 1500})
    body = await sent_body(fake, make_model(fake), {"messages": [user("hi")]}, custom)
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 1500}


@pytest.mark.parametrize(
    ("level", "expected"),
    [("minimal", "MINIMAL"), ("low", "LOW"), ("medium", "MEDIUM"), ("high", "HIGH"), ("xhigh", "HIGH")],
)
async def test_level_mode_sends_a_thinking_level(fake: FakeLLM, level: ThinkingLevel, expected: str) -> None:
    model = make_model(
        fake, id="gemini-3-pro-fake", thinking={"minLevel": "low", "maxLevel": "high", "mode": "google-level"}
    )
    body = await sent_body(fake, model, {"messages": [user("hi")]}, options(reasoning=level))
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingLevel": expected}


async def test_no_thinking_config_when_off_or_for_non_reasoning_models(fake: FakeLLM) -> None:
    off = await sent_body(fake, make_model(fake), {"messages": [user("hi")]}, options(reasoning="off"))
    assert "thinkingConfig" not in off["generationConfig"]
    plain = await sent_body(
        fake, make_model(fake, reasoning=False), {"messages": [user("hi")]}, options(reasoning="high")
    )
    assert "thinkingConfig" not in plain["generationConfig"]


async def test_tool_calls_keep_their_signature_and_results_share_one_user_turn(fake: FakeLLM) -> None:
    model = make_model(fake)
    fake.script(tool_calls(("x", "read", {"path": "a.py"}), ("x", "read", {"path": "b.py"})))
    _, first = await run_stream(model, {"messages": [user("read both")]})
    ids = [b["id"] for b in first["content"] if b["type"] == "toolCall"]
    context: Context = {
        "messages": [
            user("read both"),
            first,
            tool_result(ids[0], [{"type": "text", "text": "print(1)"}]),
            tool_result(ids[1], [{"type": "text", "text": "missing"}], is_error=True),
        ]
    }
    body = await sent_body(fake, model, context)
    assert body["contents"][1] == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"name": "read", "args": {"path": "a.py"}},
                "thoughtSignature": signature_b64("sig-fake-thinking"),
            },
            {"functionCall": {"name": "read", "args": {"path": "b.py"}}},
        ],
    }
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "print(1)"}}},
            {"functionResponse": {"name": "read", "response": {"error": "missing"}}},
        ],
    }
    assert len(body["contents"]) == 3


async def test_tool_result_images_follow_in_a_separate_user_turn_before_gemini_3(fake: FakeLLM) -> None:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.png"}}
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    context: Context = {"messages": [user("look"), assistant([call]), tool_result("c1", [image])]}
    body = await sent_body(fake, make_model(fake), context)
    assert body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "read", "response": {"output": "(see attached image)"}}}
    ]
    assert body["contents"][3] == {
        "role": "user",
        "parts": [
            {"text": "Tool result image:"},
            {"inlineData": {"mimeType": "image/png", "data": PNG_ON_WIRE}},
        ],
    }


async def test_anthropic_thinking_is_replayed_as_model_text(fake: FakeLLM) -> None:
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
    assert body["contents"][1] == {
        "role": "model",
        "parts": [{"text": "Claude pondered."}, {"text": "Answer."}],
    }
    assert "sig-anthropic" not in json.dumps(body)


async def test_unsigned_tool_calls_from_another_model_get_the_skip_signature_on_gemini_3(
    fake: FakeLLM,
) -> None:
    call = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a"}}
    history = assistant([call], provider="anthropic", model="claude-fake-1", api="anthropic-messages")
    context: Context = {
        "messages": [user("q"), history, tool_result("toolu_1", [{"type": "text", "text": "x"}])]
    }
    model = make_model(fake, id="gemini-3-pro-fake")
    body = await sent_body(fake, model, context)
    assert body["contents"][1]["parts"][0]["thoughtSignature"] == "skip_thought_signature_validator"
    older = await sent_body(fake, make_model(fake), context)
    assert "thoughtSignature" not in older["contents"][1]["parts"][0]


async def test_developer_messages_become_user_turns_and_user_images_inline_data(fake: FakeLLM) -> None:
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
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "What is this?"},
                {"inlineData": {"mimeType": "image/png", "data": PNG_ON_WIRE}},
            ],
        },
        {"role": "user", "parts": [{"text": "Remember the todo list."}]},
    ]
    text_only = await sent_body(fake, make_model(fake, input=["text"]), {"messages": messages[:1]})
    assert text_only["contents"] == [{"role": "user", "parts": [{"text": "What is this?"}]}]


async def test_tool_result_images_ride_inside_the_function_response_on_gemini_3(fake: FakeLLM) -> None:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.png"}}
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    context: Context = {"messages": [user("look"), assistant([call]), tool_result("c1", [image])]}
    model = make_model(fake, id="gemini-3-pro-fake")
    body = await sent_body(fake, model, context)
    assert body["contents"][2]["parts"] == [
        {
            "functionResponse": {
                "name": "read",
                "response": {"output": "(see attached image)"},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG_ON_WIRE}}],
            }
        }
    ]
    assert len(body["contents"]) == 3
