"""Schema-constrained tool calling for OpenAI-compatible servers with JSON-schema output.

Small local models do not emit native tool calls reliably, but they follow a JSON
schema when the server constrains sampling to it (llama.cpp server, vLLM, Ollama). So
instead of ``tools`` the request carries ``response_format``: every reply is one JSON
object, either ``{"tool": <name>, "arguments": <that tool's parameters>}`` or
``{"final": <answer>}``. The conversation is rendered as plain turns in that same
format, and the streamed JSON is decoded as it arrives into the usual events: text
deltas for a final answer, a ``toolCall`` block for a tool choice.
"""

from __future__ import annotations

import json
from typing import Any, cast

from xcsh.ai.builder import MessageBuilder
from xcsh.ai.clients import encode_body
from xcsh.ai.options import StreamOptions
from xcsh.ai.patterns import LazyPattern
from xcsh.ai.providers.constrained_stream import ConstrainedDecoder
from xcsh.ai.sampling import chat_completions_fields, resolve_sampling
from xcsh.ai.transform import transform_messages
from xcsh.ai.transport import open_stream
from xcsh.ai.types import AssistantMessage, Context, Model, Tool, ToolResultMessage
from xcsh.ai.wire_shape import count, label, obj, objects, text

SCHEMA_NAME = "agent_step"
SMALL_CONTEXT_WINDOW = 32768

FORMAT_INSTRUCTIONS = """\
You are a coding assistant working in the user's current directory. You act one step at a \
time. Every reply is exactly ONE JSON object, either
{"tool": "<tool name>", "arguments": {...}}  to run a tool; its result comes back to you, or
{"final": "<your answer to the user>"}  when the task is done or needs no tool.
Use tools to look at, create and run files instead of guessing. Never invent a tool result."""

_EXAMPLE_WRITE_RUN = """\
Example 1
User: Create greet.py that prints hi, then run it.
You: {"tool": "write", "arguments": {"path": "greet.py", "content": "print('hi')\\n"}}
User: Result of write: Successfully wrote 12 bytes to greet.py
You: {"tool": "bash", "arguments": {"command": "python3 greet.py"}}
User: Result of bash: hi
You: {"final": "Created greet.py and ran it; it prints: hi"}"""

_EXAMPLE_GENERIC = """\
Example 1
User: <a task that needs a tool>
You: {"tool": "<tool name>", "arguments": {<the tool's parameters>}}
User: Result of <tool name>: <output>
You: {"final": "<what was done, and the answer>"}"""

_EXAMPLE_ANSWER = """\
Example 2
User: What does `ls -a` show that `ls` does not?
You: {"final": "Hidden entries: names starting with a dot, including . and .."}"""

SMALL_PROFILE = "small"

# The small-model profile: an explicit look -> change -> verify workflow.
SMALL_WORKFLOW = """\
How to work:
1. Look before you change. Read a file before you edit it. To find where a name is defined \
or used, grep for it (find only matches file names). Never guess what a file contains.
2. Change the file with edit, using text or line anchors copied exactly from what you read. \
Use write only for a new file or to rewrite a short file completely.
3. Verify: if there is a test or a command to run, run it with bash and fix what still fails.
4. Finish with {"final": "..."}: what you changed, or the answer to the question, with the \
names and values you found.
If a tool returns an error, read it: it tells you what to do next. Do not repeat the same call."""

_EXAMPLE_FIX = """\
Example 2
User: test_calc.py fails. Fix calc.py.
You: {"tool": "read", "arguments": {"path": "calc.py"}}
User: Result of read: <the lines of calc.py>
You: {"tool": "edit", "arguments": {<the change, with text or anchors copied from that result>}}
User: Result of edit: <the change made>
You: {"tool": "bash", "arguments": {"command": "python3 -m unittest test_calc"}}
User: Result of bash: OK
You: {"final": "Fixed the bug in calc.py; the tests pass."}"""

_EXAMPLE_QUESTION = """\
Example 3
User: Which file defines TIMEOUT?
You: {"tool": "grep", "arguments": {"pattern": "TIMEOUT"}}
User: Result of grep: config/net.py:3: TIMEOUT = 30
client.py:8:     timeout=TIMEOUT,
You: {"final": "TIMEOUT is defined in config/net.py (line 3) as 30."}"""


def prompt_profile(model: Model, flags: dict[str, Any]) -> str | None:
    """The system-prompt profile named by the model's catalogue entry (``compat.promptProfile``)."""
    profile = flags.get("promptProfile", (model.get("compat") or {}).get("promptProfile"))
    return profile if isinstance(profile, str) else None


def uses_short_prompt(model: Model, flags: dict[str, Any]) -> bool:
    """The short prompt replaces the caller's system prompt for small models.

    Small means the ``small`` profile, else a context window of at most 32,768 tokens;
    ``compat.constrainedPrompt`` (``short`` | ``full``) overrides both.
    """
    choice = flags.get("constrainedPrompt")
    if choice in ("short", "full"):
        return bool(choice == "short")
    return prompt_profile(model, flags) == SMALL_PROFILE or model["contextWindow"] <= SMALL_CONTEXT_WINDOW


def system_prompt(
    tools: list[Tool], caller_prompt: str | None, *, short: bool, profile: str | None = None
) -> str:
    """Format rules, worked examples and the tool list (after the caller's prompt unless short).

    The ``small`` profile adds the look -> change -> verify workflow, examples of fixing a
    file and of answering a question from the code, and longer tool descriptions.
    """
    names = {tool["name"] for tool in tools}
    example = _EXAMPLE_WRITE_RUN if {"write", "bash"} <= names else _EXAMPLE_GENERIC
    small = profile == SMALL_PROFILE
    parts = [FORMAT_INSTRUCTIONS]
    if small:
        parts.append(SMALL_WORKFLOW)
    parts.append(example)
    if small and {"read", "edit", "bash"} <= names:
        parts.append(_EXAMPLE_FIX)
    if small and "grep" in names:
        parts.append(_EXAMPLE_QUESTION)
    if not small:
        parts.append(_EXAMPLE_ANSWER)
    parts.append("Tools:\n" + _describe_tools(tools, limit=500 if small else 200))
    if caller_prompt and not short:
        parts.insert(0, caller_prompt)
    return "\n\n".join(parts)


def _describe_tools(tools: list[Tool], *, limit: int = 200) -> str:
    lines = []
    for tool in tools:
        params, required = _properties(tool), set(_required(tool))
        args = ", ".join(
            f"{name}{'' if name in required else '?'}: {spec.get('type', 'any') if isinstance(spec, dict) else 'any'}"
            for name, spec in params.items()
        )
        lines.append(f"- {tool['name']}({args}): {_summary(tool['description'], limit)}")
    return "\n".join(lines)


def _summary(description: str, limit: int) -> str:
    """The description's first line, or as many whole lines as fit in ``limit`` characters."""
    text_lines = description.strip().split("\n")
    kept = [text_lines[0][:limit]]
    for line in text_lines[1:]:
        if limit <= 200 or len("\n".join(kept)) + len(line) + 1 > limit:
            break
        kept.append(line)
    return "\n  ".join(kept)


def required_only(tool: Tool) -> Tool:
    """``tool`` with only its required top-level parameters (the simplest form of a call).

    A small model filled in every optional parameter it was offered, with values that
    hurt (``limit: 1`` on a search, a made-up ``path``); the tools' defaults do better.
    """
    params = tool["parameters"] or {}
    properties = _properties(tool)
    required = [name for name in _required(tool) if name in properties]
    if params.get("type") != "object" or len(required) == len(properties):
        return tool
    kept = {**params, "properties": {name: properties[name] for name in required}}
    return {**tool, "parameters": kept}


def _properties(tool: Tool) -> dict[str, Any]:
    """The tool's top-level ``properties`` ({} when the schema has none, or not as an object)."""
    properties = (tool["parameters"] or {}).get("properties")
    return properties if isinstance(properties, dict) else {}


def _required(tool: Tool) -> list[str]:
    """The names in the tool's ``required`` that are strings ([] when it is not a list)."""
    required = (tool["parameters"] or {}).get("required")
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []


def response_schema(tools: list[Tool], tool_choice: str | None = None) -> dict[str, Any]:
    """``anyOf`` one ``{tool, arguments}`` object per tool, plus ``{final}``.

    ``tool_choice`` narrows the branches: ``none`` leaves only ``final``, ``required`` only
    the tools, a tool name only that tool. Each tool's ``$defs`` are hoisted to the root
    (renamed per tool) so ``$ref`` pointers, which resolve against the root, still find them.
    """
    names = [t["name"] for t in tools]
    if tool_choice == "none":
        chosen, allow_final = [], True
    elif tool_choice in ("required", "any"):
        chosen, allow_final = list(tools), not tools
    elif tool_choice in names:
        chosen, allow_final = [t for t in tools if t["name"] == tool_choice], False
    else:  # auto, unset or an unknown name
        chosen, allow_final = list(tools), True
    branches: list[dict[str, Any]] = []
    defs: dict[str, Any] = {}
    for tool in chosen:
        params = _hoist_defs(tool["name"], tool["parameters"] or {"type": "object"}, defs)
        branches.append(
            {
                "type": "object",
                "properties": {"tool": {"const": tool["name"]}, "arguments": params},
                "required": ["tool", "arguments"],
                "additionalProperties": False,
            }
        )
    if allow_final:
        branches.append(
            {
                "type": "object",
                "properties": {"final": {"type": "string"}},
                "required": ["final"],
                "additionalProperties": False,
            }
        )
    schema: dict[str, Any] = {"anyOf": branches}
    if defs:
        schema["$defs"] = defs
    return schema


def _hoist_defs(tool: str, schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    local = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    if not local:
        return schema
    prefix = f"{tool}__"

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key in ("$defs", "definitions"):
                    continue
                if key == "$ref" and isinstance(value, str):
                    for root in ("#/$defs/", "#/definitions/"):
                        if value.startswith(root):
                            value = "#/$defs/" + prefix + value[len(root) :]
                out[key] = rewrite(value)
            return out
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    for name, definition in local.items():
        defs[prefix + name] = rewrite(definition)
    return cast(dict[str, Any], rewrite(schema))


def step_json(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False)


def final_json(text: str) -> str:
    return json.dumps({"final": text}, ensure_ascii=False)


def convert_messages(model: Model, context: Context, flags: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation as plain system/user/assistant turns in the constrained format.

    Assistant turns become the JSON the model would have produced; tool results become
    user turns ("Result of bash: …"); consecutive turns of one role are merged.
    """
    tools = context.get("tools") or []
    system = system_prompt(
        tools,
        context.get("systemPrompt"),
        short=uses_short_prompt(model, flags),
        profile=prompt_profile(model, flags),
    )
    turns: list[tuple[str, str]] = []
    for message in transform_messages(context["messages"], model):
        role = message["role"]
        if role in ("user", "developer"):
            turns.append(("user", _plain(message["content"])))
        elif role == "assistant":
            text = _assistant_turn(cast(AssistantMessage, message))
            if text:
                turns.append(("assistant", text))
        elif role == "toolResult":
            result = cast(ToolResultMessage, message)
            label = "Error from" if result["isError"] else "Result of"
            turns.append(
                ("user", f"{label} {result['toolName']}: {_plain(result['content']) or '(no output)'}")
            )
    merged: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for turn_role, text in turns:
        if merged[-1]["role"] == turn_role:
            merged[-1]["content"] += "\n\n" + text
        else:
            merged.append({"role": turn_role, "content": text})
    return merged


def _plain(content: Any) -> str:
    if isinstance(content, str):
        return content
    pieces = []
    for block in content:
        if block["type"] == "text":
            pieces.append(block["text"])
        elif block["type"] == "image":
            pieces.append("[image omitted: this model reads text only]")
    return "\n".join(pieces)


def _assistant_turn(message: AssistantMessage) -> str:
    steps = []
    for block in message["content"]:
        if block["type"] == "toolCall":
            steps.append(step_json(block["name"], block["arguments"]))
        elif block["type"] == "text" and block["text"].strip():
            steps.append(final_json(block["text"]))
    return "\n".join(steps)


def next_call_id(context: Context) -> str:
    """``call_<n>``, ``n`` past every ``call_<k>`` id and the count of tool calls in the conversation.

    Counting alone repeated an id once compaction had dropped earlier calls (``call_3`` …
    ``call_10`` kept, the next one ``call_9`` again), and Anthropic refuses a history with a
    repeated ``tool_use`` id after a switch of model.
    """
    count = 0
    highest = 0
    for message in context["messages"]:
        if message["role"] != "assistant":
            continue
        for block in message["content"]:
            if block["type"] != "toolCall":
                continue
            count += 1
            match = _CALL_ID.fullmatch(block["id"])
            if match:
                highest = max(highest, int(match[1]))
    return f"call_{max(count, highest) + 1}"


_CALL_ID = LazyPattern(r"call_(\d{1,18})")


def build_request(
    model: Model, context: Context, options: StreamOptions, flags: dict[str, Any]
) -> dict[str, Any]:
    """The chat-completions body (minus ``stream``): plain turns plus the response schema.

    With the ``small`` profile, tools offer only their required parameters (prompt and schema).
    """
    if prompt_profile(model, flags) == SMALL_PROFILE and context.get("tools"):
        context = {**context, "tools": [required_only(tool) for tool in context.get("tools") or []]}
    body: dict[str, Any] = {
        "model": model["id"],
        "messages": convert_messages(model, context, flags),
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": SCHEMA_NAME,
                "schema": response_schema(context.get("tools") or [], options.tool_choice),
                "strict": True,
            },
        },
    }
    if flags.get("supportsUsageInStreaming", True):
        body["stream_options"] = {"include_usage": True}
    body[flags.get("maxTokensField", "max_tokens")] = options.max_tokens or min(model["maxTokens"], 32000)
    body.update(chat_completions_fields(resolve_sampling(model, options)))
    return body


async def run_constrained(
    model: Model, context: Context, options: StreamOptions, builder: MessageBuilder, flags: dict[str, Any]
) -> None:
    """Stream one constrained completion into ``builder`` as text or a tool call."""
    body = build_request(model, context, options, flags)
    extra_body: dict[str, Any] = {}
    field = flags.get("maxTokensField", "max_tokens")
    if field not in ("max_tokens", "max_completion_tokens"):
        extra_body[field] = body.pop(field)
    payload = encode_body({**body, **extra_body, "stream": True})
    response = await open_stream("openai", model, options, "/chat/completions", payload)
    builder.start()
    decoder = ConstrainedDecoder(builder, next_call_id(context))
    finish: str | None = None
    async with response as chunks:
        async for chunk in chunks:
            await builder.pace()
            if not isinstance(chunk, dict):
                continue
            builder.set_response_id(text(chunk.get("id"), "chunk id"))
            usage = chunk.get("usage")
            if usage is not None:
                _apply_usage(builder, obj(usage, "usage"))
            for choice in objects(chunk.get("choices"), "choices"):
                delta = obj(choice.get("delta"), "choices[].delta")
                content = text(delta.get("content"), "delta.content")
                if content:
                    decoder.feed(content)
                reason = label(choice.get("finish_reason"), "choices[].finish_reason")
                if reason:
                    finish = reason
    if finish is None:
        raise ConnectionError("Connection error: stream ended before the response was complete")
    decoder.close()
    if finish == "length":
        builder.finish("length")
    elif finish in ("stop", "end", "tool_calls", "function_call"):
        builder.finish()
    else:
        builder.fail(f"Provider finish_reason: {finish}")


def _apply_usage(builder: MessageBuilder, usage: dict[str, Any]) -> None:
    prompt = count(usage.get("prompt_tokens"), "usage.prompt_tokens") or 0
    details = obj(usage.get("prompt_tokens_details"), "usage.prompt_tokens_details")
    cached = count(details.get("cached_tokens"), "usage.prompt_tokens_details.cached_tokens") or 0
    builder.set_usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=count(usage.get("completion_tokens"), "usage.completion_tokens") or 0,
        cache_read=cached,
        cache_write=0,
    )
