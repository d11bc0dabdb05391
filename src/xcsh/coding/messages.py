"""Coding-level message kinds and their conversion to LLM messages before each call.

Custom roles (``bashExecution``, ``pythonExecution``, ``custom``, ``compactionSummary``,
``branchSummary``, ``fileMention``, legacy ``hookMessage``) become user messages;
tool-call/result pairing is repaired; consecutive text-only user messages are merged.
"""

from __future__ import annotations

import time
from typing import Any, cast

from xcsh.agent.types import AgentMessage
from xcsh.ai.types import Message

COMPACTION_PREAMBLE = (
    "The conversation history before this point was compacted into the following summary. "
    "Another model started this work; build on it rather than starting over:\n\n"
)
BRANCH_PREAMBLE = "The following is a summary of a branch that this conversation came back from:\n\n"
INTERRUPTED_TOOL_TEXT = "Tool execution was interrupted (session recovery)."


def now_ms() -> int:
    return int(time.time() * 1000)


def user_message(
    text: str, images: list[dict[str, Any]] | None = None, *, attribution: str = "user"
) -> AgentMessage:
    """A user message as prompts, steering and follow-ups create it (content is always a list)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content.extend(images or [])
    return {"role": "user", "content": content, "attribution": attribution, "timestamp": now_ms()}


def developer_message(text: str) -> AgentMessage:
    return {
        "role": "developer",
        "content": [{"type": "text", "text": text}],
        "attribution": "agent",
        "timestamp": now_ms(),
    }


def custom_message(custom_type: str, content: Any, *, display: bool, details: Any = None) -> AgentMessage:
    message: AgentMessage = {
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


def bash_execution_text(message: AgentMessage) -> str:
    """How the model sees a user ``bash`` run (agent-behaviour §10.3)."""
    output = message.get("output") or ""
    text = f"Ran `{message.get('command', '')}`\n"
    text += f"```\n{output.rstrip(chr(10))}\n```" if output else "(no output)"
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif message.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {message['exitCode']}"
    return text + _truncation_notice(message)


def python_execution_text(message: AgentMessage) -> str:
    """How the model sees a user Python run recorded by the reference (agent-behaviour §1.2)."""
    output = message.get("output") or ""
    text = f"Ran Python:\n```python\n{message.get('code', '')}\n```\n"
    text += f"Output:\n```\n{output}\n```" if output else "(no output)"
    if message.get("cancelled"):
        text += "\n\n(execution cancelled)"
    elif message.get("exitCode") not in (None, 0):
        text += f"\n\nExecution failed with code {message['exitCode']}"
    return text + _truncation_notice(message)


def _truncation_notice(message: AgentMessage) -> str:
    truncation = (message.get("meta") or {}).get("truncation")
    if not message.get("truncated") or not isinstance(truncation, dict):
        return ""
    shown = truncation.get("shownRange") or {}
    return (
        f"\n\n[Showing lines {shown.get('start', '?')}-{shown.get('end', '?')} of "
        f"{truncation.get('totalLines', '?')} (50.0KB limit)]"
    )


def _file_mention_content(message: AgentMessage) -> list[dict[str, Any]]:
    parts = ["<system-reminder>"]
    images: list[dict[str, Any]] = []
    for file in message.get("files") or []:
        if file.get("skippedReason") == "tooLarge":
            parts.append(f'<file path="{file.get("path")}">(skipped: file too large)</file>')
            continue
        parts.append(f'<file path="{file.get("path")}">\n{file.get("content", "")}\n</file>')
        if isinstance(file.get("image"), dict):
            images.append(file["image"])
    parts.append("</system-reminder>")
    return [{"type": "text", "text": "\n".join(parts)}, *images]


def _as_user(content: Any, timestamp: int) -> Message:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return cast(Message, {"role": "user", "content": content, "timestamp": timestamp})


def to_llm_message(message: AgentMessage) -> Message | None:
    """One agent message → an LLM message (None when it is not sent)."""
    role = message.get("role")
    ts = int(message.get("timestamp") or 0)
    if role in ("user", "developer", "assistant", "toolResult"):
        if role == "toolResult" and message.get("prunedAt"):
            text = "".join(b.get("text", "") for b in message.get("content", []) if b.get("type") == "text")
            pruned = dict(message)
            pruned["content"] = [{"type": "text", "text": text}]
            return cast(Message, pruned)
        return cast(Message, message)
    if role in ("bashExecution", "pythonExecution"):
        if message.get("excludeFromContext"):
            return None
        render = bash_execution_text if role == "bashExecution" else python_execution_text
        return _as_user(render(message), ts)
    if role in ("custom", "hookMessage"):
        return _as_user(message.get("content", ""), ts)
    if role == "compactionSummary":
        return _as_user(f"{COMPACTION_PREAMBLE}<summary>\n{message.get('summary', '')}\n</summary>", ts)
    if role == "branchSummary":
        return _as_user(f"{BRANCH_PREAMBLE}<summary>\n{message.get('summary', '')}\n</summary>", ts)
    if role == "fileMention":
        return _as_user(_file_mention_content(message), ts)
    return None


def convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """The live context → what the model is sent."""
    converted = [m for m in (to_llm_message(x) for x in messages) if m is not None]
    return _merge_user_text(_repair_pairs(converted))


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
                out.append(
                    cast(
                        Message,
                        {
                            "role": "toolResult",
                            "toolCallId": call_id,
                            "toolName": name,
                            "content": [{"type": "text", "text": INTERRUPTED_TOOL_TEXT}],
                            "isError": True,
                            "timestamp": message["timestamp"],
                        },
                    )
                )
        out.extend(stray)
    return out


def _text_only(message: Message) -> bool:
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
            merged = dict(prev)
            merged["content"] = [{"type": "text", "text": _joined(prev) + "\n\n" + _joined(message)}]
            out[-1] = cast(Message, merged)
            continue
        out.append(message)
    return out


def _joined(message: Message) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(cast(dict[str, Any], b)["text"] for b in content)
