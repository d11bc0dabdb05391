"""What the model is offered: the session's registered tools, the active ones, the system prompt.

A collaborator of :class:`~xcsh.coding.session.AgentSession` (part of the session core).
Every change (tools added or removed, the active list, the answer locale) rebuilds the
agent's tool list and system prompt at once; the model sees it at its next call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xcsh.agent.agent import Agent
from xcsh.agent.tool import AgentTool
from xcsh.coding.session_state import SessionConfig
from xcsh.coding.system_prompt import build_system_prompt


class ToolSet:
    """Registered tools by name, the active names in order, and the prompt built from them."""

    def __init__(
        self,
        agent: Agent,
        tools: Iterable[AgentTool],
        active: Sequence[str],
        config: SessionConfig,
    ) -> None:
        self._agent = agent
        self._registry: dict[str, AgentTool] = {t.name: t for t in tools}
        self._active: list[str] = [n for n in active if n in self._registry]
        self._config = config
        self.locale = config.locale
        self.refresh()

    def get(self, name: str) -> AgentTool | None:
        return self._registry.get(name)

    def registered(self) -> list[AgentTool]:
        return list(self._registry.values())

    @property
    def active_names(self) -> list[str]:
        return list(self._active)

    def active(self) -> list[AgentTool]:
        return [self._registry[n] for n in self._active if n in self._registry]

    def update(
        self,
        *,
        add: Iterable[AgentTool] = (),
        remove: Iterable[str] = (),
        active: Sequence[str] | None = None,
    ) -> None:
        """Unregister ``remove``, register ``add``, then set the active names (unknown ones dropped).

        ``active`` None keeps the current active list.
        """
        for name in remove:
            self._registry.pop(name, None)
        for tool in add:
            self._registry[tool.name] = tool
        names = self._active if active is None else active
        self._active = [n for n in dict.fromkeys(names) if n in self._registry]
        self.refresh()

    def set_locale(self, locale: str | None) -> None:
        """Answer in ``locale`` from the next model call on."""
        self.locale = locale or None
        self.refresh()

    def refresh(self) -> None:
        """Recompute the agent's tool list and system prompt from the current state."""
        self._agent.tools = self.active()
        self._agent.system_prompt = build_system_prompt(
            cwd=self._config.cwd,
            tools=self._agent.tools,
            custom_prompt=self._config.custom_prompt,
            append_prompt=self._config.append_prompt,
            project=self._config.project,
            locale=self.locale,
        )
