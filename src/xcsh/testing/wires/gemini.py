"""Gemini ``models/<m>:streamGenerateContent?alt=sse`` (the Generative Language API).

Each frame is ``data: <GenerateContentResponse JSON>`` followed by a blank line, with
CRLF line ends as Google's servers send them. Thinking streams as ``thought: true``
text parts; each tool call is one whole ``functionCall`` part (Gemini does not stream
arguments and gives no call id); the first function call carries the step's
``thinking_signature`` (base64) as its ``thoughtSignature``, as Gemini 3 does. The last
frame carries ``finishReason`` and ``usageMetadata``. Stop reasons: ``stop`` and
``toolUse`` → ``STOP``; ``length`` → ``MAX_TOKENS``; any other string is sent raw.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from xcsh.testing.script import HttpError, Reply
from xcsh.testing.wires.sse import split

RESPONSE_ID = "fake-gemini-response"
_FINISH = {"stop": "STOP", "toolUse": "STOP", "length": "MAX_TOKENS"}
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _frame(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\r\n\r\n"


def signature_b64(signature: str) -> str:
    """How a script's ``thinking_signature`` travels on the wire (Gemini signatures are bytes)."""
    return base64.b64encode(signature.encode()).decode()


def _usage(step: Reply, *, final: bool) -> dict[str, Any]:
    usage: dict[str, Any] = {"promptTokenCount": step.prompt_tokens}
    if final:
        usage["candidatesTokenCount"] = step.completion_tokens
        usage["totalTokenCount"] = step.prompt_tokens + step.completion_tokens
    else:
        usage["totalTokenCount"] = step.prompt_tokens
    if step.cached_tokens:
        usage["cachedContentTokenCount"] = step.cached_tokens
    return usage


def render(step: Reply, request: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    del request  # Gemini's model name is in the URL, not the body
    parts: list[dict[str, Any]] = []
    for piece in step.thinking:
        parts.append({"text": piece, "thought": True})
    for piece in step.text:
        parts.append({"text": piece})
    for index, call in enumerate(step.tool_calls):
        part: dict[str, Any] = {
            "functionCall": {"name": call.name, "args": json.loads(call.arguments or "{}")}
        }
        if index == 0:
            part["thoughtSignature"] = signature_b64(step.thinking_signature)
        parts.append(part)
    if not parts:
        parts.append({"text": ""})
    frames: list[bytes] = []
    for position, part in enumerate(parts):
        last = position == len(parts) - 1
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
        if last:
            candidate["finishReason"] = _FINISH.get(step.stop_reason, step.stop_reason)
        frames.append(
            _frame(
                {
                    "candidates": [candidate],
                    "usageMetadata": _usage(step, final=last),
                    "modelVersion": "fake-gemini",
                    "responseId": RESPONSE_ID,
                }
            )
        )
    return split(frames, 0)


def error_body(step: HttpError) -> dict[str, Any]:
    status = step.error_type or _STATUS.get(step.status, "UNKNOWN")
    return {"error": {"code": step.status, "message": step.message, "status": status}}
