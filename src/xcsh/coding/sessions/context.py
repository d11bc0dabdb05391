"""Rebuilding the live context from session entries (session-format §5), and
the read-only views over it that RPC exposes (stats, last assistant text).

Everything here is pure: entries in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

import msgspec

from xcsh.coding.sessions.entries import SessionEntry, iso_to_epoch_ms

if (
    TYPE_CHECKING
):  # only annotations and casts name the agent's messages (docs/performance.md, "Sixth session: start-up")
    from xcsh.agent.types import AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage

    # Only local annotations name it: a TypedDict of string annotations compiles one ForwardRef
    # per field when created (~1 M instructions at start-up; docs/performance.md, "Seventh
    # session: start-up").
    class _CompactionExtras(TypedDict, total=False):
        shortSummary: str
        providerPayload: dict[str, Any]


class SessionContext(msgspec.Struct, kw_only=True):
    """What a branch restores: its messages and the settings recorded along it.

    ``thinking_level`` is None when the branch has no ``thinking_level_change``
    (callers then apply their default); a recorded ``null`` reads back as ``"off"``.
    """

    messages: list[AgentMessage] = msgspec.field(default_factory=list)
    thinking_level: str | None = None
    models: dict[str, str] = msgspec.field(default_factory=dict)
    injected_rules: set[str] = msgspec.field(default_factory=set)
    compaction: SessionEntry | None = None
    service_tier: str | None = None
    mode: str = "none"
    mode_data: dict[str, Any] | None = None


def path_to(entries_by_id: Mapping[str, SessionEntry], leaf: SessionEntry) -> list[SessionEntry]:
    """Entries from the root down to ``leaf`` (following ``parentId``; cycles are cut)."""
    path: list[SessionEntry] = []
    seen: set[str] = set()
    current: SessionEntry | None = leaf
    while current is not None:
        entry_id = current.get("id")
        if not isinstance(entry_id, str) or entry_id in seen:
            break
        seen.add(entry_id)
        path.append(current)
        parent_id = current.get("parentId")
        current = entries_by_id.get(parent_id) if isinstance(parent_id, str) else None
    path.reverse()
    return path


def custom_message_from_entry(entry: Mapping[str, Any]) -> CustomMessage:
    """The ``custom`` message of a ``custom_message`` entry (its fields as the file has them)."""
    message: dict[str, Any] = {
        "role": "custom",
        "customType": entry.get("customType"),
        "content": entry.get("content"),
        "display": entry.get("display"),
    }
    if "details" in entry:
        message["details"] = entry["details"]
    if "attribution" in entry:
        message["attribution"] = entry["attribution"]
    message["timestamp"] = iso_to_epoch_ms(str(entry.get("timestamp", "")))
    return cast("CustomMessage", message)  # file data: the entry's shape is not checked on load


def _compaction_message(
    entry: SessionEntry, provider_payload: dict[str, Any] | None
) -> CompactionSummaryMessage:
    short: _CompactionExtras = {"shortSummary": entry["shortSummary"]} if "shortSummary" in entry else {}
    payload: _CompactionExtras = {} if provider_payload is None else {"providerPayload": provider_payload}
    return {
        "role": "compactionSummary",
        "summary": entry.get("summary", ""),
        **short,
        "tokensBefore": entry.get("tokensBefore", 0),
        **payload,
        "timestamp": iso_to_epoch_ms(str(entry.get("timestamp", ""))),
    }


def _remote_history(entry: SessionEntry) -> dict[str, Any] | None:
    """The provider-native replacement history a compaction may carry (OpenAI remote compaction)."""
    preserve = entry.get("preserveData")
    remote = preserve.get("openaiRemoteCompaction") if isinstance(preserve, dict) else None
    if not isinstance(remote, dict):
        return None
    provider = remote.get("provider")
    history = remote.get("replacementHistory")
    if not isinstance(provider, str) or not provider or not isinstance(history, list):
        return None
    return {"type": "openaiResponsesHistory", "provider": provider, "items": history}


def entry_message(entry: Mapping[str, Any]) -> AgentMessage | None:
    """The context message an entry contributes (None for non-message entries)."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        # a message entry holds an agent message as written (read from the file, not checked)
        return cast("AgentMessage", message) if isinstance(message, dict) else None
    if kind == "custom_message":
        return custom_message_from_entry(entry)
    if kind == "branch_summary" and entry.get("summary"):
        summary: BranchSummaryMessage = {
            "role": "branchSummary",
            "summary": entry["summary"],
            "fromId": cast(str, entry.get("fromId")),  # file data, as written
            "timestamp": iso_to_epoch_ms(str(entry.get("timestamp", ""))),
        }
        return summary
    return None


def build_session_context(entries: Sequence[SessionEntry], leaf_id: str | None) -> SessionContext:
    """The live context of the branch ending at ``leaf_id`` (session-format §5.2).

    ``leaf_id`` None means "before the first entry" (empty context); an id that is
    not found falls back to the last entry.
    """
    if leaf_id is None or not entries:
        return SessionContext()
    by_id: dict[str, SessionEntry] = {}
    for entry in entries:
        entry_id = entry.get("id")
        if isinstance(entry_id, str):
            by_id[entry_id] = entry
    leaf = by_id.get(leaf_id) or entries[-1]
    return context_of_branch(path_to(by_id, leaf))


def context_of_branch(path: Sequence[SessionEntry]) -> SessionContext:
    """The live context of the branch ``path`` (its entries from the root down to the leaf)."""
    context = SessionContext()
    compaction_index = -1
    for index, entry in enumerate(path):
        kind = entry.get("type")
        if kind == "thinking_level_change":
            context.thinking_level = entry.get("thinkingLevel") or "off"
        elif kind == "model_change":
            if entry.get("model"):
                context.models[entry.get("role") or "default"] = entry["model"]
        elif kind == "service_tier_change":
            context.service_tier = entry.get("serviceTier")
        elif kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                context.models["default"] = f"{message.get('provider')}/{message.get('model')}"
        elif kind == "compaction":
            context.compaction = entry
            compaction_index = index
        elif kind == "ttsr_injection":
            rules = entry.get("injectedRules")
            if isinstance(rules, list):  # a hand-edited entry may hold anything
                context.injected_rules.update(r for r in rules if isinstance(r, str))
        elif kind == "mode_change":
            context.mode = entry.get("mode") or "none"
            data = entry.get("data")
            context.mode_data = data if isinstance(data, dict) else None

    messages: list[AgentMessage] = []
    if context.compaction is None:
        selected = path
    else:
        payload = _remote_history(context.compaction)
        messages.append(_compaction_message(context.compaction, payload))
        kept: list[SessionEntry] = []
        if payload is None:
            first_kept = context.compaction.get("firstKeptEntryId")
            found = False
            for entry in path[:compaction_index]:
                found = found or entry.get("id") == first_kept
                if found:
                    kept.append(entry)
        selected = [*kept, *path[compaction_index + 1 :]]
    for entry in selected:
        message = entry_message(entry)
        if message is not None:
            messages.append(message)
    context.messages = messages
    return context


def _add_usage(totals: dict[str, float], usage: object) -> None:
    if not isinstance(usage, dict):
        return
    for key in ("input", "output", "cacheRead", "cacheWrite", "premiumRequests"):
        value = usage.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            totals[key] += value
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    if isinstance(total, int | float) and not isinstance(total, bool):
        totals["cost"] += total


class TokenTotals(msgspec.Struct, frozen=True):
    """Summed token usage; whole numbers stay ints."""

    input: int | float
    output: int | float
    cache_read: int | float
    cache_write: int | float

    @property
    def total(self) -> int | float:
        return _num(self.input + self.output + self.cache_read + self.cache_write)


class SessionStats(msgspec.Struct, frozen=True):
    """Counts and usage over a list of context messages (what ``get_session_stats`` reports).

    Usage sums cover assistant messages plus ``details.usage`` of ``task`` tool results.
    """

    session_id: str
    session_file: str | None
    user_messages: int
    assistant_messages: int
    tool_calls: int
    tool_results: int
    total_messages: int
    tokens: TokenTotals
    cost: int | float
    premium_requests: int | float


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def session_stats(
    messages: Sequence[AgentMessage], *, session_id: str, session_file: str | None
) -> SessionStats:
    """Figures over live-context ``messages``; ``session_file`` is None for in-memory sessions."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = 0
    totals: dict[str, float] = dict.fromkeys(
        ("input", "output", "cacheRead", "cacheWrite", "premiumRequests", "cost"), 0
    )
    for message in messages:
        role = message.get("role")
        if role in counts:
            counts[role] += 1
        if role == "assistant":
            content = message.get("content")
            if isinstance(content, list):
                tool_calls += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall")
            _add_usage(totals, message.get("usage"))
        elif role == "toolResult" and message.get("toolName") == "task":
            details = message.get("details")
            if isinstance(details, dict):
                _add_usage(totals, details.get("usage"))
    return SessionStats(
        session_id=session_id,
        session_file=session_file,
        user_messages=counts["user"],
        assistant_messages=counts["assistant"],
        tool_calls=tool_calls,
        tool_results=counts["toolResult"],
        total_messages=len(messages),
        tokens=TokenTotals(
            input=_num(totals["input"]),
            output=_num(totals["output"]),
            cache_read=_num(totals["cacheRead"]),
            cache_write=_num(totals["cacheWrite"]),
        ),
        cost=_num(totals["cost"]),
        premium_requests=_num(totals["premiumRequests"]),
    )


def last_assistant_text(messages: Sequence[AgentMessage]) -> str | None:
    """Trimmed text of the latest assistant message (aborted empty ones skipped); None if empty."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        if message.get("stopReason") == "aborted" and not content:
            continue
        text = ""
        if isinstance(content, list):
            text = "".join(
                b["text"]
                for b in content
                if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            )
        return text.strip() or None
    return None


def message_text(message: Mapping[str, Any]) -> str:
    """Concatenated text blocks of a message's content (a plain-string content as is)."""
    return content_text(message.get("content"))


def content_text(content: Any) -> str:
    """Concatenated text blocks of a content list (a plain string as is, anything else ``""``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        b["text"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )
