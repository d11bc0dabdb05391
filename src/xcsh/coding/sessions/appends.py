"""The typed ``append_*`` builders of :class:`~xcsh.coding.sessions.store.SessionStore`.

Each builds one entry on the current leaf with :meth:`SessionStore._base` and stores it with
:meth:`SessionStore._append`; :class:`EntryAppends` is the store's base class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from xcsh.coding.sessions.entries import SessionEntry, SessionError

if TYPE_CHECKING:
    from xcsh.ai.types import UserContent
    from xcsh.coding.sessions.entry_types import (
        CompactionEntry,
        CustomEntry,
        CustomMessageEntry,
        LabelEntry,
        ModeChangeEntry,
        ModelChangeEntry,
        ServiceTierChangeEntry,
        SessionInitEntry,
        ThinkingLevelChangeEntry,
        TtsrInjectionEntry,
    )

    # Typing only: a Protocol class costs ~0.13 M instructions to create, and nothing checks it
    # at run time (docs/performance.md, "Seventh session: start-up").
    class _Store(Protocol):
        def _base(self, kind: str) -> dict[str, Any]: ...

        def _append(self, entry: SessionEntry) -> SessionEntry: ...

        def get_entry(self, entry_id: str) -> SessionEntry | None: ...


class EntryAppends:
    """``append_*`` for every entry type but messages; each returns the new entry, now the leaf."""

    def append_custom_message(
        self: _Store,
        custom_type: str,
        content: str | list[UserContent],
        display: bool,
        details: Any = None,
        *,
        attribution: Literal["user", "agent"] = "agent",
    ) -> CustomMessageEntry:
        entry = self._base("custom_message")
        entry.update({"customType": custom_type, "content": content, "display": display})
        if details is not None:
            entry["details"] = details
        entry["attribution"] = attribution
        return cast("CustomMessageEntry", self._append(entry))

    def append_model_change(self: _Store, model_ref: str, role: str | None = None) -> ModelChangeEntry:
        entry = self._base("model_change")
        entry["model"] = model_ref
        if role is not None:
            entry["role"] = role
        return cast("ModelChangeEntry", self._append(entry))

    def append_thinking_level_change(self: _Store, level: str | None) -> ThinkingLevelChangeEntry:
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = level
        return cast("ThinkingLevelChangeEntry", self._append(entry))

    def append_service_tier_change(self: _Store, tier: str | None) -> ServiceTierChangeEntry:
        entry = self._base("service_tier_change")
        entry["serviceTier"] = tier
        return cast("ServiceTierChangeEntry", self._append(entry))

    def append_compaction(
        self: _Store,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        short_summary: str | None = None,
        details: Any = None,
        preserve_data: dict[str, Any] | None = None,
        *,
        from_extension: bool | None = None,
    ) -> CompactionEntry:
        entry = self._base("compaction")
        entry["summary"] = summary
        if short_summary is not None:
            entry["shortSummary"] = short_summary
        entry["firstKeptEntryId"] = first_kept_entry_id
        entry["tokensBefore"] = tokens_before
        optional = {"details": details, "fromExtension": from_extension, "preserveData": preserve_data}
        entry.update({k: v for k, v in optional.items() if v is not None})
        return cast("CompactionEntry", self._append(entry))

    def append_custom(self: _Store, custom_type: str, data: Any = None) -> CustomEntry:
        entry = self._base("custom")
        entry["customType"] = custom_type
        if data is not None:
            entry["data"] = data
        return cast("CustomEntry", self._append(entry))

    def append_label(self: _Store, target_id: str, label: str | None) -> LabelEntry:
        """Label an entry (an empty or None label clears it)."""
        if self.get_entry(target_id) is None:
            raise SessionError(f"Entry {target_id} not found")
        entry = self._base("label")
        entry["targetId"] = target_id
        if label:
            entry["label"] = label
        return cast("LabelEntry", self._append(entry))

    def append_session_init(
        self: _Store, system_prompt: str, task: str, tools: list[str], output_schema: Any = None
    ) -> SessionInitEntry:
        """What a sub-agent session started with (session-format §3): the system prompt as
        sent, its task, its active tools and, when one was asked for, the output schema."""
        entry = self._base("session_init")
        entry["systemPrompt"] = system_prompt
        entry["task"] = task
        entry["tools"] = list(tools)
        if output_schema is not None:
            entry["outputSchema"] = output_schema
        return cast("SessionInitEntry", self._append(entry))

    def append_ttsr_injection(self: _Store, rule_names: list[str]) -> TtsrInjectionEntry:
        entry = self._base("ttsr_injection")
        entry["injectedRules"] = list(rule_names)
        return cast("TtsrInjectionEntry", self._append(entry))

    def append_mode_change(self: _Store, mode: str, data: dict[str, Any] | None = None) -> ModeChangeEntry:
        entry = self._base("mode_change")
        entry["mode"] = mode
        if data is not None:
            entry["data"] = data
        return cast("ModeChangeEntry", self._append(entry))
