"""Session events → ACP ``session/update`` payloads (and stored messages → replayed updates).

Text deltas become ``agent_message_chunk``, thinking deltas ``agent_thought_chunk``; a tool
execution becomes a ``tool_call`` (status ``in_progress``) followed by ``tool_call_update``s
(progress content, then ``completed`` or ``failed`` with the result text).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import ToolCallLocation, ToolKind

Update = Any  # one of the SDK's session-update models

KINDS: dict[str, ToolKind] = {
    "read": "read",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
}


def tool_title(name: str, args: dict[str, Any]) -> str:
    """A one-line title: the command for bash, the path for file tools, else the tool name."""
    command = args.get("command")
    if isinstance(command, str):
        return f"{name}: {command.splitlines()[0] if command else ''}"
    path = args.get("path") or args.get("pattern")
    return f"{name} {path}" if isinstance(path, str) else name


def _locations(args: dict[str, Any]) -> list[ToolCallLocation] | None:
    path = args.get("path")
    return [ToolCallLocation(path=path)] if isinstance(path, str) else None


def result_text(result: Any) -> str:
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return ""
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def from_event(event: dict[str, Any]) -> list[Update]:
    """The ACP updates for one session event (none for events ACP has no place for)."""
    kind = event.get("type")
    if kind == "message_update":
        inner = event.get("assistantMessageEvent") or {}
        if inner.get("type") == "text_delta" and inner.get("delta"):
            return [update_agent_message_text(inner["delta"])]
        if inner.get("type") == "thinking_delta" and inner.get("delta"):
            return [update_agent_thought_text(inner["delta"])]
        return []
    if kind == "tool_execution_start":
        args = event.get("args") or {}
        name = str(event.get("toolName"))
        return [
            start_tool_call(
                str(event["toolCallId"]),
                tool_title(name, args),
                kind=KINDS.get(name, "other"),
                status="in_progress",
                locations=_locations(args),
                raw_input=args,
            )
        ]
    if kind == "tool_execution_update":
        text = result_text(event.get("partialResult"))
        content = [tool_content(text_block(text))] if text else None
        return [update_tool_call(str(event["toolCallId"]), content=content)] if content else []
    if kind == "tool_execution_end":
        result = event.get("result")
        text = result_text(result)
        return [
            update_tool_call(
                str(event["toolCallId"]),
                status="failed" if event.get("isError") else "completed",
                content=[tool_content(text_block(text))] if text else None,
                raw_output=result,
            )
        ]
    return []


def _text_of(message: Mapping[str, Any], block_type: str = "text", key: str = "text") -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content if block_type == "text" else ""
    if not isinstance(content, list):
        return ""
    return "".join(
        str(b.get(key, "")) for b in content if isinstance(b, dict) and b.get("type") == block_type
    )


def from_history(messages: Iterable[Mapping[str, Any]]) -> list[Update]:
    """Updates that replay a stored conversation (``session/load``)."""
    out: list[Update] = []
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        role = message.get("role")
        if role == "user":
            text = _text_of(message)
            if text:
                out.append(update_user_message_text(text))
        elif role == "assistant":
            thought = _text_of(message, "thinking", "thinking")
            if thought:
                out.append(update_agent_thought_text(thought))
            text = _text_of(message)
            if text:
                out.append(update_agent_message_text(text))
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    calls[str(block.get("id"))] = block
        elif role == "toolResult":
            call_id = str(message.get("toolCallId"))
            call = calls.get(call_id, {})
            raw = call.get("arguments")
            args: dict[str, Any] = raw if isinstance(raw, dict) else {}
            name = str(message.get("toolName"))
            text = result_text(message)
            out.append(
                start_tool_call(
                    call_id,
                    tool_title(name, args),
                    kind=KINDS.get(name, "other"),
                    status="failed" if message.get("isError") else "completed",
                    content=[tool_content(text_block(text))] if text else None,
                    locations=_locations(args),
                    raw_input=args,
                )
            )
    return out
