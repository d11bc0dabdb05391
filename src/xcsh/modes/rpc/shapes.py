"""Wire payloads built from the session's typed state (rpc-protocol field names live here).

The session core returns typed values (:class:`~xcsh.coding.session.SessionSnapshot`,
:class:`~xcsh.coding.model_choice.ModelCycle` …); this module shapes them into the
``data`` of responses, so the core knows nothing of the wire.
"""

from __future__ import annotations

from typing import Any

import msgspec

from xcsh.coding.model_choice import ModelCycle
from xcsh.coding.secrets import public_model
from xcsh.coding.session import AgentSession
from xcsh.coding.session_state import SessionSnapshot
from xcsh.coding.sessions.context import SessionStats
from xcsh.coding.todos import TodoStore, todos_of
from xcsh.modes.rpc.updates import EncodedOnce
from xcsh.rpc.jsonl import encode_json

# the large, rarely changing parts of get_state are encoded once (see EncodedOnce)
_system_prompt = EncodedOnce()
_dump_tools = EncodedOnce()


class EncodedState:
    """One session's encoded ``get_state`` payload, reused while nothing it reports changed.

    The key is the session's snapshot (equal exactly when every field ``get_state`` reports from
    it is equal), the todo store with its version, and the server's ``messageUpdates`` mode:
    together every input of :func:`state_payload`. A change through any of the session core's
    operations shows in the next answer; no operation has to invalidate anything.
    Kept per session in ``session.features`` (see :func:`encoded_state`).
    """

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._raw = msgspec.Raw(b"null")

    def get(self, session: AgentSession, message_updates: str) -> msgspec.Raw:
        snap = session.snapshot()
        todos = todos_of(session)
        key = (snap, todos, todos.version if todos is not None else 0, message_updates)
        if key != self._key:
            data = _payload(snap, todos)
            data["messageUpdates"] = message_updates
            self._raw = msgspec.Raw(encode_json(data))
            self._key = key
        return self._raw


def encoded_state(session: AgentSession, message_updates: str) -> msgspec.Raw:
    """The ``get_state`` payload (with ``messageUpdates``) as JSON, encoded again only after a change."""
    cache = session.features.get(EncodedState)
    if cache is None:
        cache = EncodedState()
        session.features.put(cache)
    return cache.get(session, message_updates)


def state_payload(session: AgentSession) -> dict[str, Any]:
    """The ``get_state`` payload (without ``messageUpdates``, which is the server's)."""
    return _payload(session.snapshot(), todos_of(session))


def _payload(snap: SessionSnapshot, todos: TodoStore | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "model": public_model(snap.model),
        "thinkingLevel": snap.thinking_level or "off",
        "isStreaming": snap.is_streaming,
        "isCompacting": snap.is_compacting,
        "steeringMode": snap.steering_mode,
        "followUpMode": snap.follow_up_mode,
        "interruptMode": snap.interrupt_mode,
    }
    if snap.session_file is not None:
        data["sessionFile"] = snap.session_file
    data["sessionId"] = snap.session_id
    if snap.session_name:
        data["sessionName"] = snap.session_name
    data["autoCompactionEnabled"] = snap.auto_compaction_enabled
    data["messageCount"] = snap.message_count
    data["queuedMessageCount"] = snap.queued_count
    data["todoPhases"] = todos.phases if todos is not None else []
    data["systemPrompt"] = _system_prompt(snap.system_prompt)
    data["dumpTools"] = _dump_tools.tools(snap.tools)
    return data


def cycle_payload(cycle: ModelCycle | None) -> dict[str, Any] | None:
    """The ``cycle_model`` payload: an unset level is omitted; None when there was nothing to cycle to."""
    if cycle is None:
        return None
    data: dict[str, Any] = {"model": public_model(cycle.model)}
    if cycle.thinking_level is not None:
        data["thinkingLevel"] = cycle.thinking_level
    data["isScoped"] = cycle.is_scoped
    return data


def stats_payload(stats: SessionStats) -> dict[str, Any]:
    """The ``get_session_stats`` payload (rpc-protocol §5.9): ``sessionFile`` omitted when in memory."""
    data: dict[str, Any] = {}
    if stats.session_file is not None:
        data["sessionFile"] = stats.session_file
    tokens = stats.tokens
    data.update(
        {
            "sessionId": stats.session_id,
            "userMessages": stats.user_messages,
            "assistantMessages": stats.assistant_messages,
            "toolCalls": stats.tool_calls,
            "toolResults": stats.tool_results,
            "totalMessages": stats.total_messages,
            "tokens": {
                "input": tokens.input,
                "output": tokens.output,
                "cacheRead": tokens.cache_read,
                "cacheWrite": tokens.cache_write,
                "total": tokens.total,
            },
            "cost": stats.cost,
            "premiumRequests": stats.premium_requests,
        }
    )
    return data
