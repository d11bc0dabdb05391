"""Gemini (Generative Language API) streaming through the official ``google-genai`` SDK.

Request side: the system prompt is the ``system_instruction``; the conversation becomes
``contents`` with ``user``/``model`` roles (text, inline images, function calls with their
thought signatures, function responses); tools are function declarations with a raw
JSON Schema. Response side: every streamed part feeds the shared builder — ``thought``
parts are thinking, text parts are text, and each ``functionCall`` part arrives whole,
so it becomes a complete tool-call block (start, one delta with the JSON, end).

The SDK's own conveniences that would hide requests are switched off: transport
retries (in :func:`xcsh.ai.clients.google_client`), automatic function calling and
automatic stream continuation.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import uuid
from typing import Any, cast

from xcsh.ai.builder import MessageBuilder
from xcsh.ai.clients import google_client
from xcsh.ai.options import StreamOptions
from xcsh.ai.sampling import resolve_sampling
from xcsh.ai.transform import transform_messages
from xcsh.ai.types import AssistantMessage, Context, Model, ToolResultMessage, UserContent
from xcsh.ai.wire_shape import MalformedStreamError, count

DEFAULT_MAX_TOKENS_CAP = 32000
IMAGE_PLACEHOLDER = "(see attached image)"
# Google documents this value for function calls whose real signature is unavailable
# (history made by another model); Gemini 3 rejects unsigned calls in the current turn.
SKIP_SIGNATURE = "skip_thought_signature_validator"
_LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "HIGH"}
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")


# ---- request --------------------------------------------------------------------------
def _is_gemini_3(model: Model) -> bool:
    return "gemini-3" in model["id"]


def _needs_call_ids(model: Model) -> bool:
    """Claude served through Google APIs pairs calls and results by id; Gemini by order."""
    return model["id"].startswith("claude-")


def _valid_signature(signature: str | None) -> bool:
    return bool(signature) and len(signature or "") % 4 == 0 and bool(_BASE64.match(signature or ""))


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {"inline_data": {"mime_type": block["mimeType"], "data": block["data"]}}


def _user_parts(content: str | list[UserContent], model: Model) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content.strip() else []
    parts: list[dict[str, Any]] = []
    for block in content:
        if block["type"] == "text":
            if block["text"].strip():
                parts.append({"text": block["text"]})
        elif block["type"] == "image" and "image" in model["input"]:
            parts.append(_image(cast(dict[str, Any], block)))
    return parts


def _model_parts(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    # transform_messages already turned other models' thinking into text and dropped their
    # signatures, so any signature left here belongs to this model
    parts: list[dict[str, Any]] = []
    for block in message["content"]:
        if block["type"] == "text":
            if not block["text"].strip():
                continue
            part: dict[str, Any] = {"text": block["text"]}
            signature = block.get("textSignature")
            if _valid_signature(signature):
                part["thought_signature"] = signature
            parts.append(part)
        elif block["type"] == "thinking":
            if not block["thinking"].strip():
                continue  # transform_messages keeps signed empty thinking for OpenAI's reasoning items
            part = {"text": block["thinking"], "thought": True}
            if _valid_signature(block.get("thinkingSignature")):
                part["thought_signature"] = block.get("thinkingSignature")
            parts.append(part)
        elif block["type"] == "toolCall":
            call: dict[str, Any] = {"name": block["name"], "args": block["arguments"]}
            if _needs_call_ids(model):
                call["id"] = block["id"]
            part = {"function_call": call}
            signature = block.get("thoughtSignature")
            if _valid_signature(signature):
                part["thought_signature"] = signature
            elif _is_gemini_3(model):
                part["thought_signature"] = SKIP_SIGNATURE
            parts.append(part)
    return parts


def _function_response(
    result: ToolResultMessage, model: Model
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The function-response part, and image parts that must travel in a separate user turn."""
    text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
    images = (
        [_image(cast(dict[str, Any], b)) for b in result["content"] if b["type"] == "image"]
        if "image" in model["input"]
        else []
    )
    value = text or (IMAGE_PLACEHOLDER if images else "")
    response: dict[str, Any] = {
        "name": result["toolName"],
        "response": {"error": value} if result["isError"] else {"output": value},
    }
    if _needs_call_ids(model):
        response["id"] = result["toolCallId"]
    separate: list[dict[str, Any]] = []
    if images and _is_gemini_3(model):
        response["parts"] = images  # Gemini 3 accepts images inside the function response
    elif images:
        separate = images
    return {"function_response": response}, separate


def _normalize_id(model: Model) -> Any:
    if not _needs_call_ids(model):
        return None
    return lambda call_id: _UNSAFE_ID.sub("_", call_id)[:64]


def convert_contents(model: Model, context: Context) -> list[dict[str, Any]]:
    """Conversation → Gemini ``contents``; consecutive function responses share one user turn."""
    contents: list[dict[str, Any]] = []
    for message in transform_messages(context["messages"], model, _normalize_id(model)):
        role = message["role"]
        if role in ("user", "developer"):
            parts = _user_parts(cast(Any, message)["content"], model)
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif role == "assistant":
            parts = _model_parts(cast(AssistantMessage, message), model)
            if parts:
                contents.append({"role": "model", "parts": parts})
        elif role == "toolResult":
            part, images = _function_response(cast(ToolResultMessage, message), model)
            last = contents[-1] if contents else None
            if last is not None and last["role"] == "user" and "function_response" in last["parts"][-1]:
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
            if images:
                contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *images]})
    return contents


def _tool_config(choice: str) -> dict[str, Any]:
    if choice in ("auto", "none"):
        return {"function_calling_config": {"mode": choice.upper()}}
    if choice in ("any", "required"):
        return {"function_calling_config": {"mode": "ANY"}}
    return {"function_calling_config": {"mode": "ANY", "allowed_function_names": [choice]}}


def _thinking_config(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    level = options.reasoning
    if not model["reasoning"] or level is None or level == "off":
        return None
    if model.get("thinking", {}).get("mode") == "google-level":
        return {"include_thoughts": True, "thinking_level": _LEVELS.get(level, "HIGH")}
    budget = options.thinking_budgets.get(level)
    if budget is None:
        return {"include_thoughts": True}
    return {"include_thoughts": True, "thinking_budget": int(budget)}


def build_config(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The ``GenerateContentConfig`` (as a dict) for this call."""
    config: dict[str, Any] = {
        "max_output_tokens": options.max_tokens or min(model["maxTokens"], DEFAULT_MAX_TOKENS_CAP),
        # the SDK must not call tools or reconnect on its own: both would be invisible to us
        "automatic_function_calling": {"disable": True},
        "automatic_continuation": False,
    }
    if context.get("systemPrompt"):
        config["system_instruction"] = context["systemPrompt"]
    sampling = resolve_sampling(model, options)
    tuned = {"temperature": sampling.temperature, "top_p": sampling.top_p, "top_k": sampling.top_k}
    config.update({key: value for key, value in tuned.items() if value is not None})
    tools = context.get("tools") or []
    if tools:
        config["tools"] = [
            {
                "function_declarations": [
                    {
                        "name": t["name"],
                        "description": t["description"],
                        "parameters_json_schema": t["parameters"],
                    }
                    for t in tools
                ]
            }
        ]
        if options.tool_choice:
            config["tool_config"] = _tool_config(options.tool_choice)
    thinking = _thinking_config(model, options)
    if thinking is not None:
        config["thinking_config"] = thinking
    return config


# ---- response -------------------------------------------------------------------------
def _signature_text(raw: Any) -> str | None:
    if isinstance(raw, bytes) and raw:
        return base64.b64encode(raw).decode("ascii")
    if isinstance(raw, str) and raw:
        return raw
    return None


def _enum_name(value: Any) -> str:
    return str(getattr(value, "value", value))


class _Reducer:
    """Translates streamed ``GenerateContentResponse`` chunks into builder calls."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.finish_reason: str | None = None
        self.block_reason: str | None = None

    def feed(self, chunk: Any) -> None:
        builder = self.builder
        builder.start()
        builder.set_response_id(getattr(chunk, "response_id", None))
        candidates = getattr(chunk, "candidates", None) or []
        if candidates:
            candidate = candidates[0]
            content = getattr(candidate, "content", None)
            for part in getattr(content, "parts", None) or []:
                self._part(part)
            if getattr(candidate, "finish_reason", None):
                self.finish_reason = _enum_name(candidate.finish_reason)
        feedback = getattr(chunk, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None):
            self.block_reason = _enum_name(feedback.block_reason)
        self._usage(getattr(chunk, "usage_metadata", None))

    def _part(self, part: Any) -> None:
        builder = self.builder
        signature = _signature_text(getattr(part, "thought_signature", None))
        call = getattr(part, "function_call", None)
        if call is not None:
            self._tool_call(call, signature)
            return
        text = getattr(part, "text", None)
        if text is None:
            return
        if getattr(part, "thought", None) is True:
            builder.thinking(text)
        else:
            builder.text(text)
        if signature and builder.message["content"]:
            block = builder.message["content"][-1]
            # a later delta may omit the signature: keep the latest one, never concatenate
            if block["type"] == "thinking":
                block["thinkingSignature"] = signature
            elif block["type"] == "text":
                block["textSignature"] = signature

    def _tool_call(self, call: Any, signature: str | None) -> None:
        builder = self.builder
        name = getattr(call, "name", None) or ""
        call_id = getattr(call, "id", None)
        taken = {b["id"] for b in builder.message["content"] if b["type"] == "toolCall"}
        if not call_id or call_id in taken:
            call_id = f"{name or 'call'}_{uuid.uuid4().hex[:16]}"
        builder.begin_tool_call(call_id, name, thought_signature=signature)
        builder.tool_arguments(json.dumps(getattr(call, "args", None) or {}, ensure_ascii=False))
        builder.end_block()

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return
        where = "usageMetadata"
        prompt = count(getattr(usage, "prompt_token_count", None), f"{where}.promptTokenCount") or 0
        cached = (
            count(getattr(usage, "cached_content_token_count", None), f"{where}.cachedContentTokenCount") or 0
        )
        candidates = (
            count(getattr(usage, "candidates_token_count", None), f"{where}.candidatesTokenCount") or 0
        )
        thoughts = count(getattr(usage, "thoughts_token_count", None), f"{where}.thoughtsTokenCount") or 0
        self.builder.set_usage(
            input_tokens=max(0, prompt - cached),
            output_tokens=candidates + thoughts,
            cache_read=cached,
            cache_write=0,
            total=count(getattr(usage, "total_token_count", None), f"{where}.totalTokenCount") or None,
        )

    def finish(self) -> None:
        reason = self.finish_reason
        if reason is None:
            if self.block_reason:
                self.builder.fail(f"Prompt blocked: {self.block_reason}")
                return
            raise ConnectionError("Connection error: stream ended before a finish reason")
        if reason == "STOP":
            self.builder.finish("stop")
        elif reason == "MAX_TOKENS":
            self.builder.finish("length")
        else:
            self.builder.fail(f"Provider finish_reason: {reason}")


async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    """Stream one Gemini response into ``builder``."""
    client = google_client(model, options)
    chunks = await client.aio.models.generate_content_stream(
        model=model["id"],
        contents=convert_contents(model, context),
        config=build_config(model, context, options),
    )
    reducer = _Reducer(builder)
    # the request is sent on the first iteration; closing the generator closes the HTTP
    # stream on every exit, including task cancellation (abort)
    async with contextlib.aclosing(chunks):
        try:
            async for chunk in chunks:
                reducer.feed(chunk)
                await builder.pace()
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
            unreadable = _unreadable(exc)
            if unreadable is None:
                raise
            raise unreadable from exc
    reducer.finish()


def _unreadable(exc: Exception) -> MalformedStreamError | None:
    """What was wrong with a chunk the SDK could not turn into a response (None: not that kind
    of failure). The SDK validates each chunk's JSON with pydantic, whose first error names
    the field; its own code fails on other shapes (a chunk that is a number, an unknown enum
    value given as a number) with a Python error."""
    if isinstance(exc, (UnicodeError, MalformedStreamError)):
        return None  # not UTF-8: the provider-fault sentence (xcsh.ai.errors); ours: as it is
    if isinstance(exc, json.JSONDecodeError):
        return MalformedStreamError(f"invalid JSON: {exc}")
    errors = getattr(exc, "errors", None)
    if type(exc).__name__ == "ValidationError" and callable(errors):
        found = errors()
        if found:
            first = found[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "chunk"
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return MalformedStreamError(f"{where}: {first.get('msg', 'invalid')}{more}")
    text = str(exc)
    if text.startswith("Failed to parse response as JSON"):  # the SDK's UnknownApiResponseError
        if "\ufffd" in text:
            return None  # bytes that were not UTF-8, decoded with replacement characters
        raw = text.partition("Raw response: ")[2]
        return MalformedStreamError(f"invalid JSON: {raw[:200]!r}")
    # the SDK's own code failed on the chunk (a chunk or candidate that is a number, an enum
    # given as a number …); its Python error says nothing a reader of the answer can use
    return MalformedStreamError(f"a chunk with a value of the wrong kind ({type(exc).__name__} in the SDK)")
