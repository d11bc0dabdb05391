"""Tool-output pruning before a threshold check (agent-behaviour §7.2, session-format §6).

Walking the tool results of the live context newest→oldest, the newest
``protect_tokens`` estimated tokens are kept (the result that crosses the limit is
kept whole), as are results of protected tools (``read``, ``skill``) and results
pruned earlier (both still count towards the protected amount). When the remaining
candidates would save at least ``minimum_savings`` tokens, each one's content
becomes ``[Output truncated - N tokens]`` (N = its estimated tokens) and ``prunedAt``
is set; everything else about the message is kept.

:func:`plan_pruning` and :func:`savings_since` are pure; :func:`apply_pruning`
replaces the messages in the live context and their ``message`` entries in the
store, which rewrites the session file atomically.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xcsh.agent.types import AgentMessage, ToolResultMessage
from xcsh.coding.compaction.facts import (
    context_facts,
    notice_saving,
    prunable_savings,
    pruned_notice,
    pruned_since,
    pruning_saving,
)
from xcsh.coding.compaction.tokens import estimate_tokens
from xcsh.coding.sessions.entries import SessionEntry
from xcsh.coding.sessions.store import SessionStore

logger = logging.getLogger(__name__)

PROTECT_TOKENS = 40_000
MINIMUM_SAVINGS = 20_000
PROTECTED_TOOLS = frozenset({"read", "skill"})


@dataclass(slots=True, kw_only=True, frozen=True)
class PruneSettings:
    """How much recent tool output is protected and how much pruning must save to happen."""

    protect_tokens: int = PROTECT_TOKENS
    minimum_savings: int = MINIMUM_SAVINGS
    protected_tools: frozenset[str] = PROTECTED_TOOLS


@dataclass(slots=True, frozen=True)
class PrunedOutput:
    """One tool result to prune: its index in the planned messages and its estimated tokens."""

    index: int
    tokens: int

    @property
    def saving(self) -> int:
        return pruning_saving(self.tokens)


@dataclass(slots=True, frozen=True)
class PrunePlan:
    """The tool results to prune, oldest first (empty when pruning would not pay off)."""

    outputs: tuple[PrunedOutput, ...] = ()

    @property
    def tokens_saved(self) -> int:
        return sum(o.saving for o in self.outputs)


def _is_tool_result(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "toolResult"


def plan_pruning(messages: Sequence[Mapping[str, Any]], settings: PruneSettings) -> PrunePlan:
    """Which tool results of ``messages`` (a live context, oldest first) to prune. Pure.

    Without walking the context when even pruning every unpruned, unprotected tool
    result would save less than ``minimum_savings`` (:func:`.facts.prunable_savings`).
    """
    if prunable_savings(messages, settings.protected_tools) < settings.minimum_savings:
        return PrunePlan()
    seen = 0
    candidates: list[PrunedOutput] = []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not _is_tool_result(message):
            continue
        tokens = estimate_tokens(message)
        keep = (
            message.get("prunedAt") is not None
            or seen < settings.protect_tokens
            or message.get("toolName") in settings.protected_tools
        )
        seen += tokens
        if not keep:
            candidates.append(PrunedOutput(index, tokens))
    plan = PrunePlan(tuple(reversed(candidates)))
    if not plan.outputs or plan.tokens_saved < settings.minimum_savings:
        return PrunePlan()
    return plan


def pruned_message(message: ToolResultMessage, tokens: int, pruned_at: int) -> ToolResultMessage:
    """A copy of the tool result ``message`` with its content replaced by the notice."""
    return {**message, "content": [{"type": "text", "text": pruned_notice(tokens)}], "prunedAt": pruned_at}


def savings_since(messages: Sequence[Mapping[str, Any]], message: Mapping[str, Any]) -> int:
    """Tokens pruned from before ``message`` since it was created. Pure.

    ``message`` is an assistant message whose usage measured the context it was
    sent with; tool results before it that were pruned at or after its timestamp
    were counted in full by that usage, so their savings come off its context size.
    """
    created = int(message.get("timestamp") or 0)
    if not pruned_since(messages, created):
        return 0
    if messages and messages[-1] is message:  # after a run: every fact is of a message before it
        facts = context_facts(messages, frozenset())  # kept by the check above
        return sum(saving for kind, at, saving in facts if kind == "pruned" and at >= created)
    saved = 0
    for other in messages:
        if other is message:
            break
        pruned_at = other.get("prunedAt")
        if not _is_tool_result(other) or not isinstance(pruned_at, int | float) or pruned_at < created:
            continue
        saved += notice_saving(other) or 0
    return saved


def _by_call(store: SessionStore) -> dict[tuple[Any, Any], SessionEntry]:
    """The current branch's tool-result entries by tool call id + time."""
    by_call: dict[tuple[Any, Any], SessionEntry] = {}
    for entry in store.branch_path(store.leaf_id):
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and _is_tool_result(message):
            by_call[(message.get("toolCallId"), message.get("timestamp"))] = entry
    return by_call


def apply_pruning(
    plan: PrunePlan, messages: list[AgentMessage], store: SessionStore, *, pruned_at: int | None = None
) -> None:
    """Carry out ``plan`` (made over ``messages``): replace the pruned messages in place and
    their session entries by id, rewriting the session file atomically in one write.

    Entries are found by message identity (the live context shares its dicts with the
    store), else by tool call id and timestamp; a message without an entry is only
    replaced in the live context. Raises
    :class:`~xcsh.coding.sessions.store.SessionWriteError` when the file cannot be written
    (memory is updated either way).
    """
    if not plan.outputs:
        return
    stamp = int(time.time() * 1000) if pruned_at is None else pruned_at
    by_call: dict[tuple[Any, Any], SessionEntry] | None = None  # walked only for a message not found
    replacements: dict[str, SessionEntry] = {}
    for output in plan.outputs:
        old = messages[output.index]
        if old["role"] != "toolResult":  # the plan holds tool results only
            continue
        new = pruned_message(old, output.tokens, stamp)
        messages[output.index] = new
        entry = store.entry_of_message(old)
        if entry is None:
            by_call = _by_call(store) if by_call is None else by_call
            entry = by_call.get((old.get("toolCallId"), old.get("timestamp")))
        if entry is None:
            logger.debug("pruned tool result %s has no session entry", old.get("toolCallId"))
            continue
        replacements[entry["id"]] = {**entry, "message": new}
    if replacements:
        store.rewrite_entries(replacements)


def prune_tool_outputs(
    messages: list[AgentMessage],
    store: SessionStore,
    settings: PruneSettings,
    *,
    pruned_at: int | None = None,
) -> PrunePlan:
    """Plan and apply pruning over the live context ``messages``; returns what was pruned."""
    plan = plan_pruning(messages, settings)
    apply_pruning(plan, messages, store, pruned_at=pruned_at)
    return plan
