"""What a compaction summarises and what it keeps (agent-behaviour §7.3). Pure.

Input is the current branch as session entries (root → leaf). The cut point keeps
roughly ``keepRecentTokens`` of the newest messages verbatim; it never separates a
tool result from its call. When the cut lands inside a turn, the turn's beginning is
summarised separately ("turn prefix").

The considered range starts at the previous compaction's first kept entry (not just
after the compaction entry), so messages that an earlier compaction kept are folded
into the next summary instead of silently falling out of the context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xcsh.agent.types import AgentMessage
from xcsh.coding.compaction.errors import AlreadyCompactedError, NothingToCompactError
from xcsh.coding.compaction.errors import CompactionError as CompactionError  # its historical home
from xcsh.coding.compaction.tokens import (
    context_tokens,
    estimate_tokens,
    prompt_tokens,
    scaled_keep_budget,
    successful_usage,
)
from xcsh.coding.sessions.context import entry_message
from xcsh.coding.sessions.entries import SessionEntry

# Message roles at which the kept region may start; never a toolResult.
_CUT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "hookMessage", "custom", "branchSummary", "compactionSummary"}
)
_TURN_START_ROLES = frozenset({"user", "bashExecution"})


@dataclass(slots=True, frozen=True)
class CutPoint:
    """Where the kept region starts; ``turn_start_index`` is -1 unless a turn is split."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


@dataclass(slots=True)
class FileOperations:
    """Paths touched by ``read``/``write``/``edit`` tool calls in the summarised messages."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def file_lists(self) -> tuple[list[str], list[str]]:
        """(read but not modified, modified), each sorted."""
        modified = self.written | self.edited
        return sorted(self.read - modified), sorted(modified)


@dataclass(slots=True, kw_only=True)
class CompactionPreparation:
    """Everything the summariser needs, computed from the branch."""

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    recent_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    keep_recent_tokens: int
    previous_summary: str | None = None
    file_ops: FileOperations = field(default_factory=FileOperations)


def _role(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message") if entry.get("type") == "message" else None
    role = message.get("role") if isinstance(message, Mapping) else None
    return role if isinstance(role, str) else None


def is_cut_point(entry: Mapping[str, Any]) -> bool:
    """May the kept region start at this entry?"""
    if entry.get("type") in ("custom_message", "branch_summary"):
        return True
    return _role(entry) in _CUT_ROLES


def find_turn_start(entries: Sequence[Mapping[str, Any]], index: int, start: int) -> int:
    """Index of the entry that began the turn containing ``index`` (-1 if none at or after ``start``)."""
    for i in range(index, start - 1, -1):
        entry = entries[i]
        if entry.get("type") in ("custom_message", "branch_summary") or _role(entry) in _TURN_START_ROLES:
            return i
    return -1


def find_cut_point(
    entries: Sequence[Mapping[str, Any]], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """The first entry to keep so that about ``keep_recent_tokens`` of recent messages stay.

    Walks ``entries[start:end]`` newest → oldest summing message estimates; where the
    sum reaches the budget, the kept region starts at the nearest valid cut point at
    or after that entry (the first valid one when the budget is never reached), then
    moves back over directly preceding non-message entries. The turn counts as split
    when the first kept message does not itself begin a turn.
    """
    cut_points = [i for i in range(start, end) if is_cut_point(entries[i])]
    if not cut_points:
        return CutPoint(start, -1, False)
    cut = cut_points[0]
    total = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if entry.get("type") != "message":
            continue
        message = entry.get("message")
        total += estimate_tokens(message) if isinstance(message, Mapping) else 0
        if total >= keep_recent_tokens:
            cut = next((c for c in cut_points if c >= i), cut)
            break
    while cut > start:
        previous = entries[cut - 1]
        if previous.get("type") in ("message", "compaction"):
            break
        cut -= 1
    # The turn is split unless the kept region's first message begins a turn (the cut may
    # sit on a model or thinking change that precedes it).
    first_message = next((i for i in range(cut, end) if entry_message(entries[i]) is not None), cut)
    if _role(entries[first_message]) == "user":
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start(entries, first_message, start)
    split = turn_start != -1 and turn_start < first_message
    return CutPoint(cut, turn_start if split else -1, split)


def extract_file_ops(message: Mapping[str, Any], ops: FileOperations) -> None:
    """Add the paths of the message's ``read``/``write``/``edit`` tool calls to ``ops``."""
    if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
        return
    for block in message["content"]:
        if not isinstance(block, Mapping) or block.get("type") != "toolCall":
            continue
        args = block.get("arguments")
        if not isinstance(args, Mapping):
            continue
        paths = [args.get("path")]
        edits = args.get("edits")
        if isinstance(edits, list):
            paths.extend(e.get("path") for e in edits if isinstance(e, Mapping))
        target = {"read": ops.read, "write": ops.written, "edit": ops.edited}.get(str(block.get("name")))
        if target is not None:
            target.update(p for p in paths if isinstance(p, str) and p)


def _previous_file_ops(compaction: Mapping[str, Any], ops: FileOperations) -> None:
    details = compaction.get("details")
    if compaction.get("fromExtension") or not isinstance(details, Mapping):
        return
    for key, target in (("readFiles", ops.read), ("modifiedFiles", ops.edited)):
        values = details.get(key)
        if isinstance(values, list):
            target.update(v for v in values if isinstance(v, str))


def _messages(entries: Sequence[Mapping[str, Any]], start: int, end: int) -> list[AgentMessage]:
    return [m for m in (entry_message(entries[i]) for i in range(start, end)) if m is not None]


def prepare_compaction(path: Sequence[SessionEntry], *, keep_recent_tokens: int) -> CompactionPreparation:
    """Split the branch ``path`` (root → leaf) into summarised and kept parts.

    Raises :class:`AlreadyCompactedError` when the branch ends with a compaction and
    :class:`NothingToCompactError` when nothing precedes the cut point.
    """
    if not path:
        raise NothingToCompactError()
    if path[-1].get("type") == "compaction":
        raise AlreadyCompactedError()
    previous_index = next(
        (i for i in range(len(path) - 1, -1, -1) if path[i].get("type") == "compaction"), -1
    )
    start = 0
    previous: Mapping[str, Any] | None = None
    if previous_index >= 0:
        previous = path[previous_index]
        kept_id = previous.get("firstKeptEntryId")
        kept_index = next((i for i, e in enumerate(path[:previous_index]) if e.get("id") == kept_id), -1)
        start = kept_index if kept_index >= 0 else previous_index + 1
    end = len(path)

    usage = None
    for entry in path:
        message = entry_message(entry) if entry.get("type") == "message" else None
        found = successful_usage(message) if message is not None else None
        usage = found if found is not None else usage
    tokens_before = context_tokens(usage) if usage is not None else 0
    estimated = sum(estimate_tokens(m) for m in _messages(path, start, end))
    budget = scaled_keep_budget(
        keep_recent_tokens, prompt_tokens(usage) if usage is not None else None, estimated
    )

    cut = find_cut_point(path, start, end, budget)
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    to_summarize = _messages(path, start, history_end)
    prefix = _messages(path, cut.turn_start_index, cut.first_kept_index) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        raise NothingToCompactError()

    ops = FileOperations()
    if previous is not None:
        _previous_file_ops(previous, ops)
    for message in [*to_summarize, *prefix]:
        extract_file_ops(message, ops)
    previous_summary = previous.get("summary") if previous is not None else None
    return CompactionPreparation(
        first_kept_entry_id=str(path[cut.first_kept_index]["id"]),
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        recent_messages=_messages(path, cut.first_kept_index, end),
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        keep_recent_tokens=budget,
        previous_summary=previous_summary if isinstance(previous_summary, str) else None,
        file_ops=ops,
    )
