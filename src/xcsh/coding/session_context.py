"""The live context and its persistence: every message is persisted exactly once, here.

A collaborator of :class:`~xcsh.coding.session.AgentSession` (part of the session core).
Messages a run produces are persisted when their ``message_end`` is emitted
(:meth:`LiveContext.persist_ended`); messages features add between runs go through
:meth:`LiveContext.append`. Summary messages are never stored as messages (they are
rebuilt from their own entries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from xcsh.agent.agent import Agent
from xcsh.coding.sessions.context import SessionContext
from xcsh.coding.sessions.store import SessionStore, SessionWriteError

if TYPE_CHECKING:
    from xcsh.agent.types import AgentMessage


class LiveContext:
    """The agent's message list, kept in step with the session's current store."""

    def __init__(self, agent: Agent, store: Callable[[], SessionStore]) -> None:
        self._agent = agent
        self._store = store  # the session's current store (it changes on new/switch/branch)

    def persist_ended(self, message: AgentMessage) -> None:
        """Persist a message whose ``message_end`` is being emitted (a run added it to the context)."""
        if message["role"] == "compactionSummary" or message["role"] == "branchSummary":
            return  # rebuilt from their own entries, never stored as messages
        try:
            self._store().append_message(message)
        except SessionWriteError:
            # the store latched and logged the failure; later explicit writes report it, but
            # it must not break the run or hold back this message's events
            pass

    def append(self, message: AgentMessage, *, persist: bool = True) -> None:
        """Append ``message``; with ``persist`` also to the session file (a failure raises)."""
        self._agent.messages.append(message)
        if persist:
            self._store().append_message(message)

    def truncate_at(self, message: AgentMessage) -> bool:
        """Drop ``message`` (by identity) and everything after it; False when it is not there."""
        messages = self._agent.messages
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] is message:
                del messages[index:]
                return True
        return False

    def replace(self, replacements: Mapping[int, AgentMessage]) -> None:
        """Replace messages by index; the store is not touched."""
        messages = self._agent.messages
        for index, message in replacements.items():
            messages[index] = message

    def reload(self) -> SessionContext:
        """Rebuild the context from the store's current branch; returns what was read."""
        context = self._store().build_context()
        self._agent.messages[:] = context.messages
        return context
