"""OpenAI Chat Completions streaming (OpenAI and every OpenAI-compatible server)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from xcsh.ai.builder import MessageBuilder
from xcsh.ai.clients import encode_body
from xcsh.ai.options import StreamOptions
from xcsh.ai.prefix_cache import PrefixCache
from xcsh.ai.providers.completions_calls import ToolCallAssembler
from xcsh.ai.providers.openai_compat import resolve_compat, tool_call_id_normalizer
from xcsh.ai.sampling import chat_completions_fields, resolve_sampling
from xcsh.ai.tool_defs import ToolDefinitions
from xcsh.ai.transform import transform_messages
from xcsh.ai.transport import open_stream
from xcsh.ai.types import (
    AssistantMessage,
    Context,
    Message,
    Model,
    StopReason,
    Tool,
    ToolCall,
    ToolResultMessage,
)
from xcsh.ai.wire_shape import count, label, obj, objects, text, wrong

_FINISH: dict[str, StopReason] = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


def _image_part(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"}}


def _user_content(content: Any, model: Model) -> Any:
    if isinstance(content, str):
        return content
    if len(content) == 1 and content[0]["type"] == "text":  # the common case, without the walk below
        return content[0]["text"]
    parts: list[dict[str, Any]] = []
    for block in content:
        if block["type"] == "text":
            parts.append({"type": "text", "text": block["text"]})
        elif block["type"] == "image" and "image" in model["input"]:
            parts.append(_image_part(block))
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def convert_messages(model: Model, context: Context, flags: dict[str, Any]) -> list[dict[str, Any]]:
    """Context → chat-completions ``messages`` (system prompt first).

    The history's converted form is remembered up to its newest assistant message
    (:class:`~xcsh.ai.prefix_cache.PrefixCache`, keyed by everything the conversion reads).
    """
    out: list[dict[str, Any]] = []
    if context.get("systemPrompt"):
        role = "developer" if flags["supportsDeveloperRole"] and model["reasoning"] else "system"
        out.append({"role": role, "content": context["systemPrompt"]})
    key = (
        model["provider"],
        model["id"],
        "image" in model["input"],
        bool(flags["supportsDeveloperRole"]),
        flags.get("toolCallIdFormat"),
        flags.get("requiresReasoningContentForToolCalls") and model["reasoning"],
        flags.get("reasoningContentField"),
        bool(flags.get("requiresAssistantAfterToolResult")),
    )
    out.extend(_HISTORY(context["messages"], key, (model, flags)))
    return out


def _convert_history(
    messages: Sequence[Message], params: tuple[Model, dict[str, Any]]
) -> list[dict[str, Any]]:
    model, flags = params
    out: list[dict[str, Any]] = []
    bridge = bool(flags.get("requiresAssistantAfterToolResult"))

    def emit(entry: dict[str, Any]) -> None:
        if bridge and out and out[-1]["role"] == "tool" and entry["role"] not in ("assistant", "tool"):
            out.append(_BRIDGE)
        out.append(entry)

    messages = transform_messages(list(messages), model, tool_call_id_normalizer(flags))
    pending_images: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role != "toolResult" and pending_images:
            emit({"role": "user", "content": [{"type": "text", "text": "Attached images:"}, *pending_images]})
            pending_images = []
        if role == "user":
            emit({"role": "user", "content": _user_content(message["content"], model)})
        elif role == "developer":
            dev_role = "developer" if flags["supportsDeveloperRole"] else "user"
            emit({"role": dev_role, "content": _user_content(message["content"], model)})
        elif role == "assistant":
            entry = _assistant(cast(AssistantMessage, message), model, flags)
            if entry is not None:
                emit(entry)
        elif role == "toolResult":
            result = cast(ToolResultMessage, message)
            text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
            images = [b for b in result["content"] if b["type"] == "image"]
            if images and "image" in model["input"]:
                pending_images.extend(_image_part(cast(dict[str, Any], b)) for b in images)
                text = text or "(see attached image)"
            emit({"role": "tool", "tool_call_id": result["toolCallId"], "content": text or "(no output)"})
    if pending_images:
        emit({"role": "user", "content": [{"type": "text", "text": "Attached images:"}, *pending_images]})
    return out


# Between a tool result and a user message, for servers that refuse ``tool`` then ``user``
# (Mistral: 400 "Unexpected role 'user' after role 'tool'"); content, since Mistral also refuses
# an assistant message without content or tool calls.
_BRIDGE: dict[str, Any] = {"role": "assistant", "content": "(tool results received)"}


def _starts_turn(message: Message) -> bool:
    """A cut of the history's conversion: an assistant message that is surely sent.

    Before an assistant message no pending tool result or image carries over (transform_messages
    too). The one look-back, Mistral's bridge after a tool result, needs the entry before: a
    segment starting with an answer that is not sent (failed or aborted, or neither text nor tool
    calls) would put its user message first in the segment, unbridged after the tool result.
    """
    if message["role"] != "assistant":
        return False
    if message["stopReason"] in ("error", "aborted"):
        return False
    return any(b["type"] == "toolCall" or (b["type"] == "text" and b["text"]) for b in message["content"])


_HISTORY: PrefixCache[Message, dict[str, Any]] = PrefixCache(_convert_history, _starts_turn)


def _assistant(message: AssistantMessage, model: Model, flags: dict[str, Any]) -> dict[str, Any] | None:
    """The message's wire form; None for an answer with neither text nor tool calls (thinking
    only, or cut off while thinking): servers refuse an assistant message with ``content: null``
    and no ``tool_calls``, and it would stay in every later request (docs/decisions.md,
    "Chat Completions: an answer without text or tool calls is not sent").

    An answer with tool calls carries its reasoning back where the server needs it: the calls'
    OpenRouter ``reasoning_details`` (Gemini's thought signatures) always, and the thinking as
    ``reasoning_content`` when the server requires it (DeepSeek's thinking mode; docs/decisions.md,
    "Chat Completions: reasoning goes back with tool calls").
    """
    texts = [b["text"] for b in message["content"] if b["type"] == "text" and b["text"]]
    tool_calls = [b for b in message["content"] if b["type"] == "toolCall"]
    if not texts and not tool_calls:
        return None
    entry: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if not tool_calls:
        return entry
    if flags.get("requiresReasoningContentForToolCalls") and model["reasoning"]:
        # thinking of this model only: transform_messages made another model's thinking text
        thoughts = [b["thinking"] for b in message["content"] if b["type"] == "thinking"]
        entry[flags.get("reasoningContentField") or "reasoning_content"] = "\n".join(thoughts) or "."
    entry["tool_calls"] = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b["arguments"], ensure_ascii=False)},
        }
        for b in tool_calls
    ]
    details = [d for d in map(_reasoning_detail, tool_calls) if d is not None]
    if details:
        entry["reasoning_details"] = details
    return entry


def _reasoning_detail(call: ToolCall) -> dict[str, Any] | None:
    """The OpenRouter ``reasoning_details`` entry kept with ``call`` (see :func:`_keep_signatures`)."""
    signature = call.get("thoughtSignature")
    if not signature:
        return None
    try:
        detail = json.loads(signature)
    except ValueError:
        return None
    return detail if isinstance(detail, dict) else None


def _tool(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool["parameters"],
        },
    }


_TOOLS: ToolDefinitions[dict[str, Any]] = ToolDefinitions(_tool)


def build_request(
    model: Model, context: Context, options: StreamOptions, flags: dict[str, Any]
) -> dict[str, Any]:
    """The JSON body of the request (minus ``stream``), for this model and its quirks."""
    body: dict[str, Any] = {"model": model["id"], "messages": convert_messages(model, context, flags)}
    if flags["supportsUsageInStreaming"]:
        body["stream_options"] = {"include_usage": True}
    max_tokens = options.max_tokens or min(model["maxTokens"], 32000)
    body[flags["maxTokensField"]] = max_tokens
    body.update(chat_completions_fields(resolve_sampling(model, options)))
    if flags["supportsStore"]:
        body["store"] = False
    tools = context.get("tools") or []
    if tools:
        body["tools"] = _TOOLS(tools)
    if options.tool_choice and flags["supportsToolChoice"]:
        if options.tool_choice in ("auto", "none", "required"):
            body["tool_choice"] = options.tool_choice
        else:
            body["tool_choice"] = {"type": "function", "function": {"name": options.tool_choice}}
    level = options.reasoning
    if model["reasoning"] and level and level != "off":
        fmt = flags["thinkingFormat"]
        if fmt == "openrouter":
            body["reasoning"] = {"effort": "high" if level == "xhigh" else level}
        elif fmt == "zai":
            body["thinking"] = {"type": "enabled"}
        elif fmt == "qwen":
            body["enable_thinking"] = True
        elif flags["supportsReasoningEffort"]:
            body["reasoning_effort"] = flags["reasoningEffortMap"].get(level, level)
    return body


def request_wire(
    model: Model, context: Context, options: StreamOptions, flags: dict[str, Any]
) -> dict[str, Any]:
    """The body as sent: :func:`build_request`'s, its non-standard fields last, then ``stream``."""
    body = build_request(model, context, options, flags)
    extra_body = {k: body.pop(k) for k in list(body) if k in ("reasoning", "thinking", "enable_thinking")}
    if flags["maxTokensField"] not in ("max_tokens", "max_completion_tokens"):
        extra_body[flags["maxTokensField"]] = body.pop(flags["maxTokensField"])
    return {**body, **extra_body, "stream": True}


def request_payload(model: Model, context: Context, options: StreamOptions, flags: dict[str, Any]) -> bytes:
    """:func:`request_wire` encoded, the history's remembered messages from their stored fragments
    (the same bytes as encoding it whole; docs/performance.md, "Fourth session: flat requests")."""
    wire = request_wire(model, context, options, flags)
    spliced: dict[str, Any] = {
        "messages": _HISTORY.encoded(wire["messages"], 1 if context.get("systemPrompt") else 0)
    }
    if "tools" in wire:
        spliced["tools"] = _TOOLS.encoded(wire["tools"])
    return encode_body(wire, spliced)


async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    """Stream one chat completion into ``builder``."""
    flags = resolve_compat(model)
    if flags.get("constrainedToolCalls") and context.get("tools"):
        from xcsh.ai.providers.constrained import run_constrained

        await run_constrained(model, context, options, builder, flags)
        return
    payload = request_payload(model, context, options, flags)
    response = await open_stream("openai", model, options, "/chat/completions", payload)
    builder.start()
    finish: str | None = None
    calls = ToolCallAssembler(builder)
    signatures: dict[str, str] = {}  # tool call id -> its encrypted OpenRouter reasoning detail
    response.handed_over = builder.taken  # the rest of the body is read once the agent has the answer
    async with response as chunks:
        async for chunk in chunks:
            await builder.pace()
            if not isinstance(chunk, dict):
                continue
            response_id = chunk.get("id")
            builder.set_response_id(
                response_id if type(response_id) is str else text(response_id, "chunk id")
            )
            usage = chunk.get("usage")
            if usage is not None:
                _apply_usage(builder, obj(usage, "usage"))
            choices = chunk.get("choices")
            for choice in choices if type(choices) is list else objects(choices, "choices"):
                if type(choice) is not dict:
                    raise wrong("choices[]", choice, "an object")
                delta = choice.get("delta")
                if delta is not None:
                    if type(delta) is not dict:
                        raise wrong("choices[].delta", delta, "an object")
                    details = delta.get("reasoning_details")
                    if details:
                        _keep_signatures(details, signatures)
                    reasoning = _reasoning_text(delta)
                    if reasoning:
                        builder.thinking(reasoning)
                    content = delta.get("content")
                    if content:
                        builder.text(content if type(content) is str else text(content, "delta.content"))
                    tool_calls = delta.get("tool_calls")
                    for call in () if tool_calls is None else objects(tool_calls, "delta.tool_calls"):
                        fn = call.get("function")
                        if type(fn) is not dict:
                            fn = obj(fn, "delta.tool_calls[].function")
                        index = call.get("index")
                        if index is not None and type(index) is not int:
                            raise wrong("delta.tool_calls[].index", index, "an integer")
                        call_id = call.get("id")
                        if call_id is not None and type(call_id) is not str:
                            call_id = text(call_id, "delta.tool_calls[].id")
                        arguments = fn.get("arguments")
                        if arguments and type(arguments) is not str:
                            arguments = text(arguments, "delta.tool_calls[].function.arguments")
                        calls.delta(
                            index,
                            call_id,
                            text(fn.get("name"), "delta.tool_calls[].function.name"),
                            arguments or "",
                        )
                reason = choice.get("finish_reason")
                if reason:
                    finish = reason if type(reason) is str else label(reason, "choices[].finish_reason")
        # the message ends before leaving the block, which then reads the rest of the body
        calls.finish()
        if signatures:
            builder.sign_tool_calls(signatures)
        if finish is not None:
            mapped = _FINISH.get(finish)
            if mapped is None:
                builder.fail(f"Provider finish_reason: {finish}")
            else:
                builder.finish(mapped)
    if finish is None:
        raise ConnectionError("Connection error: stream ended before the response was complete")


def _keep_signatures(details: Any, signatures: dict[str, str]) -> None:
    """Keep each encrypted ``reasoning_details`` entry (OpenRouter; for Gemini it holds the thought
    signature the next request must carry) under the id of the tool call it belongs to."""
    for detail in objects(details, "delta.reasoning_details"):
        if type(detail) is not dict or detail.get("type") != "reasoning.encrypted":
            continue
        call_id, data = detail.get("id"), detail.get("data")
        if type(call_id) is str and call_id and type(data) is str and data:
            signatures[call_id] = json.dumps(detail, ensure_ascii=False)


def _reasoning_text(delta: dict[str, Any]) -> str | None:
    for field in ("reasoning_content", "reasoning", "reasoning_text"):
        value = delta.get(field)
        if isinstance(value, str) and value:
            return value
    return None


def _apply_usage(builder: MessageBuilder, usage: dict[str, Any]) -> None:
    """The chunk's ``usage`` (checked: counts are whole numbers, details objects) on ``builder``."""
    prompt = count(usage.get("prompt_tokens"), "usage.prompt_tokens") or 0
    completion = count(usage.get("completion_tokens"), "usage.completion_tokens") or 0
    prompt_details = obj(usage.get("prompt_tokens_details"), "usage.prompt_tokens_details")
    cached = count(prompt_details.get("cached_tokens"), "usage.prompt_tokens_details.cached_tokens") or 0
    completion_details = obj(usage.get("completion_tokens_details"), "usage.completion_tokens_details")
    reasoning = (
        count(completion_details.get("reasoning_tokens"), "usage.completion_tokens_details.reasoning_tokens")
        or 0
    )
    builder.set_usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=completion + reasoning,
        cache_read=cached,
        cache_write=0,
    )
