"""OpenAI Responses streaming (over :mod:`xcsh.ai.transport`, no vendor SDK).

Request side: the system prompt travels as ``instructions``; the conversation becomes
Responses input items (user/developer messages, assistant ``message`` items,
``function_call`` / ``function_call_output`` items and, for the same model, the
reasoning items we kept). Response side: each output item (reasoning, message,
function call) opens one builder block and its ``output_item.done`` closes it.

Tool-call ids are ``<call_id>|<item_id>``: the call id pairs calls with results, the
item id lets a replayed reasoning item find the items that followed it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import chain
from typing import Any, cast

from xcsh.ai.builder import MessageBuilder
from xcsh.ai.clients import encode_body
from xcsh.ai.options import StreamOptions
from xcsh.ai.prefix_cache import PrefixCache
from xcsh.ai.sampling import resolve_sampling
from xcsh.ai.tool_defs import ToolDefinitions
from xcsh.ai.transform import transform_messages
from xcsh.ai.transport import open_stream
from xcsh.ai.types import AssistantMessage, Context, Message, Model, Tool, ToolResultMessage, UserContent
from xcsh.ai.wire_shape import count, label, obj, text

DEFAULT_MAX_TOKENS_CAP = 32000
IMAGE_PLACEHOLDER = "(see attached image)"
_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")
_ID_LIMIT = 64


# ---- request --------------------------------------------------------------------------
def _clean_id(raw: str) -> str:
    return _UNSAFE_ID.sub("_", raw)[:_ID_LIMIT].rstrip("_")


def normalize_tool_call_id(call_id: str) -> str:
    """Make ``call_id[|item_id]`` acceptable to the Responses API (item ids start with ``fc``)."""
    if "|" not in call_id:
        return _clean_id(call_id) or "call"
    call, item = call_id.split("|", 1)
    item = _UNSAFE_ID.sub("_", item)
    if not item.startswith("fc"):
        item = f"fc_{item}"
    return f"{_clean_id(call) or 'call'}|{_clean_id(item)}"


def _split_id(tool_call_id: str) -> tuple[str, str | None]:
    call, _, item = tool_call_id.partition("|")
    return call, item or None


def _input_content(content: str | list[UserContent], model: Model) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}] if content.strip() else []
    parts: list[dict[str, Any]] = []
    for block in content:
        if block["type"] == "text":
            if block["text"].strip():
                parts.append({"type": "input_text", "text": block["text"]})
        elif block["type"] == "image" and "image" in model["input"]:
            parts.append(_image(cast(dict[str, Any], block)))
    return parts


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{block['mimeType']};base64,{block['data']}",
    }


def _reasoning_item(signature: str) -> dict[str, Any] | None:
    """The reasoning item stored in a thinking signature, if it is one of ours."""
    try:
        item = json.loads(signature)
    except json.JSONDecodeError:
        return None
    return item if isinstance(item, dict) and item.get("type") == "reasoning" else None


def _assistant_items(message: AssistantMessage, model: Model, index: int) -> list[dict[str, Any]]:
    same_model = message["provider"] == model["provider"] and message["model"] == model["id"]
    reasoning = [
        _reasoning_item(block.get("thinkingSignature", ""))
        if block["type"] == "thinking" and same_model
        else None
        for block in message["content"]
    ]
    # item ids are only accepted next to the reasoning items they followed; alone they are
    # rejected ("provided without its required reasoning item"), so keep them only then
    keep_ids = any(item is not None for item in reasoning)
    items: list[dict[str, Any]] = []
    for block, reasoning_item in zip(message["content"], reasoning, strict=True):
        if reasoning_item is not None:
            items.append(reasoning_item)
        elif block["type"] == "text" and block["text"]:
            signature = block.get("textSignature", "")
            keep = keep_ids and signature.startswith("msg") and len(signature) <= _ID_LIMIT
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                    "status": "completed",
                    "id": signature if keep else f"msg_{index}_{len(items)}",
                }
            )
        elif block["type"] == "toolCall":
            call_id, item_id = _split_id(block["id"])
            call: dict[str, Any] = {
                "type": "function_call",
                "call_id": call_id,
                "name": block["name"],
                "arguments": json.dumps(block["arguments"], ensure_ascii=False),
            }
            if keep_ids and item_id:
                call["id"] = item_id
            items.append(call)
    return items


def _tool_result_items(result: ToolResultMessage, model: Model) -> list[dict[str, Any]]:
    text = "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
    images = [cast(dict[str, Any], b) for b in result["content"] if b["type"] == "image"]
    call_id, _ = _split_id(result["toolCallId"])
    items: list[dict[str, Any]] = [
        {
            "type": "function_call_output",
            "call_id": call_id,
            "output": text or (IMAGE_PLACEHOLDER if images else ""),
        }
    ]
    if images and "image" in model["input"]:
        # function_call_output carries text only; images follow as a user message
        parts = [{"type": "input_text", "text": "Attached image(s) from tool result:"}]
        items.append({"role": "user", "content": parts + [_image(b) for b in images]})
    return items


def convert_input(model: Model, context: Context) -> list[dict[str, Any]]:
    """Conversation → Responses ``input`` items (the system prompt goes to ``instructions``).

    The converted form is remembered up to the newest assistant message
    (:class:`~xcsh.ai.prefix_cache.PrefixCache`); its items are shared between calls and
    must not be changed in place.
    """
    key = (model["provider"], model["id"], "image" in model["input"])
    return list(chain.from_iterable(_HISTORY(context["messages"], key, model)))


def _convert_history(
    messages: Sequence[Message], model: Model, before: int = 0
) -> list[list[dict[str, Any]]]:
    """The items of each transformed message, in order (``before``: messages converted earlier)."""
    out: list[list[dict[str, Any]]] = []
    for index, message in enumerate(
        transform_messages(list(messages), model, normalize_tool_call_id), before
    ):
        role = message["role"]
        if role in ("user", "developer"):
            content = _input_content(cast(Any, message)["content"], model)
            out.append([{"role": role, "content": content}] if content else [])
        elif role == "assistant":
            out.append(_assistant_items(cast(AssistantMessage, message), model, index))
        elif role == "toolResult":
            out.append(_tool_result_items(cast(ToolResultMessage, message), model))
        else:
            out.append([])
    return out


def _starts_turn(message: Message) -> bool:
    # before an assistant message no tool call is pending (transform_messages flushes them there)
    return message["role"] == "assistant"


# one output per transformed message (its items), so an assistant item's fallback id
# (msg_<index>_<n>) numbers it across the whole history as a fresh conversion does
_HISTORY: PrefixCache[Message, list[dict[str, Any]]] = PrefixCache(
    _convert_history, _starts_turn, offset=True, flat=True
)


def _tool_choice(choice: str) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    if choice == "any":
        return "required"
    return {"type": "function", "name": choice}


def _tool(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["parameters"],
        "strict": False,
    }


_TOOLS: ToolDefinitions[dict[str, Any]] = ToolDefinitions(_tool)


def build_request(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The JSON body of the Responses request (minus ``stream``)."""
    body: dict[str, Any] = {
        "model": model["id"],
        "input": convert_input(model, context),
        "max_output_tokens": options.max_tokens or min(model["maxTokens"], DEFAULT_MAX_TOKENS_CAP),
        "store": False,
    }
    if context.get("systemPrompt"):
        body["instructions"] = context["systemPrompt"]
    sampling = resolve_sampling(model, options)
    if sampling.temperature is not None:
        body["temperature"] = sampling.temperature
    if sampling.top_p is not None:
        body["top_p"] = sampling.top_p
    if options.session_id:
        body["prompt_cache_key"] = options.session_id
    tools = context.get("tools") or []
    if tools:
        body["tools"] = _TOOLS(tools)
        if options.tool_choice:
            body["tool_choice"] = _tool_choice(options.tool_choice)
    if model["reasoning"]:
        # with store=false the encrypted reasoning is the only way to replay it next turn
        body["include"] = ["reasoning.encrypted_content"]
        level = options.reasoning
        if level and level != "off":
            body["reasoning"] = {"effort": level, "summary": "auto"}
    return body


def request_payload(model: Model, context: Context, options: StreamOptions) -> bytes:
    """The encoded body as sent (with ``stream``), the history's remembered items from their stored
    fragments (the same bytes as encoding it whole; docs/performance.md, "Fourth session: flat
    requests")."""
    body = build_request(model, context, options)
    body["stream"] = True
    spliced: dict[str, Any] = {"input": _HISTORY.encoded(body["input"])}
    if "tools" in body:
        spliced["tools"] = _TOOLS.encoded(body["tools"])
    return encode_body(body, spliced)


# ---- response -------------------------------------------------------------------------
def _without_none(value: Any) -> Any:
    """``value`` with every ``None`` member of its objects left out (as the SDK dumped its models)."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


class _Reducer:
    """Translates Responses stream events (decoded JSON objects) into builder calls."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.done = False
        # how the answer ends, applied once the rest of the body is read (see run)
        self.outcome: tuple[str, str | None] = ("finish", None)
        self._item: str | None = None  # type of the output item whose block is open
        self._args_streamed = False

    def feed(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        builder = self.builder
        if kind in ("response.output_text.delta", "response.refusal.delta") and self._item == "message":
            delta = event.get("delta")
            builder.text(delta if type(delta) is str else text(delta, f"{kind}: delta"))
        elif kind == "response.function_call_arguments.delta" and self._item == "function_call":
            self._args_streamed = True
            delta = event.get("delta")
            builder.tool_arguments(delta if type(delta) is str else text(delta, f"{kind}: delta"))
        elif kind == "response.reasoning_summary_text.delta" and self._item == "reasoning":
            builder.thinking(text(event.get("delta"), f"{kind}: delta"))
        elif kind == "response.created":
            response = obj(event.get("response"), f"{kind}: response")
            builder.set_response_id(text(response.get("id"), f"{kind}: response.id"))
        elif kind == "response.output_item.added":
            self._item_added(obj(event.get("item"), f"{kind}: item"))
        elif kind == "response.reasoning_summary_part.added" and self._item == "reasoning":
            block = builder.message["content"][-1]
            if block["type"] == "thinking" and block["thinking"]:
                builder.thinking("\n\n")  # keep summary parts apart
        elif kind == "response.function_call_arguments.done" and self._item == "function_call":
            if not self._args_streamed:
                self._args_streamed = True
                builder.tool_arguments(text(event.get("arguments"), f"{kind}: arguments"))
        elif kind == "response.output_item.done":
            self._item_done(obj(event.get("item"), f"{kind}: item"))
        elif kind in ("response.completed", "response.incomplete"):
            self._completed(obj(event.get("response"), f"{kind}: response"))
        elif kind == "response.failed":
            self._failed(obj(event.get("response"), f"{kind}: response"))
        elif kind == "error":
            code = event.get("code")
            message = event.get("message") or "Unknown error"
            self._fail(f"{code}: {message}" if code else message)

    def _item_added(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        builder = self.builder
        if kind == "reasoning":
            builder.thinking("", new_block=True)
        elif kind == "message":
            builder.text("", new_block=True)
        elif kind == "function_call":
            where = "response.output_item.added: item"
            call_id = f"{text(item.get('call_id'), f'{where}.call_id')}|{text(item.get('id'), f'{where}.id')}"
            builder.begin_tool_call(call_id, text(item.get("name"), f"{where}.name"))
            arguments = text(item.get("arguments"), f"{where}.arguments")
            self._args_streamed = bool(arguments)
            if arguments:
                builder.tool_arguments(arguments)
        else:
            self._item = None
            builder.end_block()  # built-in tools (web search …) are not part of our message model
            return
        self._item = kind

    def _item_done(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind != self._item:
            return
        builder = self.builder
        block = builder.message["content"][-1]
        where = "response.output_item.done: item"
        if block["type"] == "thinking":
            # the whole item (id, summary, encrypted content) is what a later turn replays
            block["thinkingSignature"] = json.dumps(_without_none(item), ensure_ascii=False)
        elif block["type"] == "text":
            builder.set_signature(text(item.get("id"), f"{where}.id"))
        elif block["type"] == "toolCall" and not self._args_streamed:
            arguments = text(item.get("arguments"), f"{where}.arguments")
            if arguments:
                builder.tool_arguments(arguments)
        builder.end_block()
        self._item = None

    def _usage(self, value: Any) -> None:
        if value is None:
            return
        where = "response.usage"
        usage = obj(value, where)
        details = obj(usage.get("input_tokens_details"), f"{where}.input_tokens_details")
        cached = count(details.get("cached_tokens"), f"{where}.input_tokens_details.cached_tokens") or 0
        input_tokens = count(usage.get("input_tokens"), f"{where}.input_tokens") or 0
        output_tokens = count(usage.get("output_tokens"), f"{where}.output_tokens") or 0
        self.builder.set_usage(
            input_tokens=max(0, input_tokens - cached),
            output_tokens=output_tokens,
            cache_read=cached,
            cache_write=0,
            total=count(usage.get("total_tokens"), f"{where}.total_tokens") or None,
        )

    def _completed(self, response: dict[str, Any]) -> None:
        self.done = True
        self.builder.set_response_id(text(response.get("id"), "response.id"))
        self._usage(response.get("usage"))
        status = label(response.get("status"), "response.status") or "completed"
        if status == "incomplete":
            details = obj(response.get("incomplete_details"), "response.incomplete_details")
            reason = label(details.get("reason"), "response.incomplete_details.reason") or "max_output_tokens"
            if reason == "max_output_tokens":
                self.outcome = ("finish", "length")
            else:
                self.outcome = ("fail", f"Provider finish_reason: {reason}")
        elif status in ("failed", "cancelled"):
            self._failed(response)
        else:
            self.outcome = ("finish", "stop")

    def _failed(self, response: dict[str, Any]) -> None:
        error = response.get("error")
        details = response.get("incomplete_details")
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message") or "no message"
            text = f"{code}: {message}" if code else message
        elif isinstance(details, dict) and details.get("reason"):
            text = f"incomplete: {details['reason']}"
        else:
            text = "Unknown error (no error details in response)"
        self._fail(text)

    def _fail(self, text: str) -> None:
        self.done = True
        self.outcome = ("fail", text)

    def end(self) -> None:
        """End the message as the terminal event said."""
        kind, detail = self.outcome
        if kind == "fail":
            self.builder.fail(detail or "")
        else:
            self.builder.finish("length" if detail == "length" else "stop")


async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    """Stream one Responses API response into ``builder``."""
    payload = request_payload(model, context, options)
    response = await open_stream("openai", model, options, "/responses", payload)
    reducer = _Reducer(builder)
    builder.start()
    # `async with` closes the HTTP stream on every exit, including task cancellation (abort)
    response.handed_over = builder.taken  # the rest of the body is read once the agent has the answer
    async with response as events:
        async for event in events:
            await builder.pace()
            reducer.feed(event)
            if reducer.done:
                # the message ends first; leaving the block then reads the rest of the body (the
                # connection goes back to the pool; the next request on it waits for that)
                events.complete()
                reducer.end()
                return
    raise ConnectionError("Connection error: stream ended before response.completed")
