"""Anthropic Messages streaming (over :mod:`xcsh.ai.transport`, no vendor SDK).

Request side: the context becomes a Messages request (system blocks, converted history,
tools, tool choice, thinking) with prompt-caching breakpoints on the system prompt and
the last user message. Response side: the raw stream events (decoded JSON) drive the shared
:class:`MessageBuilder`; Anthropic emits one content block at a time, so each
``content_block_start`` opens a builder block and ``content_block_stop`` closes it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any, cast

from xcsh.ai.builder import MessageBuilder
from xcsh.ai.clients import encode_body
from xcsh.ai.options import StreamOptions
from xcsh.ai.prefix_cache import PrefixCache
from xcsh.ai.sampling import resolve_sampling
from xcsh.ai.tool_defs import ToolDefinitions
from xcsh.ai.transform import transform_messages
from xcsh.ai.transport import APIStatusError, open_stream
from xcsh.ai.types import (
    AssistantMessage,
    Context,
    Message,
    Model,
    StopReason,
    ThinkingLevel,
    Tool,
    ToolResultMessage,
    UserContent,
)
from xcsh.ai.wire_shape import count, label, obj, text, wrong

CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
DEFAULT_MAX_TOKENS_CAP = 32000
MIN_THINKING_BUDGET = 1024  # the API rejects smaller budgets
IMAGE_PLACEHOLDER = "(see attached image)"

_STOP: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",  # only server-side tools pause; resubmitting continues the turn
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}
_ADAPTIVE_EFFORT: dict[str, str] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "max",
}
_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")


# ---- request --------------------------------------------------------------------------
def normalize_tool_call_id(call_id: str) -> str:
    """Map any tool-call id onto Anthropic's ``^[a-zA-Z0-9_-]{1,64}$``, stably."""
    clean = _UNSAFE_ID.sub("_", call_id)
    if not clean:
        return "toolu_" + hashlib.sha256(call_id.encode()).hexdigest()[:16]
    if len(clean) <= 64:
        return clean
    # keep a hash of the original so two long ids sharing a prefix stay distinct
    return clean[:55] + "_" + hashlib.sha256(call_id.encode()).hexdigest()[:8]


def _image_block(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]},
    }


def _user_blocks(content: str | list[UserContent], model: Model) -> list[dict[str, Any]]:
    """User/developer content as Anthropic blocks; empty text is dropped (the API rejects it)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for item in content:
        if item["type"] == "text":
            if item["text"].strip():
                blocks.append({"type": "text", "text": item["text"]})
        elif item["type"] == "image" and "image" in model["input"]:
            blocks.append(_image_block(cast(dict[str, Any], item)))
    return blocks


def _tool_result_block(result: ToolResultMessage, model: Model) -> dict[str, Any]:
    texts = [b["text"] for b in result["content"] if b["type"] == "text"]
    images = [b for b in result["content"] if b["type"] == "image"] if "image" in model["input"] else []
    content: str | list[dict[str, Any]]
    if images:
        parts = [{"type": "text", "text": t} for t in texts if t.strip()] or [
            {"type": "text", "text": IMAGE_PLACEHOLDER}
        ]
        content = [*parts, *(_image_block(cast(dict[str, Any], b)) for b in images)]
    else:
        content = "\n".join(texts)
    return {
        "type": "tool_result",
        "tool_use_id": result["toolCallId"],
        "content": content,
        "is_error": result["isError"],
    }


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message["content"]:
        if block["type"] == "text":
            if block["text"].strip():
                blocks.append({"type": "text", "text": block["text"]})
        elif block["type"] == "thinking":
            if not block["thinking"].strip():
                continue
            signature = block.get("thinkingSignature", "")
            if signature.strip():
                blocks.append({"type": "thinking", "thinking": block["thinking"], "signature": signature})
            else:
                # unsigned thinking (e.g. a cut stream) would be rejected; keep its content as text
                blocks.append({"type": "text", "text": block["thinking"]})
        elif block["type"] == "redactedThinking":
            blocks.append({"type": "redacted_thinking", "data": block["data"]})
        elif block["type"] == "toolCall":
            blocks.append(
                {"type": "tool_use", "id": block["id"], "name": block["name"], "input": block["arguments"]}
            )
    return blocks


def convert_messages(messages: list[Message], model: Model) -> list[dict[str, Any]]:
    """Conversation → Anthropic ``messages``; consecutive tool results share one user message.

    The converted form is remembered up to the newest assistant message
    (:class:`~xcsh.ai.prefix_cache.PrefixCache`); its items are shared between calls and
    must not be changed in place.
    """
    return _HISTORY(messages, (model["provider"], model["id"], "image" in model["input"]), model)


def _convert_history(messages: Sequence[Message], model: Model) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    previous_role = ""
    for message in transform_messages(list(messages), model, normalize_tool_call_id):
        role = message["role"]
        if role in ("user", "developer"):
            blocks = _user_blocks(cast(Any, message)["content"], model)
            if blocks:
                out.append({"role": "user", "content": blocks})
        elif role == "assistant":
            blocks = _assistant_blocks(cast(AssistantMessage, message))
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            block = _tool_result_block(cast(ToolResultMessage, message), model)
            if previous_role == "toolResult" and out and out[-1]["role"] == "user":
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        previous_role = role
    return out


def _starts_turn(message: Message) -> bool:
    # before an assistant message no tool results are pending or grouped (transform_messages too)
    return message["role"] == "assistant"


_HISTORY: PrefixCache[Message, dict[str, Any]] = PrefixCache(_convert_history, _starts_turn)


def _mark_cache_breakpoint(messages: list[dict[str, Any]]) -> None:
    """Cache the conversation prefix up to the last user message's last block."""
    if not messages or messages[-1]["role"] != "user":
        return
    last = messages[-1]
    content = last["content"]
    if content:  # copies: the converted messages are remembered (convert_messages)
        marked = {**content[-1], "cache_control": dict(CACHE_CONTROL)}
        messages[-1] = {**last, "content": [*content[:-1], marked]}


def _tool_choice(choice: str) -> dict[str, Any]:
    if choice == "auto":
        return {"type": "auto"}
    if choice in ("required", "any"):
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    return {"type": "tool", "name": choice}


def _input_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    schema = dict(parameters)
    schema.setdefault("type", "object")
    if schema["type"] == "object":
        schema.setdefault("properties", {})
    return schema


def thinking_budget(options: StreamOptions, level: ThinkingLevel) -> int:
    """The configured budget for ``level`` (settings ``thinkingBudgets``, with defaults)."""
    return int(options.thinking_budgets.get(level, MIN_THINKING_BUDGET))


def _apply_thinking(body: dict[str, Any], model: Model, options: StreamOptions) -> None:
    level = options.reasoning
    if not model["reasoning"] or level is None or level == "off":
        return
    forced = body.get("tool_choice", {}).get("type") in ("any", "tool")
    if forced:
        return  # the API refuses thinking together with a forced tool choice
    mode = model.get("thinking", {}).get("mode")
    effort = _ADAPTIVE_EFFORT.get(level, "high")
    if mode == "anthropic-adaptive":
        body["thinking"] = {"type": "adaptive"}
        body["output_config"] = {"effort": effort}
        return
    budget = thinking_budget(options, level)
    max_tokens = min(body["max_tokens"] + budget, model["maxTokens"])
    if max_tokens <= budget:
        # the model cannot fit the whole budget: shrink it, keeping room for the answer
        budget = max_tokens - MIN_THINKING_BUDGET
        if budget < MIN_THINKING_BUDGET:
            return
    body["max_tokens"] = max_tokens
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    if mode == "anthropic-budget-effort":
        body["output_config"] = {"effort": effort}


def _tool(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool["name"],
        "description": tool["description"],
        "input_schema": _input_schema(tool["parameters"]),
    }


_TOOLS: ToolDefinitions[dict[str, Any]] = ToolDefinitions(_tool)


def build_request(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The JSON body of the Messages request (minus ``stream``)."""
    messages = convert_messages(context["messages"], model)
    _mark_cache_breakpoint(messages)
    body: dict[str, Any] = {
        "model": model["id"],
        "messages": messages,
        "max_tokens": options.max_tokens or min(model["maxTokens"], DEFAULT_MAX_TOKENS_CAP),
    }
    system_prompt = context.get("systemPrompt")
    if system_prompt:
        body["system"] = [{"type": "text", "text": system_prompt, "cache_control": dict(CACHE_CONTROL)}]
    tools = context.get("tools") or []
    if tools:
        body["tools"] = _TOOLS(tools)
        if options.tool_choice:
            body["tool_choice"] = _tool_choice(options.tool_choice)
    _apply_thinking(body, model, options)
    sampling = resolve_sampling(model, options)
    if "thinking" not in body:  # with thinking on, the API accepts only its default sampling
        fields = {"temperature": sampling.temperature, "top_p": sampling.top_p, "top_k": sampling.top_k}
        body.update({key: value for key, value in fields.items() if value is not None})
    return body


def request_payload(model: Model, context: Context, options: StreamOptions) -> bytes:
    """The encoded body as sent (with ``stream``), the history's remembered messages from their
    stored fragments (the same bytes as encoding it whole; docs/performance.md, "Fourth session:
    flat requests")."""
    body = build_request(model, context, options)
    body["stream"] = True
    spliced: dict[str, Any] = {"messages": _HISTORY.encoded(body["messages"])}
    if "tools" in body:
        spliced["tools"] = _TOOLS.encoded(body["tools"])
    return encode_body(body, spliced)


# ---- response -------------------------------------------------------------------------
class _Reducer:
    """Translates raw Messages stream events (decoded JSON objects) into builder calls."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.stop_reason: str | None = None
        self.started = False
        self.stopped = False

    def _usage(self, value: Any, where: str) -> None:
        if value is None:
            return
        usage = obj(value, where)
        self.builder.set_usage(
            input_tokens=count(usage.get("input_tokens"), f"{where}.input_tokens"),
            output_tokens=count(usage.get("output_tokens"), f"{where}.output_tokens"),
            cache_read=count(usage.get("cache_read_input_tokens"), f"{where}.cache_read_input_tokens"),
            cache_write=count(
                usage.get("cache_creation_input_tokens"), f"{where}.cache_creation_input_tokens"
            ),
        )

    def feed(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        builder = self.builder
        if kind == "content_block_delta":
            delta = event.get("delta")
            self._delta(delta if type(delta) is dict else obj(delta, "content_block_delta: delta"))
        elif kind == "message_start":
            self.started = True
            message = obj(event.get("message"), "message_start: message")
            builder.set_response_id(text(message.get("id"), "message_start: message.id"))
            self._usage(message.get("usage"), "message_start: message.usage")
        elif kind == "content_block_start":
            self._block_start(obj(event.get("content_block"), "content_block_start: content_block"))
        elif kind == "content_block_stop":
            builder.end_block()
        elif kind == "message_delta":
            delta = obj(event.get("delta"), "message_delta: delta")
            reason = label(delta.get("stop_reason"), "message_delta: delta.stop_reason")
            if reason:
                self.stop_reason = reason
            self._usage(event.get("usage"), "message_delta: usage")
        elif kind == "message_stop":
            self.stopped = True

    def _block_start(self, block: dict[str, Any]) -> None:
        kind = block.get("type")
        builder = self.builder
        where = "content_block_start: content_block"
        if kind == "text":
            builder.text(text(block.get("text"), f"{where}.text"), new_block=True)
        elif kind == "thinking":
            builder.thinking(text(block.get("thinking"), f"{where}.thinking"), new_block=True)
            signature = text(block.get("signature"), f"{where}.signature")
            if signature:
                builder.set_signature(signature)
        elif kind == "redacted_thinking":
            builder.redacted_thinking(text(block.get("data"), f"{where}.data"))
        elif kind == "tool_use":
            call_id = text(block.get("id"), f"{where}.id")
            builder.begin_tool_call(call_id, text(block.get("name"), f"{where}.name"))
            initial = block.get("input")
            if initial is not None and not isinstance(initial, dict):
                raise wrong(f"{where}.input", initial, "an object")
            if initial:
                builder.tool_arguments(json.dumps(initial, ensure_ascii=False))
        else:
            builder.end_block()  # server tools, citations…: not part of our message model

    def _delta(self, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        builder = self.builder
        if kind == "text_delta":
            value = delta.get("text")
            builder.text(value if type(value) is str else text(value, "content_block_delta: delta.text"))
        elif kind == "input_json_delta":
            value = delta.get("partial_json")
            if type(value) is not str:
                value = text(value, "content_block_delta: delta.partial_json")
            builder.tool_arguments(value)
        elif kind == "thinking_delta":
            builder.thinking(text(delta.get("thinking"), "content_block_delta: delta.thinking"))
        elif kind == "signature_delta":
            builder.set_signature(text(delta.get("signature"), "content_block_delta: delta.signature"))

    def finish(self) -> None:
        if not self.stopped:
            where = "message_stop" if self.started else "message_start"
            raise ConnectionError(f"Connection error: stream ended before {where}")
        if self.stop_reason is None:
            self.builder.finish()
            return
        mapped = _STOP.get(self.stop_reason)
        if mapped is None:
            self.builder.fail(f"Provider stop_reason: {self.stop_reason}")
            return
        self.builder.finish(mapped)


def _stream_error_text(exc: APIStatusError) -> str:
    """The text of an ``error`` event sent inside a 200 stream."""
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        kind = error.get("type")
        message = str(error["message"])
        return f"{kind}: {message}" if kind and kind not in message else message
    return str(exc.message or exc)


async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    """Stream one Messages response into ``builder``."""
    payload = request_payload(model, context, options)
    response = await open_stream("anthropic", model, options, "/v1/messages", payload)
    reducer = _Reducer(builder)
    builder.start()
    # `async with` closes the HTTP stream on every exit, including task cancellation (abort)
    async with response as events:
        try:
            async for event in events:
                reducer.feed(event)
                await builder.pace()
        except APIStatusError as exc:
            if exc.status_code != 200:
                raise
            builder.fail(_stream_error_text(exc))  # an `error` event mid-stream
            return
    reducer.finish()
