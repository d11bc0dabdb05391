"""The feature registry: every feature a new session gets, in install order, each with its own config.

A feature is a name, a ``configure`` function that builds the feature's small config
object from the start-up options (None: the feature is off for this session), and an
``install(session, config)`` function that registers the feature's hooks
(:class:`~xcsh.coding.hooks.SessionHooks`) and keeps its state in
``session.features``. After-run hooks are ordered by
:data:`~xcsh.coding.hooks.AFTER_RUN_ORDER`, not by install order.

Feature modules import neither this module nor the factory, so no import cycle forms.
See docs/architecture.md ("Adding a feature").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import msgspec

from xcsh.coding.options import StartupOptions
from xcsh.coding.session import AgentSession

C = TypeVar("C")


class Feature(msgspec.Struct, Generic[C], frozen=True):
    """One pluggable feature of the session."""

    name: str
    configure: Callable[[StartupOptions], C | None]
    install: Callable[[AgentSession, C], object]

    def apply(self, session: AgentSession, options: StartupOptions) -> None:
        config = self.configure(options)
        if config is not None:
            self.install(session, config)


def registry() -> list[Feature[Any]]:
    """The features in install order (modules are imported when a session is built)."""
    from xcsh.coding import approvals, host_tools, retry, small_model, todos, tool_features, user_bash
    from xcsh.coding.compaction import compactor
    from xcsh.coding.extensions import feature as extensions
    from xcsh.coding.ttsr import setup as ttsr

    return [
        # first: the session-bound built-in tools (python, task, inspect_image) before any extension
        Feature("session-tools", tool_features.configure, tool_features.install),
        Feature("retry", retry.configure, retry.install),
        Feature("compaction", compactor.configure, compactor.install),
        Feature("extensions", extensions.configure, extensions.install),
        # after extensions: a call an extension blocks is never put to the user
        Feature("approvals", approvals.configure, approvals.install),
        Feature("ttsr", ttsr.configure, ttsr.install),
        Feature("todos", todos.configure, todos.install),
        Feature("user-bash", user_bash.configure, user_bash.install),
        Feature("host-tools", host_tools.configure, host_tools.install),
        # last: its note goes before whatever text the other hooks left
        Feature("small-model", small_model.configure, small_model.install),
    ]


def install_features(session: AgentSession, options: StartupOptions) -> None:
    """Install every registered feature that is on for ``options``."""
    for feature in registry():
        feature.apply(session, options)
