"""Schema-constrained tool calling, through the openai-completions provider and the fake server."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import pytest

from ai import providers_helpers
from ai.providers_helpers import kinds, model_from, run_stream, user
from xcsh.ai.abort import AbortController
from xcsh.ai.events import AssistantMessageEvent
from xcsh.ai.options import StreamOptions
from xcsh.ai.providers.constrained import response_schema
from xcsh.ai.registry import stream
from xcsh.ai.types import AssistantMessage, Context, Message, Model, Tool, zero_usage
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Gate, hold, text

WRITE: Tool = {
    "name": "write",
    "description": "Write a file.\nCreates parent directories.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
}
BASH: Tool = {
    "name": "bash",
    "description": "Run a shell command.",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    },
}


fake = providers_helpers.fake


def make_model(fake: FakeLLM, **overrides: Any) -> Model:
    fields = {
        "id": "small-local",
        "name": "Small local",
        "api": "openai-completions",
        "provider": "llamacpp",
        "baseUrl": f"{fake.base_url}/v1",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": 16384,
        "maxTokens": 2048,
        "compat": {"constrainedToolCalls": True},
    }
    return model_from(fields, **overrides)


def context(*messages: Message, tools: list[Tool] | None = None, system: str = "CALLER PROMPT") -> Context:
    return {
        "systemPrompt": system,
        "messages": list(messages),
        "tools": [WRITE, BASH] if tools is None else tools,
    }


async def test_tool_choice_streams_as_tool_call_events_with_parsed_arguments(fake: FakeLLM) -> None:
    fake.script(
        text(
            "",
            chunks=['{"tool": "wr', 'ite", "argu', 'ments": {"path": "a.txt", "con', 'tent": "hi\\n"}}'],
        )
    )
    events, message = await run_stream(make_model(fake), context(user("make a.txt")))
    assert kinds(events)[0] == "start"
    assert kinds(events)[-1] == "done"
    assert "text_start" not in kinds(events)
    assert kinds(events).count("toolcall_start") == 1
    assert kinds(events).count("toolcall_delta") >= 2
    end = next(e for e in events if e["type"] == "toolcall_end")
    assert end["toolCall"]["name"] == "write"
    assert end["toolCall"]["arguments"] == {"path": "a.txt", "content": "hi\n"}
    assert message["stopReason"] == "toolUse"
    assert message["content"] == [
        {
            "type": "toolCall",
            "id": "call_1",
            "name": "write",
            "arguments": {"path": "a.txt", "content": "hi\n"},
        }
    ]


async def test_tool_call_argument_deltas_are_the_raw_json_of_the_arguments_value(fake: FakeLLM) -> None:
    fake.script(text("", chunks=['{"tool": "bash", "arguments": {"command": "ec', 'ho hi"} }']))
    events, _ = await run_stream(make_model(fake), context(user("say hi")))
    deltas = [e["delta"] for e in events if e["type"] == "toolcall_delta"]
    assert deltas == ['{"command": "ec', 'ho hi"}']


async def test_final_answer_streams_as_unescaped_text_deltas(fake: FakeLLM) -> None:
    fake.script(text("", chunks=['{"final": "Hel', 'lo \\"wor', 'ld\\"\\n\\u00e9 \\ud83d', '\\ude00"}']))
    events, message = await run_stream(make_model(fake), context(user("hi")))
    deltas = [e["delta"] for e in events if e["type"] == "text_delta"]
    assert len(deltas) >= 3
    assert "".join(deltas) == 'Hello "world"\né 😀'
    assert message["content"] == [{"type": "text", "text": 'Hello "world"\né 😀'}]
    assert message["stopReason"] == "stop"


async def test_arguments_written_before_the_tool_name_are_held_until_the_name_arrives(fake: FakeLLM) -> None:
    fake.script(text("", chunks=['{"arguments": {"command"', ': "ls"}, "tool": "bash"}']))
    events, message = await run_stream(make_model(fake), context(user("list")))
    assert kinds(events).count("toolcall_start") == 1
    assert message["content"] == [
        {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}}
    ]
    assert message["stopReason"] == "toolUse"


async def test_reply_that_is_not_json_is_kept_as_plain_text(fake: FakeLLM) -> None:
    fake.script(text("Sure, here it is."))
    _, message = await run_stream(make_model(fake), context(user("hi")))
    assert message["content"] == [{"type": "text", "text": "Sure, here it is."}]
    assert message["stopReason"] == "stop"


async def test_length_cut_keeps_the_partial_tool_call_and_reports_length(fake: FakeLLM) -> None:
    fake.script(text("", chunks=['{"tool": "bash", "arguments": {"command": "ls -', "la"], stop="length"))
    _, message = await run_stream(make_model(fake), context(user("list")))
    assert message["stopReason"] == "length"
    assert message["content"][0]["type"] == "toolCall"
    assert cast(dict[str, Any], message["content"][0])["arguments"] == {"command": "ls -la"}


async def test_request_constrains_output_to_one_branch_per_tool_plus_final(fake: FakeLLM) -> None:
    fake.script(text('{"final": "ok"}'))
    await run_stream(make_model(fake), context(user("hi")))
    body = fake.requests[-1].json
    assert "tools" not in body
    assert body["max_tokens"] == 2048
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True
    assert response_format["json_schema"]["name"]
    branches = response_format["json_schema"]["schema"]["anyOf"]
    assert [b["properties"].get("tool", {}).get("const") for b in branches] == ["write", "bash", None]
    assert branches[0]["properties"]["arguments"] == WRITE["parameters"]
    assert branches[-1]["properties"] == {"final": {"type": "string"}}
    assert all(b["additionalProperties"] is False for b in branches)


async def test_small_context_model_gets_the_short_prompt_with_examples_and_tool_list(fake: FakeLLM) -> None:
    fake.script(text('{"final": "ok"}'))
    await run_stream(make_model(fake), context(user("hi")))
    system = fake.requests[-1].json["messages"][0]
    assert system["role"] == "system"
    assert "CALLER PROMPT" not in system["content"]
    assert "Example 1" in system["content"] and "Example 2" in system["content"]
    assert "- write(path: string, content: string): Write a file." in system["content"]
    assert "- bash(command: string, timeout?: number): Run a shell command." in system["content"]


async def test_the_small_profile_of_the_catalogue_entry_selects_the_workflow_prompt_whatever_the_name(
    fake: FakeLLM,
) -> None:
    fake.script(text('{"final": "ok"}'), text('{"final": "ok"}'))
    compat = {"constrainedToolCalls": True, "promptProfile": "small"}
    read: Tool = {**WRITE, "name": "read", "description": "Read a file."}
    edit: Tool = {**WRITE, "name": "edit", "description": "Edit a file.\nLine two.\nLine three."}
    grep: Tool = {**BASH, "name": "grep", "description": "Search file contents."}
    tools = [read, edit, WRITE, BASH, grep]
    # a large context window and an unremarkable name: the catalogue field alone decides
    await run_stream(
        make_model(fake, id="any-name", contextWindow=200000, compat=compat), context(user("hi"), tools=tools)
    )
    await run_stream(make_model(fake, id="any-name", contextWindow=200000), context(user("hi"), tools=tools))
    small, default = (r.json["messages"][0]["content"] for r in fake.requests[-2:])
    assert "CALLER PROMPT" not in small and default.startswith("CALLER PROMPT")
    assert "How to work:\n1. Look before you change." in small and "How to work" not in default
    assert '{"tool": "read", "arguments": {"path": "calc.py"}}' in small  # the read -> edit -> verify example
    assert '{"tool": "grep", "arguments": {"pattern": "TIMEOUT"}}' in small  # a bare name finds every use
    assert "- edit(path: string, content: string): Edit a file.\n  Line two.\n  Line three." in small
    assert "- edit(path: string, content: string): Edit a file.\n" in default and "Line two" not in default


async def test_the_small_profile_offers_only_the_required_parameters_of_each_tool(fake: FakeLLM) -> None:
    fake.script(text('{"final": "ok"}'), text('{"final": "ok"}'))
    compat = {"constrainedToolCalls": True, "promptProfile": "small"}
    await run_stream(make_model(fake, compat=compat), context(user("hi")))
    await run_stream(make_model(fake), context(user("hi")))
    small, default = (r.json for r in fake.requests[-2:])

    def bash_arguments(body: dict[str, Any]) -> Any:
        return body["response_format"]["json_schema"]["schema"]["anyOf"][1]["properties"]["arguments"]

    assert bash_arguments(small)["properties"] == {"command": {"type": "string"}}
    assert bash_arguments(default) == BASH["parameters"]
    assert "- bash(command: string): Run a shell command." in small["messages"][0]["content"]
    assert "- bash(command: string, timeout?: number)" in default["messages"][0]["content"]
    # a tool whose parameters are all required is offered as it is
    assert (
        small["response_format"]["json_schema"]["schema"]["anyOf"][0]["properties"]["arguments"]
        == (WRITE["parameters"])
    )


async def test_large_context_model_keeps_the_caller_prompt_before_the_format_rules(fake: FakeLLM) -> None:
    fake.script(text('{"final": "ok"}'))
    await run_stream(make_model(fake, contextWindow=200000), context(user("hi")))
    system = fake.requests[-1].json["messages"][0]["content"]
    assert system.startswith("CALLER PROMPT")
    assert '{"final":' in system


async def test_history_becomes_plain_turns_in_the_reply_format(fake: FakeLLM) -> None:
    call: AssistantMessage = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}},
        ],
        "api": "openai-completions",
        "provider": "llamacpp",
        "model": "small-local",
        "usage": zero_usage(),
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    result: Message = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "a.txt"}],
        "isError": False,
        "timestamp": 3,
    }
    failed: Message = {**result, "content": [{"type": "text", "text": "boom"}], "isError": True}  # type: ignore[typeddict-item]  # same shape
    answer: AssistantMessage = {**call, "content": [{"type": "text", "text": "Done."}], "stopReason": "stop"}
    fake.script(text('{"tool": "bash", "arguments": {"command": "pwd"}}'))
    _, message = await run_stream(
        make_model(fake),
        context(user("list"), call, result, answer, user("again"), call, failed, user("why?")),
    )
    sent = fake.requests[-1].json["messages"][1:]
    assert sent == [
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": '{"tool": "bash", "arguments": {"command": "ls"}}'},
        {"role": "user", "content": "Result of bash: a.txt"},
        {"role": "assistant", "content": '{"final": "Done."}'},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": '{"tool": "bash", "arguments": {"command": "ls"}}'},
        {"role": "user", "content": "Error from bash: boom\n\nwhy?"},
    ]
    # two tool calls already in the conversation: the new one is the third
    assert cast(dict[str, Any], message["content"][0])["id"] == "call_3"


async def test_without_tools_the_request_is_a_plain_chat_completion(fake: FakeLLM) -> None:
    fake.script(text("Hello there"))
    _, message = await run_stream(make_model(fake), context(user("hi"), tools=[]))
    assert "response_format" not in fake.requests[-1].json
    assert message["content"] == [{"type": "text", "text": "Hello there"}]


async def test_abort_mid_answer_ends_with_aborted_and_keeps_the_streamed_text(fake: FakeLLM) -> None:
    gate = Gate()
    fake.script(hold('{"final": "Work', gate))
    controller = AbortController()
    events: list[AssistantMessageEvent] = []
    async with asyncio.timeout(5):
        s = stream(
            make_model(fake), context(user("hi")), StreamOptions(api_key="k", signal=controller.signal)
        )
        async for event in s:
            events.append(event)
            if event["type"] == "text_delta":
                controller.abort()
        message = await s.result()
    gate.release()
    assert message["stopReason"] == "aborted"
    assert [e["delta"] for e in events if e["type"] == "text_delta"] == ["Work"]
    assert kinds(events)[-1] == "error"


def test_tool_schema_definitions_are_hoisted_to_the_root_with_per_tool_names() -> None:
    tool: Tool = {
        "name": "edit",
        "description": "Edit.",
        "parameters": {
            "type": "object",
            "properties": {"edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}}},
            "$defs": {"Edit": {"type": "object", "properties": {"old": {"type": "string"}}}},
        },
    }
    schema = response_schema([tool])
    arguments = schema["anyOf"][0]["properties"]["arguments"]
    assert "$defs" not in arguments
    assert arguments["properties"]["edits"]["items"] == {"$ref": "#/$defs/edit__Edit"}
    assert schema["$defs"] == {"edit__Edit": {"type": "object", "properties": {"old": {"type": "string"}}}}
    json.dumps(schema)  # the schema is plain JSON


@pytest.mark.parametrize(
    ("tool_choice", "branches"),
    [
        (None, ["write", "bash", "final"]),
        ("auto", ["write", "bash", "final"]),
        ("none", ["final"]),
        ("required", ["write", "bash"]),
        ("bash", ["bash"]),
        ("no-such-tool", ["write", "bash", "final"]),
    ],
)
def test_tool_choice_narrows_the_schema_branches(tool_choice: str | None, branches: list[str]) -> None:
    schema = response_schema([WRITE, BASH], tool_choice)
    names = [
        b["properties"]["tool"]["const"] if "tool" in b["properties"] else "final" for b in schema["anyOf"]
    ]
    assert names == branches


def test_tool_schemas_whose_properties_or_required_have_another_shape_are_described_and_offered() -> None:
    from xcsh.ai.providers.constrained import required_only, system_prompt

    tools: list[Tool] = [
        {
            "name": "a",
            "description": "d",
            "parameters": {"type": "object", "properties": 5, "required": ["x"]},
        },
        {
            "name": "b",
            "description": "d",
            "parameters": {"type": "object", "properties": {"x": {}}, "required": 5},
        },
        {
            "name": "c",
            "description": "d",
            "parameters": {"type": "object", "properties": {"x": {}}, "required": [1]},
        },
    ]
    prompt = system_prompt(tools, None, short=False)
    assert "- a(): d" in prompt and "- b(x?: any): d" in prompt and "- c(x?: any): d" in prompt
    assert [required_only(t)["parameters"].get("properties") for t in tools] == [5, {}, {}]
    assert response_schema(tools)["anyOf"]


async def test_a_new_call_id_repeats_no_id_left_in_a_compacted_conversation(fake: FakeLLM) -> None:
    """Compaction keeps the tail (call_3 … call_10); counting calls gave call_9 again, and
    Anthropic refuses a repeated tool_use id after a model switch (review 2 D6)."""
    model = make_model(fake)
    history: list[Message] = [user("<summary of earlier work>")]
    for n in range(3, 11):
        call_id = f"call_{n}"
        history.append(
            providers_helpers.assistant_message(
                [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": f"ls {n}"}}],
                api="openai-completions",
                provider="llamacpp",
                model="small-local",
            )
        )
        history.append(providers_helpers.tool_result(call_id, [{"type": "text", "text": "ok"}], name="bash"))
    fake.script(text('{"tool": "bash", "arguments": {"command": "pwd"}}'))
    _, message = await run_stream(model, context(*history, user("go on")))
    new_id = cast(dict[str, Any], message["content"][0])["id"]
    assert new_id == "call_11"

    history += [message, providers_helpers.tool_result(new_id, [{"type": "text", "text": "/"}], name="bash")]
    claude = model_from(
        {**make_model(fake), "api": "anthropic-messages", "provider": "anthropic", "id": "claude-x"},
        baseUrl=fake.base_url,
        compat={},
    )
    body = await providers_helpers.sent_body(fake, claude, context(*history, user("next")))
    sent_ids = [
        block["id"]
        for turn in body["messages"]
        if turn["role"] == "assistant"
        for block in turn["content"]
        if block["type"] == "tool_use"
    ]
    assert len(sent_ids) == 9 and len(set(sent_ids)) == 9
