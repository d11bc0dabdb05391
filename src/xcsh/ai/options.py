"""Options for one provider call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from xcsh.ai.abort import AbortSignal

if TYPE_CHECKING:
    from xcsh.ai.types import ThinkingLevel

DEFAULT_THINKING_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
}


class StreamOptions(msgspec.Struct, kw_only=True):
    """Per-call options shared by every provider (copy with changes: ``msgspec.structs.replace``).

    ``reasoning`` None or "off" means no thinking. ``tool_choice`` is a tool name to force,
    "auto", "none" or "required". ``timeout_s`` bounds connect and each read. ``drain_s``
    bounds the read of what is left of a finished answer's body (so its connection is reused).
    """

    api_key: str | None = None
    signal: AbortSignal | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: ThinkingLevel | None = None
    thinking_budgets: dict[str, int] = msgspec.field(default_factory=lambda: dict(DEFAULT_THINKING_BUDGETS))
    tool_choice: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    session_id: str | None = None
    timeout_s: float = 600.0
    drain_s: float = 0.1
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
