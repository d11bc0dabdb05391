"""What the openai-completions provider sends back of earlier answers (review 2 of the provider layer).

Each answer is streamed from the fake server first, so the history holds what the provider really
built, and the next request's recorded body is checked.
"""

from __future__ import annotations

import json
from typing import Any

from ai import providers_helpers
from ai.providers_helpers import TOOLS, assistant_message, model_from, run_stream, sent_body, user
from xcsh.ai.types import AssistantMessage, Context, Message, Model
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Reply, ToolCallSpec, garbage, http_error, thinking

fake = providers_helpers.fake


def make_model(fake: FakeLLM, **overrides: Any) -> Model:
    fields = {
        "id": "fake-reasoner",
        "name": "Fake reasoner",
        "api": "openai-completions",
        "provider": "fake",
        "baseUrl": f"{fake.base_url}/v1",
        "reasoning": True,
        "input": ["text"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": 128000,
        "maxTokens": 4096,
    }
    return model_from(fields, **overrides)


async def answer(fake: FakeLLM, model: Model, messages: list[Message]) -> AssistantMessage:
    """The answer the provider builds from the next scripted step."""
    _, message = await run_stream(model, {"messages": messages, "tools": TOOLS})
    assert message["stopReason"] in ("stop", "toolUse", "length"), message.get("errorMessage")
    return message


def assistants(body: Any) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


# ---- D3: an answer of thinking only ----------------------------------------------------
async def test_an_answer_of_thinking_only_is_not_replayed_as_an_assistant_without_content(
    fake: FakeLLM,
) -> None:
    model = make_model(fake)
    fake.script(thinking("Let me think about this at length"))
    first = await answer(fake, model, [user("hi")])
    assert [b["type"] for b in first["content"]] == ["thinking"]
    body = await sent_body(fake, model, {"messages": [user("hi"), first, user("and?")]})
    assert assistants(body) == []
    assert body["messages"] == [{"role": "user", "content": "hi"}, {"role": "user", "content": "and?"}]


# ---- D1: reasoning sent back with tool calls ------------------------------------------------
def read_result(call_id: str) -> Message:
    return providers_helpers.tool_result(call_id, [{"type": "text", "text": "contents of a"}])


def thinking_then_read(call_id: str) -> Reply:
    return Reply(
        thinking=["I should ", "read a."],
        tool_calls=[ToolCallSpec(call_id, "read", json.dumps({"path": "a"}))],
    )


async def test_deepseek_thinking_goes_back_as_reasoning_content_with_the_tool_calls_it_led_to(
    fake: FakeLLM,
) -> None:
    model = make_model(fake, provider="deepseek", id="deepseek-reasoner")
    fake.script(thinking_then_read("call_00_abc"))
    first = await answer(fake, model, [user("read a")])
    context: Context = {"messages": [user("read a"), first, read_result("call_00_abc")], "tools": TOOLS}
    body = await sent_body(fake, model, context)
    [sent] = assistants(body)
    assert sent["reasoning_content"] == "I should read a."
    assert [c["id"] for c in sent["tool_calls"]] == ["call_00_abc"]


async def test_deepseek_tool_calls_of_another_model_carry_a_placeholder_reasoning(fake: FakeLLM) -> None:
    model = make_model(fake, provider="deepseek", id="deepseek-reasoner")
    call = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a"}}
    claude = assistant_message(
        [{"type": "thinking", "thinking": "Claude's own", "thinkingSignature": "sig"}, call],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-x",
    )
    context: Context = {"messages": [user("read a"), claude, read_result("toolu_1")], "tools": TOOLS}
    [sent] = assistants(await sent_body(fake, model, context))
    assert sent["reasoning_content"] == "."
    assert sent["content"] == "Claude's own"  # another model's thinking is text, as before


async def test_other_servers_get_no_reasoning_field_back(fake: FakeLLM) -> None:
    """Groq and Cerebras refuse ``reasoning_content`` on an assistant message."""
    model = make_model(fake, provider="groq", id="openai/gpt-oss-120b")
    fake.script(thinking_then_read("call_1"))
    first = await answer(fake, model, [user("read a")])
    context: Context = {"messages": [user("read a"), first, read_result("call_1")], "tools": TOOLS}
    [sent] = assistants(await sent_body(fake, model, context))
    assert set(sent) == {"role", "content", "tool_calls"}


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"id": "gen-1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


ENCRYPTED = {
    "type": "reasoning.encrypted",
    "id": "tool_read_abc",
    "data": "CiQBSIGNATURE",
    "format": "google-gemini-v1",
    "index": 0,
}


async def test_openrouter_encrypted_reasoning_details_go_back_with_their_tool_call(fake: FakeLLM) -> None:
    model = make_model(fake, provider="openrouter", id="google/gemini-3.1-pro-preview")
    text_detail = {"type": "reasoning.text", "text": "Thinking...", "format": "google-gemini-v1", "index": 0}
    call = {
        "index": 0,
        "id": "tool_read_abc",
        "type": "function",
        "function": {"name": "read", "arguments": '{"path": "a"}'},
    }
    fake.script(
        garbage(
            chunk(
                {
                    "role": "assistant",
                    "content": "",
                    "reasoning": "Thinking...",
                    "reasoning_details": [text_detail],
                }
            )
            + chunk({"tool_calls": [call], "reasoning_details": [ENCRYPTED]})
            + chunk({}, "tool_calls")
            + b"data: [DONE]\n\n"
        )
    )
    first = await answer(fake, model, [user("read a")])
    context: Context = {"messages": [user("read a"), first, read_result("tool_read_abc")], "tools": TOOLS}
    [sent] = assistants(await sent_body(fake, model, context))
    assert sent["reasoning_details"] == [ENCRYPTED]
    assert [c["id"] for c in sent["tool_calls"]] == ["tool_read_abc"]
    assert "reasoning" not in sent and "reasoning_content" not in sent

    other = make_model(fake, provider="openrouter", id="openai/gpt-5.4")
    [sent] = assistants(await sent_body(fake, other, context))
    assert "reasoning_details" not in sent  # a signature is only the model's that made it


# ---- D2: Mistral ----------------------------------------------------------------------------
def mistral(fake: FakeLLM, **overrides: Any) -> Model:
    return make_model(fake, provider="mistral", id="mistral-large-latest", reasoning=False, **overrides)


def roles(body: Any) -> list[str]:
    return [m["role"] for m in body["messages"]]


async def test_mistral_gets_no_stream_options(fake: FakeLLM) -> None:
    body = await sent_body(fake, mistral(fake), {"messages": [user("hi")]})
    assert "stream_options" not in body


async def test_mistral_gets_an_assistant_message_between_a_tool_result_and_the_next_user_message(
    fake: FakeLLM,
) -> None:
    model = mistral(fake)
    fake.script(Reply(tool_calls=[ToolCallSpec("abcDEF123", "read", json.dumps({"path": "a"}))]))
    first = await answer(fake, model, [user("read a")])
    history = [user("read a"), first, read_result("abcDEF123"), user("now something else")]
    body = await sent_body(fake, model, {"messages": history, "tools": TOOLS})
    assert roles(body) == ["user", "assistant", "tool", "assistant", "user"]
    bridge = body["messages"][3]
    assert bridge["content"] and "tool_calls" not in bridge
    # the same history for a server that accepts tool then user is sent as it is
    body = await sent_body(fake, make_model(fake), {"messages": history, "tools": TOOLS})
    assert roles(body) == ["user", "assistant", "tool", "user"]


async def test_mistral_gets_an_assistant_message_before_a_tool_results_images(fake: FakeLLM) -> None:
    model = mistral(fake, input=["text", "image"])
    fake.script(Reply(tool_calls=[ToolCallSpec("abcDEF123", "read", json.dumps({"path": "a.png"}))]))
    first = await answer(fake, model, [user("look at a.png")])
    image = {"type": "image", "data": providers_helpers.PNG, "mimeType": "image/png"}
    result = providers_helpers.tool_result("abcDEF123", [{"type": "text", "text": "Read image"}, image])
    body = await sent_body(fake, model, {"messages": [user("look at a.png"), first, result], "tools": TOOLS})
    assert roles(body) == ["user", "assistant", "tool", "assistant", "user"]
    assert body["messages"][-1]["content"][1]["type"] == "image_url"


async def test_mistral_gets_an_assistant_message_after_a_tool_result_whose_answer_was_thinking_only(
    fake: FakeLLM,
) -> None:
    """The answer after the tool result is not sent (neither text nor tool calls), so the user
    message that follows it comes right after the tool result (review 6 P1)."""
    model = make_model(fake, provider="mistral", id="magistral-medium-latest", reasoning=True)
    fake.script(Reply(tool_calls=[ToolCallSpec("abcDEF123", "read", json.dumps({"path": "a"}))]))
    first = await answer(fake, model, [user("read a")])
    fake.script(thinking("Let me think about this at length"))  # Magistral answering with thinking only
    quiet = await answer(fake, model, [user("read a"), first, read_result("abcDEF123")])
    assert [b["type"] for b in quiet["content"]] == ["thinking"]
    history = [user("read a"), first, read_result("abcDEF123"), quiet, user("well?")]
    body = await sent_body(fake, model, {"messages": history, "tools": TOOLS})
    assert roles(body) == ["user", "assistant", "tool", "assistant", "user"]
    reply = assistant_message(
        [{"type": "text", "text": "ok"}], api="openai-completions", provider="mistral", model=model["id"]
    )
    body = await sent_body(fake, model, {"messages": [*history, reply, user("next")], "tools": TOOLS})
    assert roles(body) == ["user", "assistant", "tool", "assistant", "user", "assistant", "user"]


async def test_mistral_gets_an_assistant_message_after_a_tool_result_whose_answer_failed(
    fake: FakeLLM,
) -> None:
    """A failed answer is dropped from the request; the user's next prompt follows the tool result."""
    model = mistral(fake)
    fake.script(Reply(tool_calls=[ToolCallSpec("abcDEF123", "read", json.dumps({"path": "a"}))]))
    first = await answer(fake, model, [user("read a")])
    fake.script(http_error(400, "bad request"))
    _, failed = await run_stream(model, {"messages": [user("read a"), first, read_result("abcDEF123")]})
    assert failed["stopReason"] == "error"
    history = [user("read a"), first, read_result("abcDEF123"), failed, user("try again")]
    body = await sent_body(fake, model, {"messages": history, "tools": TOOLS})
    assert roles(body) == ["user", "assistant", "tool", "assistant", "user"]


# ---- D7: tool-call deltas by index ------------------------------------------------------------
def call_delta(index: int, *, call_id: str | None = None, arguments: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        entry.update(id=call_id, type="function")
        entry["function"]["name"] = "read"
    return {"tool_calls": [entry]}


async def test_interleaved_tool_call_deltas_are_put_together_by_index(fake: FakeLLM) -> None:
    fake.script(
        garbage(
            chunk({"role": "assistant", "content": None})
            + chunk(call_delta(0, call_id="call_A"))
            + chunk(call_delta(1, call_id="call_B"))
            + chunk(call_delta(0, arguments='{"path": '))
            + chunk(call_delta(1, arguments='{"path": '))
            + chunk(call_delta(0, arguments='"a"}'))
            + chunk(call_delta(1, arguments='"b"}'))
            + chunk({}, "tool_calls")
            + b"data: [DONE]\n\n"
        )
    )
    events, message = await run_stream(make_model(fake), {"messages": [user("read a and b")], "tools": TOOLS})
    assert message["stopReason"] == "toolUse"
    assert [(b["id"], b["name"], b["arguments"]) for b in message["content"] if b["type"] == "toolCall"] == [
        ("call_A", "read", {"path": "a"}),
        ("call_B", "read", {"path": "b"}),
    ]
    assert [e["type"] for e in events].count("toolcall_end") == 2


async def test_tool_calls_sent_one_after_the_other_still_stream_their_arguments_live(fake: FakeLLM) -> None:
    fake.script(
        Reply(
            tool_calls=[
                ToolCallSpec("call_A", "read", json.dumps({"path": "a"})),
                ToolCallSpec("call_B", "read", json.dumps({"path": "b"})),
            ]
        )
    )
    events, message = await run_stream(make_model(fake), {"messages": [user("read a and b")], "tools": TOOLS})
    kinds = [(e["type"], e.get("contentIndex")) for e in events if e["type"].startswith("toolcall")]
    assert kinds == [
        ("toolcall_start", 0),
        ("toolcall_delta", 0),
        ("toolcall_delta", 0),
        ("toolcall_end", 0),
        ("toolcall_start", 1),
        ("toolcall_delta", 1),
        ("toolcall_delta", 1),
        ("toolcall_end", 1),
    ]
    assert [b["arguments"] for b in message["content"] if b["type"] == "toolCall"] == [
        {"path": "a"},
        {"path": "b"},
    ]
