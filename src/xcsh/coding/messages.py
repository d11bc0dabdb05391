"""Coding-level message kinds and their conversion to LLM messages before each call.

Custom roles (``bashExecution``, ``pythonExecution``, ``custom``, ``compactionSummary``,
``branchSummary``, ``fileMention``, legacy ``hookMessage``) become user messages;
tool-call/result pairing is repaired; consecutive text-only user messages are merged.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from xcsh.agent.types import (
        AgentMessage,
        AssistantMessage,
        BashExecutionMessage,
        CustomMessage,
        DeveloperMessage,
        FileMentionMessage,
        PythonExecutionMessage,
        UserMessage,
    )
    from xcsh.ai.prefix_cache import PrefixCache
    from xcsh.ai.types import ImageContent, Message, TextContent, ToolResultMessage, UserContent

COMPACTION_PREAMBLE = (
    "The conversation history before this point was compacted into the following summary. "
    "Another model started this work; build on it rather than starting over:\n\n"
)
BRANCH_PREAMBLE = "The following is a summary of a branch that this conversation came back from:\n\n"
INTERRUPTED_TOOL_TEXT = "Tool execution was interrupted (session recovery)."


def now_ms() -> int:
    return int(time.time() * 1000)


def user_message(
    text: str, images: list[ImageContent] | None = None, *, attribution: Literal["user", "agent"] = "user"
) -> UserMessage:
    """A user message as prompts, steering and follow-ups create it (content is always a list)."""
    content: list[UserContent] = [{"type": "text", "text": text}]
    content.extend(images or [])
    return {"role": "user", "content": content, "attribution": attribution, "timestamp": now_ms()}


def developer_message(text: str) -> DeveloperMessage:
    return {
        "role": "developer",
        "content": [{"type": "text", "text": text}],
        "attribution": "agent",
        "timestamp": now_ms(),
    }


def custom_message(
    custom_type: str, content: str | list[UserContent], *, display: bool, details: Any = None
) -> CustomMessage:
    message: CustomMessage = {
        "role": "custom",
        "customType": custom_type,
        "content": content,
        "display": display,
        "attribution": "agent",
        "timestamp": now_ms(),
    }
    if details is not None:
        message["details"] = details
    return message


def request_text(messages: Sequence[AgentMessage], *, last: bool = True) -> str:
    """The text of the last (or, with ``last=False``, the first) user message in ``messages``, or ""."""
    for message in messages[::-1] if last else messages:
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "\n".join(block["text"] for block in content if block["type"] == "text")
    return ""


def bash_execution_text(message: BashExecutionMessage) -> str:
    """How the model sees a user ``bash`` run (agent-behaviour §10.3)."""
    output = message.get("output") or ""
    text = f"Ran `{message.get('command', '')}`\n"
    text += f"```\n{output.rstrip(chr(10))}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code not in (None, 0):
        text += f"\n\nCommand exited with code {exit_code}"
    return text + _truncation_notice(message)


def python_execution_text(message: PythonExecutionMessage) -> str:
    """How the model sees a user Python run recorded by the reference (agent-behaviour §1.2)."""
    output = message.get("output") or ""
    text = f"Ran Python:\n```python\n{message.get('code', '')}\n```\n"
    text += f"Output:\n```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(execution cancelled)"
    elif exit_code not in (None, 0):
        text += f"\n\nExecution failed with code {exit_code}"
    return text + _truncation_notice(message)


def _truncation_notice(message: BashExecutionMessage | PythonExecutionMessage) -> str:
    truncation = (message.get("meta") or {}).get("truncation")
    if not message.get("truncated") or not isinstance(truncation, dict):
        return ""
    shown = truncation.get("shownRange") or {}
    return (
        f"\n\n[Showing lines {shown.get('start', '?')}-{shown.get('end', '?')} of "
        f"{truncation.get('totalLines', '?')} (50.0KB limit)]"
    )


def _file_mention_content(message: FileMentionMessage) -> list[UserContent]:
    parts = ["<system-reminder>"]
    images: list[UserContent] = []
    for file in message.get("files") or []:
        if file.get("skippedReason") == "tooLarge":
            parts.append(f'<file path="{file.get("path")}">(skipped: file too large)</file>')
            continue
        parts.append(f'<file path="{file.get("path")}">\n{file.get("content", "")}\n</file>')
        image = file.get("image")
        if isinstance(image, dict):
            images.append(image)
    parts.append("</system-reminder>")
    text: TextContent = {"type": "text", "text": "\n".join(parts)}
    return [text, *images]


def _as_user(content: str | list[UserContent], timestamp: int) -> UserMessage:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return {"role": "user", "content": content, "timestamp": timestamp}


def to_llm_message(message: AgentMessage) -> Message | None:
    """One agent message → an LLM message (None when it is not sent)."""
    if "role" not in message:  # a malformed message read from a file is not sent
        return None
    ts = int(message.get("timestamp") or 0)
    match message["role"]:
        case "toolResult" if message.get("prunedAt"):
            text = "".join(b.get("text", "") for b in message.get("content", []) if b["type"] == "text")
            return {**message, "content": [{"type": "text", "text": text}]}
        case "user" | "developer" | "assistant" | "toolResult":
            return message
        case "bashExecution":
            return None if message.get("excludeFromContext") else _as_user(bash_execution_text(message), ts)
        case "pythonExecution":
            return None if message.get("excludeFromContext") else _as_user(python_execution_text(message), ts)
        case "custom" | "hookMessage":
            return _as_user(message.get("content", ""), ts)
        case "compactionSummary":
            return _as_user(f"{COMPACTION_PREAMBLE}<summary>\n{message.get('summary', '')}\n</summary>", ts)
        case "branchSummary":
            return _as_user(f"{BRANCH_PREAMBLE}<summary>\n{message.get('summary', '')}\n</summary>", ts)
        case "fileMention":
            return _as_user(_file_mention_content(message), ts)
    return None


def convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """The live context → what the model is sent.

    The converted form of the history up to its newest assistant message is remembered
    (:class:`~xcsh.ai.prefix_cache.PrefixCache`): messages are recognised by identity, and
    a changed message is always a new object (pruning and compaction replace messages).
    """
    return _converter()(messages)


def _convert_uncached(messages: Sequence[AgentMessage], _params: object = None) -> list[Message]:
    converted = [m for m in (to_llm_message(x) for x in messages) if m is not None]
    return _merge_user_text(_repair_pairs(converted))


def _starts_turn(message: AgentMessage) -> bool:
    # before an assistant message no tool-call pairing, user-text merging or other state carries over
    return message.get("role") == "assistant"


@functools.cache
def _converter() -> PrefixCache[AgentMessage, Message]:
    """The one remembering converter, made with the first request (not at start-up)."""
    from xcsh.ai.prefix_cache import PrefixCache

    return PrefixCache(_convert_uncached, _starts_turn)


def _repair_pairs(messages: list[Message]) -> list[Message]:
    """Keep each tool call's results right after its assistant message; fill missing ones."""
    out: list[Message] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        out.append(message)
        i += 1
        if message["role"] != "assistant":
            continue
        calls = [b for b in message["content"] if b["type"] == "toolCall"]
        if not calls or message["stopReason"] in ("error", "aborted"):
            continue
        wanted = {c["id"]: c["name"] for c in calls}
        results: dict[str, Message] = {}
        stray: list[Message] = []
        while i < len(messages) and wanted.keys() - results.keys():
            nxt = messages[i]
            if nxt["role"] == "assistant":
                break
            if nxt["role"] == "toolResult" and nxt["toolCallId"] in wanted.keys() - results.keys():
                results[nxt["toolCallId"]] = nxt
            else:
                stray.append(nxt)
            i += 1
        # results keep the order they were recorded in (completion order, agent-behaviour §3.3)
        out.extend(results.values())
        for call_id, name in wanted.items():
            if call_id not in results:
                filler: ToolResultMessage = {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": INTERRUPTED_TOOL_TEXT}],
                    "isError": True,
                    "timestamp": message["timestamp"],
                }
                out.append(filler)
        out.extend(stray)
    return out


def _text_only(message: UserMessage) -> bool:
    content = message["content"]
    return isinstance(content, str) or all(b.get("type") == "text" for b in content)


def _merge_user_text(messages: list[Message]) -> list[Message]:
    out: list[Message] = []
    for message in messages:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev["role"] == "user"
            and message["role"] == "user"
            and _text_only(prev)
            and _text_only(message)
        ):
            out[-1] = {
                **prev,
                "content": [{"type": "text", "text": _joined(prev) + "\n\n" + _joined(message)}],
            }
            continue
        out.append(message)
    return out


def _joined(message: UserMessage) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b["type"] == "text")


def last_assistant(messages: Sequence[AgentMessage]) -> AssistantMessage | None:
    """The newest assistant message of ``messages`` (None when there is none)."""
    for message in messages[::-1]:
        if message["role"] == "assistant":
            return message
    return None
