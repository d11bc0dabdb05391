"""What the compaction checks need to know about a live context, kept up to date incrementally.

The checks before and after every run (pruning, the threshold, "is this reply older than
the latest compaction") used to walk the whole live context each time. The few messages
they care about — tool results that could be pruned, pruned tool results, compaction
summaries — are collected per message and remembered by message identity
(:class:`~xcsh.ai.prefix_cache.PrefixCache`; every message is its own cut), so a check
costs the length of that short list, not of the history. Messages are never changed in
place: pruning and compaction replace them, and a replaced message is seen afresh.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from xcsh.ai.prefix_cache import PrefixCache
from xcsh.coding.compaction.tokens import CHARS_PER_TOKEN, estimate_tokens
from xcsh.coding.sessions.context import content_text

_NOTICE = re.compile(r"\[Output truncated - (\d+) tokens\]")

# ("open", saving, 0): a tool result that pruning could replace, and what that would save;
# ("pruned", prunedAt, saving): a pruned tool result; ("summary", timestamp, 0): a compaction summary
Fact = tuple[Literal["open", "pruned", "summary"], float, int]


def pruned_notice(tokens: int) -> str:
    """The text that replaces a pruned output of ``tokens`` estimated tokens."""
    return f"[Output truncated - {tokens} tokens]"


def pruning_saving(tokens: int) -> int:
    """Tokens saved by replacing an output of ``tokens`` with its notice (never negative)."""
    return max(0, tokens - math.ceil(len(pruned_notice(tokens)) / CHARS_PER_TOKEN))


def notice_saving(message: Mapping[str, Any]) -> int | None:
    """The saving recorded by a pruned tool result's notice (None when its content is not a notice)."""
    found = _NOTICE.fullmatch(content_text(message.get("content")))
    return None if found is None else pruning_saving(int(found.group(1)))


def _facts(messages: Sequence[Mapping[str, Any]], protected_tools: frozenset[str]) -> list[Fact]:
    facts: list[Fact] = []
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            pruned_at = message.get("prunedAt")
            if pruned_at is None:
                if message.get("toolName") not in protected_tools:
                    facts.append(("open", 0, pruning_saving(estimate_tokens(message))))
            elif isinstance(pruned_at, int | float):
                saving = notice_saving(message)
                if saving is not None:
                    facts.append(("pruned", pruned_at, saving))
        elif role == "compactionSummary":
            facts.append(("summary", int(message.get("timestamp") or 0), 0))
    return facts


def _every_message(_message: Mapping[str, Any]) -> bool:
    return True


_FACTS: PrefixCache[Mapping[str, Any], Fact] = PrefixCache(_facts, _every_message, slots=8)


def context_facts(messages: Sequence[Mapping[str, Any]], protected_tools: frozenset[str]) -> list[Fact]:
    """The facts of ``messages`` (oldest first); ``protected_tools`` are never counted as prunable."""
    return _FACTS(messages, protected_tools, protected_tools)


def prunable_savings(messages: Sequence[Mapping[str, Any]], protected_tools: frozenset[str]) -> int:
    """An upper bound of what pruning ``messages`` could save: every unpruned, unprotected tool result."""
    return sum(saving for kind, _, saving in context_facts(messages, protected_tools) if kind == "open")


def pruned_since(messages: Sequence[Mapping[str, Any]], created: float) -> bool:
    """Whether any tool result of ``messages`` was pruned at or after ``created``."""
    return any(kind == "pruned" and at >= created for kind, at, _ in context_facts(messages, frozenset()))


def latest_summary_time(messages: Sequence[Mapping[str, Any]]) -> int | None:
    """The timestamp of the newest compaction summary of ``messages`` (None without one)."""
    for kind, at, _ in reversed(context_facts(messages, frozenset())):
        if kind == "summary":
            return int(at)
    return None
