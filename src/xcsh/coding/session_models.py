"""The session's model and thinking level: switching, cycling, remembering the default.

A collaborator of :class:`~xcsh.coding.session.AgentSession` (part of the session core):
the session creates it and forwards its model operations here; nothing else holds one.
Every change of model or level is recorded in the current session store, and a model is
usable only when :meth:`ModelRegistry.is_available` says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xcsh.agent.agent import Agent
from xcsh.ai.abort import AbortSignal
from xcsh.ai.options import StreamOptions
from xcsh.ai.thinking import next_level, resolve_level
from xcsh.coding.errors import CommandError, no_api_key_text
from xcsh.coding.model_choice import ModelCycle, model_ref, next_in_cycle, remembered_default
from xcsh.coding.models import ModelRegistry
from xcsh.coding.sessions.context import SessionContext
from xcsh.coding.sessions.store import SessionStore
from xcsh.coding.settings import Settings

if TYPE_CHECKING:
    from xcsh.ai.types import Model, ThinkingLevel


class _KeepLevel:
    """Sentinel of :meth:`ModelControl.switch_model`: keep (re-resolve) the current thinking level."""


KEEP_LEVEL = _KeepLevel()


class ModelControl:
    """The current model and thinking level of one session's agent."""

    def __init__(
        self,
        agent: Agent,
        *,
        registry: ModelRegistry,
        settings: Settings,
        store: Callable[[], SessionStore],
        scoped_models: list[tuple[Model, ThinkingLevel | None]],
    ) -> None:
        self._agent = agent
        self._registry = registry
        self._settings = settings
        self._budgets: tuple[int, dict[str, int]] = (-1, {})  # (settings.version, thinking_budgets())
        self._store = store  # the session's current store (it changes on new/switch/branch)
        self._scoped = scoped_models

    def apply_thinking_level(self, level: str | None, *, record: bool = True) -> ThinkingLevel | None:
        """Resolve ``level`` against the model and apply it; record an entry if it changed."""
        resolved = resolve_level(self._agent.model, level)
        changed = resolved != self._agent.thinking_level
        self._agent.thinking_level = resolved
        if changed and record:
            self._store().append_thinking_level_change(resolved)
        return resolved

    def cycle_thinking_level(self) -> ThinkingLevel | None:
        """Apply the model's next thinking level; None (nothing changed) without reasoning."""
        level = next_level(self._agent.model, self._agent.thinking_level)
        if level is None:
            return None
        self.apply_thinking_level(level)
        return self._agent.thinking_level or "off"

    def switch_model(
        self, model: Model, thinking: str | _KeepLevel | None = KEEP_LEVEL, *, role: str | None = "default"
    ) -> None:
        """Make ``model`` current (recording it), then apply ``thinking`` (None = unset).

        By default the current thinking level is re-resolved against the new model.
        """
        if not self._registry.is_available(model):
            raise CommandError(f"No API key for {model_ref(model)}")
        self._agent.model = model
        self._store().append_model_change(model_ref(model), role)
        # keeping re-clamps the current level; an unset level stays unset (agent-behaviour §9.3)
        requested = self._agent.thinking_level if isinstance(thinking, _KeepLevel) else thinking
        self.apply_thinking_level(requested)

    def set_model(self, provider: str, model_id: str) -> Model:
        """Switch to an available model and remember it as the default of later processes."""
        model = next(
            (
                m
                for m in self._registry.available_models()
                if m["provider"] == provider and m["id"] == model_id
            ),
            None,
        )
        if model is None:
            raise CommandError(f"Model not found: {provider}/{model_id}")
        self.switch_model(model)
        self._remember_default(model)
        return model

    def cycle_model(self) -> ModelCycle | None:
        """The next scoped model (with its own level), else the next available model; None below two."""
        scoped = [(m, level) for m, level in self._scoped if self._registry.is_available(m)]
        current = self._agent.model
        if scoped:
            chosen = next_in_cycle(scoped, current, lambda item: item[0])
            if chosen is None:
                return None
            model, level = chosen
            # the scoped model's own level, applied as is: unset stays unset
            self.switch_model(model, level)
        else:
            found = next_in_cycle(self._registry.available_models(), current, lambda m: m)
            if found is None:
                return None
            model = found
            self.switch_model(model)
        self._remember_default(model)
        return ModelCycle(model=model, thinking_level=self._agent.thinking_level, is_scoped=bool(scoped))

    def _remember_default(self, model: Model) -> None:
        """Record ``model`` as the default of later processes (setting ``modelRoles.default``)."""
        previous = self._settings.get("modelRoles.default")
        self._settings.set("modelRoles.default", remembered_default(previous, model))

    def restore(self, context: SessionContext) -> None:
        """Take the model and level a resumed branch recorded (an unusable model is kept as is)."""
        ref = context.models.get("default")
        if ref and "/" in ref:
            provider, model_id = ref.split("/", 1)
            model = self._registry.find(provider, model_id)
            if model is not None and self._registry.is_available(model):
                self._agent.model = model
        level = context.thinking_level
        requested = level if level is not None else str(self._settings.get("defaultThinkingLevel", "xhigh"))
        self.apply_thinking_level(requested, record=False)

    def intent_tracing_for(self, model: Model) -> bool:
        """The ``_i`` intent field is sent unless disabled, or for small schema-constrained models."""
        if not self._settings.get_bool("tools.intentTracing", True):
            return False
        return not model.get("compat", {}).get("constrainedToolCalls")

    def stream_options(self, model: Model, signal: AbortSignal) -> StreamOptions:
        """The options of one model call: key, abort signal, thinking level and budgets, session id."""
        options = StreamOptions(
            api_key=self._registry.api_key_for(model["provider"]),
            signal=signal,
            reasoning=self._agent.thinking_level,
            session_id=self._store().session_id,
        )
        options.thinking_budgets.update(self.thinking_budgets())
        return options

    def thinking_budgets(self) -> dict[str, int]:
        """The configured ``thinkingBudgets`` (integer values only), read again after any settings change.

        ``Settings.get`` hands out a deep copy of a mapping, once per model call before this;
        the result is shared: callers copy it (``stream_options`` updates its own dict).
        """
        version = self._settings.version
        if self._budgets[0] != version:
            budgets = self._settings.get("thinkingBudgets") or {}
            valid = (
                {k: int(v) for k, v in budgets.items() if isinstance(v, int)}
                if isinstance(budgets, dict)
                else {}
            )
            self._budgets = (version, valid)
        return self._budgets[1]

    def require_available(self) -> None:
        """Raise :class:`CommandError` when the current model cannot be used (no key, disabled provider)."""
        if not self._registry.is_available(self._agent.model):
            raise CommandError(no_api_key_text(self._agent.model["provider"]))
