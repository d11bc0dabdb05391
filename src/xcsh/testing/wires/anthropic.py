"""Anthropic Messages SSE (``POST /v1/messages`` with ``stream: true``).

The step's ``prompt_tokens`` is the whole prompt, cached or not (as in the OpenAI
wire); Anthropic reports the uncached part as ``input_tokens`` and the cached parts
separately, so ``input_tokens = prompt_tokens - cached_tokens - cache_write_tokens``.
"""

from __future__ import annotations

from typing import Any

from xcsh.testing.script import HttpError, Reply
from xcsh.testing.wires.sse import event, split

_STOP = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _usage(step: Reply, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": max(0, step.prompt_tokens - step.cached_tokens - step.cache_write_tokens),
        "cache_creation_input_tokens": step.cache_write_tokens,
        "cache_read_input_tokens": step.cached_tokens,
        "output_tokens": output_tokens,
    }


def render(step: Reply, request: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    model = request.get("model", "fake-model")
    frames: list[bytes] = [
        event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake_01",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _usage(step, 1),
                },
            },
        ),
        event("ping", {"type": "ping"}),
    ]
    first_content = -1
    index = 0

    def delta(body: dict[str, Any]) -> None:
        nonlocal first_content
        frames.append(
            event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": body})
        )
        if first_content < 0:
            first_content = len(frames) - 1

    def start(block: dict[str, Any]) -> None:
        frames.append(
            event(
                "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
            )
        )

    def stop() -> None:
        nonlocal index
        frames.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if step.thinking:
        start({"type": "thinking", "thinking": "", "signature": ""})
        for part in step.thinking:
            delta({"type": "thinking_delta", "thinking": part})
        delta({"type": "signature_delta", "signature": step.thinking_signature})
        stop()
    if step.text:
        start({"type": "text", "text": ""})
        for part in step.text:
            delta({"type": "text_delta", "text": part})
        stop()
    for call in step.tool_calls:
        start({"type": "tool_use", "id": call.id, "name": call.name, "input": {}})
        for fragment in call.fragments():
            delta({"type": "input_json_delta", "partial_json": fragment})
        stop()
    frames.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": _STOP.get(step.stop_reason, step.stop_reason),
                    "stop_sequence": None,
                },
                "usage": _usage(step, step.completion_tokens),
            },
        )
    )
    frames.append(event("message_stop", {"type": "message_stop"}))
    return split(frames, first_content if first_content >= 0 else 1)


def error_body(step: HttpError) -> dict[str, Any]:
    kind = step.error_type or _ERROR_TYPES.get(step.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": step.message}}
