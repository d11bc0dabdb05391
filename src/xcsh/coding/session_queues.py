"""The queued messages and their delivery modes.

A collaborator of :class:`~xcsh.coding.session.AgentSession` (part of the session core).
Steering and follow-up messages wait in the agent's queues until a run takes them; the
run chain's hidden next-turn and held-back bash messages count as queued too and are
dropped with the queues. The delivery modes (one at a time or all; whether steering
interrupts running tools) are saved to settings, so later processes start with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xcsh.agent.agent import Agent
from xcsh.agent.queue import normalize_queue_mode
from xcsh.coding.session_runs import RunChain
from xcsh.coding.settings import Settings

if TYPE_CHECKING:
    from xcsh.agent.types import AgentMessage


class MessageQueues:
    """The agent's steering and follow-up queues, the run chain's held messages, the modes."""

    def __init__(self, agent: Agent, settings: Settings, runs: RunChain) -> None:
        self._agent = agent
        self._settings = settings
        self._runs = runs

    @property
    def count(self) -> int:
        """Every queued message: steering, follow-ups and hidden next-turn messages."""
        return self._agent.queued_count + self._runs.hidden_count

    def steer(self, message: AgentMessage) -> None:
        self._agent.steer(message)

    def follow_up(self, message: AgentMessage) -> None:
        self._agent.follow_up(message)

    def peek(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Copies of the queued (steering, follow-up) messages, oldest first."""
        return self._agent.steering.peek_all(), self._agent.follow_ups.peek_all()

    def drop(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Drop the queued steering and follow-up messages; return what was dropped."""
        dropped = self.peek()
        self._agent.clear_queues()
        return dropped

    def take(self) -> list[AgentMessage]:
        """Take queued steering messages, else follow-ups (per their delivery modes)."""
        return self._agent.steering.drain() or self._agent.follow_ups.drain()

    def clear(self) -> None:
        """Drop queued steering, follow-ups, hidden next-turn and held-back bash messages."""
        self._agent.clear_queues()
        self._runs.drop_held()

    def set_steering_mode(self, mode: object) -> None:
        self._agent.steering.mode = normalize_queue_mode(mode)
        self._settings.set("steeringMode", mode)

    def set_follow_up_mode(self, mode: object) -> None:
        self._agent.follow_ups.mode = normalize_queue_mode(mode)
        self._settings.set("followUpMode", mode)

    def set_interrupt_mode(self, mode: object) -> None:
        self._agent.interrupt_mode = "wait" if mode == "wait" else "immediate"
        self._settings.set("interruptMode", mode)
