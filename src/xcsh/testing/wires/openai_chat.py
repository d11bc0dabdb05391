"""OpenAI Chat Completions SSE (``POST /v1/chat/completions`` with ``stream: true``)."""

from __future__ import annotations

from typing import Any

from xcsh.testing.script import HttpError, Reply
from xcsh.testing.wires.sse import data, split

_FINISH = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}


def render(step: Reply, request: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    model = request.get("model", "fake-model")
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return data({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    frames: list[bytes] = [chunk({"role": "assistant", "content": ""})]
    first_content = -1
    for part in step.thinking:
        frames.append(chunk({"reasoning_content": part}))
        first_content = first_content if first_content >= 0 else len(frames) - 1
    for part in step.text:
        frames.append(chunk({"content": part}))
        first_content = first_content if first_content >= 0 else len(frames) - 1
    for index, call in enumerate(step.tool_calls):
        frames.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        first_content = first_content if first_content >= 0 else len(frames) - 1
        for fragment in call.fragments():
            if fragment:
                frames.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}))
    frames.append(chunk({}, _FINISH.get(step.stop_reason, step.stop_reason)))
    usage: dict[str, Any] = {
        "prompt_tokens": step.prompt_tokens,
        "completion_tokens": step.completion_tokens,
        "total_tokens": step.prompt_tokens + step.completion_tokens,
    }
    if step.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": step.cached_tokens}
    frames.append(data({**base, "choices": [], "usage": usage}))
    frames.append(b"data: [DONE]\n\n")
    return split(frames, first_content if first_content >= 0 else 0)


def error_body(step: HttpError) -> dict[str, Any]:
    return {
        "error": {"message": step.message, "type": step.error_type or "invalid_request_error", "code": None}
    }
