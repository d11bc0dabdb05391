"""Token estimates and context-usage maths for compaction (agent-behaviour §7.1–§7.3). Pure.

Provider usage is authoritative where a message carries it; everything else is
estimated as ``ceil(characters / 4)`` over what the model would read: text, thinking,
tool-call name + JSON arguments, tool-result text (+4800 characters per image),
bash command + output, and summaries.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800


def _chars_of_content(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                chars += len(block["text"])
            elif block.get("type") == "image":
                chars += IMAGE_CHARS
    return chars


def _assistant_chars(content: Any) -> int:
    chars = 0
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += len(str(block.get("text", "")))
        elif kind == "thinking":
            chars += len(str(block.get("thinking", "")))
        elif kind == "toolCall":
            arguments = json.dumps(block.get("arguments", {}), ensure_ascii=False, separators=(",", ":"))
            chars += len(str(block.get("name", ""))) + len(arguments)
    return chars


def message_chars(message: Mapping[str, Any]) -> int:
    """Characters of ``message`` that count towards the estimate (0 for unknown roles)."""
    role = message.get("role")
    if role == "assistant":
        return _assistant_chars(message.get("content"))
    if role in ("user", "developer"):
        content = message.get("content")
        if isinstance(content, list):  # images in prompts are not counted, as in the reference
            content = [b for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
        return _chars_of_content(content)
    if role in ("toolResult", "custom", "hookMessage"):
        return _chars_of_content(message.get("content"))
    if role in ("bashExecution", "pythonExecution"):
        command = message.get("command", message.get("code", ""))
        return len(str(command or "")) + len(str(message.get("output") or ""))
    if role in ("compactionSummary", "branchSummary"):
        return len(str(message.get("summary") or ""))
    if role == "fileMention":
        return sum(
            len(str(f.get("content") or "")) for f in message.get("files") or [] if isinstance(f, Mapping)
        )
    return 0


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one message: ``ceil(chars / 4)``."""
    return math.ceil(message_chars(message) / CHARS_PER_TOKEN)


def estimate_messages_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    return sum(estimate_tokens(m) for m in messages)


def context_tokens(usage: Mapping[str, Any]) -> int:
    """Context size a usage reports: ``totalTokens``, or the sum of its four parts."""
    total = usage.get("totalTokens")
    if isinstance(total, int | float) and total > 0:
        return int(total)
    return int(sum(_num(usage.get(k)) for k in ("input", "output", "cacheRead", "cacheWrite")))


def prompt_tokens(usage: Mapping[str, Any]) -> int:
    """Prompt side of a usage (input + cache read + cache write), else its context size."""
    prompt = sum(_num(usage.get(k)) for k in ("input", "cacheRead", "cacheWrite"))
    return int(prompt) if prompt > 0 else context_tokens(usage)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def successful_usage(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The usage of an assistant message that did not fail or abort (None otherwise)."""
    if message.get("role") != "assistant" or message.get("stopReason") in ("error", "aborted"):
        return None
    usage = message.get("usage")
    return usage if isinstance(usage, Mapping) else None


def last_successful_usage(messages: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Usage of the newest successful assistant message (messages in order)."""
    found: Mapping[str, Any] | None = None
    for message in messages:
        usage = successful_usage(message)
        if usage is not None:
            found = usage
    return found


@dataclass(slots=True, kw_only=True, frozen=True)
class ThresholdSettings:
    """The compaction settings that decide when the context is "full" (§7.1)."""

    reserve_tokens: int = 16384
    threshold_percent: float = -1
    threshold_tokens: int = -1


def compaction_threshold(context_window: int, settings: ThresholdSettings) -> int:
    """Context tokens above which the context counts as full.

    ``thresholdTokens`` (clamped to [1, window−1]) wins over ``thresholdPercent``
    (window × clamp(p, 1, 99) / 100); the default is ``window − max(15 % of window,
    reserveTokens)`` — 108 800 for a 128 000 window.
    """
    if settings.threshold_tokens > 0:
        return max(1, min(settings.threshold_tokens, context_window - 1))
    if settings.threshold_percent > 0:
        percent = max(1.0, min(99.0, float(settings.threshold_percent)))
        return math.floor(context_window * percent / 100)
    return context_window - max(math.floor(0.15 * context_window), settings.reserve_tokens)


def exceeds_threshold(tokens: int, context_window: int, settings: ThresholdSettings) -> bool:
    """True when ``tokens`` of context pass the threshold (never for an unknown window)."""
    if context_window <= 0:
        return False
    return tokens > compaction_threshold(context_window, settings)


def overflows_window(message: Mapping[str, Any], context_window: int) -> bool:
    """Usage-based overflow: a reply whose prompt side alone exceeds the window."""
    usage = message.get("usage")
    if context_window <= 0 or not isinstance(usage, Mapping):
        return False
    prompt = sum(_num(usage.get(k)) for k in ("input", "cacheRead", "cacheWrite"))
    return prompt > context_window


def scaled_keep_budget(keep_recent_tokens: int, last_prompt_tokens: int | None, estimated: int) -> int:
    """Shrink the keep budget when the provider counts more tokens than we estimate (§7.3 step 2)."""
    if not last_prompt_tokens or estimated <= 0:
        return keep_recent_tokens
    ratio = last_prompt_tokens / estimated
    if ratio > 1:
        return max(1, math.floor(keep_recent_tokens / ratio))
    return keep_recent_tokens
