"""Prepare a conversation for a (possibly different) provider before sending it.

- assistant messages that failed or were aborted are dropped (their content may be partial);
- thinking produced by another provider/model becomes plain text (signatures are only
  meaningful to the model that made them); empty thinking is dropped, unless the same model
  signed it (an OpenAI reasoning item whose summary is empty still carries its encrypted content);
- tool-call ids are rewritten through ``normalize_id`` consistently for calls and results;
- a tool call without a result gets a synthetic error result, so every provider sees
  matched pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from xcsh.ai.types import AssistantContent, AssistantMessage, Message, Model, ToolResultMessage

INTERRUPTED_TOOL_TEXT = "Tool execution was interrupted (session recovery)."


def transform_messages(
    messages: list[Message],
    model: Model,
    normalize_id: Callable[[str], str] | None = None,
) -> list[Message]:
    """Return a provider-ready copy of ``messages`` for ``model`` (input is not modified)."""
    id_map: dict[str, str] = {}

    def map_id(call_id: str) -> str:
        if normalize_id is None:
            return call_id
        if call_id not in id_map:
            id_map[call_id] = normalize_id(call_id)
        return id_map[call_id]

    out: list[Message] = []
    pending: dict[str, str] = {}  # tool call id → tool name, awaiting a result

    def flush_pending() -> None:
        for call_id, name in pending.items():
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": INTERRUPTED_TOOL_TEXT}],
                    "isError": True,
                    "timestamp": 0,
                }
            )
        pending.clear()

    for message in messages:
        role = message["role"]
        if role == "assistant":
            assistant = cast(AssistantMessage, message)
            flush_pending()
            if assistant["stopReason"] in ("error", "aborted"):
                continue
            same_model = assistant["provider"] == model["provider"] and assistant["model"] == model["id"]
            content: list[AssistantContent] = []
            for block in assistant["content"]:
                if block["type"] == "thinking":
                    if not block["thinking"].strip() and not (same_model and block.get("thinkingSignature")):
                        continue  # kept when signed: OpenAI's encrypted reasoning often has no summary
                    if same_model:
                        content.append(block)
                    else:
                        content.append({"type": "text", "text": block["thinking"]})
                elif block["type"] == "redactedThinking":
                    if same_model:
                        content.append(block)
                elif block["type"] == "toolCall":
                    new_id = map_id(block["id"])
                    call = dict(block)
                    call["id"] = new_id
                    call.pop("partialJson", None)
                    if not same_model:
                        call.pop("thoughtSignature", None)
                    content.append(cast(AssistantContent, call))
                    pending[new_id] = block["name"]
                elif block["type"] == "text":
                    if same_model:
                        content.append(block)
                    else:
                        content.append({"type": "text", "text": block["text"]})
            copy = dict(assistant)
            copy["content"] = content
            out.append(cast(Message, copy))
        elif role == "toolResult":
            result = cast(ToolResultMessage, message)
            new_id = map_id(result["toolCallId"])
            if new_id not in pending:
                continue  # a result without its call cannot be sent to any provider
            pending.pop(new_id)
            copy_result = dict(result)
            copy_result["toolCallId"] = new_id
            out.append(cast(Message, copy_result))
        else:
            flush_pending()
            out.append(message)
    flush_pending()
    return out


def content_text(content: object) -> str:
    """Concatenate the text of a string or a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""
