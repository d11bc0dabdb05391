"""Message entries written by other programs (or edited by hand): what the agent reads, or skipped.

Session-format §2 asks readers to be lenient and skip unparseable lines. A line can parse and
still hold a message the agent cannot use: every later request of the session would fail on it
(or the switch to the file would). :func:`usable_entry` decides, per ``message`` and
``custom_message`` entry, and completes assistant metadata that only describes the message
(``api``, ``provider``, ``model``, ``usage``, ``timestamp``) with neutral values, in memory.
"""

from __future__ import annotations

import math
from typing import Any

from xcsh.ai.types import zero_usage

# the fields each content block type is read by (strings), as the providers convert them
_BLOCK_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "thinking": ("thinking",),
    "redactedThinking": ("data",),
    "image": ("data", "mimeType"),
    "toolCall": ("id", "name"),
}


def usable_entry(obj: dict[str, Any]) -> bool:
    """False for a ``message`` or ``custom_message`` entry whose content the agent cannot use.

    Unusable: a ``message`` that is not an object with a string ``role``; user or custom content
    that is neither a string nor a list of typed blocks; a block without the string fields of
    its type (a tool call also needs object ``arguments``); an assistant message without a
    block list or a ``stopReason``; a tool result without ``toolCallId``/``toolName``. An
    assistant message missing ``api``/``provider``/``model`` (read as ``""``: another model's),
    ``usage`` (zero) is completed; a ``timestamp`` that is not a number reads as 0 whatever the
    role. The fields ``custom_message``, ``compaction`` and ``branch_summary`` entries turn into
    messages are completed the same way (:func:`_complete_custom`, :func:`_complete_summary`).
    Other entry types and roles are read field by field with defaults.
    """
    kind = obj.get("type")
    if kind == "custom_message":
        if not _blocks(obj.get("content"), text=True):
            return False
        _complete_custom(obj)
        return True
    if kind in ("compaction", "branch_summary"):
        _complete_summary(obj)
        return True
    if kind != "message":
        return True
    message = obj.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return False
    timestamp = message.get("timestamp")
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)) or not math.isfinite(timestamp):
        message["timestamp"] = 0  # what a missing one reads as; converters take it as a number
    role = message["role"]
    if role == "user":
        return _blocks(message.get("content"), text=True)
    if role == "assistant":
        if not _blocks(message.get("content"), text=False) or not isinstance(message.get("stopReason"), str):
            return False
        _complete_assistant(message)
        return True
    if role == "toolResult":
        return (
            isinstance(message.get("toolCallId"), str)
            and isinstance(message.get("toolName"), str)
            and _blocks(message.get("content"), text=False)
        )
    return True


def _complete_custom(entry: dict[str, Any]) -> None:
    """A ``custom_message`` entry's fields as its ``custom`` message needs them: a string type,
    a boolean ``display`` (the truth of what is there), no ``attribution`` but ``user``/``agent``."""
    if not isinstance(entry.get("customType"), str):
        entry["customType"] = ""
    if not isinstance(entry.get("display"), bool):
        entry["display"] = bool(entry.get("display"))
    if "attribution" in entry and entry["attribution"] not in ("user", "agent"):
        del entry["attribution"]


def _complete_summary(entry: dict[str, Any]) -> None:
    """A ``compaction`` or ``branch_summary`` entry's fields as its summary message needs them: a
    summary that is not text is none (an empty one contributes nothing), a count that is not a
    number is 0, a ``fromId`` that is not an id is ``root``."""
    if not isinstance(entry.get("summary"), str):
        entry["summary"] = ""
    if "shortSummary" in entry and not isinstance(entry["shortSummary"], str):
        del entry["shortSummary"]
    if entry.get("type") == "compaction" and not _number(entry.get("tokensBefore")):
        entry["tokensBefore"] = 0
    if entry.get("type") == "branch_summary" and not isinstance(entry.get("fromId"), str):
        entry["fromId"] = "root"


def _complete_assistant(message: dict[str, Any]) -> None:
    for key in ("api", "provider", "model"):
        if not isinstance(message.get(key), str):
            message[key] = ""
    usage: Any = message.get("usage")
    zero = zero_usage()
    if not (_complete_numbers(usage, zero) and _complete_numbers(usage["cost"], zero["cost"])):
        complete: dict[str, Any] = dict(zero)
        if isinstance(usage, dict):
            complete.update({k: v for k, v in usage.items() if k in zero and k != "cost" and _number(v)})
            cost = usage.get("cost")
            if isinstance(cost, dict):
                complete["cost"] = {**zero["cost"], **{k: v for k, v in cost.items() if _number(v)}}
        message["usage"] = complete


def _complete_numbers(value: object, template: Any) -> bool:
    """``value`` is an object with a number (or, for ``cost``, an object) for each key of ``template``."""
    return isinstance(value, dict) and all(
        isinstance(value.get(k), dict) if isinstance(v, dict) else _number(value.get(k))
        for k, v in template.items()
    )


def _number(value: object) -> bool:
    """A finite JSON number (``true`` is not one, though Python counts it as an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _blocks(content: object, *, text: bool) -> bool:
    """``content`` is a list of well-formed typed blocks (or a string, when ``text``)."""
    if isinstance(content, str):
        return text
    if not isinstance(content, list):
        return False
    for block in content:
        if not isinstance(block, dict):
            return False
        kind = block.get("type")
        if not isinstance(kind, str):
            return False
        if not all(isinstance(block.get(field), str) for field in _BLOCK_FIELDS.get(kind, ())):
            return False
        if kind == "toolCall" and not isinstance(block.get("arguments"), dict):
            return False
    return True
