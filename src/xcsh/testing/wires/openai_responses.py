"""OpenAI Responses SSE (``POST /v1/responses`` with ``stream: true``).

Every event is ``event: <type>`` plus a JSON ``data`` line carrying ``type`` and a
running ``sequence_number``, as the real API sends them. Thinking becomes one
reasoning item whose summary streams as ``response.reasoning_summary_text.delta``;
its ``encrypted_content`` is the step's ``thinking_signature``. Stop reasons:
``stop``/``toolUse`` → ``response.completed``; ``length`` → ``response.incomplete``
(``max_output_tokens``); ``failed`` → ``response.failed``; any other string →
``response.incomplete`` with that string as the reason.
"""

from __future__ import annotations

from typing import Any

from xcsh.testing.script import HttpError, Reply
from xcsh.testing.wires.sse import event, split

RESPONSE_ID = "resp_fake_01"
REASONING_ID = "rs_fake_01"
MESSAGE_ID = "msg_fake_01"
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}


def _fragments(raw: str) -> list[str]:
    if len(raw) < 2:
        return [raw] if raw else []
    half = len(raw) // 2
    return [raw[:half], raw[half:]]


def _usage(step: Reply) -> dict[str, Any]:
    return {
        "input_tokens": step.prompt_tokens,
        "input_tokens_details": {"cached_tokens": step.cached_tokens},
        "output_tokens": step.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": step.prompt_tokens + step.completion_tokens,
    }


def _response(model: str, status: str, output: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": RESPONSE_ID,
        "object": "response",
        "created_at": 1700000000,
        "status": status,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "usage": None,
    }
    body.update(extra)
    return body


class _Frames:
    """Collects events, numbering them and remembering the first content delta."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.first_content = -1

    def add(self, kind: str, body: dict[str, Any], *, content: bool = False) -> None:
        payload = {"type": kind, "sequence_number": len(self.frames), **body}
        self.frames.append(event(kind, payload))
        if content and self.first_content < 0:
            self.first_content = len(self.frames) - 1


def _reasoning(out: _Frames, step: Reply, index: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": REASONING_ID,
        "type": "reasoning",
        "summary": [],
        "encrypted_content": step.thinking_signature,
    }
    out.add("response.output_item.added", {"output_index": index, "item": item})
    ref = {"item_id": REASONING_ID, "output_index": index, "summary_index": 0}
    out.add("response.reasoning_summary_part.added", {**ref, "part": {"type": "summary_text", "text": ""}})
    for part in step.thinking:
        out.add("response.reasoning_summary_text.delta", {**ref, "delta": part}, content=True)
    text = "".join(step.thinking)
    out.add("response.reasoning_summary_text.done", {**ref, "text": text})
    out.add("response.reasoning_summary_part.done", {**ref, "part": {"type": "summary_text", "text": text}})
    done = {**item, "summary": [{"type": "summary_text", "text": text}]}
    out.add("response.output_item.done", {"output_index": index, "item": done})
    return done


def _message(out: _Frames, step: Reply, index: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": MESSAGE_ID,
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    out.add("response.output_item.added", {"output_index": index, "item": item})
    ref = {"item_id": MESSAGE_ID, "output_index": index, "content_index": 0}
    out.add(
        "response.content_part.added", {**ref, "part": {"type": "output_text", "text": "", "annotations": []}}
    )
    for part in step.text:
        out.add("response.output_text.delta", {**ref, "delta": part, "logprobs": []}, content=True)
    text = "".join(step.text)
    out.add("response.output_text.done", {**ref, "text": text, "logprobs": []})
    final_part = {"type": "output_text", "text": text, "annotations": []}
    out.add("response.content_part.done", {**ref, "part": final_part})
    done = {**item, "status": "completed", "content": [final_part]}
    out.add("response.output_item.done", {"output_index": index, "item": done})
    return done


def _function_call(out: _Frames, call_id: str, name: str, arguments: str, index: int) -> dict[str, Any]:
    item_id = f"fc_{call_id}"
    item: dict[str, Any] = {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": call_id,
        "name": name,
    }
    out.add("response.output_item.added", {"output_index": index, "item": item}, content=True)
    for fragment in _fragments(arguments):
        out.add(
            "response.function_call_arguments.delta",
            {"item_id": item_id, "output_index": index, "delta": fragment},
        )
    out.add(
        "response.function_call_arguments.done",
        {"item_id": item_id, "output_index": index, "arguments": arguments},
    )
    done = {**item, "status": "completed", "arguments": arguments}
    out.add("response.output_item.done", {"output_index": index, "item": done})
    return done


def render(step: Reply, request: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    model = str(request.get("model", "fake-model"))
    out = _Frames()
    out.add("response.created", {"response": _response(model, "in_progress", [])})
    out.add("response.in_progress", {"response": _response(model, "in_progress", [])})
    items: list[dict[str, Any]] = []
    if step.thinking:
        items.append(_reasoning(out, step, len(items)))
    if step.text:
        items.append(_message(out, step, len(items)))
    for call in step.tool_calls:
        items.append(_function_call(out, call.id, call.name, call.arguments, len(items)))
    reason = step.stop_reason
    if reason in ("stop", "toolUse"):
        final = _response(model, "completed", items, usage=_usage(step))
        out.add("response.completed", {"response": final})
    elif reason == "failed":
        error = {"code": "server_error", "message": "The model failed to generate a response."}
        out.add("response.failed", {"response": _response(model, "failed", items, error=error)})
    else:
        details = {"reason": "max_output_tokens" if reason == "length" else reason}
        final = _response(model, "incomplete", items, usage=_usage(step), incomplete_details=details)
        out.add("response.incomplete", {"response": final})
    return split(out.frames, out.first_content if out.first_content >= 0 else 1)


def error_body(step: HttpError) -> dict[str, Any]:
    kind = step.error_type or _ERROR_TYPES.get(step.status, "invalid_request_error")
    return {"error": {"message": step.message, "type": kind, "param": None, "code": None}}
